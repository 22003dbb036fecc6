package singletable

import (
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func sAV(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// request lays the pending ops out per table, in the order given, puts and
// deletes mixed, whatever the order of the tables among the ops.
func TestBatchWriteRequestLayout(t *testing.T) {
	t1, t2 := NewTable(nil, "one"), NewTable(nil, "two")
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV("x")}
	}
	put := func(t *Table, pk string) WriteOp {
		item := key(pk)
		item["a"] = sAV(pk)
		return WriteOp{table: t, put: item, key: key(pk)}
	}
	del := func(t *Table, pk string) WriteOp { return WriteOp{table: t, key: key(pk)} }
	b := &batchWriter{ops: []WriteOp{put(t2, "a"), del(t1, "b"), put(t1, "c"), del(t2, "d"), put(t2, "e")}}
	in := b.request([]int{0, 1, 2, 3, 4})
	want := map[string][]string{"one": {"-b", "+c"}, "two": {"+a", "-d", "+e"}}
	if len(in.RequestItems) != len(want) {
		t.Fatalf("tables %v", in.RequestItems)
	}
	for name, w := range want {
		reqs := in.RequestItems[name]
		if len(reqs) != len(w) || cap(reqs) != len(w) {
			t.Fatalf("%s: %d requests (cap %d), want %d", name, len(reqs), cap(reqs), len(w))
		}
		for i, wr := range reqs {
			var got string
			switch {
			case wr.PutRequest != nil && wr.DeleteRequest == nil:
				got = "+" + wr.PutRequest.Item["a"].(*types.AttributeValueMemberS).Value
			case wr.DeleteRequest != nil && wr.PutRequest == nil:
				got = "-" + wr.DeleteRequest.Key["PK"].(*types.AttributeValueMemberS).Value
			}
			if got != w[i] {
				t.Errorf("%s[%d] = %q, want %q", name, i, got, w[i])
			}
		}
	}
	// A subset, one table: the same layout rules.
	in = b.request([]int{4, 0})
	if reqs := in.RequestItems["two"]; len(in.RequestItems) != 1 || len(reqs) != 2 ||
		reqs[0].PutRequest.Item["a"].(*types.AttributeValueMemberS).Value != "e" {
		t.Fatalf("subset: %v", in.RequestItems)
	}
}

// writeRounds puts the n-th op on a key in round n, keeping input order in
// each round, with the pairwise scan of small batches and the map of large
// ones alike.
func TestWriteRounds(t *testing.T) {
	t1, t2 := NewTable(nil, "one"), NewTable(nil, "two")
	del := func(t *Table, pk string) WriteOp {
		return WriteOp{table: t, key: map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV("x")}}
	}
	for _, n := range []int{1, 7, 2 * maxBatchWrite, 2*maxBatchWrite + 1, 300} {
		var ops []WriteOp
		want := map[int][]int{}
		count := map[string]int{}
		for i := 0; i < n; i++ {
			tbl, pk := t1, strconv.Itoa(i%5)
			if i%3 == 0 {
				tbl, pk = t2, strconv.Itoa(i) // distinct keys in the other table
			}
			ops = append(ops, del(tbl, pk))
			r := count[tbl.name+"/"+pk]
			count[tbl.name+"/"+pk]++
			want[r] = append(want[r], i)
		}
		got := writeRounds(ops)
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(got), len(want))
		}
		for r, idx := range got {
			if !slices.Equal(idx, want[r]) {
				t.Fatalf("n=%d: round %d = %v, want %v", n, r, idx, want[r])
			}
		}
	}
}
