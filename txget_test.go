package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// txGetClient counts every request the tests send (TransactGetItems
// included) and can answer the next TransactGetItems with a scripted
// cancellation instead of sending it.
type txGetClient struct {
	*countingClient
	gets     atomic.Int64 // TransactGetItems requests
	cancelAs atomic.Pointer[types.TransactionCanceledException]
}

func newTxGetClient(t testing.TB) *txGetClient {
	return &txGetClient{countingClient: &countingClient{Client: ddblocal.Shared(t).Client()}}
}

func (c *txGetClient) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	c.count()
	c.gets.Add(1)
	if tce := c.cancelAs.Swap(nil); tce != nil {
		return nil, tce
	}
	return c.Client.TransactGetItems(ctx, in, o...)
}

func (c *txGetClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count()
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// Alias is stored at a User's key: an Alias read there finds a User item,
// which is not an Alias.
type Alias struct {
	Username string `dynamodbav:"Username"`
	Target   string `dynamodbav:"Target"`
}

var Aliases = singletable.MustDefine(singletable.Schema[Alias]{Type: "Alias", PK: "USER#{Username}", SK: "PROFILE"})

type txGetRepos struct {
	tbl      *singletable.Table
	c        *txGetClient
	users    *singletable.Repo[User]
	skills   *singletable.Repo[UserSkill]
	aliases  *singletable.Repo[Alias]
	accounts *singletable.Repo[Account]
}

func txGetTable(t *testing.T, c *txGetClient) txGetRepos {
	if c == nil {
		c = newTxGetClient(t)
	}
	r := txGetRepos{c: c}
	r.tbl = newTableWith(t, c, func(tbl *singletable.Table) {
		r.users = singletable.MustBind(tbl, Users)
		r.skills = singletable.MustBind(tbl, UserSkills)
		r.aliases = singletable.MustBind(tbl, Aliases)
		r.accounts = singletable.MustBind(tbl, Accounts)
	})
	c.requests.Store(0)
	return r
}

func TestTxGetReadsSeveralEntitiesInOneRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := txGetTable(t, nil)
	_, err := r.users.Create(ctx, User{Username: "ann", Name: "Ann", PasswordHash: "h1"})
	require.NoError(t, err)
	_, err = r.users.Create(ctx, User{Username: "bob", Name: "Bob"})
	require.NoError(t, err)
	_, err = r.skills.Create(ctx, UserSkill{Username: "ann", SkillName: "go", Level: "Expert", Years: 7})
	require.NoError(t, err)
	r.c.requests.Store(0)

	// Destinations hold garbage: a missing item must zero its dest.
	u := User{Username: "stale", Name: "stale"}
	missing := UserSkill{Username: "stale", Years: 99}
	alias := Alias{Username: "stale", Target: "stale"}
	found, err := singletable.TxGet(ctx, []singletable.GetOp{
		r.users.GetOp(User{Username: "ann"}, &u),
		r.skills.GetOp(UserSkill{Username: "ann", SkillName: "rust"}, &missing), // no such item
		r.aliases.GetOp(Alias{Username: "bob"}, &alias),                         // bob's key holds a User
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, found)
	assert.Equal(t, User{Username: "ann", Name: "Ann", PasswordHash: "h1"}, u)
	assert.Zero(t, missing)
	assert.Zero(t, alias, "another entity's item is not found")
	assert.Equal(t, int64(1), r.c.requests.Load(), "one TransactGetItems")
	assert.Equal(t, int64(1), r.c.gets.Load())

	// The same items through Get agree, item for item.
	_, err = r.aliases.Get(ctx, Alias{Username: "bob"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	var s UserSkill
	found, err = singletable.TxGet(ctx, []singletable.GetOp{r.skills.GetOp(UserSkill{Username: "ann", SkillName: "go"}, &s)})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, found)
	g, err := r.skills.Get(ctx, UserSkill{Username: "ann", SkillName: "go"})
	require.NoError(t, err)
	assert.Equal(t, g, s)
}

func TestTxGetDecodesLikeGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := txGetTable(t, nil)
	// Account has a version, managed timestamps and a unique email guard.
	_, err := r.accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com", Name: "Ann"})
	require.NoError(t, err)
	_, err = r.accounts.Update(Account{Username: "ann"}).Set("Name", "Ann B").Run(ctx)
	require.NoError(t, err)
	want, err := r.accounts.Get(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	require.Equal(t, 2, want.Version)
	require.False(t, want.Created.IsZero())

	var a Account
	var u User
	found, err := singletable.TxGet(ctx, []singletable.GetOp{
		r.accounts.GetOp(Account{Username: "ann"}, &a),
		r.users.GetOp(User{Username: "ann"}, &u), // another partition: none
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, found)
	assert.Equal(t, want, a, "managed fields decoded as Get decodes them")

	// Fields: a projection, as Get's.
	_, err = r.users.Create(ctx, User{Username: "ann", Name: "Ann", PasswordHash: "secret"})
	require.NoError(t, err)
	a, u = Account{Name: "stale"}, User{PasswordHash: "stale"}
	found, err = singletable.TxGet(ctx, []singletable.GetOp{
		r.accounts.GetOp(Account{Username: "ann"}, &a, func(o *singletable.ReadOptions) { o.Fields = []string{"Version", "Name"} }),
		r.users.GetOp(User{Username: "ann"}, &u, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }, func(o *singletable.ReadOptions) { o.ConsistentRead = true }),
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, found)
	// The key attributes are always read, and fill the key fields.
	assert.Equal(t, Account{Username: "ann", Version: 2, Name: "Ann B"}, a)
	assert.Equal(t, User{Username: "ann", Name: "Ann"}, u, "only the named fields (and the key) are read")
	gu, err := r.users.Get(ctx, User{Username: "ann"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} })
	require.NoError(t, err)
	assert.Equal(t, gu, u)

	// An item that does not decode: the error names the op, and no dest
	// is written, not even the other op's.
	_, err = r.c.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(r.tbl.Name()), Item: map[string]types.AttributeValue{
		"PK":           &types.AttributeValueMemberS{Value: "USER#ann"},
		"SK":           &types.AttributeValueMemberS{Value: "SKILL#bad"},
		"EntityType":   &types.AttributeValueMemberS{Value: "UserSkill"},
		"Endorsements": &types.AttributeValueMemberS{Value: "many"},
	}})
	require.NoError(t, err)
	u = User{Name: "untouched"}
	s := UserSkill{Level: "untouched"}
	found, err = singletable.TxGet(ctx, []singletable.GetOp{
		r.users.GetOp(User{Username: "ann"}, &u),
		r.skills.GetOp(UserSkill{Username: "ann", SkillName: "bad"}, &s),
	})
	require.Error(t, err)
	assert.Nil(t, found)
	assert.Contains(t, err.Error(), "op 1 (Get UserSkill")
	_, gerr := r.skills.Get(ctx, UserSkill{Username: "ann", SkillName: "bad"})
	require.Error(t, gerr, "Get refuses the same item")
	assert.Equal(t, User{Name: "untouched"}, u)
	assert.Equal(t, UserSkill{Level: "untouched"}, s)
}

func TestTxGetAcrossTablesOfOneClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newTxGetClient(t)
	r1 := txGetTable(t, c)
	r2 := txGetTable(t, c)
	_, err := r1.users.Create(ctx, User{Username: "ann", Name: "Ann in 1"})
	require.NoError(t, err)
	_, err = r2.users.Create(ctx, User{Username: "ann", Name: "Ann in 2"})
	require.NoError(t, err)
	c.requests.Store(0)

	var a, b User
	found, err := singletable.TxGet(ctx, []singletable.GetOp{r1.users.GetOp(User{Username: "ann"}, &a), r2.users.GetOp(User{Username: "ann"}, &b)})
	require.NoError(t, err, "the same key in two tables is two items")
	assert.Equal(t, []bool{true, true}, found)
	assert.Equal(t, "Ann in 1", a.Name)
	assert.Equal(t, "Ann in 2", b.Name)
	assert.Equal(t, int64(1), c.requests.Load())
}

func TestTxGetRejectedBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := txGetTable(t, nil)
	other := txGetTable(t, nil) // another client
	var u User
	var s UserSkill
	var al Alias
	var ve *singletable.ValidationError
	var ke *singletable.KeyError

	cases := []struct {
		name string
		ops  []singletable.GetOp
		want any    // **singletable.ValidationError or **singletable.KeyError
		text string // in the message
	}{
		{"101 ops", skillOps(r.skills, 101), &ve, "101 ops; DynamoDB allows 100"},
		{"the same op twice", []singletable.GetOp{
			r.users.GetOp(User{Username: "a"}, &u), r.users.GetOp(User{Username: "a"}, &u),
		}, &ve, "twice (op 0 and op 1)"},
		{"one item through two entities", []singletable.GetOp{
			r.skills.GetOp(UserSkill{Username: "a", SkillName: "go"}, &s),
			r.users.GetOp(User{Username: "a"}, &u),
			r.aliases.GetOp(Alias{Username: "a"}, &al),
		}, &ve, "twice (op 1 and op 2)"},
		{"a key field missing", []singletable.GetOp{
			r.users.GetOp(User{Username: "a"}, &u), r.skills.GetOp(UserSkill{Username: "a"}, &s),
		}, &ke, "op 1 (Get UserSkill)"},
		{"a nil dest", []singletable.GetOp{r.users.GetOp(User{Username: "a"}, nil)}, &ve, "dest is nil"},
		{"an unknown field", []singletable.GetOp{r.users.GetOp(User{Username: "a"}, &u, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} })}, &ve, "Nope"},
		{"an op not made by GetOp", []singletable.GetOp{r.users.GetOp(User{Username: "a"}, &u), {}}, &ve, "op 1 was not made by Repo.GetOp"},
		{"tables with different clients", []singletable.GetOp{
			r.users.GetOp(User{Username: "a"}, &u), other.skills.GetOp(UserSkill{Username: "a", SkillName: "go"}, &s),
		}, &ve, "another client"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found, err := singletable.TxGet(ctx, tc.ops)
			require.Error(t, err)
			assert.Nil(t, found)
			switch target := tc.want.(type) {
			case **singletable.ValidationError:
				assert.ErrorAs(t, err, target)
			case **singletable.KeyError:
				assert.ErrorAs(t, err, target)
				assert.Equal(t, "UserSkill", (*target).Entity)
				assert.Equal(t, []string{"SkillName"}, (*target).Missing)
			}
			assert.Contains(t, err.Error(), tc.text)
		})
	}
	// Every op's error is reported, each naming its op.
	_, err := singletable.TxGet(ctx, []singletable.GetOp{r.users.GetOp(User{}, &u), r.users.GetOp(User{Username: "a"}, &u), r.skills.GetOp(UserSkill{}, &s)})
	require.ErrorAs(t, err, &ke)
	assert.Contains(t, err.Error(), "op 0 (Get User)")
	assert.Contains(t, err.Error(), "op 2 (Get UserSkill)")
	// A made op says what is wrong with it.
	op := r.skills.GetOp(UserSkill{Username: "a"}, &s)
	require.ErrorAs(t, op.Err(), &ke)
	assert.Equal(t, "UserSkill", op.Entity())
	assert.Same(t, r.tbl, op.Table())

	// No ops is nothing to read, as for Tx and BatchGet.
	found, err := singletable.TxGet(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, found)

	assert.Zero(t, r.c.requests.Load(), "nothing reached DynamoDB")
	assert.Zero(t, other.c.requests.Load(), "nothing reached DynamoDB")

	// Exactly 100 ops is one request; every other item exists.
	var writes []singletable.WriteOp
	for i := 0; i < 100; i += 2 {
		writes = append(writes, r.skills.PutOp(UserSkill{Username: "u", SkillName: fmt.Sprint("s", i), Years: i}))
	}
	require.NoError(t, singletable.BatchWrite(ctx, writes))
	r.c.requests.Store(0)
	dests := make([]UserSkill, 100)
	ops := make([]singletable.GetOp, 100)
	for i := range ops {
		ops[i] = r.skills.GetOp(UserSkill{Username: "u", SkillName: fmt.Sprint("s", i)}, &dests[i])
	}
	found, err = singletable.TxGet(ctx, ops)
	require.NoError(t, err)
	require.Len(t, found, 100)
	for i := range found {
		assert.Equal(t, i%2 == 0, found[i], "op %d", i)
		if i%2 == 0 {
			assert.Equal(t, i, dests[i].Years)
		}
	}
	assert.Equal(t, int64(1), r.c.requests.Load())
}

