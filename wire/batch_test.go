package wire_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/internal/designs"
)

// Alias reads a user's item under another entity type: never found.
type Alias struct {
	Username string `dynamodbav:"Username"`
	Name     string `dynamodbav:"Name"`
}

// Legacy is an item another service wrote without the entity type,
// recognised by its key shape, with a field only in its key.
type Legacy struct {
	ID    string `dynamodbav:"-"`
	Title string `dynamodbav:"title"`
}

var (
	aliases = singletable.MustDefine(singletable.Schema[Alias]{Type: "Alias", PK: "USER#{Username}", SK: "PROFILE"})
	legacy  = singletable.MustDefine(singletable.Schema[Legacy]{Type: "Legacy", PK: "LEGACY#{ID}", SK: "LEGACY", MatchKeys: true, KeyOnly: []string{"ID"}})
)

// batchReads are the ops of one BatchGet or TxGet on a table, and where
// they decode.
type batchReads struct {
	skills [8]designs.UserSkill
	users  [2]designs.User
	alias  Alias
	legacy [2]Legacy
	found  []bool
	err    error
}

// read runs the ops on tbl: skills (two absent, one twice, one with a
// projection, one consistent), the user twice, under the same key an
// alias (another entity's item: not found), and untyped items recognised
// by key shape; tx reads them with TxGet (no duplicates there).
func (b *batchReads) read(r readers, tx bool) {
	skills, users, al, lg := r.skills, r.users, r.aliases, r.legacy
	sk := func(i int, name string, o ...func(*singletable.ReadOptions)) singletable.GetOp {
		return skills.GetOp(designs.UserSkill{Username: "ana", SkillName: name}, &b.skills[i], o...)
	}
	ops := []singletable.GetOp{sk(0, "go01"), sk(1, "go02"), sk(2, "nope"), users.GetOp(designs.User{Username: "ana"}, &b.users[0]),
		lg.GetOp(Legacy{ID: "l1"}, &b.legacy[0]), lg.GetOp(Legacy{ID: "l2"}, &b.legacy[1]),
		sk(3, "go03", func(o *singletable.ReadOptions) { o.Fields = []string{"Level", "Years"} }),
		sk(4, "go04", func(o *singletable.ReadOptions) { o.ConsistentRead = true })}
	if !tx {
		ops = append(ops, al.GetOp(Alias{Username: "ana"}, &b.alias), sk(5, "go01"), sk(6, "nope"),
			users.GetOp(designs.User{Username: "ana"}, &b.users[1]), sk(7, "go05"))
		b.found, b.err = singletable.BatchGet(ctx, ops)
		return
	}
	b.found, b.err = singletable.TxGet(ctx, ops)
}

// readers are the repositories batchReads reads with.
type readers struct {
	skills  *singletable.Repo[designs.UserSkill]
	users   *singletable.Repo[designs.User]
	aliases *singletable.Repo[Alias]
	legacy  *singletable.Repo[Legacy]
}

// countDirectBatches counts the BatchGetItem and TransactGetItems
// responses that carried items (ConsumedCapacity says how many were
// read) which middleware sees without them (decoded directly) and with
// them.
func countDirectBatches(direct, viaSDK *atomic.Int64) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("count", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			switch o := out.Result.(type) {
			case *dynamodb.BatchGetItemOutput:
				tally(len(o.ConsumedCapacity) > 0 && aws.ToFloat64(o.ConsumedCapacity[0].CapacityUnits) > 0, o.Responses == nil, direct, viaSDK)
			case *dynamodb.TransactGetItemsOutput:
				tally(true, o.Responses == nil, direct, viaSDK)
			}
			return out, md, err
		}), middleware.Before)
	}
}

// stack adds middleware to a client's stacks.
func stack(fns ...func(*middleware.Stack) error) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, fns...) }
}

