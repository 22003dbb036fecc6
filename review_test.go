package singletable_test

// Adversarial review of issue 12 ("One write plan"): regression tests for
// behaviours that break the write plan's promises.

import (
	"context"
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
