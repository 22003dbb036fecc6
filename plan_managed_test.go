package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	"github.com/singletable-go/singletable/internal/designs"
)

// Account has every guard: a unique email, a version, managed timestamps
// (declared once for the root's and package migrate's tests).
type Account = designs.Account

var Accounts = designs.Accounts

// VDoc is versioned only: its writes stay single requests.
type VDoc struct {
	ID      string `dynamodbav:"ID"`
	Body    string `dynamodbav:"Body"`
	Version int64  `dynamodbav:"Version"`
}

var VDocs = singletable.MustDefine(singletable.Schema[VDoc]{
	Type: "VDoc", PK: "DOC#{ID}", SK: "DOC", Version: "Version",
})

func accountsTable(t *testing.T, optFns ...func(*singletable.TableOptions)) (*singletable.Table, *singletable.Repo[Account], *countingClient) {
	var accounts *singletable.Repo[Account]
	tbl, c := newTable(t, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) }, optFns...)
	return tbl, accounts, c
}

func TestVersionOneWinnerPerRound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		update func(ctx context.Context, accounts *singletable.Repo[Account], read Account, who int) error
	}{
		{"Update (transaction, unique email moves)", func(ctx context.Context, accounts *singletable.Repo[Account], read Account, who int) error {
			_, err := accounts.Update(read).Set("Email", fmt.Sprintf("v%d-%d@example.com", read.Version, who)).Run(ctx)
			return err
		}},
		{"Update", func(ctx context.Context, accounts *singletable.Repo[Account], read Account, who int) error {
			_, err := accounts.Update(read).Set("Name", fmt.Sprint("writer", who)).Run(ctx)
			return err
		}},
		{"Put", func(ctx context.Context, accounts *singletable.Repo[Account], read Account, who int) error {
			read.Name = fmt.Sprint("writer", who)
			_, err := accounts.Put(ctx, read)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, accounts, _ := accountsTable(t)
			_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"})
			require.NoError(t, err)
			const rounds = 15
			for round := range rounds {
				read, err := accounts.Get(ctx, Account{Username: "ann"})
				require.NoError(t, err)
				require.Equal(t, round+1, read.Version)
				var wins, conflicts atomic.Int32
				var wg sync.WaitGroup
				start := make(chan struct{})
				for who := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						err := tc.update(ctx, accounts, read, who)
						switch {
						case err == nil:
							wins.Add(1)
						case errors.Is(err, singletable.ErrVersionConflict):
							conflicts.Add(1)
						default:
							t.Errorf("round %d: %v", round, err)
						}
					}()
				}
				close(start)
				wg.Wait()
				require.Equal(t, int32(1), wins.Load(), "round %d: exactly one wins", round)
				require.Equal(t, int32(1), conflicts.Load(), "round %d: the other gets ErrVersionConflict", round)
			}
			final, err := accounts.Get(ctx, Account{Username: "ann"})
			require.NoError(t, err)
			assert.Equal(t, rounds+1, final.Version)
		})
	}
}

func TestVersionedWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var docs *singletable.Repo[VDoc]
	_, c := newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, VDocs) })

	_, err := docs.Put(ctx, VDoc{ID: "a", Body: "v0"})
	require.NoError(t, err, "version 0: a new item")
	// Version 0 means the caller read none: the library reads the stored
	// version and writes the next one.
	_, err = docs.Put(ctx, VDoc{ID: "a", Body: "v1"})
	require.NoError(t, err, "version 0 on a stored item: unchecked")
	d, err := docs.Get(ctx, VDoc{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Version)
	assert.Equal(t, "v1", d.Body)

	d.Body = "v2"
	_, err = docs.Put(ctx, d)
	require.NoError(t, err)
	_, err = docs.Put(ctx, d)
	assert.ErrorIs(t, err, singletable.ErrVersionConflict, "stale: version 2 was replaced by 3")
	c.requests.Store(0)
	up, err := docs.Update(VDoc{ID: "a", Version: 3}).Set("Body", "v3").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.requests.Load(), "no guards: a single UpdateItem")
	assert.Equal(t, int64(4), up.Version)
	_, err = docs.Update(VDoc{ID: "a", Version: 3}).Set("Body", "stale").Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrVersionConflict)
	var ccf *types.ConditionalCheckFailedException
	assert.ErrorAs(t, err, &ccf)
	up, err = docs.Update(VDoc{ID: "a"}).Set("Body", "unchecked").Run(ctx)
	require.NoError(t, err, "version 0 in the key: no check")
	assert.Equal(t, int64(5), up.Version, "still incremented")
	_, err = docs.Update(VDoc{ID: "zz", Version: 1}).Set("Body", "x").Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrNotFound)

	_, err = docs.Update(VDoc{ID: "a"}).Set("Version", 9).Run(ctx)
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve, "the version is the library's")

	_, err = docs.Delete(ctx, VDoc{ID: "a", Version: 4})
	assert.ErrorIs(t, err, singletable.ErrVersionConflict)
	old, err := docs.Delete(ctx, VDoc{ID: "a", Version: 5})
	require.NoError(t, err)
	assert.Equal(t, "unchecked", old.Body)

	_, err = docs.Create(ctx, VDoc{ID: "b", Version: 42})
	require.NoError(t, err)
	b, err := docs.Get(ctx, VDoc{ID: "b"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), b.Version, "Create starts at 1")
}

func TestManagedTimestamps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix())
	_, accounts, _ := accountsTable(t, func(o *singletable.TableOptions) {
		o.Now = func() time.Time { return time.Unix(clock.Load(), 0).UTC() }
	})
	t0 := time.Unix(clock.Load(), 0).UTC()
	_, err := accounts.Create(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	a, err := accounts.Get(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	assert.True(t, a.Created.Equal(t0), "%v", a.Created)
	assert.True(t, a.Updated.Equal(t0))

	clock.Add(3600)
	t1 := time.Unix(clock.Load(), 0).UTC()
	a2, err := accounts.Update(Account{Username: "ann"}).Set("Name", "Ann").Run(ctx)
	require.NoError(t, err)
	assert.True(t, a2.Created.Equal(t0), "CreatedAt kept")
	assert.True(t, a2.Updated.Equal(t1), "UpdatedAt moved")

	clock.Add(3600)
	t2 := time.Unix(clock.Load(), 0).UTC()
	_, err = accounts.Put(ctx, a2)
	require.NoError(t, err)
	a3, err := accounts.Get(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	assert.True(t, a3.Created.Equal(t0), "Put keeps the CreatedAt it was given")
	assert.True(t, a3.Updated.Equal(t2))

	// Upsert sets CreatedAt only when the item is new.
	_, err = accounts.Update(Account{Username: "new"}).Set("Name", "N").Upsert().Run(ctx)
	require.NoError(t, err)
	n, err := accounts.Get(ctx, Account{Username: "new"})
	require.NoError(t, err)
	assert.True(t, n.Created.Equal(t2))
	assert.Equal(t, 1, n.Version)

	_, err = accounts.Update(Account{Username: "ann"}).Set("Updated", time.Now()).Run(ctx)
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)

	// PutOp fills only zero timestamps: a migration keeps what it copies.
	old := time.Date(2020, 5, 5, 0, 0, 0, 0, time.UTC)
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{accounts.PutOp(Account{Username: "mig", Created: old, Updated: old})}))
	m, err := accounts.Get(ctx, Account{Username: "mig"})
	require.NoError(t, err)
	assert.True(t, m.Created.Equal(old))
	assert.True(t, m.Updated.Equal(old))
}

// StampedDoc keys an index by its managed timestamps in another service's
// formats: the library's stamps are cut to what the formats write.
type StampedDoc struct {
	Owner   string    `dynamodbav:"owner"`
	ID      string    `dynamodbav:"doc_id"`
	Kind    string    `dynamodbav:"kind"`
	Created time.Time `dynamodbav:"created_at"`
	Updated time.Time `dynamodbav:"updated_at"`
}