func skillOps(r *singletable.Repo[UserSkill], n int) []singletable.GetOp {
	ops := make([]singletable.GetOp, n)
	dests := make([]UserSkill, n)
	for i := range ops {
		ops[i] = r.GetOp(UserSkill{Username: "u", SkillName: fmt.Sprint("s", i)}, &dests[i])
	}
	return ops
}

// Key values holding delimiters, template syntax, escapes and non-ASCII
// text read back exactly, each from its own item.
func TestTxGetUnicodeAndDelimiterKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := txGetTable(t, nil)
	names := []string{"a#SKILL#b", "a", "PROFILE", "{Username}", "%23", "日本語", "żółw 🐢", "a b\tc", "#", "%"}
	for _, n := range names {
		_, err := r.users.Create(ctx, User{Username: n, Name: "user " + n})
		require.NoError(t, err)
		_, err = r.skills.Create(ctx, UserSkill{Username: n, SkillName: n + "#x", Level: "level " + n})
		require.NoError(t, err)
	}
	var ops []singletable.GetOp
	users := make([]User, len(names))
	skills := make([]UserSkill, len(names))
	for i, n := range names {
		ops = append(ops, r.users.GetOp(User{Username: n}, &users[i]), r.skills.GetOp(UserSkill{Username: n, SkillName: n + "#x"}, &skills[i]))
	}
	// Keys a naive concatenation would confuse with the ones above.
	var ghost UserSkill
	var ghostUser User
	ops = append(ops,
		r.skills.GetOp(UserSkill{Username: "a", SkillName: "b#x"}, &ghost),
		r.users.GetOp(User{Username: "a#SKILL#b#x"}, &ghostUser))
	found, err := singletable.TxGet(ctx, ops)
	require.NoError(t, err)
	for i, n := range names {
		assert.True(t, found[2*i], n)
		assert.True(t, found[2*i+1], n)
		assert.Equal(t, User{Username: n, Name: "user " + n}, users[i])
		assert.Equal(t, "level "+n, skills[i].Level)
		assert.Equal(t, n+"#x", skills[i].SkillName)
	}
	assert.Equal(t, []bool{false, false}, found[2*len(names):])
}

func TestTxGetCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := txGetTable(t, nil)
	_, err := r.users.Create(ctx, User{Username: "ann", Name: "Ann"})
	require.NoError(t, err)

	// DynamoDB cancels the read because a write transaction holds op 1's
	// item (scripted: the race is too short to provoke reliably).
	r.c.cancelAs.Store(&types.TransactionCanceledException{
		Message: aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]"),
		CancellationReasons: []types.CancellationReason{
			{Code: aws.String("None")},
			{Code: aws.String("TransactionConflict"), Message: aws.String("Transaction is ongoing for the item")},
		},
	})
	u := User{Name: "untouched"}
	s := UserSkill{Level: "untouched"}
	found, err := singletable.TxGet(ctx, []singletable.GetOp{
		r.users.GetOp(User{Username: "ann"}, &u),
		r.skills.GetOp(UserSkill{Username: "ann", SkillName: "go"}, &s)})
	assert.Nil(t, found)
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Index)
	assert.Equal(t, "Get", te.Op)
	assert.Equal(t, "UserSkill", te.Entity)
	assert.Equal(t, "TransactionConflict", te.Code)
	assert.Equal(t, "SKILL#go", te.Key["SK"].(*types.AttributeValueMemberS).Value)
	assert.Nil(t, te.Err, "not a failed condition")
	assert.False(t, te.MaybeApplied)
	require.Len(t, te.Reasons, 1)
	var tce *types.TransactionCanceledException
	assert.ErrorAs(t, err, &tce, "the SDK error stays reachable")
	assert.NotErrorIs(t, err, singletable.ErrNotFound)
	assert.Contains(t, err.Error(), "op 1 (Get UserSkill")
	assert.Equal(t, User{Name: "untouched"}, u, "no dest is written on error")
	assert.Equal(t, UserSkill{Level: "untouched"}, s)

	// Called again, it reads.
	found, err = singletable.TxGet(ctx, []singletable.GetOp{r.users.GetOp(User{Username: "ann"}, &u), r.skills.GetOp(UserSkill{Username: "ann", SkillName: "go"}, &s)})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, found)
	assert.Equal(t, "Ann", u.Name)

	// Other errors are wrapped, the SDK's type reachable.
	gone := singletable.MustBind(singletable.NewTable(r.c, r.tbl.Name()+"-missing"), Users)
	_, err = singletable.TxGet(ctx, []singletable.GetOp{gone.GetOp(User{Username: "ann"}, &u)})
	var rnf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &rnf, "%v", err)
	assert.Contains(t, err.Error(), "singletable: read transaction")
}

