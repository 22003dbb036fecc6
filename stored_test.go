package singletable_test

import (
	"context"
	"runtime"
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
	Unique:  []singletable.Unique{{Fields: []string{"Holder"}}},
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
		// UpdatedAt can only move on once the clock has passed this one.
		for !time.Now().After(created.Updated) {
			runtime.Gosched()
		}
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

// Stamp keeps its times as epoch seconds: UpdatedAt through the unixtime
// tag option (a pointer), At given by the caller in some zone, and the TTL.
type Stamp struct {
	ID      string     `dynamodbav:"ID"`
	Created time.Time  `dynamodbav:"Created"`
	Updated *time.Time `dynamodbav:"Updated,unixtime"`
	At      *time.Time `dynamodbav:"At,unixtime"`
	Zero    time.Time  `dynamodbav:"Zero,unixtime"`
	Expires time.Time  `dynamodbav:"Expires"`
}

var Stamps = singletable.MustDefine(singletable.Schema[Stamp]{
	Type: "Stamp", PK: "STAMP#{ID}", SK: "STAMP",
	CreatedAt: "Created", UpdatedAt: "Updated", TTL: "Expires",
})

// Times stored as epoch seconds come back from Create and Put as a read
// decodes them (cut to the second, in UTC), whatever zone they were
// given or stamped in; the caller's own time is left as it was.
func TestCreateAndPutReturnEpochSecondsAsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var stamps *singletable.Repo[Stamp]
	newTable(t, func(tbl *singletable.Table) { stamps = singletable.MustBind(tbl, Stamps) })
	zone := time.FixedZone("X", 5*3600+1800)
	// In the future: DynamoDB Local deletes items whose TTL has passed.
	at := time.Date(2036, 3, 4, 5, 6, 7, 890, zone)
	atGiven := at
	created, err := stamps.Create(ctx, Stamp{ID: "a", At: &at, Expires: at.Add(time.Hour)})
	require.NoError(t, err)
	got, err := stamps.Get(ctx, Stamp{ID: "a"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, got, created)
	assert.Equal(t, atGiven, at, "the caller's time is not cut")

	put, err := stamps.Put(ctx, created)
	require.NoError(t, err)
	got, err = stamps.Get(ctx, Stamp{ID: "a"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, got, put)
}