var StampedDocs = singletable.MustDefine(singletable.Schema[StampedDoc]{
	Type: "StampedDoc", PK: "OWNER#{Owner:raw}", SK: "DOC#{ID:raw}", MatchKeys: true,
	CreatedAt: "Created", UpdatedAt: "Updated",
	Indexes: []singletable.IndexSchema[StampedDoc]{
		{Name: "GSI1", PK: "KIND#{Kind:raw}", SK: "{Created:rfc3339milli}#{ID:raw}"},
		{Name: "GSI2", PK: "OWNER#{Owner:raw}", SK: "{Updated:unix}"},
	},
})

// TestManagedTimestampsInKeyFormats: the library stamps CreatedAt and
// UpdatedAt cut to the precision of the key formats holding them (it
// refused its own nanosecond stamps before), and an update stamps only
// UpdatedAt: an item without CreatedAt (another service's, or one written
// before CreatedAt was declared) keeps none, and its index key is the one
// rendered from it as stored.
func TestManagedTimestampsInKeyFormats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2025, 1, 15, 10, 30, 0, 123456789, time.UTC)
	var docs *singletable.Repo[StampedDoc]
	tbl, c := newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, StampedDocs) },
		func(o *singletable.TableOptions) { o.Now = func() time.Time { return now } })
	d, err := docs.Create(ctx, StampedDoc{Owner: "o", ID: "1", Kind: "k"})
	require.NoError(t, err)
	assert.Equal(t, now.Truncate(time.Millisecond), d.Created)
	assert.Equal(t, now.Truncate(time.Second), d.Updated)
	_, err = docs.Put(ctx, StampedDoc{Owner: "o", ID: "2", Kind: "k"})
	require.NoError(t, err)
	_, err = docs.Update(StampedDoc{Owner: "o", ID: "3"}).Set("Kind", "k").Upsert().Run(ctx)
	require.NoError(t, err)
	now = now.Add(time.Hour)
	u, err := docs.Update(StampedDoc{Owner: "o", ID: "1"}).Set("Kind", "k2").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, d.Created, u.Created, "CreatedAt kept")
	got, err := docs.QueryIndex("GSI1", StampedDoc{Kind: "k2"}).Where("Created", singletable.Eq, d.Created).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1)

	// Another service's item without created_at.
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "OWNER#o"}, "SK": &types.AttributeValueMemberS{Value: "DOC#4"}}
	_, err = c.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
		"PK": key["PK"], "SK": key["SK"], "kind": &types.AttributeValueMemberS{Value: "k"}}})
	require.NoError(t, err)
	u, err = docs.Update(StampedDoc{Owner: "o", ID: "4"}).Set("Kind", "k3").Run(ctx)
	require.NoError(t, err)
	assert.True(t, u.Created.IsZero(), "an update does not stamp CreatedAt: %v", u.Created)
	out, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: key, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	assert.NotContains(t, out.Item, "created_at")
	_, wantSK, err := StampedDocs.RenderIndexKeys("GSI1", u)
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: wantSK}, out.Item["GSI1SK"], "the index key is rendered from the item as stored")

	// A date key cannot hold a stamp with a time of day, unless the field
	// is stored as a date.
	type Daily struct {
		ID      string
		Created time.Time
	}
	_, err = singletable.Define(singletable.Schema[Daily]{Type: "Daily", PK: "D#{ID}", CreatedAt: "Created",
		Indexes: []singletable.IndexSchema[Daily]{{Name: "GSI1", PK: "DAY#{Created:date}"}}})
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)
	type DailyDate struct {
		ID      string
		Created time.Time `dynamodbav:"created,date"`
	}
	_, err = singletable.Define(singletable.Schema[DailyDate]{Type: "Daily", PK: "D#{ID}", CreatedAt: "Created",
		Indexes: []singletable.IndexSchema[DailyDate]{{Name: "GSI1", PK: "DAY#{Created:date}"}}})
	assert.NoError(t, err)
}

