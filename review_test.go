package singletable_test

// Adversarial review of issue 12 ("One write plan"): regression tests for
// behaviours that break the write plan's promises.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

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
// (update.go txItems → createItems): the item is created although the
// condition (which a missing attribute cannot satisfy) is false.
func TestReviewUpsertCreateKeepsIfCondition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	var statuses *singletable.Repo[Status]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		ranks = singletable.Bind(tbl, Ranks)
		statuses = singletable.Bind(tbl, Statuses)
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
func TestReviewIdempotentUpdateRepeatOfVersionedEntity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	newTable(t, func(tbl *singletable.Table) { vdocs = singletable.Bind(tbl, VDocs) })
	require.NoError(t, vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"}))
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
func TestReviewIdempotentUpsertRepeatAfterCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	newTable(t, func(tbl *singletable.Table) { ranks = singletable.Bind(tbl, Ranks) })
	tok := runToken("review-upsert")
	_, err := ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").Upsert().Idempotent(tok).Run(ctx)
	require.NoError(t, err)
	r, err := ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").Upsert().Idempotent(tok).Run(ctx)
	require.NoError(t, err, "the repeat of an idempotent upsert succeeds")
	assert.Equal(t, "hi", r.Note)
}

// Version 0 means the caller read none: "Put and Update read the stored
// version themselves and are conditioned on that (retrying if another
// writer gets in between)". With a token the race is not retried
// (write.go execToken: token == "" in the retry predicate), so an
// idempotent update that gave no version fails with ErrVersionConflict.
func TestReviewIdempotentUpdateRacedIsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hc := &hookClient{Client: ddblocal.Shared().Client()}
	var vdocs *singletable.Repo[VDoc]
	tbl := newTableWith(t, hc, func(tbl *singletable.Table) { vdocs = singletable.Bind(tbl, VDocs) })
	require.NoError(t, vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"}))
	hc.once(func() {
		// Another writer bumps the version between the read and the write.
		_, err := hc.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(tbl.Name()),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "DOC#a"}, "SK": &types.AttributeValueMemberS{Value: "DOC"}},
			UpdateExpression:          aws.String("SET Version = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "2"}},
		})
		require.NoError(t, err)
	})
	d, err := vdocs.Update(VDoc{ID: "a"}).Set("Body", "mine").Idempotent(runToken("review-race")).Run(ctx)
	require.NoError(t, err, "no version was given: nothing for the caller to conflict with")
	assert.Equal(t, int64(3), d.Version)
}

// Typed errors come before the network. A Put or Update of a versioned
// entity with version 0 now reads the stored version first (write.go
// putItems: readBefore before encodeSized; update.go txItems: readBefore
// before build), so an item that cannot be stored (invalid UTF-8, over
// 400 KB) is refused only after a GetItem reached DynamoDB.
func TestReviewBadValuesRefusedBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	_, c := newTable(t, func(tbl *singletable.Table) { vdocs = singletable.Bind(tbl, VDocs) })
	require.NoError(t, vdocs.Create(ctx, VDoc{ID: "a", Body: "ok"}))
	var ve *singletable.ValidationError
	for name, write := range map[string]func() error{
		"Put invalid UTF-8": func() error { return vdocs.Put(ctx, VDoc{ID: "a", Body: "bad \xff utf-8"}) },
		"Put over 400 KB":   func() error { return vdocs.Put(ctx, VDoc{ID: "a", Body: strings.Repeat("x", 410_000)}) },
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
// write also read the item (unique fields, index reads), writeplan.go
// failed() reports any version mismatch as raced() (a *raceError), so
// execToken rebuilds and resends the doomed write 5 more times (each
// with a GetItem) and the error says "the item changed while its unique
// guards were being updated" instead of naming the version read.
func TestReviewStaleCallerVersionIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, c := accountsTable(t)
	require.NoError(t, accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"}))
	a, err := accounts.Get(ctx, Account{Username: "ann"}, singletable.ConsistentRead())
	require.NoError(t, err)
	_, err = accounts.Update(Account{Username: "ann"}).Set("Name", "Ann").Run(ctx)
	require.NoError(t, err)

	before := c.requests.Load()
	a.Name = "stale"
	err = accounts.Put(ctx, a) // version 1; the stored one is 2
	require.ErrorIs(t, err, singletable.ErrVersionConflict)
	assert.Contains(t, err.Error(), "version 1 was read")
	assert.LessOrEqual(t, c.requests.Load()-before, int64(2), "one read (as before the change), not a retry loop")
}
