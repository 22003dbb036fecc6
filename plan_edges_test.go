package singletable_test

// Regression tests for the write plan found by an adversarial review:
// behaviours that break the write plan's promises.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// hookClient runs afterGet once, right after the next GetItem returns:
// another writer getting in between the library's read and its write.
type hookClient struct {
	*dynamodb.Client
	afterGet atomic.Pointer[func()]
}

func (c *hookClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.Client.GetItem(ctx, in, o...)
	if f := c.afterGet.Swap(nil); f != nil {
		(*f)()
	}
	return out, err
}

func (c *hookClient) once(f func()) { c.afterGet.Store(&f) }

// An Upsert's If condition must hold whatever the path: an upsert that
// finds no item is sent as a Create, which drops the caller's condition
// (plan.go txItems → createItems): the item is created although the
// condition (which a missing attribute cannot satisfy) is false.
func TestUpsertCreateKeepsIfCondition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	var statuses *singletable.Repo[Status]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		ranks = singletable.MustBind(tbl, Ranks)
		statuses = singletable.MustBind(tbl, Statuses)
	})
	// Blind upsert (no read): DynamoDB evaluates the condition.
	_, err := statuses.Update(Status{ID: "s"}).Set("State", "on").
		If(expression.Name("State").Equal(expression.Value("off"))).Upsert().Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "blind upsert")

	// Upsert that reads first (GSI1 needs Score): the same condition.
	_, err = ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").
		If(expression.Name("Note").Equal(expression.Value("old"))).Upsert().Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "upsert that reads, then creates")
	assert.Empty(t, rawItem(t, tbl, "BOARD#b", "USER#u"), "a false condition wrote nothing")
}

// Idempotent: "a repeat with the same token and the same update within
// DynamoDB's 10-minute idempotency window succeeds without applying it
// again". With version 0 the update now reads the stored version and
// writes it into the request (SET Version = read+1, condition Version =
// read), so the repeat is a different request under the same token:
// IdempotentParameterMismatch. Before the change (ADD, no check) the
// repeat was the same request.
func TestIdempotentUpdateRepeatOfVersionedEntity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	newTable(t, func(tbl *singletable.Table) { vdocs = singletable.MustBind(tbl, VDocs) })
	_, err := vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"})
	require.NoError(t, err)
	tok := runToken("review-idem")
	d, err := vdocs.Update(VDoc{ID: "a"}).Set("Body", "v2").Idempotent(tok).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Version)
	// The caller did not see the answer and repeats the same update.
	d, err = vdocs.Update(VDoc{ID: "a"}).Set("Body", "v2").Idempotent(tok).Run(ctx)
	require.NoError(t, err, "the repeat of an idempotent update succeeds")
	assert.Equal(t, int64(2), d.Version, "applied once")
}

// The same for an idempotent upsert that creates: its repeat finds the
// item and is sent as an update, another request under the same token.
func TestIdempotentUpsertRepeatAfterCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	newTable(t, func(tbl *singletable.Table) { ranks = singletable.MustBind(tbl, Ranks) })
	tok := runToken("review-upsert")
	// An idempotent upsert that would have to read (GSI1 needs Score) is
	// refused before the network: its repeat could not be the same request.
	_, err := ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").Upsert().Idempotent(tok).Run(ctx)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "Idempotent")
	// Giving every index key field, it needs no read: the repeat is the
	// same request and applies once.
	for range 2 {
		r, err := ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").Set("Score", 3).Upsert().Idempotent(tok).Run(ctx)
		require.NoError(t, err, "the repeat of an idempotent upsert succeeds")
		assert.Equal(t, "hi", r.Note)
		assert.Equal(t, 3, r.Score)
	}
}

