package request

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
)

// The batch reads, collections and writes of the direct wire path
// (BatchGet, TxGet, Collection, Put): benchmarks beside wire_test.go's
// and the check that both sides send the same requests.

// batchClients is wireClients with TransactGetItems answered: the first
// 20 items of the page, in order.
func batchClients() (*fixture, *dynamodb.Client, recording) {
	f, c, rec := wireClients()
	resp := make([]any, len(f.stub.page))
	for i, it := range f.stub.page {
		resp[i] = map[string]any{"Item": wireItem(it)}
	}
	b, err := json.Marshal(map[string]any{"Responses": resp})
	if err != nil {
		panic(err)
	}
	rec.canned["TransactGetItems"] = b
	rec.canned["BatchWriteItem"] = []byte(`{"UnprocessedItems":{}}`)
	return f, c, rec
}

func libraryTxGet(f *fixture, ks []benchfix.Profile) ([]benchfix.Profile, error) {
	return libraryGets(f, ks, singletable.TxGet)
}

// handTxGet reads ks in one TransactGetItems: the items come in the
// order of the keys.
func handTxGet(c singletable.Client, ks []benchfix.Profile) ([]benchfix.Profile, error) {
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(ks))}
	for i := range ks {
		in.TransactItems[i] = types.TransactGetItem{Get: &types.Get{TableName: aws.String("bench"),
			Key: map[string]types.AttributeValue{"PK": s("USER#" + ks[i].Username), "SK": s("SKILL#" + ks[i].SkillName)}}}
	}
	out, err := c.TransactGetItems(ctx, in)
	if err != nil {
		return nil, err
	}
	ps := make([]benchfix.Profile, len(ks))
	for i, r := range out.Responses {
		if et, ok := r.Item["EntityType"].(*types.AttributeValueMemberS); !ok || et.Value != "Profile" {
			return nil, fmt.Errorf("item %d is not a profile", i)
		}
		if err := benchfix.HandDecode(r.Item, &ps[i]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func libraryCollection(f *fixture) ([]benchfix.Profile, error) {
	var ps []benchfix.Profile
	_, err := f.repo.QueryCollection(f.key).Page(ctx, f.repo.AppendTo(&ps))
	if err == nil && len(ps) != 20 {
		err = fmt.Errorf("%d items", len(ps))
	}
	return ps, err
}

// handCollection is a collection read written by hand: the partition's
// items, each decoded as its entity type says.
func handCollection(c singletable.Client, username string) ([]benchfix.Profile, error) {
	out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("bench"), KeyConditionExpression: aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": "PK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("USER#" + username)}})
	if err != nil {
		return nil, err
	}
	var ps []benchfix.Profile
	for _, it := range out.Items {
		switch et, _ := it["EntityType"].(*types.AttributeValueMemberS); {
		case et != nil && et.Value == "Profile":
			var p benchfix.Profile
			if err := benchfix.HandDecode(it, &p); err != nil {
				return nil, err
			}
			ps = append(ps, p)
		default:
			return nil, fmt.Errorf("no target for %v", it["EntityType"])
		}
	}
	return ps, nil
}

func BenchmarkTxGet20Wire(b *testing.B) {
	f, c, _ := batchClients()
	ks := batchKeys(f)
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := libraryTxGet(f, ks); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handTxGet(c, ks); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkCollection20Wire(b *testing.B) {
	f, c, _ := batchClients()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := libraryCollection(f); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handCollection(c, f.key.Username); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// batchPuts are BatchWrite25's items.
func batchPuts() []benchfix.Profile {
	ps := make([]benchfix.Profile, 25)
	for i := range ps {
		ps[i] = benchfix.Sample(i)
	}
	return ps
}

func BenchmarkBatchWrite25Wire(b *testing.B) {
	f, c, _ := batchClients()
	ps := batchPuts()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchLibrary(f.repo, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchRaw(c, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// TestWireBatchSameRequests checks that both sides of the batch,
// collection and write benchmarks on the path send the same request body
// and read the same values (TestWireSameRequests checks BatchGetItem and
// PutItem the same way).
func TestWireBatchSameRequests(t *testing.T) {
	f, c, rec := batchClients()
	ks := batchKeys(f)
	for _, tc := range []struct {
		op        string
		lib, hand func() (any, error)
	}{
		{"TransactGetItems", func() (any, error) { return libraryTxGet(f, ks) }, func() (any, error) { return handTxGet(c, ks) }},
		{"Query", func() (any, error) { return libraryCollection(f) }, func() (any, error) { return handCollection(c, f.key.Username) }},
		{"BatchGetItem", func() (any, error) { return libraryBatchGet(f, ks) }, func() (any, error) { return handBatchGet(c, ks) }},
		{"PutItem", func() (any, error) { return f.repo.Put(ctx, f.v) }, func() (any, error) { return f.v, rawPut(c, &f.v) }},
		{"BatchWriteItem", func() (any, error) { return nil, batchLibrary(f.repo, batchPuts()) }, func() (any, error) { return nil, batchRaw(c, batchPuts()) }},
	} {
		target := "DynamoDB_20120810." + tc.op
		lv, err := tc.lib()
		if err != nil {
			t.Fatalf("%s library: %v", tc.op, err)
		}
		lb := canonJSON(t, rec.last[target])
		hv, err := tc.hand()
		if err != nil {
			t.Fatalf("%s hand-raw: %v", tc.op, err)
		}
		if hb := canonJSON(t, rec.last[target]); lb != hb {
			t.Errorf("%s request:\nlibrary %s\nhand    %s", tc.op, lb, hb)
		}
		if !reflect.DeepEqual(lv, hv) {
			t.Errorf("%s values differ:\nlibrary %+v\nhand    %+v", tc.op, lv, hv)
		}
	}
}
