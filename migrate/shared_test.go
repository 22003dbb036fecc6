package migrate_test

import (
	"context"
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
	"github.com/singletable-go/singletable/migrate"
)

// Shared runs in one process (the multi-process run with a SIGKILL is
// TestMigrateWorkerProcesses): a worker is cancelled part-way through its
// first segments, then two workers copy the rest of 3,000 users together,
// taking its segments over from their checkpoints. The workers' own counts
// add up to the migration's totals, and the table ends as a single run
// leaves it.
func TestMigrateSharedWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 3000
	src := newLegacyTable(t, n)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	shared := func(o *migrate.RunOptions) {
		o.Shared, o.Segments, o.WorkerSegments, o.PageSize, o.Writers = true, 9, 2, 100, 4
		// Long enough that a loaded machine renews it in time (a lost lease
		// stops a worker); the cancelled worker gives its leases up, so
		// nothing waits for one to expire.
		o.Lease = 10 * time.Second
	}

	// Worker 0 is cancelled at its first checkpoint: it gives its
	// segments' leases up, so that others take them over at once.
	cancelCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	reps := make([]*migrate.Report, 3)
	errs := make([]error, 3)
	reps[0], errs[0] = m.Run(cancelCtx, "000-users", shared, func(o *migrate.RunOptions) {
		o.ProgressInterval = 5 * time.Millisecond
		o.Progress = func(p migrate.Progress) {
			if p.Read > 0 {
				cancel()
			}
		}
	})
	require.ErrorIs(t, errs[0], context.Canceled)
	assert.Equal(t, migrate.Interrupted, reps[0].State)
	assert.Equal(t, migrate.Interrupted, must(m.Status(ctx))[0].State)

	var wg sync.WaitGroup
	for w := 1; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[w], errs[w] = m.Run(ctx, "000-users", shared)
		}()
	}
	wg.Wait()

	want := migrate.Counts{Scanned: n, Read: n, Written: n - n/100, Skipped: n / 100}
	var sum migrate.Counts
	taken := 0
	for w, rep := range reps {
		t.Logf("worker %d: %+v, %d segments claimed, %d taken over, %v", w, rep.RunCounts, rep.Claimed, rep.TakenOver, rep.Elapsed)
		sum.Scanned += rep.RunCounts.Scanned
		sum.Read += rep.RunCounts.Read
		sum.Written += rep.RunCounts.Written
		sum.Skipped += rep.RunCounts.Skipped
		sum.Failed += rep.RunCounts.Failed
		taken += rep.TakenOver
		assert.Positive(t, rep.Claimed)
		if w > 0 {
			require.NoError(t, errs[w])
			assert.Equal(t, migrate.Completed, rep.State)
			assert.Equal(t, want, rep.Counts, "every worker reports the migration's totals")
			assert.Equal(t, 9, rep.Segments)
		}
	}
	assert.Positive(t, reps[0].RunCounts.Read)
	assert.Equal(t, want, sum, "the workers' checkpointed counts add up")
	assert.Positive(t, taken, "the cancelled worker's segments were taken over")
	assert.True(t, reps[1].Resumed || reps[2].Resumed)

	st := must(m.Status(ctx))[0]
	assert.Equal(t, migrate.Completed, st.State)
	assert.Equal(t, want, st.Counts)
	assert.Equal(t, 9, st.SegmentsDone)
	assert.Equal(t, 3, st.Runs)
	assert.Empty(t, st.Workers)

	// The table is what a single run makes.
	ref, refUsers, _ := usersTarget(t)
	mref, err := migrate.New(ref, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(refUsers)))
	require.NoError(t, err)
	_, err = mref.Run(ctx, "000-users")
	require.NoError(t, err)
	assert.Equal(t, contents(t, ref), contents(t, tbl))

	// Finished: neither a worker nor a plain run runs it again.
	again, err := m.Run(ctx, "000-users", shared)
	require.NoError(t, err)
	assert.True(t, again.AlreadyCompleted)
	assert.Equal(t, want, again.Counts)
	again, err = m.Run(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, again.AlreadyCompleted)
}