// Version 0 means the caller read none: "Put and Update read the stored
// version themselves and are conditioned on that (retrying if another
// writer gets in between)". With a token the race is not retried
// (plan_send.go execToken: token == "" in the retry predicate), so an
// idempotent update that gave no version fails with ErrVersionConflict.
func TestIdempotentUpdateRacedIsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hc := &hookClient{Client: ddblocal.Shared(t).Client()}
	var vdocs *singletable.Repo[VDoc]
	tbl := newTableWith(t, hc, func(tbl *singletable.Table) { vdocs = singletable.MustBind(tbl, VDocs) })
	_, err := vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"})
	require.NoError(t, err)
	// An idempotent update that gave no version adds 1 to the stored one
	// without reading it first (the token makes the ADD apply once), so no
	// writer can get in between a read and the write: here another writer
	// set the version just before, and the update builds on it.
	_, err = hc.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(tbl.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "DOC#a"}, "SK": &types.AttributeValueMemberS{Value: "DOC"}},
		UpdateExpression:          aws.String("SET Version = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "2"}},
	})
	require.NoError(t, err)
	reads := 0
	hc.once(func() { reads++ })
	d, err := vdocs.Update(VDoc{ID: "a"}).Set("Body", "mine").Idempotent(runToken("review-race")).Run(ctx)
	require.NoError(t, err, "no version was given: nothing for the caller to conflict with")
	assert.Equal(t, int64(3), d.Version)
	assert.Equal(t, 1, reads, "one GetItem: Run's read back after the write, none before it")
}

// Typed errors come before the network. A Put or Update of a versioned
// entity with version 0 now reads the stored version first (plan.go
// putItems: readBefore before encodeSized; txItems: readBefore before
// build), so an item that cannot be stored (invalid UTF-8, over
// 400 KB) is refused only after a GetItem reached DynamoDB.
func TestBadValuesRefusedBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	_, c := newTable(t, func(tbl *singletable.Table) { vdocs = singletable.MustBind(tbl, VDocs) })
	_, err := vdocs.Create(ctx, VDoc{ID: "a", Body: "ok"})
	require.NoError(t, err)
	var ve *singletable.ValidationError
	for name, write := range map[string]func() error{
		"Put invalid UTF-8": func() error { _, err := vdocs.Put(ctx, VDoc{ID: "a", Body: "bad \xff utf-8"}); return err },
		"Put over 400 KB":   func() error { _, err := vdocs.Put(ctx, VDoc{ID: "a", Body: strings.Repeat("x", 410_000)}); return err },
		"Update invalid UTF-8": func() error {
			_, err := vdocs.Update(VDoc{ID: "a"}).Set("Body", "bad \xff utf-8").Run(ctx)
			return err
		},
		"Update of a missing item, invalid UTF-8": func() error {
			_, err := vdocs.Update(VDoc{ID: "zz"}).Set("Body", "bad \xff utf-8").Run(ctx)
			return err
		},
	} {
		before := c.requests.Load()
		err := write()
		assert.ErrorAs(t, err, &ve, name)
		assert.Equal(t, before, c.requests.Load(), "%s: requests sent for bad input", name)
	}
}

