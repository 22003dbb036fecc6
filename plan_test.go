package singletable_test

// Regression tests for the write plan (plan.go and its steps): behaviours
// that once differed between write paths, each held against DynamoDB Local.

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// Gadget and Part share a partition and SK shapes: a Gadget with ID "x"
// and a Part with Code "x" have the same primary key.
type Gadget struct {
	Shop  string `dynamodbav:"Shop"`
	ID    string `dynamodbav:"ID"`
	Label string `dynamodbav:"Label"`
}

type Part struct {
	Shop  string `dynamodbav:"Shop"`
	Code  string `dynamodbav:"Code"`
	Email string `dynamodbav:"Email,omitempty"`
}

var (
	Gadgets = singletable.MustDefine(singletable.Schema[Gadget]{Type: "Gadget", PK: "SHOP#{Shop}", SK: "ITEM#{ID}"})
	Parts   = singletable.MustDefine(singletable.Schema[Part]{Type: "Part", PK: "SHOP#{Shop}", SK: "ITEM#{Code}", Unique: []singletable.Unique{{Fields: []string{"Email"}}}})
)

func rawItem(t *testing.T, tbl *singletable.Table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := ddblocal.Shared(t).Client().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(tbl.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
	})
	require.NoError(t, err)
	return out.Item
}

func rawS(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// Put and Upsert never replace another entity's item under the same key,
// and that item's unique guards stay its own.
func TestWritesNeverReplaceAnotherEntitysItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var gadgets *singletable.Repo[Gadget]
	var parts *singletable.Repo[Part]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		gadgets = singletable.MustBind(tbl, Gadgets)
		parts = singletable.MustBind(tbl, Parts)
	})
	_, err := parts.Create(ctx, Part{Shop: "s", Code: "x", Email: "p@example.com"})
	require.NoError(t, err)

	_, err = gadgets.Put(ctx, Gadget{Shop: "s", ID: "x", Label: "over"})
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "Put")
	_, err = gadgets.Update(Gadget{Shop: "s", ID: "x"}).Set("Label", "over").Upsert().Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "Upsert")
	_, err = gadgets.Update(Gadget{Shop: "s", ID: "x"}).Set("Label", "over").Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrNotFound, "Update: no Gadget under the key")
	_, err = gadgets.Delete(ctx, Gadget{Shop: "s", ID: "x"})
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "Delete")
	_, err = gadgets.Create(ctx, Gadget{Shop: "s", ID: "x"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "Create")
	err = singletable.Tx(ctx, []singletable.WriteOp{gadgets.PutOp(Gadget{Shop: "s", ID: "x", Label: "tx"})})
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "PutOp in a Tx")

	assert.Equal(t, "Part", rawS(rawItem(t, tbl, "SHOP#s", "ITEM#x"), "EntityType"))
	// The part's guard is still its own: deleting it frees the value.
	_, err = parts.Delete(ctx, Part{Shop: "s", Code: "x"})
	require.NoError(t, err)
	_, err = parts.Create(ctx, Part{Shop: "s", Code: "y", Email: "p@example.com"})
	require.NoError(t, err)
}

// A batch of ops of an entity with unique fields claims and releases its
// guards: nothing is skipped silently.
func TestBatchWriteKeepsUniqueGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, _ := accountsTable(t)
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		accounts.PutOp(Account{Username: "ann", Email: "ann@example.com"}),
		accounts.PutOp(Account{Username: "bob", Email: "bob@example.com"}),
	}))
	_, err := accounts.Create(ctx, Account{Username: "cat", Email: "ann@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "the batch put claimed the value")

	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{accounts.DeleteOp(Account{Username: "ann"})}))
	_, err = accounts.Create(ctx, Account{Username: "cat", Email: "ann@example.com"})
	require.NoError(t, err, "the batch delete released the value")

	// A batch put that changes the value releases the old one.
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{accounts.PutOp(Account{Username: "bob", Email: "bob@example.org"})}))
	_, err = accounts.Create(ctx, Account{Username: "dan", Email: "bob@example.com"})
	require.NoError(t, err)
	// A clash is reported for that op, with the sentinel.
	err = singletable.BatchWrite(ctx, []singletable.WriteOp{accounts.PutOp(Account{Username: "eve", Email: "dan@example.net"}), accounts.PutOp(Account{Username: "fay", Email: "bob@example.org"})})
	var be *singletable.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 1, be.Failed[0].Index)
	assert.ErrorIs(t, be.Failed[0].Err, singletable.ErrAlreadyExists)
}