// A plain run and shared workers keep each other out: a worker cannot join
// while a run holds the migration's lease, and a plain run refuses to start
// while a worker holds a segment.
func TestMigrateSharedExclusion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 400)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	// holdWhileRunning starts the migration with opt, held part-way by a
	// gate (one item goes through, every later one waits), waits until the
	// run has checkpointed that item, calls check, then cancels the run.
	holdWhileRunning := func(opt func(*migrate.RunOptions), check func()) {
		g := newGate()
		held, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, g.transform(usersTransform(users))))
		require.NoError(t, err)
		before := must(m.Status(ctx))[0].Counts.Read
		done := make(chan error, 1)
		runCtx, cancel := context.WithCancel(ctx)
		defer g.open()
		defer cancel()
		go func() {
			_, err := held.Run(runCtx, "000-users", opt, func(o *migrate.RunOptions) { o.PageSize = 1 })
			done <- err
		}()
		waitCheckpointed(t, m, before, done)
		check()
		cancel()
		g.open()
		require.ErrorIs(t, <-done, context.Canceled)
	}

	holdWhileRunning(func(*migrate.RunOptions) {}, func() {
		_, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) { o.Shared = true })
		require.ErrorIs(t, err, migrate.ErrRunning)
	})
	holdWhileRunning(func(o *migrate.RunOptions) { o.Shared = true }, func() {
		st := must(m.Status(ctx))[0]
		assert.Equal(t, migrate.Running, st.State)
		require.Len(t, st.Workers, 1)
		_, err := m.Run(ctx, "000-users")
		require.ErrorIs(t, err, migrate.ErrRunning)
		assert.ErrorContains(t, err, st.Workers[0])
	})
	// The cancelled worker gave its segments up: a plain run resumes
	// them at once, from the checkpoints of both earlier runs.
	rep, err := m.Run(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, rep.Resumed)
	assert.Equal(t, migrate.Counts{Scanned: 400, Read: 400, Written: 396, Skipped: 4}, rep.Counts)
}

// The ledger of a plain run recorded by an earlier version
// (testdata/migration_ledger_interrupted.json: 2 segments, 150 of 500 users
// copied) is resumed by two shared workers from its checkpoints.
func TestMigrateSharedResumesEarlierLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 500)
	tbl, users, _ := usersTarget(t)
	c := ddblocal.Shared(t).Client()
	for _, item := range readDynamoJSON(t, "testdata/migration_ledger_interrupted.json") {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
		require.NoError(t, err)
	}
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	var wg sync.WaitGroup
	reps := make([]*migrate.Report, 2)
	for w := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			reps[w], err = m.Run(ctx, "000-users", func(o *migrate.RunOptions) {
				o.Shared, o.Segments, o.WorkerSegments, o.PageSize = true, 5, 1, 50
			})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	want := migrate.Counts{Scanned: 500, Read: 500, Written: 495, Skipped: 5}
	var read int64
	for _, rep := range reps {
		assert.Equal(t, migrate.Completed, rep.State)
		assert.Equal(t, 2, rep.Segments, "the recorded segment count wins")
		assert.Equal(t, want, rep.Counts)
		read += rep.RunCounts.Read
	}
	assert.Equal(t, int64(350), read, "only the items after the checkpoints were read again")
	st := must(m.Status(ctx))[0]
	assert.Equal(t, migrate.Completed, st.State)
	assert.Equal(t, 3, st.Runs)
}