// Session expires through DynamoDB's TTL.
type Session struct {
	ID      string     `dynamodbav:"ID"`
	Expires time.Time  `dynamodbav:"ExpiresAt"`
	Renewed *time.Time `dynamodbav:"Renewed,omitempty"`
}

var Sessions = singletable.MustDefine(singletable.Schema[Session]{
	Type: "Session", PK: "SESSION#{ID}", SK: "SESSION", TTL: "Expires",
})

func TestTTLAttribute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sessions *singletable.Repo[Session]
	tbl, c := newTable(t, func(tbl *singletable.Table) { sessions = singletable.MustBind(tbl, Sessions) })

	ttl, err := c.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	assert.Equal(t, types.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus)
	assert.Equal(t, "ExpiresAt", aws.ToString(ttl.TimeToLiveDescription.AttributeName))

	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err = sessions.Create(ctx, Session{ID: "s1", Expires: exp})
	require.NoError(t, err)
	key := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "SESSION#s1"}, "SK": &types.AttributeValueMemberS{Value: "SESSION"}}
	raw, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: key})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(exp.Unix(), 10)}, raw.Item["ExpiresAt"], "epoch seconds")
	s, err := sessions.Get(ctx, Session{ID: "s1"})
	require.NoError(t, err)
	assert.True(t, s.Expires.Equal(exp), "decodes back: %v", s.Expires)

	later := exp.Add(time.Hour)
	_, err = sessions.Update(Session{ID: "s1"}).Set("Expires", later).Run(ctx)
	require.NoError(t, err)
	raw, err = c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: key})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(later.Unix(), 10)}, raw.Item["ExpiresAt"], "Update stores epoch seconds too")

	_, err = sessions.Put(ctx, Session{ID: "s2"})
	require.NoError(t, err)
	s2, err := sessions.Get(ctx, Session{ID: "s2"})
	require.NoError(t, err)
	assert.True(t, s2.Expires.IsZero(), "zero: no TTL attribute, the item does not expire")
}

func TestGuardDeclarationsChecked(t *testing.T) {
	t.Parallel()
	type E struct {
		ID      string
		Email   string
		N       int
		S       string
		When    time.Time
		Expires time.Time
		Tags    []string
	}
	cases := []struct {
		name string
		s    singletable.Schema[E]
		want string
	}{
		{"unknown unique", singletable.Schema[E]{Unique: []singletable.Unique{{Fields: []string{"Nope"}}}}, "Nope"},
		{"unique key field", singletable.Schema[E]{Unique: []singletable.Unique{{Fields: []string{"ID"}}}}, "primary key"},
		{"unique twice", singletable.Schema[E]{Unique: []singletable.Unique{{Fields: []string{"Email"}}, {Fields: []string{"Email"}}}}, "twice"},
		{"unique unsupported type", singletable.Schema[E]{Unique: []singletable.Unique{{Fields: []string{"Tags"}}}}, "Tags"},
		{"version not an integer", singletable.Schema[E]{Version: "S"}, "integer"},
		{"created not a time", singletable.Schema[E]{CreatedAt: "N"}, "time.Time"},
		{"updated not a time", singletable.Schema[E]{UpdatedAt: "S"}, "time.Time"},
		{"ttl wrong type", singletable.Schema[E]{TTL: "S"}, "epoch seconds"},
		{"one field two roles", singletable.Schema[E]{CreatedAt: "When", UpdatedAt: "When"}, "both"},
		{"unique and managed", singletable.Schema[E]{Unique: []singletable.Unique{{Fields: []string{"N"}}}, Version: "N"}, "both Unique and Version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Type, tc.s.PK, tc.s.SK = "E", "E#{ID}", "E"
			_, err := singletable.Define(tc.s)
			var ve *singletable.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// Two TTL attributes in one table.
	other := singletable.MustDefine(singletable.Schema[E]{Type: "E", PK: "E#{ID}", SK: "E", TTL: "When"})
	tbl := singletable.NewTable(ddblocal.Shared(t).Client(), "unused")
	singletable.MustBind(tbl, Sessions)
	_, err := singletable.Bind(tbl, other)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "one TTL attribute")
}
