package singletable_test

import (
	"context"
	"fmt"
	"sync"
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

// txClient counts TransactWriteItems requests and can lose the response of
// the next ones after DynamoDB applied them (as a dropped connection would).
type txClient struct {
	*dynamodb.Client
	requests atomic.Int64
	loseNext atomic.Int64

	mu     sync.Mutex
	tokens []string
}

func newTxClient(t testing.TB) *txClient { return &txClient{Client: ddblocal.Shared(t).Client()} }

func (c *txClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.requests.Add(1)
	c.mu.Lock()
	c.tokens = append(c.tokens, aws.ToString(in.ClientRequestToken))
	c.mu.Unlock()
	out, err := c.Client.TransactWriteItems(ctx, in, o...)
	if err == nil && c.loseNext.Add(-1) >= 0 {
		return nil, &types.InternalServerError{Message: aws.String("injected: response lost")}
	}
	return out, err
}

func txSeedTable(t *testing.T) (*txClient, *singletable.Table, *singletable.Repo[User], *singletable.Repo[UserSkill]) {
	c := newTxClient(t)
	var users *singletable.Repo[User]
	var skills *singletable.Repo[UserSkill]
	tbl := newTableWith(t, c, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})
	c.requests.Store(0)
	return c, tbl, users, skills
}

func TestTxCommitsAcrossEntities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, users, skills := txSeedTable(t)
	_, err := users.Create(ctx, User{Username: "old", Name: "Old"})
	require.NoError(t, err)
	_, err = skills.Create(ctx, UserSkill{Username: "ann", SkillName: "go", Level: "Beginner"})
	require.NoError(t, err)
	_, err = skills.Create(ctx, UserSkill{Username: "ann", SkillName: "sql", Level: "Beginner"})
	require.NoError(t, err)

	err = singletable.Tx(ctx, []singletable.WriteOp{
		users.CreateOp(User{Username: "ann", Name: "Ann"}),
		skills.PutOp(UserSkill{Username: "ann", SkillName: "rust", Level: "Expert"}),
		skills.Update(UserSkill{Username: "ann", SkillName: "go"}).Set("Level", "Advanced").Add("Endorsements", 1).Op(),
		users.DeleteOp(User{Username: "old"}, func(o *singletable.WriteOptions) { o.MustExist = true }),
		skills.CheckOp(UserSkill{Username: "ann", SkillName: "sql"}, expression.Name("ProficiencyLevel").Equal(expression.Value("Beginner"))),
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.requests.Load(), "one TransactWriteItems")

	ann, err := users.Get(ctx, User{Username: "ann"})
	require.NoError(t, err)
	assert.Equal(t, "Ann", ann.Name)
	g, err := skills.Get(ctx, UserSkill{Username: "ann", SkillName: "go"})
	require.NoError(t, err)
	assert.Equal(t, "Advanced", g.Level)
	assert.Equal(t, 1, g.Endorsements)
	// The update recomputed the GSI1 key in the transaction too.
	adv, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}).Where("Level", singletable.Eq, "Advanced").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"ann"}, usernames(adv))
	_, err = users.Get(ctx, User{Username: "old"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestTxCancelledReportsTheFailingOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, users, skills := txSeedTable(t)
	_, err := users.Create(ctx, User{Username: "bob"})
	require.NoError(t, err)

	err = singletable.Tx(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "amy"}),
		users.CreateOp(User{Username: "bob"}), // exists
		skills.PutOp(UserSkill{Username: "amy", SkillName: "go"}),
	})
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Index)
	assert.Equal(t, "Create", te.Op)
	assert.Equal(t, "User", te.Entity)
	assert.Equal(t, "ConditionalCheckFailed", te.Code)
	assert.Equal(t, "USER#bob", te.Key["PK"].(*types.AttributeValueMemberS).Value)
	require.Len(t, te.Reasons, 1)
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.NotErrorIs(t, err, singletable.ErrConditionFailed)
	var tce *types.TransactionCanceledException
	assert.ErrorAs(t, err, &tce, "the SDK error stays reachable")
	assert.Contains(t, err.Error(), "op 1 (Create User")
	_, err = users.Get(ctx, User{Username: "amy"})
	assert.ErrorIs(t, err, singletable.ErrNotFound, "all or nothing")

	cases := []struct {
		name string
		op   singletable.WriteOp
		kind string
		want error
	}{
		{"update of a missing item", users.Update(User{Username: "ghost"}).Set("Name", "x").Op(), "Update", singletable.ErrNotFound},
		{"update whose condition fails", users.Update(User{Username: "bob"}).Set("Name", "x").If(expression.Name("Name").Equal(expression.Value("Robert"))).Op(), "Update", singletable.ErrConditionFailed},
		{"update with a condition on a missing item", users.Update(User{Username: "ghost"}).Set("Name", "x").If(expression.Name("Name").Equal(expression.Value("Robert"))).Op(), "Update", singletable.ErrNotFound},
		{"delete that must exist", users.DeleteOp(User{Username: "ghost"}, func(o *singletable.WriteOptions) { o.MustExist = true }), "Delete", singletable.ErrNotFound},
		{"put that must exist", users.PutOp(User{Username: "ghost"}, func(o *singletable.WriteOptions) { o.MustExist = true }), "Put", singletable.ErrNotFound},
		{"put with a condition", users.PutOp(User{Username: "bob"}, func(o *singletable.WriteOptions) { o.If = expression.Name("Name").Equal(expression.Value("Robert")) }), "Put", singletable.ErrConditionFailed},
		{"check", users.CheckOp(User{Username: "bob"}, expression.Name("Name").Equal(expression.Value("Robert"))), "Check", singletable.ErrConditionFailed},
		{"check of a missing item", users.CheckOp(User{Username: "ghost"}, expression.AttributeExists(expression.Name("PK"))), "Check", singletable.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := singletable.Tx(ctx, []singletable.WriteOp{skills.PutOp(UserSkill{Username: "bob", SkillName: tc.name}), tc.op})
			var te *singletable.TransactionError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, 1, te.Index)
			assert.Equal(t, tc.kind, te.Op)
			assert.ErrorIs(t, err, tc.want)
			_, err = skills.Get(ctx, UserSkill{Username: "bob", SkillName: tc.name})
			assert.ErrorIs(t, err, singletable.ErrNotFound, "nothing applied")
		})
	}
}

func TestTxRejectedBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, users, skills := txSeedTable(t)

	puts := func(n int) []singletable.WriteOp {
		ops := make([]singletable.WriteOp, n)
		for i := range ops {
			ops[i] = skills.PutOp(UserSkill{Username: "u", SkillName: fmt.Sprint("s", i)})
		}
		return ops
	}
	err := singletable.Tx(ctx, puts(101))
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "101 items")

	err = singletable.Tx(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "a"}),
		users.DeleteOp(User{Username: "a"}),
	})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "twice")

	err = singletable.Tx(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "a"}),
		users.CreateOp(User{}), // no key
	})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Contains(t, err.Error(), "op 1 (Create User)")

	err = singletable.Tx(ctx, []singletable.WriteOp{users.Update(User{Username: "a"}).Set("Nope", 1).Op()})
	require.ErrorAs(t, err, &ve)

	err = singletable.Tx(ctx, []singletable.WriteOp{{}})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "zero WriteOp")

	require.NoError(t, singletable.Tx(ctx, nil), "empty transaction")
	assert.Zero(t, c.requests.Load(), "nothing reached DynamoDB")

	// Exactly 100 items is fine.
	require.NoError(t, singletable.Tx(ctx, puts(100)))
	n, err := skills.Query(UserSkill{Username: "u"}).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 100, n)
}

// A check is on the entity's item: an item of another entity under the
// key (typed, or untyped for an entity that does not match keys) fails it
// even when it satisfies the condition, as it fails the entity's writes;
// an absent item is checked as absent.
func TestCheckOpOnlyTheEntitysItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, tbl, users, skills := txSeedTable(t)
	put := func(name string, typ string) {
		t.Helper()
		item := users.DeleteOp(User{Username: name}).Key()
		item["Name"] = &types.AttributeValueMemberS{Value: "Robert"}
		if typ != "" {
			item["EntityType"] = &types.AttributeValueMemberS{Value: typ}
		}
		_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
		require.NoError(t, err)
	}
	put("typed", "Bot")
	put("untyped", "")
	for _, name := range []string{"typed", "untyped"} {
		err := singletable.Tx(ctx, []singletable.WriteOp{
			skills.PutOp(UserSkill{Username: "bob", SkillName: name}),
			users.CheckOp(User{Username: name}, expression.Name("Name").Equal(expression.Value("Robert"))),
		})
		assert.ErrorIs(t, err, singletable.ErrConditionFailed, name)
		_, err = skills.Get(ctx, UserSkill{Username: "bob", SkillName: name})
		assert.ErrorIs(t, err, singletable.ErrNotFound, "nothing applied")
	}
	put("robert", "User")
	err := singletable.Tx(ctx, []singletable.WriteOp{
		users.CheckOp(User{Username: "robert"}, expression.Name("Name").Equal(expression.Value("Robert"))),
		users.CheckOp(User{Username: "ghost"}, expression.AttributeNotExists(expression.Name("Name"))),
		skills.PutOp(UserSkill{Username: "bob", SkillName: "checked"}),
	})
	require.NoError(t, err)
}

func TestTxIdempotentRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, users, _ := txSeedTable(t)

	// The first response is lost after DynamoDB applied the transaction: the
	// retry carries the same token, so the Create is not applied again (it
	// would fail with ErrAlreadyExists).
	c.loseNext.Store(1)
	err := singletable.Tx(ctx, []singletable.WriteOp{users.CreateOp(User{Username: "once", Name: "first"})}, func(o *singletable.TxOptions) { o.Backoff = singletable.Backoff{Base: -1} })
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.requests.Load())
	c.mu.Lock()
	assert.Equal(t, c.tokens[0], c.tokens[1], "same token on the retry")
	assert.NotEmpty(t, c.tokens[0])
	c.mu.Unlock()

	// A caller-chosen token: a repeat of the same transaction succeeds
	// without writing again, even though it is a Create.
	// Tokens are remembered across tables for 10 minutes: one per run.
	token := fmt.Sprintf("order-42-%d", time.Now().UnixNano())
	run := func(name string) error {
		return singletable.Tx(ctx, []singletable.WriteOp{users.CreateOp(User{Username: "order42", Name: name})}, func(o *singletable.TxOptions) { o.ClientRequestToken = token })
	}
	require.NoError(t, run("x"))
	require.NoError(t, run("x"), "same token, same items: already done")
	err = run("y")
	require.Error(t, err, "same token, other items")
	assert.Contains(t, err.Error(), "IdempotentParameterMismatch")

	// Without a token, a second Create is a real second attempt.
	err = singletable.Tx(ctx, []singletable.WriteOp{users.CreateOp(User{Username: "once"})})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
}

// TxNote is an entity whose Note is promoted from an embedded pointer, so
// an Update's values reach it through a pointer.
type TxNote struct {
	ID string `dynamodbav:"ID"`
	*TxNoteBody
	Other string `dynamodbav:"Other"`
}

type TxNoteBody struct {
	Note string `dynamodbav:"Note"`
}

var TxNotes = singletable.MustDefine(singletable.Schema[TxNote]{Type: "TxNote", PK: "TXNOTE#{ID}", SK: "TXNOTE"})

// Changes made to an Update after Update.Op are not part of the op,
// fields promoted from an embedded pointer included.
func TestTxUpdateChangedAfterTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var notes *singletable.Repo[TxNote]
	newTable(t, func(tb *singletable.Table) { notes = singletable.MustBind(tb, TxNotes) })
	_, err := notes.Create(ctx, TxNote{ID: "a", TxNoteBody: &TxNoteBody{Note: "n0"}, Other: "o0"})
	require.NoError(t, err)
	u := notes.Update(TxNote{ID: "a"}).Set("Note", "n1").Set("Other", "o1")
	op := u.Op()
	u.Set("Note", "after").Set("Other", "after")
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{op}))
	got, err := notes.Get(ctx, TxNote{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, "o1", got.Other)
	assert.Equal(t, "n1", got.Note)
}

// Create takes the write options of Put and Delete, alone and as an op: If
// must hold too (ErrConditionFailed), an existing item is still
// ErrAlreadyExists, and MustExist, which contradicts a create, is refused
// before the network.
func TestCreateWriteOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, users, skills := txSeedTable(t)
	never := func(o *singletable.WriteOptions) { o.If = expression.Name("Name").Equal(expression.Value("x")) }
	holds := func(o *singletable.WriteOptions) { o.If = expression.AttributeNotExists(expression.Name("Name")) }
	must := func(o *singletable.WriteOptions) { o.MustExist = true }

	_, err := users.Create(ctx, User{Username: "ann", Name: "Ann"}, never)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed)
	assert.NotErrorIs(t, err, singletable.ErrAlreadyExists)
	created, err := users.Create(ctx, User{Username: "ann", Name: "Ann"}, holds)
	require.NoError(t, err)
	assert.Equal(t, "Ann", created.Name)
	_, err = users.Create(ctx, User{Username: "ann"}, holds)
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)

	before := c.requests.Load()
	_, err = users.Create(ctx, User{Username: "bob"}, must)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "MustExist")
	err = singletable.Tx(ctx, []singletable.WriteOp{users.CreateOp(User{Username: "bob"}, must)})
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, before, c.requests.Load(), "nothing sent")

	err = singletable.Tx(ctx, []singletable.WriteOp{
		skills.CreateOp(UserSkill{Username: "bob", SkillName: "go"}),
		users.CreateOp(User{Username: "bob"}, never),
	})
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Index)
	assert.Equal(t, "Create", te.Op)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed)
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{
		skills.CreateOp(UserSkill{Username: "bob", SkillName: "go"}),
		users.CreateOp(User{Username: "bob"}, holds),
	}))
	_, err = users.Get(ctx, User{Username: "bob"})
	require.NoError(t, err)
}