// A shared run that ends with failed items records the migration failed;
// the next workers start it over from the beginning (a new attempt: the
// old checkpoints no longer count), and the counts are those of one pass.
func TestMigrateSharedRestartsFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := make([]map[string]types.AttributeValue, 300)
	for i := range items {
		items[i] = legacyItem(i)
	}
	items[7]["created_at"] = &types.AttributeValueMemberS{Value: "yesterday"} // cannot decode
	src := newRawTable(t, "username", items)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	shared := func(segments int) func(*migrate.RunOptions) {
		return func(o *migrate.RunOptions) { o.Shared, o.Segments, o.PageSize = true, segments, 40 }
	}

	rep, err := m.Run(ctx, "000-users", shared(3))
	var me *migrate.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, migrate.Failed, rep.State)
	assert.Equal(t, migrate.Counts{Scanned: 300, Read: 300, Written: 296, Skipped: 3, Failed: 1}, rep.Counts)
	require.Len(t, rep.Failures, 1)
	assert.Equal(t, migrate.Failed, must(m.Status(ctx))[0].State)

	seedRaw(t, ddblocal.Shared(t).Client(), src, []map[string]types.AttributeValue{legacyItem(7)})
	var wg sync.WaitGroup
	reps := make([]*migrate.Report, 2)
	for w := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			reps[w], err = m.Run(ctx, "000-users", shared(4))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	want := migrate.Counts{Scanned: 300, Read: 300, Written: 297, Skipped: 3}
	var read int64
	for _, rep := range reps {
		assert.Equal(t, migrate.Completed, rep.State)
		assert.Equal(t, want, rep.Counts)
		assert.False(t, rep.Resumed)
		read += rep.RunCounts.Read
	}
	assert.Equal(t, int64(300), read)
	st := must(m.Status(ctx))[0]
	assert.Equal(t, want, st.Counts)
	assert.Equal(t, 4, st.Segments, "a restart takes the new segment count")
	vr, err := m.Verify(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
}

// A worker whose segment is taken from it (it was paused past its lease
// and another worker claimed the segment) stops with ErrRunning:
// its renewal and its next checkpoint are refused.
func TestMigrateSharedLostLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 400)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	// The worker is held by a gate after its first checkpoint, so that it
	// cannot finish before the claim lands, however slow the machine.
	g := newGate()
	held, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, g.transform(usersTransform(users))))
	require.NoError(t, err)
	defer g.open()
	done := make(chan error, 1)
	go func() {
		_, err := held.Run(ctx, "000-users", func(o *migrate.RunOptions) {
			o.Shared, o.Segments, o.WorkerSegments, o.PageSize = true, 1, 1, 1
		})
		done <- err
	}()
	waitCheckpointed(t, m, 0, done)
	// Another worker's claim, as it lands in the checkpoint.
	_, err = tbl.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(tbl.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "_MIGRATION#000-users"},
			"SK": &types.AttributeValueMemberS{Value: "SEGMENT#00000"},
		},
		UpdateExpression:         aws.String("SET #o = :o, LeaseUntil = :u"),
		ExpressionAttributeNames: map[string]string{"#o": "Owner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o": &types.AttributeValueMemberS{Value: "other-host/7/abc"},
			":u": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)},
		},
	})
	require.NoError(t, err)
	g.open()
	// Its next checkpoint, or its next renewal, is refused: it stops (the
	// test binary's -timeout bounds a worker that kept going).
	err = <-done
	require.ErrorIs(t, err, migrate.ErrRunning)
	assert.ErrorContains(t, err, "lost its lease")
	st := must(m.Status(ctx))[0]
	assert.Equal(t, []string{"other-host/7/abc"}, st.Workers)
	_, err = m.Run(ctx, "000-users")
	require.ErrorIs(t, err, migrate.ErrRunning)
	assert.ErrorContains(t, err, "other-host/7/abc")
}

// gate holds a migration part-way, however fast or slow the machine: its
// transform lets the first item through and holds every later one until
// open is called.
type gate struct {
	passed  atomic.Bool
	release chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) transform(tr migrate.Transform) migrate.Transform {
	return func(item map[string]types.AttributeValue) ([]singletable.WriteOp, error) {
		if !g.passed.CompareAndSwap(false, true) {
			<-g.release
		}
		return tr(item)
	}
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// waitCheckpointed waits until the ledger of m's first migration counts
// more items read than before: a run has checkpointed a page. It fails the
// test if the run (whose result done carries) stops first.
func waitCheckpointed(t *testing.T, m *migrate.Migrator, before int64, done <-chan error) {
	t.Helper()
	for must(m.Status(context.Background()))[0].Counts.Read <= before {
		select {
		case err := <-done:
			t.Fatalf("the run stopped before its first checkpoint: %v", err)
		case <-time.After(5 * time.Millisecond): // poll the ledger
		}
	}
}