// capacity asks every BatchGetItem and TransactGetItems for the consumed
// capacity with INDEXES, as the Observe hook does, and keeps it.
func capacity(got *[]types.ConsumedCapacity) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("capacity", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			switch p := in.Parameters.(type) {
			case *dynamodb.BatchGetItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
			case *dynamodb.TransactGetItemsInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
			}
			out, md, err := next.HandleInitialize(ctx, in)
			switch o := out.Result.(type) {
			case *dynamodb.BatchGetItemOutput:
				*got = append(*got, o.ConsumedCapacity...)
			case *dynamodb.TransactGetItemsOutput:
				*got = append(*got, o.ConsumedCapacity...)
			}
			return out, md, err
		}), middleware.Before)
	}
}

// TestDirectBatchReadsEqualSDK: BatchGet and TxGet on the path give what
// they give on the SDK's, every response decoded directly; middleware
// sees every scalar of the input (it set ReturnConsumedCapacity INDEXES)
// and the output's ConsumedCapacity.
func TestDirectBatchReadsEqualSDK(t *testing.T) {
	t.Parallel()
	var directs, viaSDK atomic.Int64
	var caps []types.ConsumedCapacity
	f := tables(t, 6, stack(countDirectBatches(&directs, &viaSDK), capacity(&caps)))
	for _, id := range []string{"l1", "l2"} {
		_, err := f.wc.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.sdk.Name()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "LEGACY#" + id}, "SK": &types.AttributeValueMemberS{Value: "LEGACY"},
			"title": &types.AttributeValueMemberS{Value: "T " + id}}})
		require.NoError(t, err)
	}
	sdk := readers{f.sdkSkills, f.sdkUsers, singletable.MustBind(f.sdk, aliases), singletable.MustBind(f.sdk, legacy)}
	direct := readers{f.skills, f.users, singletable.MustBind(f.direct, aliases), singletable.MustBind(f.direct, legacy)}
	for _, tx := range []bool{false, true} {
		var want, got batchReads
		want.read(sdk, tx)
		caps = nil
		got.read(direct, tx)
		require.NoError(t, want.err)
		require.NoError(t, got.err)
		require.Equal(t, want, got, "TxGet %v", tx)
		require.Equal(t, "go01", got.skills[0].SkillName)
		require.Equal(t, "T l2", got.legacy[1].Title)
		require.Equal(t, "l2", got.legacy[1].ID, "filled from the key")
		require.Equal(t, "ana", got.users[0].Username)
		require.True(t, tx || !got.found[8], "an alias is not the user it shares a key with")
		require.NotEmpty(t, caps, "ConsumedCapacity (INDEXES) reached the caller: TxGet %v", tx)
		require.Equal(t, f.sdk.Name(), aws.ToString(caps[0].TableName))
		require.NotNil(t, caps[0].Table, "INDEXES gives the table's share")
	}
	require.Zero(t, viaSDK.Load(), "every response with items was decoded directly")
	require.Equal(t, int64(4), directs.Load(), "BatchGet: plain, projected, consistent; TxGet")
}