// Ledger has managed fields inside index keys: the version, the creation
// time and the expiry (TTL, stored as epoch seconds).
type Ledger struct {
	Book    string    `dynamodbav:"Book"`
	ID      string    `dynamodbav:"ID"`
	Status  string    `dynamodbav:"Status"`
	Version int       `dynamodbav:"Version"`
	Created time.Time `dynamodbav:"Created"`
	Expires time.Time `dynamodbav:"Expires"`
}

var Ledgers = singletable.MustDefine(singletable.Schema[Ledger]{
	Type: "Ledger", PK: "BOOK#{Book}", SK: "L#{ID}",
	Version: "Version", CreatedAt: "Created", TTL: "Expires",
	Indexes: []singletable.IndexSchema[Ledger]{
		{Name: "GSI1", PK: "STATUS#{Status}", SK: "V#{Version}#{ID}"},
		{Name: "GSI2", PK: "STATUS#{Status}", SK: "C#{Created}#{ID}"},
		{Name: "GSI3", PK: "BOOK#{Book}", SK: "EXP#{Expires}"},
	},
})

func TestManagedFieldsInIndexKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ledgers *singletable.Repo[Ledger]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { ledgers = singletable.MustBind(tbl, Ledgers) })
	exp := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	_, err := ledgers.Create(ctx, Ledger{Book: "b", ID: "1", Status: "open", Expires: exp})
	require.NoError(t, err)

	check := func(what string) Ledger {
		t.Helper()
		l, err := ledgers.Get(ctx, Ledger{Book: "b", ID: "1"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		put := ledgers.PutOp(l).Item()
		raw := rawItem(t, tbl, "BOOK#b", "L#1")
		for _, a := range []string{"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK"} {
			assert.Equal(t, rawS(put, a), rawS(raw, a), "%s: %s is what the stored item renders", what, a)
		}
		return l
	}
	l := check("create")
	assert.True(t, exp.Truncate(time.Second).Equal(l.Expires), "TTL is stored in seconds")
	// An Eq query with the value read back finds the item.
	got, err := ledgers.QueryIndex("GSI3", Ledger{Book: "b"}).Where("Expires", singletable.Eq, l.Expires).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)

	// An update of another field of an index with CreatedAt and Version:
	// the library knows both and recomputes the keys.
	_, err = ledgers.Update(Ledger{Book: "b", ID: "1"}).Set("Status", "closed").Run(ctx)
	require.NoError(t, err)
	l = check("update")
	assert.Equal(t, 2, l.Version)
	_, err = ledgers.Update(Ledger{Book: "b", ID: "1", Version: 2}).Set("Expires", exp.Add(time.Hour)).Run(ctx)
	require.NoError(t, err)
	l = check("versioned update of the TTL")
	assert.Equal(t, 3, l.Version)
	l.Status = "open"
	_, err = ledgers.Put(ctx, l)
	require.NoError(t, err)
	check("put")
	_, err = ledgers.Update(Ledger{Book: "b", ID: "2"}).Set("Status", "new").Upsert().Run(ctx)
	require.NoError(t, err)
	l2, err := ledgers.Get(ctx, Ledger{Book: "b", ID: "2"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, 1, l2.Version)
	assert.False(t, l2.Created.IsZero())
}

// Rank has a non-omitempty number in an index key: 0 is a real value, so
// an upsert that creates the item must index it as a Put would.
type Rank struct {
	Board string `dynamodbav:"Board"`
	User  string `dynamodbav:"User"`
	Score int    `dynamodbav:"Score"`
	Note  string `dynamodbav:"Note"`
}

var Ranks = singletable.MustDefine(singletable.Schema[Rank]{
	Type: "Rank", PK: "BOARD#{Board}", SK: "USER#{User}",
	Indexes: []singletable.IndexSchema[Rank]{{Name: "GSI1", PK: "BOARD#{Board}", SK: "SCORE#{Score}#{User}"}},
})

func TestUpsertThatCreatesIndexesLikePut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { ranks = singletable.MustBind(tbl, Ranks) })
	_, err := ranks.Update(Rank{Board: "b", User: "u"}).Set("Note", "hi").Upsert().Run(ctx)
	require.NoError(t, err)
	put := ranks.PutOp(Rank{Board: "b", User: "u", Note: "hi"}).Item()
	raw := rawItem(t, tbl, "BOARD#b", "USER#u")
	require.NotEmpty(t, rawS(raw, "GSI1SK"))
	assert.Equal(t, rawS(put, "GSI1SK"), rawS(raw, "GSI1SK"))
	got, err := ranks.QueryIndex("GSI1", Rank{Board: "b"}).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1)

	// Add on an index key field: the key follows the sum.
	_, err = ranks.Update(Rank{Board: "b", User: "u"}).Add("Score", 5).Run(ctx)
	require.NoError(t, err)
	raw = rawItem(t, tbl, "BOARD#b", "USER#u")
	assert.Equal(t, rawS(ranks.PutOp(Rank{Board: "b", User: "u", Score: 5}).Item(), "GSI1SK"), rawS(raw, "GSI1SK"))
}

