package singletable

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/attrvalue"
)

// Keys print partition key first, then sort key, then the other
// attributes by name, whatever the table's key attribute names, the same
// way every time.
func TestKeyText(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := []struct {
		name  string
		table *Table
		key   map[string]types.AttributeValue
		want  string
	}{
		{"default names", NewTable(nil, "t"),
			map[string]types.AttributeValue{"SK": sAV("PROFILE"), "PK": sAV("USER#john")}, "{PK=USER#john SK=PROFILE}"},
		{"lower-case names", NewTable(nil, "t", func(o *TableOptions) { o.PartitionKey, o.SortKey = "pk", "sk" }),
			map[string]types.AttributeValue{"sk": sAV("b"), "pk": sAV("a")}, "{pk=a sk=b}"},
		{"sort key before partition key by name", NewTable(nil, "t", func(o *TableOptions) { o.PartitionKey, o.SortKey = "Tenant", "At" }),
			map[string]types.AttributeValue{"At": n("17"), "Tenant": sAV("acme")}, "{Tenant=acme At=17}"},
		{"no sort key", NewTable(nil, "t", func(o *TableOptions) { o.PartitionKey, o.SortKey = "id", "" }),
			map[string]types.AttributeValue{"id": n("42")}, "{id=42}"},
		{"other attributes by name", NewTable(nil, "t", func(o *TableOptions) { o.PartitionKey, o.SortKey = "id", "" }),
			map[string]types.AttributeValue{"z": sAV("3"), "id": sAV("1"), "b": sAV("2"), "a": &types.AttributeValueMemberB{Value: []byte("hi")}},
			"{id=1 a=aGk= b=2 z=3}"},
		{"absent sort key", NewTable(nil, "t"), map[string]types.AttributeValue{"PK": sAV("x")}, "{PK=x}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 20 { // map order changes from one range to the next
				if got := c.table.keyText(c.key); got != c.want {
					t.Fatalf("keyText = %s, want %s", got, c.want)
				}
			}
		})
	}
	if got := (keyNames{}).text(map[string]types.AttributeValue{"sk": sAV("b"), "pk": sAV("a"), "c": sAV("c")}); got != "{c=c pk=a sk=b}" {
		t.Errorf("without key names: %s, want attribute name order", got)
	}
}

// Errors that hold only a key print it in the order of its table's keys
// (and so do migrate's Difference and DuplicateError: TestKeysInKeyOrder).
func TestErrorsPrintKeysInKeyOrder(t *testing.T) {
	tb := NewTable(nil, "t", func(o *TableOptions) { o.PartitionKey, o.SortKey = "Tenant", "At" })
	key := map[string]types.AttributeValue{"At": sAV("b"), "Tenant": sAV("a")}
	tx := &txn{ops: []txOp{{kind: "Put", entity: "E", key: key}}, items: []txItem{{op: 0, table: tb, key: key}}}
	code := "ConditionalCheckFailed"
	te := tx.cancelled(&types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: &code}}}, nil)
	want := "singletable: transaction cancelled: op 0 (Put E {Tenant=a At=b}): ConditionalCheckFailed"
	if got := te.Error(); got != want {
		t.Errorf("TransactionError:\n got %s\nwant %s", got, want)
	}
	ue := &UnknownTypeError{Key: key, keys: tb.keyNames()}
	if got, want := ue.Error(), "singletable: collection: item {Tenant=a At=b} has no entity type"; got != want {
		t.Errorf("UnknownTypeError:\n got %s\nwant %s", got, want)
	}
}