// A stale version the caller gave is ErrVersionConflict at once: nothing
// changed while the library wrote, so there is nothing to retry. When the
// write also read the item (unique fields, index reads), plan_ownership.go
// failed() reports any version mismatch as raced() (a *raceError), so
// execToken rebuilds and resends the doomed write 5 more times (each
// with a GetItem) and the error says "the item changed while its unique
// guards were being updated" instead of naming the version read.
func TestStaleCallerVersionIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, c := accountsTable(t)
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"})
	require.NoError(t, err)
	a, err := accounts.Get(ctx, Account{Username: "ann"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	_, err = accounts.Update(Account{Username: "ann"}).Set("Name", "Ann").Run(ctx)
	require.NoError(t, err)

	before := c.requests.Load()
	a.Name = "stale"
	_, err = accounts.Put(ctx, a) // version 1; the stored one is 2
	require.ErrorIs(t, err, singletable.ErrVersionConflict)
	assert.Contains(t, err.Error(), "version 1 was read")
	assert.LessOrEqual(t, c.requests.Load()-before, int64(3), "the item's read, the kept email's guard read and the write, not a retry loop")
}

// Seat is a unique number that updates may Add to.
type Seat struct {
	Hall string `dynamodbav:"Hall"`
	Who  string `dynamodbav:"Who"`
	No   int    `dynamodbav:"No,omitempty"`
}

var Seats = singletable.MustDefine(singletable.Schema[Seat]{Type: "Seat", PK: "HALL#{Hall}", SK: "WHO#{Who}", Unique: []singletable.Unique{{Fields: []string{"No"}}}})

// Guards match live values: an Add on a unique field changes the value
// without moving its guard (plan_guards.go movedUniques once listed
// only fields setsOrRemoves; Add is neither), so the new value is unclaimed and the
// old one stays taken. The upsert that creates (createItems) does claim
// the added value, so the two paths of one Update differ.
func TestAddOnUniqueFieldMovesItsGuard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var seats *singletable.Repo[Seat]
	newTable(t, func(tbl *singletable.Table) { seats = singletable.MustBind(tbl, Seats) })
	_, err := seats.Create(ctx, Seat{Hall: "h", Who: "ann", No: 1})
	require.NoError(t, err)
	s, err := seats.Update(Seat{Hall: "h", Who: "ann"}).Add("No", 1).Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, s.No)
	_, err = seats.Create(ctx, Seat{Hall: "h", Who: "bob", No: 2})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "seat 2 is ann's now")
	_, err = seats.Create(ctx, Seat{Hall: "h", Who: "cat", No: 1})
	assert.NoError(t, err, "seat 1 was released")
}

// TMulti has its TTL field as a multi-attribute index key attribute.
type TMulti struct {
	ID      string    `dynamodbav:"ID"`
	Kind    string    `dynamodbav:"Kind"`
	Expires time.Time `dynamodbav:"Expires"`
}

// Define refused a TTL field as a multi-attribute index key attribute
// only after this test was written; before,
// the table declares it S (model.Field.Scalar: a time is S) while every
// write stores the TTL as N epoch seconds (plan_keys.go: encodeTTL after the
// index attributes; plan_update.go build: the TTL branch before multiAttr), so
// every write fails at DynamoDB with a raw ValidationException "Type
// mismatch for Index Key" instead of being refused by Define.
func TestTTLInMultiAttributeIndex(t *testing.T) {
	t.Parallel()
	e, err := singletable.Define(singletable.Schema[TMulti]{Type: "TM", PK: "T#{ID}", SK: "T", TTL: "Expires",
		Indexes: []singletable.IndexSchema[TMulti]{{Name: "GSI9", MultiAttribute: true, PartitionAttrs: []string{"Kind"}, SortAttrs: []string{"Expires"}}}})
	if err != nil {
		var ve *singletable.ValidationError
		require.ErrorAs(t, err, &ve, "refused at Define: fine")
		return
	}
	ctx := context.Background()
	var r *singletable.Repo[TMulti]
	newTable(t, func(tbl *singletable.Table) { r = singletable.MustBind(tbl, e) })
	_, err = r.Create(ctx, TMulti{ID: "a", Kind: "k", Expires: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	got, err := r.QueryIndex("GSI9", TMulti{Kind: "k"}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
}

// Update.Op with version 0 in a Tx: the library read the version outside the
// transaction; a writer getting in between makes the whole transaction
// fail with ErrVersionConflict, a version the caller never gave (nothing
// rebuilds it). Before the change a version-0 update checked no version.
func TestTxUpdateVersionZeroRaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hc := &hookClient{Client: ddblocal.Shared(t).Client()}
	var vdocs *singletable.Repo[VDoc]
	newTableWith(t, hc, func(tbl *singletable.Table) { vdocs = singletable.MustBind(tbl, VDocs) })
	_, err := vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"})
	require.NoError(t, err)
	op := vdocs.Update(VDoc{ID: "a"}).Set("Body", "tx").Op()
	// Another writer gets in after the op is made, before the commit.
	_, err = vdocs.Update(VDoc{ID: "a"}).Set("Body", "other").Run(ctx)
	require.NoError(t, err)
	err = singletable.Tx(ctx, []singletable.WriteOp{op})
	require.NoError(t, err, "the caller read no version")
}