// Tick has a unixtime key field: stored as epoch seconds.
type Tick struct {
	Feed string    `dynamodbav:"Feed"`
	At   time.Time `dynamodbav:"At,unixtime"`
}

var Ticks = singletable.MustDefine(singletable.Schema[Tick]{Type: "Tick", PK: "FEED#{Feed}", SK: "AT#{At}"})

func TestUnixtimeKeyFieldRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ticks *singletable.Repo[Tick]
	newTable(t, func(tbl *singletable.Table) { ticks = singletable.MustBind(tbl, Ticks) })
	at := time.Date(2025, 1, 15, 10, 30, 0, 123_456_789, time.UTC)
	_, err := ticks.Create(ctx, Tick{Feed: "f", At: at})
	require.NoError(t, err)
	_, err = ticks.Get(ctx, Tick{Feed: "f", At: at})
	require.NoError(t, err, "the value written finds the item")
	got, err := ticks.Query(Tick{Feed: "f"}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	old, err := ticks.Delete(ctx, got[0])
	require.NoError(t, err, "the value read back deletes the item")
	assert.True(t, old.At.Equal(at.Truncate(time.Second)))
}

// An update or upsert without a version, retried by the SDK after a lost
// response, stores the next version once.
func TestUnversionedUpdateIsRetrySafe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	_, ft := faultTable(t, func(tbl *singletable.Table) { vdocs = singletable.MustBind(tbl, VDocs) })
	_, err := vdocs.Create(ctx, VDoc{ID: "a", Body: "v1"})
	require.NoError(t, err)
	ft.Next("UpdateItem", ddbfault.LostResponse)
	d, err := vdocs.Update(VDoc{ID: "a"}).Set("Body", "v2").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Version)
	ft.Next("UpdateItem", ddbfault.LostResponse)
	d, err = vdocs.Update(VDoc{ID: "a"}).Set("Body", "v3").Upsert().Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), d.Version)
	ft.Next("PutItem", ddbfault.LostResponse)
	_, err = vdocs.Put(ctx, VDoc{ID: "a", Body: "v4"})
	require.NoError(t, err)
	d, err = vdocs.Get(ctx, VDoc{ID: "a"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, int64(4), d.Version, "acknowledged writes + 1")
	assert.Equal(t, 3, ft.Stats().Faults[ddbfault.LostResponse])
}

// One transaction goes through one client: a table behind another client
// is refused before anything is sent.
func TestTxRefusesTablesBehindAnotherClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var docs, other *singletable.Repo[VDoc]
	_, c := newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, VDocs) })
	newTable(t, func(tbl *singletable.Table) { other = singletable.MustBind(tbl, VDocs) })
	err := singletable.Tx(ctx, []singletable.WriteOp{
		docs.CreateOp(VDoc{ID: "a"}),
		other.CreateOp(VDoc{ID: "b"}),
	})
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "another client")
	assert.Zero(t, c.requests.Load())
}

// A single guarded write cancelled for another reason than its condition
// reports the op as the transaction helpers name it.
func TestSingleGuardedWriteNamesItsOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var accounts *singletable.Repo[Account]
	_, ft := faultTable(t, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) })
	for range 5 { // every attempt of the transaction is cancelled by a conflict
		ft.Next("TransactWriteItems", ddbfault.TxConflict)
	}
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"})
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "Create", te.Op)
	assert.Equal(t, "Account", te.Entity)
}

// A *KeyError names the key attribute whose template holds the bad field.
func TestKeyErrorNamesTheSortKeyAttribute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var ranks *singletable.Repo[Rank]
	newTable(t, func(tbl *singletable.Table) { ranks = singletable.MustBind(tbl, Ranks) })
	long := make([]byte, 1000)
	for i := range long {
		long[i] = 'u'
	}
	// SK "USER#" + 1,000 bytes fits; GSI1SK "SCORE#…#" + 1,000 does not.
	_, err := ranks.Put(ctx, Rank{Board: "b", User: string(long)})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "GSI1", ke.Index)
	assert.Equal(t, "GSI1SK", ke.Key)
	// The same from an update that recomputes the index key.
	_, err = ranks.Update(Rank{Board: "b", User: string(long)}).Set("Score", 1).If(expression.Name("Score").AttributeNotExists()).Upsert().Run(ctx)
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "GSI1SK", ke.Key)
}
