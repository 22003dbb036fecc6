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
