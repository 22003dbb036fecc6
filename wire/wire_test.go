package wire_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/designs"
	"github.com/singletable-go/singletable/singletabletest"
	"github.com/singletable-go/singletable/wire"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

var ctx = context.Background()

// fixture is the same table in DynamoDB Local through an SDK client and
// through a client built with wire.Enable (wc), with n skills of one user
// and the user.
type fixture struct {
	sdk, direct       *singletable.Table
	wc                *dynamodb.Client
	sdkSkills, skills *singletable.Repo[designs.UserSkill]
	sdkUsers, users   *singletable.Repo[designs.User]
}

func tables(t *testing.T, n int, optFns ...func(*dynamodb.Options)) fixture {
	t.Helper()
	var f fixture
	f.sdk = singletabletest.NewTable(t, designs.Users, designs.UserSkills)
	f.wc = ddblocal.Shared(t).Client(append([]func(*dynamodb.Options){wire.Enable}, optFns...)...)
	f.direct = singletable.NewTable(f.wc, f.sdk.Name())
	f.sdkSkills, f.skills = singletable.MustBind(f.sdk, designs.UserSkills), singletable.MustBind(f.direct, designs.UserSkills)
	f.sdkUsers, f.users = singletable.MustBind(f.sdk, designs.Users), singletable.MustBind(f.direct, designs.Users)
	ops := []singletable.WriteOp{f.sdkUsers.PutOp(designs.User{Username: "ana", Name: "Ana \"Ñ\" \u2028 😀"})}
	for i := range n {
		ops = append(ops, f.sdkSkills.PutOp(designs.UserSkill{Username: "ana", SkillName: fmt.Sprintf("go%02d", i), Level: "expert",
			Years: i, Endorsements: 3 * i, LastUsed: time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)}))
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops))
	return f
}

func TestDirectReadsEqualSDK(t *testing.T) {
	t.Parallel()
	var direct, viaSDK atomic.Int64
	f := tables(t, 25, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, countDirect(&direct, &viaSDK)) })
	a, b := f.sdkSkills, f.skills
	key := designs.UserSkill{Username: "ana"}

	want, err := a.Query(key).Page(ctx)
	require.NoError(t, err)
	got, err := b.Query(key).Page(ctx)
	require.NoError(t, err)
	require.Len(t, got.Items, 25)
	require.Equal(t, want, got)

	// Pages with cursors, one after the other.
	var wantAll, gotAll []designs.UserSkill
	for cw, cg, first := "", "", true; first || cw != ""; first = false {
		pw, err := a.Query(key).Limit(7).After(cw).Page(ctx)
		require.NoError(t, err)
		pg, err := b.Query(key).Limit(7).After(cg).Page(ctx)
		require.NoError(t, err)
		require.Equal(t, pw.Items, pg.Items)
		require.Equal(t, pw.Cursor == "", pg.Cursor == "")
		cw, cg = pw.Cursor, pg.Cursor
		wantAll, gotAll = append(wantAll, pw.Items...), append(gotAll, pg.Items...)
	}
	require.Equal(t, wantAll, gotAll)
	require.Len(t, gotAll, 25)

	ws, err := a.Scan().Page(ctx)
	require.NoError(t, err)
	gs, err := b.Scan().Page(ctx)
	require.NoError(t, err)
	require.Equal(t, ws, gs)

	wi, err := a.QueryIndex("GSI1", designs.UserSkill{SkillName: "go03"}).Page(ctx)
	require.NoError(t, err)
	gi, err := b.QueryIndex("GSI1", designs.UserSkill{SkillName: "go03"}).Page(ctx)
	require.NoError(t, err)
	require.Len(t, gi.Items, 1)
	require.Equal(t, wi, gi)

	u1, err := f.sdkUsers.Get(ctx, designs.User{Username: "ana"})
	require.NoError(t, err)
	u2, err := f.users.Get(ctx, designs.User{Username: "ana"})
	require.NoError(t, err)
	require.Equal(t, u1, u2)
	_, err = f.users.Get(ctx, designs.User{Username: "nobody"})
	require.ErrorIs(t, err, singletable.ErrNotFound)
	s1, err := a.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "go04"})
	require.NoError(t, err)
	s2, err := b.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "go04"})
	require.NoError(t, err)
	require.Equal(t, s1, s2)
	// A user is not a skill: not found on both paths.
	_, err = b.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "PROFILE"})
	require.ErrorIs(t, err, singletable.ErrNotFound)
	require.Zero(t, viaSDK.Load(), "every read with items took the direct path")
	require.Equal(t, int64(7), direct.Load(), "the pages, the scan, the index query")
}