// itemID tells keys apart by table, value and type, as DynamoDB does.
func TestItemID(t *testing.T) {
	t1, t2 := NewTable(nil, "one"), NewTable(nil, "two")
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	b := func(v string) types.AttributeValue { return &types.AttributeValueMemberB{Value: []byte(v)} }
	k := func(pk, sk types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": pk, "SK": sk, "other": sAV("ignored")}
	}
	ids := []itemID{
		t1.itemID(k(sAV("1"), sAV("x"))),
		t2.itemID(k(sAV("1"), sAV("x"))),
		t1.itemID(k(n("1"), sAV("x"))),
		t1.itemID(k(b("1"), sAV("x"))),
		t1.itemID(k(sAV("1"), sAV("y"))),
		t1.itemID(k(sAV("1x"), sAV(""))),
	}
	for i := range ids {
		for j := range ids {
			if (ids[i] == ids[j]) != (i == j) {
				t.Errorf("ids %d and %d: equal %v", i, j, ids[i] == ids[j])
			}
		}
	}
	if t1.itemID(k(sAV("1"), sAV("x"))) != ids[0] {
		t.Error("the same key gives another id")
	}
	noSK := NewTable(nil, "one", func(o *TableOptions) { o.SortKey = "" })
	if a, b := noSK.itemID(k(sAV("1"), sAV("x"))), noSK.itemID(k(sAV("1"), sAV("y"))); a != b {
		t.Error("a table without a sort key compared sort keys")
	}
}

// getFake serves BatchGetItem from items, leaving the first key of each of
// the first unprocessed requests unprocessed.
type getFake struct {
	Client
	items       map[string]map[string]types.AttributeValue // by PK
	unprocessed int
	fail        error

	mu   sync.Mutex
	sent [][]string
}

func (f *getFake) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for table, ka := range in.RequestItems {
		var sent []string
		keys := ka.Keys
		for _, k := range keys {
			sent = append(sent, k["PK"].(*types.AttributeValueMemberS).Value)
		}
		f.sent = append(f.sent, sent)
		if f.unprocessed > 0 && len(keys) > 0 {
			f.unprocessed--
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{table: {Keys: keys[:1]}}
			keys = keys[1:]
		}
		for _, k := range keys {
			if it, ok := f.items[k["PK"].(*types.AttributeValueMemberS).Value]; ok {
				out.Responses[table] = append(out.Responses[table], it)
			}
		}
	}
	return out, nil
}

// getItems reads each distinct key once, retries what comes back
// unprocessed, and answers position by position.
func TestGetItems(t *testing.T) {
	item := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV("x"), "v": sAV(pk)}
	}
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV("x")}
	}
	f := &getFake{items: map[string]map[string]types.AttributeValue{"a": item("a"), "c": item("c")}, unprocessed: 2}
	tb := NewTable(f, "t")
	o := BatchOptions{Backoff: Backoff{Base: -1}}.run()
	got, errs := tb.getItems(context.Background(), o, types.KeysAndAttributes{}, []map[string]types.AttributeValue{key("a"), key("b"), key("a"), key("c")}, nil)
	if len(got) != 4 || len(errs) != 4 {
		t.Fatalf("%d items, %d errors, want 4 of each", len(got), len(errs))
	}
	for i, want := range []string{"a", "", "a", "c"} {
		if errs[i] != nil {
			t.Errorf("key %d: %v", i, errs[i])
		}
		switch {
		case want == "" && got[i] != nil:
			t.Errorf("key %d: got %v, want none", i, got[i])
		case want != "" && !attrvalue.ItemsEqual(got[i], item(want)):
			t.Errorf("key %d: got %v, want %s", i, got[i], want)
		}
	}
	if len(f.sent) != 3 || len(f.sent[0]) != 3 {
		t.Errorf("requests %v, want [a b c] then the unprocessed keys one by one", f.sent)
	}

	// What is still unprocessed after the budget fails, at every position.
	f = &getFake{items: f.items, unprocessed: 100}
	tb = NewTable(f, "t")
	o = BatchOptions{Backoff: Backoff{Base: -1}, MaxAttempts: 3}.run()
	_, errs = tb.getItems(context.Background(), o, types.KeysAndAttributes{}, []map[string]types.AttributeValue{key("a"), key("c"), key("a")}, nil)
	if !errors.Is(errs[0], ErrUnprocessed) || !errors.Is(errs[2], ErrUnprocessed) || errs[1] != nil {
		t.Errorf("errors %v, want ErrUnprocessed for a (twice) only", errs)
	}

	// A request that fails for good fails its keys.
	boom := errors.New("boom")
	tb = NewTable(&getFake{fail: boom}, "t")
	_, errs = tb.getItems(context.Background(), o, types.KeysAndAttributes{}, []map[string]types.AttributeValue{key("a")}, nil)
	if !errors.Is(errs[0], boom) {
		t.Errorf("error %v, want boom", errs[0])
	}
}
