package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// Counts is the elections service's METADATA/COUNTS item.
type Counts struct {
	Users     int `dynamodbav:"user_count"`
	Elections int `dynamodbav:"election_count"`
}

var CountsEntity = singletable.MustDefine(singletable.Schema[Counts]{
	Type: "COUNTS", PK: "METADATA", SK: "COUNTS",
})

// VoteEvent is an entry of the elections service's event log: PK EVENTS, SK {sequence}#{timestamp}.
type VoteEvent struct {
	Seq   int64     `dynamodbav:"event_id"`
	When  time.Time `dynamodbav:"when_occurred"`
	Actor string    `dynamodbav:"actor"`
	Type  string    `dynamodbav:"event_type"`
}

var VoteEvents = singletable.MustDefine(singletable.Schema[VoteEvent]{
	Type: "EVENT", PK: "EVENTS", SK: "{Seq}#{When}",
})

func TestAtomicIncrements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var counts *singletable.Repo[Counts]
	newTable(t, func(tbl *singletable.Table) { counts = singletable.MustBind(tbl, CountsEntity) })

	const workers, each = 50, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				// Upsert: the first increment creates the item.
				_, err := counts.Update(Counts{}).Add("Users", 1).Add("Elections", w%2).Upsert().Run(ctx)
				if !assert.NoError(t, err) {
					return
				}
			}
		}()
	}
	wg.Wait()
	c, err := counts.Get(ctx, Counts{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, workers*each, c.Users, "50 × 20 increments")
	assert.Equal(t, workers/2*each, c.Elections)
}

func TestIdempotentIncrement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tc := newTxClient(t)
	var counts *singletable.Repo[Counts]
	newTableWith(t, tc, func(tbl *singletable.Table) { counts = singletable.MustBind(tbl, CountsEntity) })

	// The response is lost after DynamoDB applied the increment; the retry
	// carries the same token and is not applied again.
	tc.loseNext.Store(1)
	c, err := counts.Update(Counts{}).Add("Users", 1).Upsert().Idempotent(runToken("signup-alice")).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Users)
	assert.Equal(t, int64(2), tc.requests.Load(), "sent twice, applied once")

	// The caller retrying the same request later is also applied once.
	c, err = counts.Update(Counts{}).Add("Users", 1).Upsert().Idempotent(runToken("signup-alice")).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Users)
	c, err = counts.Update(Counts{}).Add("Users", 1).Upsert().Idempotent(runToken("signup-bob")).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, c.Users, "another token is another increment")

	// The conditional form: applied once, however late the retry.
	inc := func() (Counts, error) {
		return counts.Update(Counts{}).Add("Users", 1).If(expression.Name("Users").Equal(expression.Value(2))).Run(ctx)
	}
	c, err = inc()
	require.NoError(t, err)
	assert.Equal(t, 3, c.Users)
	_, err = inc()
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "the retry sees the value moved: already applied")

	_, err = counts.Update(Counts{}).Add("Users", 1).Idempotent("").Run(ctx)
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)
}

func TestSequenceGapFreeEventLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// As in the elections service: the event log is its own table; the sequence counter
	// lives in the main table, and each append is one transaction across
	// both tables.
	var events *singletable.Repo[VoteEvent]
	var counts *singletable.Repo[Counts]
	mainTbl, cc := newTable(t, func(tbl *singletable.Table) { counts = singletable.MustBind(tbl, CountsEntity) })
	// One transaction goes through one client: both tables share it.
	newTableWith(t, cc, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, VoteEvents) })
	seq := singletable.NewSequence(mainTbl, "events")

	const writers, each = 20, 5
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
					return []singletable.WriteOp{
						events.CreateOp(VoteEvent{Seq: n, When: time.Now().UTC(), Actor: fmt.Sprint("writer", w), Type: fmt.Sprint("E", i)}),
						counts.Update(Counts{}).Add("Elections", 1).Upsert().Op(),
					}, nil
				})
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()

	const total = writers * each
	slices.Sort(got)
	want := make([]int64, total)
	for i := range want {
		want[i] = int64(i + 1)
	}
	assert.Equal(t, want, got, "every appender got a distinct number, 1..N")
	log, err := events.Query(VoteEvent{}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, log, total)
	for i, e := range log {
		assert.Equal(t, int64(i+1), e.Seq, "the log reads back in sequence order without gap or duplicate")
	}
	cur, err := seq.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(total), cur)
	c, err := counts.Get(ctx, Counts{})
	require.NoError(t, err)
	assert.Equal(t, total, c.Elections, "the counter moved with every committed append and no other")

	// A failing append allocates nothing: no gap.
	boom := errors.New("rejected")
	_, err = seq.Append(ctx, func(int64) ([]singletable.WriteOp, error) { return nil, boom })
	assert.Equal(t, boom, err)
	_, err = seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
		return []singletable.WriteOp{
			events.CreateOp(VoteEvent{Seq: 1, When: log[0].When}), // exists: the transaction is cancelled
		}, nil
	})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
		return []singletable.WriteOp{events.CreateOp(VoteEvent{Seq: n, When: time.Now().UTC()})}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(total+1), n)
}

func TestSequenceLostRaceIsAVersionConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[VoteEvent]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, VoteEvents) })
	seq := singletable.NewSequence(tbl, "log")

	// Two transactions read the same counter; the second to commit loses.
	when := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	first, claim, err := seq.Next(ctx)
	require.NoError(t, err)
	// Meanwhile another appender commits number 1.
	_, err = seq.Append(ctx, func(m int64) ([]singletable.WriteOp, error) {
		return []singletable.WriteOp{events.CreateOp(VoteEvent{Seq: m, When: when, Type: "other"})}, nil
	})
	require.NoError(t, err)
	err = singletable.Tx(ctx, []singletable.WriteOp{claim, events.CreateOp(VoteEvent{Seq: first, When: when.Add(time.Second), Type: "mine"})})
	assert.Equal(t, int64(1), first)
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 0, te.Index)
	assert.Equal(t, "Sequence", te.Op)
	assert.ErrorIs(t, err, singletable.ErrVersionConflict)
	log, err := events.Query(VoteEvent{}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, log, 1)
	assert.Equal(t, "other", log[0].Type)

	// Several numbers at once.
	n, claim, err := seq.Reserve(ctx, 3)
	require.NoError(t, err)
	ops := []singletable.WriteOp{claim}
	for i := range int64(3) {
		ops = append(ops, events.CreateOp(VoteEvent{Seq: n + i, When: when}))
	}
	require.NoError(t, singletable.Tx(ctx, ops))
	cur, err := seq.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), cur)
}

// Tally is a counter declared ExactlyOnceCounters, with what makes an
// update read first: an index key (Team, Status) and a unique Email.
type Tally struct {
	Name    string   `dynamodbav:"Name"`
	N       int      `dynamodbav:"N"`
	Team    string   `dynamodbav:"Team,omitempty"`
	Status  string   `dynamodbav:"Status,omitempty"`
	Email   string   `dynamodbav:"Email,omitempty"`
	Tags    []string `dynamodbav:"Tags,stringset,omitempty"`
	Log     []string `dynamodbav:"Log"`
	Version int      `dynamodbav:"Version"`
}

var Tallies = singletable.MustDefine(singletable.Schema[Tally]{
	Type: "Tally", PK: "TALLY#{Name}", SK: "TALLY", Version: "Version",
	Indexes:             []singletable.IndexSchema[Tally]{{Name: "GSI1", PK: "TEAM#{Team}", SK: "{Status}"}},
	Unique:              []singletable.Unique{{Fields: []string{"Email"}}},
	ExactlyOnceCounters: true,
})

// CountsOnce is Counts declared ExactlyOnceCounters, on an item of its own.
var CountsOnce = singletable.MustDefine(singletable.Schema[Counts]{
	Type: "COUNTS_ONCE", PK: "METADATA", SK: "COUNTS_ONCE", ExactlyOnceCounters: true,
})

// raceTxClient makes a write of its own (race) just before the first
// transaction it sends, as a concurrent writer would between the read an
// update makes and its write.
type raceTxClient struct {
	*txClient
	race func()
}

func (c *raceTxClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if r := c.race; r != nil {
		c.race = nil
		r()
	}
	return c.txClient.TransactWriteItems(ctx, in, o...)
}