// countDirect counts the responses with items that middleware after the
// deserializer sees without items (decoded directly) and with them.
func countDirect(direct, viaSDK *atomic.Int64) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("count", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			switch o := out.Result.(type) {
			case *dynamodb.QueryOutput:
				tally(o.Count > 0, o.Items == nil, direct, viaSDK)
			case *dynamodb.ScanOutput:
				tally(o.Count > 0, o.Items == nil, direct, viaSDK)
			}
			return out, md, err
		}), middleware.Before)
	}
}

func tally(any, none bool, direct, viaSDK *atomic.Int64) {
	switch {
	case any && none:
		direct.Add(1)
	case any:
		viaSDK.Add(1)
	}
}

// A service error keeps its SDK type on a client with the path on.
func TestDirectErrorsAreTheSDKs(t *testing.T) {
	t.Parallel()
	f := tables(t, 1)
	direct, wc := f.direct, f.wc
	_, err := f.users.Create(ctx, designs.User{Username: "ana"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = wc.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(direct.Name()),
		Item:                map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#ana"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}},
		ConditionExpression: aws.String("attribute_not_exists(PK)")})
	var ccf *types.ConditionalCheckFailedException
	require.ErrorAs(t, err, &ccf)
	_, err = singletable.MustBind(singletable.NewTable(wc, "no-such-table"), designs.Users).Get(ctx, designs.User{Username: "ana"})
	var rnf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &rnf)
}

// A Query made from middleware inside a direct Query, with its context,
// is answered by the SDK and does not take the outer call's items.
func TestDirectNestedCallDoesNotLeak(t *testing.T) {
	t.Parallel()
	sdk := tables(t, 3).sdk
	var nested *dynamodb.QueryOutput
	var inner *dynamodb.Client
	nest := func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("nest", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if nested == nil {
				nested = &dynamodb.QueryOutput{} // once: the nested call runs this too
				out, err := inner.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(sdk.Name()),
					KeyConditionExpression:    aws.String("PK = :pk"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "USER#ana"}}})
				if err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				nested = out
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	}
	inner = ddblocal.Shared(t).Client(wire.Enable, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, nest) })
	skills := singletable.MustBind(singletable.NewTable(inner, sdk.Name()), designs.UserSkills)
	page, err := skills.Query(designs.UserSkill{Username: "ana"}).Page(ctx)
	require.NoError(t, err)
	require.Len(t, page.Items, 3)
	require.Len(t, nested.Items, 4, "the nested call's items are the SDK's: 3 skills and the user")
}

// A client the path does not apply to (a wrapper) reads the same, and
// so does a table with an Observe hook, on the path, its hook counting
// the page's items.
func TestDirectFallback(t *testing.T) {
	t.Parallel()
	f := tables(t, 4)
	sdk, wc := f.sdk, f.wc
	var observed []int
	observing := singletable.NewTable(wc, sdk.Name(), func(o *singletable.TableOptions) {
		o.Observe = func(_ context.Context, ob *singletable.Observation) { observed = append(observed, ob.Count) }
	})
	wrapped := singletable.NewTable(struct{ singletable.Client }{wc}, sdk.Name())
	want, err := f.sdkSkills.Query(designs.UserSkill{Username: "ana"}).Page(ctx)
	require.NoError(t, err)
	for _, tb := range []*singletable.Table{observing, wrapped} {
		got, err := singletable.MustBind(tb, designs.UserSkills).Query(designs.UserSkill{Username: "ana"}).Page(ctx)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	require.Equal(t, []int{4}, observed)
}
