package singletable_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// Lease has every managed field: a version, both timestamps, a TTL, and a
// unique field (whose writes are transactions).
type Lease struct {
	ID      string    `dynamodbav:"ID"`
	Holder  string    `dynamodbav:"Holder,omitempty"`
	Note    string    `dynamodbav:"Note"`
	Version int       `dynamodbav:"Version"`
	Created time.Time `dynamodbav:"CreatedAt"`
	Updated time.Time `dynamodbav:"UpdatedAt"`
	Expires time.Time `dynamodbav:"ExpiresAt"`
}

var Leases = singletable.MustDefine(singletable.Schema[Lease]{
	Type: "Lease", PK: "LEASE#{ID}", SK: "LEASE",
	Unique:  []string{"Holder"},
	Version: "Version", CreatedAt: "Created", UpdatedAt: "Updated", TTL: "Expires",
})

// Create and Put return the item as stored: what a strongly consistent
// Get reads back, managed fields included (the TTL in whole seconds, the
// timestamps as decoded), on the single-request path and on the
// transaction path of an entity with unique fields.
func TestCreateAndPutReturnTheStoredItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var leases *singletable.Repo[Lease]
	newTable(t, func(tbl *singletable.Table) { leases = singletable.MustBind(tbl, Leases) })
	read := func(id string) Lease {
		t.Helper()
		got, err := leases.Get(ctx, Lease{ID: id}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		return got
	}
	// Sub-second precision the TTL attribute (epoch seconds) cannot keep.
	expires := time.Now().Add(time.Hour)

	for _, holder := range []string{"", "ann"} { // "" is a single PutItem, "ann" a transaction with a guard
		id := "l-" + holder
		created, err := leases.Create(ctx, Lease{ID: id, Holder: holder, Note: "one", Expires: expires})
		require.NoError(t, err)
		assert.Equal(t, read(id), created, "Create (holder %q)", holder)
		assert.Equal(t, 1, created.Version)
		assert.False(t, created.Created.IsZero())
		assert.Equal(t, created.Created, created.Updated)
		assert.Equal(t, expires.Unix(), created.Expires.Unix())
		assert.Zero(t, created.Expires.Nanosecond(), "the TTL as stored, in seconds")

		// Put with version 0 reads the stored version; the result carries
		// the next one and the new UpdatedAt, and keeps CreatedAt.
		time.Sleep(2 * time.Millisecond)
		next := created
		next.Version, next.Note = 0, "two"
		put, err := leases.Put(ctx, next, func(o *singletable.WriteOptions) { o.MustExist = true })
		require.NoError(t, err)
		assert.Equal(t, read(id), put, "Put (holder %q)", holder)
		assert.Equal(t, 2, put.Version)
		assert.Equal(t, created.Created, put.Created)
		assert.True(t, put.Updated.After(created.Updated))

		// A conditional Put with the version read.
		put.Note = "three"
		again, err := leases.Put(ctx, put, func(o *singletable.WriteOptions) {
			o.If = expression.Name("Note").Equal(expression.Value("two"))
		})
		require.NoError(t, err)
		assert.Equal(t, read(id), again)
		assert.Equal(t, 3, again.Version)
	}

	// A failed write returns the zero value with its error.
	got, err := leases.Create(ctx, Lease{ID: "l-"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Zero(t, got)
	got, err = leases.Put(ctx, Lease{ID: "nobody"}, func(o *singletable.WriteOptions) { o.MustExist = true })
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	assert.Zero(t, got)
}
