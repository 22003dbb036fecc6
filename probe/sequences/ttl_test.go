package sequences_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// An item expires (TTL deletes it alone, leaving its guard), and an item is
// created again under the same key with another email before the stream
// handler runs. The expired item's value must be released: nobody holds it.
func TestReleaseExpiredGuardKeyReusedWithOtherValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[UItem]
	tbl, plain := newTable(t, nil, func(tb *singletable.Table) { repo = singletable.MustBind(tb, UItems) })
	changes, err := tbl.Changes([]*singletable.Target{repo.Member()})
	if err != nil {
		t.Fatal(err)
	}
	old, err := repo.Create(ctx, UItem{Part: "p", ID: "1", Email: "e0", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "P#p"}, "SK": &types.AttributeValueMemberS{Value: "U#1"}}
	del, err := plain.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: ptr(tbl.Name()), Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatal(err)
	}
	_ = old
	// Re-created under the same key, holding another value.
	if _, err := repo.Create(ctx, UItem{Part: "p", ID: "1", Email: "e1"}); err != nil {
		t.Fatal(err)
	}
	rec := singletable.StreamRecord{EventID: "x", EventName: "REMOVE", SequenceNumber: "1", Keys: key, OldImage: del.Attributes,
		UserIdentity: &singletable.StreamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}}
	ch, ok, err := changes.Decode(rec)
	if err != nil || !ok || !ch.TTL {
		t.Fatalf("decode: %v %v %+v", ok, err, ch)
	}
	n, err := tbl.ReleaseExpiredGuards(ctx, ch)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("released %d guards, want 1 (e0 is held by nobody)", n)
	}
	_, problems := readStateP(t, plain, tbl.Name())
	for _, p := range problems {
		t.Error(p)
	}
	if _, err := repo.Create(ctx, UItem{Part: "p", ID: "2", Email: "e0"}); errors.Is(err, singletable.ErrAlreadyExists) {
		t.Errorf("e0 is still claimed: %v", err)
	}
}

type KO struct {
	Team    string    `dynamodbav:"Team"`
	ID      string    `dynamodbav:"ID"`
	Handle  string    `dynamodbav:"Handle,omitempty"`
	Expires time.Time `dynamodbav:"Expires"`
}

// A unique tuple with a field stored only in the key.
func TestReleaseExpiredGuardKeyOnlyTuple(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kos, err := singletable.Define(singletable.Schema[KO]{Type: "KO", PK: "TEAM#{Team}", SK: "K#{ID}", KeyOnly: []string{"Team"}, TTL: "Expires",
		Unique: []singletable.Unique{{Fields: []string{"Team", "Handle"}}}})
	if err != nil {
		t.Skipf("declaration refused: %v", err)
	}
	var repo *singletable.Repo[KO]
	tbl, plain := newTable(t, nil, func(tb *singletable.Table) { repo = singletable.MustBind(tb, kos) })
	changes, _ := tbl.Changes([]*singletable.Target{repo.Member()})
	for _, c := range []struct {
		id, again string
		want      int
	}{{"1", "", 1}, {"2", "h2", 0}, {"3", "other", 1}} {
		h := "h" + c.id
		if _, err := repo.Create(ctx, KO{Team: "t", ID: c.id, Handle: h, Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TEAM#t"}, "SK": &types.AttributeValueMemberS{Value: "K#" + c.id}}
		del, err := plain.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: ptr(tbl.Name()), Key: key, ReturnValues: types.ReturnValueAllOld})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := del.Attributes["Team"]; ok {
			t.Errorf("Team stored though KeyOnly")
		}
		if c.again != "" {
			if _, err := repo.Create(ctx, KO{Team: "t", ID: c.id, Handle: c.again}); err != nil {
				t.Fatal(err)
			}
		}
		ch, ok, err := changes.Decode(singletable.StreamRecord{EventID: "x", EventName: "REMOVE", SequenceNumber: "1", Keys: key, OldImage: del.Attributes,
			UserIdentity: &singletable.StreamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		n, err := tbl.ReleaseExpiredGuards(ctx, ch)
		if err != nil || n != c.want {
			t.Errorf("item %s re-created with %q: released %d (%v), want %d", c.id, c.again, n, err, c.want)
		}
	}
}
