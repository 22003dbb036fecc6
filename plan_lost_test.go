package singletable_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// faultTable makes a fresh table whose client goes through a ddbfault
// Transport with injection off: tests script exact faults with Next.
func faultTable(t *testing.T, bind func(*singletable.Table)) (*singletable.Table, *ddbfault.Transport) {
	t.Helper()
	ft := ddbfault.New(nil, ddbfault.Config{Seed: 1})
	ft.SetEnabled(false)
	client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	return newTableWith(t, client, bind), ft
}

// Status is a plain entity: no version, no managed timestamps.
type Status struct {
	ID    string `dynamodbav:"ID"`
	State string `dynamodbav:"State"`
	Hits  int    `dynamodbav:"Hits"`
}

var Statuses = singletable.MustDefine(singletable.Schema[Status]{Type: "Status", PK: "ST#{ID}", SK: "ST"})

// TestLostResponseIsNotMisreported loses the response of a write that
// DynamoDB applied; the SDK retries the same request, which meets the
// state the first attempt made. Each write must report what happened (it
// applied), not the retry's failed condition.
func TestLostResponseIsNotMisreported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var vdocs *singletable.Repo[VDoc]
	var accounts *singletable.Repo[Account]
	var statuses *singletable.Repo[Status]
	var counts *singletable.Repo[Counts]
	_, ft := faultTable(t, func(tbl *singletable.Table) {
		vdocs = singletable.MustBind(tbl, VDocs)
		accounts = singletable.MustBind(tbl, Accounts)
		statuses = singletable.MustBind(tbl, Statuses)
		counts = singletable.MustBind(tbl, CountsEntity)
	})
	lose := func(op string) { ft.Next(op, ddbfault.LostResponse) }

	t.Run("Create", func(t *testing.T) {
		lose("PutItem")
		_, err := vdocs.Create(ctx, VDoc{ID: "c1", Body: "first"})
		require.NoError(t, err, "the retry found the item this call created")
		got, err := vdocs.Get(ctx, VDoc{ID: "c1"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, VDoc{ID: "c1", Body: "first", Version: 1}, got)

		// Someone else's item is still someone else's, lost response or not.
		lose("PutItem")
		_, err = vdocs.Create(ctx, VDoc{ID: "c1", Body: "second"})
		assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
		// And without a lost response a duplicate create is refused as before.
		_, err = vdocs.Create(ctx, VDoc{ID: "c1", Body: "first"})
		assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	})

	t.Run("Create without managed fields", func(t *testing.T) {
		lose("PutItem")
		_, err := statuses.Create(ctx, Status{ID: "s0", State: "new"})
		require.NoError(t, err)
	})

	t.Run("versioned Put", func(t *testing.T) {
		_, err := vdocs.Create(ctx, VDoc{ID: "p1", Body: "v1"})
		require.NoError(t, err)
		lose("PutItem")
		_, err = vdocs.Put(ctx, VDoc{ID: "p1", Body: "v2", Version: 1})
		require.NoError(t, err, "not ErrVersionConflict: version 2 is this call's")
		got, err := vdocs.Get(ctx, VDoc{ID: "p1"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, VDoc{ID: "p1", Body: "v2", Version: 2}, got)
		// A stale version after an unanswered attempt: the attempt may have
		// applied and been overwritten since, so the outcome is unknown,
		// and not a conflict a read-modify-write loop would retry.
		lose("PutItem")
		_, err = vdocs.Put(ctx, VDoc{ID: "p1", Body: "v2'", Version: 1})
		assert.ErrorIs(t, err, singletable.ErrMaybeApplied)
		assert.NotErrorIs(t, err, singletable.ErrVersionConflict)
		var ccf *types.ConditionalCheckFailedException
		assert.ErrorAs(t, err, &ccf, "the SDK error is still reachable")
		// Without a lost response a stale version is a plain conflict.
		_, err = vdocs.Put(ctx, VDoc{ID: "p1", Body: "v2'", Version: 1})
		assert.ErrorIs(t, err, singletable.ErrVersionConflict)
	})

	t.Run("versioned Update", func(t *testing.T) {
		_, err := vdocs.Create(ctx, VDoc{ID: "u1", Body: "v1"})
		require.NoError(t, err)
		lose("UpdateItem")
		got, err := vdocs.Update(VDoc{ID: "u1", Version: 1}).Set("Body", "v2").Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, VDoc{ID: "u1", Body: "v2", Version: 2}, got, "the item as the lost attempt left it")
		lose("UpdateItem")
		_, err = vdocs.Update(VDoc{ID: "u1", Version: 1}).Set("Body", "v2'").Run(ctx)
		assert.ErrorIs(t, err, singletable.ErrMaybeApplied, "version 2 holds another write: applied and overwritten, or never applied")
	})

	t.Run("conditional Update", func(t *testing.T) {
		_, err := statuses.Create(ctx, Status{ID: "s1", State: "pending"})
		require.NoError(t, err)
		lose("UpdateItem")
		got, err := statuses.Update(Status{ID: "s1"}).Set("State", "done").
			If(expression.Name("State").Equal(expression.Value("pending"))).Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, "done", got.State)
	})

	t.Run("Delete MustExist", func(t *testing.T) {
		_, err := statuses.Create(ctx, Status{ID: "d1", State: "x"})
		require.NoError(t, err)
		lose("DeleteItem")
		_, err = statuses.Delete(ctx, Status{ID: "d1"}, func(o *singletable.WriteOptions) { o.MustExist = true })
		require.NoError(t, err, "not ErrNotFound: this call deleted it")
		_, err = statuses.Get(ctx, Status{ID: "d1"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		// Nothing to delete and a definite answer: still ErrNotFound.
		_, err = statuses.Delete(ctx, Status{ID: "d1"}, func(o *singletable.WriteOptions) { o.MustExist = true })
		assert.ErrorIs(t, err, singletable.ErrNotFound)
	})

	t.Run("versioned Delete", func(t *testing.T) {
		_, err := vdocs.Create(ctx, VDoc{ID: "d2", Body: "x"})
		require.NoError(t, err)
		lose("DeleteItem")
		_, err = vdocs.Delete(ctx, VDoc{ID: "d2", Version: 1})
		require.NoError(t, err)
	})

	t.Run("guarded writes are transactions with a token", func(t *testing.T) {
		ft.Next("TransactWriteItems", ddbfault.LostResponse)
		_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"})
		require.NoError(t, err)
		a, err := accounts.Get(ctx, Account{Username: "ann"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		ft.Next("TransactWriteItems", ddbfault.LostResponse)
		a.Email = "ann@example.org"
		_, err = accounts.Put(ctx, a)
		require.NoError(t, err, "guard swap applied once, retry answered by the token")
		a, err = accounts.Get(ctx, Account{Username: "ann"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, 2, a.Version)
		// The old value is free again, the new one is taken.
		_, err = accounts.Create(ctx, Account{Username: "bob", Email: "ann@example.com"})
		require.NoError(t, err)
		_, err = accounts.Create(ctx, Account{Username: "cat", Email: "ann@example.org"})
		assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	})

	t.Run("plain Add double-applies, Idempotent does not", func(t *testing.T) {
		lose("UpdateItem")
		c, err := counts.Update(Counts{}).Add("Users", 1).Upsert().Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, c.Users, "an ADD without a token, retried by the SDK after a lost response, counts twice")

		ft.Next("TransactWriteItems", ddbfault.LostResponse)
		c, err = counts.Update(Counts{}).Add("Users", 1).Upsert().Idempotent(runToken("lost-once")).Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, c.Users, "the token makes the retry a no-op")
	})

	assert.Equal(t, 14, ft.Stats().Faults[ddbfault.LostResponse], "every scripted fault was used")
}