// Pot holds an amount that transfers move between pots.
type Pot struct {
	Name   string `dynamodbav:"Name"`
	Amount int    `dynamodbav:"Amount"`
}

var Pots = singletable.MustDefine(singletable.Schema[Pot]{Type: "Pot", PK: "POT#{Name}", SK: "POT"})

// TestTxGetSnapshotUnderTransfers moves amounts between two pots with write
// transactions while readers read both pots. Every TxGet sees the total
// unchanged: it never observes a transfer half applied. Two Gets in a row
// can (they are counted, not asserted: it depends on timing).
func TestTxGetSnapshotUnderTransfers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newTxGetClient(t)
	var pots *singletable.Repo[Pot]
	newTableWith(t, c, func(tbl *singletable.Table) { pots = singletable.MustBind(tbl, Pots) })
	const total = 1000
	_, err := pots.Create(ctx, Pot{Name: "a", Amount: total})
	require.NoError(t, err)
	_, err = pots.Create(ctx, Pot{Name: "b", Amount: 0})
	require.NoError(t, err)

	const writers, transfers = 4, 30
	var writing sync.WaitGroup
	var committed, writeConflicts atomic.Int64
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for i := range transfers {
				d := 1 + (w*transfers+i)%97
				if i%2 == 1 {
					d = -d
				}
				err := singletable.Tx(ctx, []singletable.WriteOp{
					pots.Update(Pot{Name: "a"}).Add("Amount", -d).Op(),
					pots.Update(Pot{Name: "b"}).Add("Amount", d).Op(),
				}, func(o *singletable.TxOptions) {
					o.MaxAttempts, o.Backoff = 20, singletable.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}
				})
				var te *singletable.TransactionError
				switch {
				case err == nil:
					committed.Add(1)
				case errors.As(err, &te) && te.Code == "TransactionConflict":
					writeConflicts.Add(1) // cancelled whole: the total holds
				default:
					t.Errorf("transfer: %v", err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { writing.Wait(); close(done) }()

	const readers = 4
	var reading sync.WaitGroup
	var snapshots, cancelled, torn, pairs atomic.Int64
	var mu sync.Mutex
	seen := map[int]bool{}
	for range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var a, b Pot
				found, err := singletable.TxGet(ctx, []singletable.GetOp{pots.GetOp(Pot{Name: "a"}, &a), pots.GetOp(Pot{Name: "b"}, &b)})
				var te *singletable.TransactionError
				switch {
				case errors.As(err, &te):
					if te.Code != "TransactionConflict" {
						t.Errorf("read cancelled: %v", err)
						return
					}
					cancelled.Add(1)
					continue
				case err != nil:
					t.Errorf("TxGet: %v", err)
					return
				}
				snapshots.Add(1)
				if !assert.Equal(t, []bool{true, true}, found) || !assert.Equal(t, total, a.Amount+b.Amount, "TxGet saw a=%d b=%d", a.Amount, b.Amount) {
					return
				}
				mu.Lock()
				seen[a.Amount] = true
				mu.Unlock()

				// Two Gets: no snapshot.
				ga, err1 := pots.Get(ctx, Pot{Name: "a"})
				gb, err2 := pots.Get(ctx, Pot{Name: "b"})
				if err1 == nil && err2 == nil {
					pairs.Add(1)
					if ga.Amount+gb.Amount != total {
						torn.Add(1)
					}
				}
			}
		}()
	}
	reading.Wait()

	var a, b Pot
	found, err := singletable.TxGet(ctx, []singletable.GetOp{pots.GetOp(Pot{Name: "a"}, &a), pots.GetOp(Pot{Name: "b"}, &b)})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, found)
	assert.Equal(t, total, a.Amount+b.Amount)
	assert.Positive(t, committed.Load())
	assert.Positive(t, snapshots.Load())
	mu.Lock()
	distinct := len(seen)
	mu.Unlock()
	assert.GreaterOrEqual(t, distinct, 2, "the reads interleaved with the transfers")
	t.Logf("%d transfers committed, %d cancelled by conflicts; %d TxGet snapshots (%d distinct states), %d cancelled by conflicts; two Gets: %d of %d pairs torn",
		committed.Load(), writeConflicts.Load(), snapshots.Load(), distinct, cancelled.Load(), torn.Load(), pairs.Load())
}