// TestExactlyOnceCounters: under Schema.ExactlyOnceCounters an update
// with a counting operator is a one-item transaction under a token drawn
// per attempt, so a lost response retried by the SDK is applied once, as
// with Idempotent, without the caller's token; updates that must read
// first still work, and one that raced is rebuilt under a new token.
func TestExactlyOnceCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tc := newTxClient(t)
	rc := &raceTxClient{txClient: tc}
	var counts *singletable.Repo[Counts]
	var tallies *singletable.Repo[Tally]
	newTableWith(t, rc, func(tbl *singletable.Table) {
		counts = singletable.MustBind(tbl, CountsOnce)
		tallies = singletable.MustBind(tbl, Tallies)
	})

	// Lost after DynamoDB applied it: the SDK's retry carries the same
	// drawn token and is not applied again.
	tc.loseNext.Store(1)
	c, err := counts.Update(Counts{}).Add("Users", 1).Upsert().Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Users)
	require.Len(t, tc.tokens, 2, "sent twice")
	assert.Equal(t, tc.tokens[0], tc.tokens[1], "the retry carries the attempt's token")
	// Another Run is another increment, under another token.
	c, err = counts.Update(Counts{}).Subtract("Users", 3).Add("Elections", 2).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, Counts{Users: -2, Elections: 2}, c)
	require.Len(t, tc.tokens, 3)
	assert.NotEqual(t, tc.tokens[1], tc.tokens[2])
	// An update without a counting operator stays one UpdateItem.
	_, err = counts.Update(Counts{}).Set("Users", 7).Run(ctx)
	require.NoError(t, err)
	assert.Len(t, tc.tokens, 3, "Set is not a transaction")

	_, err = tallies.Create(ctx, Tally{Name: "t", Team: "a", Status: "open", Email: "t@example.com"})
	require.NoError(t, err)
	tc.mu.Lock()
	tc.tokens = nil
	tc.mu.Unlock()
	// A set ADD is idempotent: one UpdateItem.
	_, err = tallies.Update(Tally{Name: "t"}).Add("Tags", "x").Run(ctx)
	require.NoError(t, err)
	assert.Empty(t, tc.tokens, "set Add is not a transaction")

	// Reads first (the index key's Team; version 0 is added to, not read),
	// and meets a concurrent change of Team between its read and its
	// write: rebuilt under a new token, applied once, Team kept.
	rc.race = func() {
		_, err := tallies.Update(Tally{Name: "t"}).Set("Team", "b").Run(ctx)
		require.NoError(t, err)
	}
	tc.loseNext.Store(1)
	v, err := tallies.Update(Tally{Name: "t"}).Set("Status", "closed").Add("N", 1).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, v.N)
	assert.Equal(t, "b", v.Team)
	assert.Equal(t, "closed", v.Status)
	require.Len(t, tc.tokens, 3, "the raced attempt, then the rebuilt one sent twice (its response lost)")
	assert.NotEqual(t, tc.tokens[0], tc.tokens[1], "a rebuilt attempt draws a new token")
	assert.Equal(t, tc.tokens[1], tc.tokens[2])
	byTeam, err := tallies.QueryIndex("GSI1", Tally{Team: "b"}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, byTeam, 1)
	assert.Equal(t, "closed", byTeam[0].Status)

	// Moves a unique value (reads, swaps guards) with a lost response.
	tc.loseNext.Store(1)
	v, err = tallies.Update(Tally{Name: "t"}).Set("Email", "u@example.com").Add("N", 1).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, v.N)
	_, err = tallies.Create(ctx, Tally{Name: "other", Email: "t@example.com"})
	assert.NoError(t, err, "the old value was released")
	_, err = tallies.Create(ctx, Tally{Name: "third", Email: "u@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "the new value is guarded")

	// Append to a list stored as NULL: read, appended in Go, sent once.
	v, err = tallies.Update(Tally{Name: "t"}).Append("Log", "x").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, v.Log)

	got, err := tallies.Get(ctx, Tally{Name: "t"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	assert.Equal(t, 2, got.N)
	assert.Equal(t, 6, got.Version, "created, then five updates, each moving the version once")
}

// TestExactlyOnceCountersPrice measures what ExactlyOnceCounters costs an
// increment, as DynamoDB reports the capacity consumed: by default one
// UpdateItem of 1 write unit; with the option a one-item transaction of 2
// write units and the consistent read of the item Run returns, 1 read unit.
func TestExactlyOnceCountersPrice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type sent struct {
		op          string
		read, write float64
	}
	price := func(e *singletable.Entity[Counts]) []sent {
		var mu sync.Mutex
		var got []sent
		var counts *singletable.Repo[Counts]
		newTable(t, func(tbl *singletable.Table) { counts = singletable.MustBind(tbl, e) }, func(o *singletable.TableOptions) {
			o.Observe = func(_ context.Context, o *singletable.Observation) {
				if o.Op == "CreateTable" || o.Op == "DescribeTable" || o.Op == "UpdateTimeToLive" {
					return
				}
				r, w := o.Units()
				mu.Lock()
				got = append(got, sent{o.Op, r, w})
				mu.Unlock()
			}
		})
		_, err := counts.Update(Counts{}).Add("Users", 1).Upsert().Run(ctx) // creates the item
		require.NoError(t, err)
		mu.Lock()
		got = nil
		mu.Unlock()
		c, err := counts.Update(Counts{}).Add("Users", 1).Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, c.Users)
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	plain, once := price(CountsEntity), price(CountsOnce)
	assert.Equal(t, []sent{{"UpdateItem", 0, 1}}, plain, "default: one UpdateItem, 1 write unit")
	assert.Equal(t, []sent{{"TransactWriteItems", 0, 2}, {"GetItem", 1, 0}}, once,
		"ExactlyOnceCounters: a one-item transaction, 2 write units, and the read-back, 1 read unit")
	t.Logf("default %v; ExactlyOnceCounters %v", plain, once)
}
