package batchrun

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The k-th op on a key goes to round k, by the map path as by the few-ops
// path.
func TestRounds(t *testing.T) {
	for _, n := range []int{5, 3 * MaxWrite} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = string(rune('a' + i%3))
		}
		rounds := Rounds(n, func(i int) string { return keys[i] }, func(k string) uint64 { return uint64(k[0]) })
		if len(rounds) != (n+2)/3 {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(rounds), (n+2)/3)
		}
		for r, idx := range rounds {
			for _, i := range idx {
				if i/3 != r {
					t.Fatalf("n=%d: op %d in round %d, want %d", n, i, r, i/3)
				}
			}
		}
	}
	if got := Rounds(3, func(i int) int { return i }, func(k int) uint64 { return 0 }); !reflect.DeepEqual(got, [][]int{{0, 1, 2}}) {
		t.Fatalf("distinct keys: %v", got)
	}
}

// Ops go together when same says so, in input order.
func TestGroup(t *testing.T) {
	key := func(i int) int { return i % 4 }
	same := func(a, b int) bool { return a%2 == b%2 }
	if got := Group([]int{0, 1, 2, 3, 4, 5}, key, same); !reflect.DeepEqual(got, [][]int{{0, 2, 4}, {1, 3, 5}}) {
		t.Fatalf("groups %v", got)
	}
	if got := Group([]int{0, 4, 8}, key, same); !reflect.DeepEqual(got, [][]int{{0, 4, 8}}) {
		t.Fatalf("one key: %v", got)
	}
}

// A request of two tables holds each table's ops in their order, puts and
// deletes alike.
func TestWriteRequest(t *testing.T) {
	s := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: v}}
	}
	type op struct {
		table string
		put   bool
		pk    string
	}
	ops := []op{{"A", true, "1"}, {"B", false, "2"}, {"A", false, "3"}, {"B", true, "4"}}
	in := WriteRequest(len(ops), func(k int) (string, map[string]types.AttributeValue, map[string]types.AttributeValue) {
		if ops[k].put {
			return ops[k].table, s(ops[k].pk), nil
		}
		return ops[k].table, nil, s(ops[k].pk)
	})
	pk := func(wr types.WriteRequest) string {
		if wr.PutRequest != nil {
			return "put " + wr.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value
		}
		return "delete " + wr.DeleteRequest.Key["PK"].(*types.AttributeValueMemberS).Value
	}
	got := map[string][]string{}
	for table, reqs := range in.RequestItems {
		for _, wr := range reqs {
			got[table] = append(got[table], pk(wr))
		}
	}
	want := map[string][]string{"A": {"put 1", "delete 3"}, "B": {"delete 2", "put 4"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}