// TestDirectBatchGetUnprocessedKeys: keys DynamoDB leaves unprocessed
// are asked for again (the retry's request written by the path), and the
// partial responses decode into the right ops.
func TestDirectBatchGetUnprocessedKeys(t *testing.T) {
	t.Parallel()
	ft := ddbfault.New(nil, ddbfault.Config{Seed: 3})
	ft.SetEnabled(false)
	var direct, viaSDK atomic.Int64
	var caps []types.ConsumedCapacity
	f := tables(t, 40, stack(countDirectBatches(&direct, &viaSDK), capacity(&caps)), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	ft.Next("BatchGetItem", ddbfault.PartialBatch, ddbfault.PartialBatch)
	read := func(r *singletable.Repo[designs.UserSkill]) ([]designs.UserSkill, []bool) {
		got := make([]designs.UserSkill, 42)
		ops := make([]singletable.GetOp, len(got))
		for i := range ops {
			ops[i] = r.GetOp(designs.UserSkill{Username: "ana", SkillName: fmt.Sprintf("go%02d", i)}, &got[i])
		}
		found, err := singletable.BatchGet(ctx, ops)
		require.NoError(t, err)
		return got, found
	}
	want, wf := read(f.sdkSkills)
	requests := ft.Stats().Requests
	got, gf := read(f.skills)
	require.Equal(t, want, got)
	require.Equal(t, wf, gf)
	require.Equal(t, 2, ft.Stats().Faults[ddbfault.PartialBatch], "two partial responses")
	require.Equal(t, 3, ft.Stats().Requests-requests, "two retries of the keys left")
	require.Positive(t, direct.Load())
	require.Zero(t, viaSDK.Load(), "every response with items was decoded directly")
	for i := range 40 {
		require.True(t, gf[i])
		require.Equal(t, i, got[i].Years, "each item at its op")
	}
	require.False(t, gf[40] || gf[41])
}

// TestDirectWrites: a Put and a BatchWrite written by the path store what
// the SDK's would, and a refused one is the SDK's error.
func TestDirectWrites(t *testing.T) {
	t.Parallel()
	f := tables(t, 0)
	u := designs.User{Username: "bo", Name: "Bo \"\u2028\x7f\x00 😀", PasswordHash: "h"}
	_, err := f.users.Put(ctx, u)
	require.NoError(t, err)
	got, err := f.sdkUsers.Get(ctx, designs.User{Username: "bo"})
	require.NoError(t, err)
	require.Equal(t, u.Name, got.Name)
	_, err = f.users.Create(ctx, u)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	var ccf *types.ConditionalCheckFailedException
	require.ErrorAs(t, err, &ccf, "the SDK's error type reaches the caller")
	_, err = singletable.MustBind(singletable.NewTable(f.wc, "no-such-table"), designs.Users).Put(ctx, u)
	var rnf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &rnf)
	require.False(t, errors.Is(err, singletable.ErrAlreadyExists))

	var ops []singletable.WriteOp
	for i := range 30 {
		ops = append(ops, f.skills.PutOp(designs.UserSkill{Username: "bo", SkillName: fmt.Sprintf("s%02d\u2028\"", i), Years: i}))
	}
	ops = append(ops, f.users.DeleteOp(designs.User{Username: "bo"}))
	require.NoError(t, singletable.BatchWrite(ctx, ops))
	page, err := f.sdkSkills.Query(designs.UserSkill{Username: "bo"}).Page(ctx)
	require.NoError(t, err)
	require.Len(t, page.Items, 30)
	require.Equal(t, "s29\u2028\"", page.Items[29].SkillName)
	require.Equal(t, 29, page.Items[29].Years)
	_, err = f.sdkUsers.Get(ctx, designs.User{Username: "bo"})
	require.ErrorIs(t, err, singletable.ErrNotFound)
}

// TestDirectCollectionEqualsSDK: a collection's pages (a user and its
// skills, routed by entity type; then by key shape) read on the path equal
// the SDK path's, cursors included, every response decoded directly.
func TestDirectCollectionEqualsSDK(t *testing.T) {
	t.Parallel()
	var direct, viaSDK atomic.Int64
	f := tables(t, 9, stack(countDirect(&direct, &viaSDK)))
	read := func(users *singletable.Repo[designs.User], skills *singletable.Repo[designs.UserSkill], limit int) ([][]any, []designs.UserSkill) {
		var pages [][]any
		var into []designs.UserSkill
		var u designs.User
		c := users.Collection(designs.User{Username: "ana"}).Limit(limit)
		for cursor, first := "", true; first || cursor != ""; first = false {
			p, err := c.After(cursor).Page(ctx, users.IntoOne(&u), skills.Into(&into))
			require.NoError(t, err)
			pages, cursor = append(pages, p.Items), p.Cursor
		}
		all, err := users.Collection(designs.User{Username: "ana"}).Desc().Collect(ctx, users.Member(), skills.Member())
		require.NoError(t, err)
		return append(pages, all), into
	}
	wp, wi := read(f.sdkUsers, f.sdkSkills, 4)
	gp, gi := read(f.users, f.skills, 4)
	require.Equal(t, wp, gp)
	require.Equal(t, wi, gi)
	require.Len(t, gi, 9)
	require.Len(t, gp, 4, "three pages of 4 (the user and 9 skills), and the whole collection")
	require.Zero(t, viaSDK.Load(), "every collection response with items was decoded directly")
	require.Positive(t, direct.Load())
}
