package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/internal/testfaults"
)

// Meter is a versioned counter with a managed UpdatedAt, the combination
// that lets a versioned increment recognise itself after a lost response.
type Meter struct {
	Name    string    `dynamodbav:"Name"`
	N       int       `dynamodbav:"N"`
	Version int       `dynamodbav:"Version"`
	Updated time.Time `dynamodbav:"UpdatedAt"`
}

var Meters = singletable.MustDefine(singletable.Schema[Meter]{
	Type: "Meter", PK: "METER#{Name}", SK: "METER", Version: "Version", UpdatedAt: "Updated",
})

// TestCountersUnderFaults increments shared counters from several
// goroutines under faults, each caller retrying an increment until it
// succeeds, in four ways:
//   - Idempotent (a client request token per increment): the count is
//     exact, whatever was lost and retried;
//   - an Add of an ExactlyOnceCounters entity (a token drawn per attempt,
//     none from the caller), repeated by the caller only after an error
//     proving it was not applied: no increment is applied twice, the count
//     lying between the increments acknowledged and those plus the ones
//     whose Run ended in doubt (the caller's own retry is not covered);
//   - a versioned read-increment-write: the count equals the version's
//     moves, lies between the increments known applied and those plus the
//     unknown ones, and retries after a lost response recognise their own
//     write instead of reporting a conflict;
//   - a plain ADD, for contrast: retried after lost responses it counts
//     some increments twice (the documented hazard the other two avoid).
func TestCountersUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runCounterFaultSuite)
}

func runCounterFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	seed := uint64(rate*1000) + 13
	var counts *singletable.Repo[Counts]
	var meters *singletable.Repo[Meter]
	var once *singletable.Repo[Counts]
	_, ft := testfaults.Table(t, rate, seed, func(tbl *singletable.Table) {
		counts = singletable.MustBind(tbl, CountsEntity)
		once = singletable.MustBind(tbl, CountsOnce)
		meters = singletable.MustBind(tbl, Meters)
	})
	_, err := meters.Create(ctx, Meter{Name: "m"})
	require.NoError(t, err)
	ft.SetEnabled(true)

	const workers, each = 8, 12
	// Tokens are per account, not per table: parallel suites need their own.
	run := fmt.Sprintf("%08x", rand.Uint32())
	var mu sync.Mutex
	var ops, errs int
	var meterApplied, meterUnknown int
	var onceApplied, onceUnknown int
	count := func(err error) {
		mu.Lock()
		ops++
		if err != nil {
			errs++
		}
		mu.Unlock()
	}
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := range each {
				// Idempotent: the caller retries with the same token.
				token := fmt.Sprintf("%s-w%d-i%d", run, w, i)
				for try := 0; ; try++ {
					_, err := counts.Update(Counts{}).Add("Users", 1).Upsert().Idempotent(token).Run(ctx)
					count(err)
					if err == nil {
						break
					}
					if try == 50 {
						return fmt.Errorf("idempotent increment %s: %w", token, err)
					}
				}
				// ExactlyOnceCounters: no token of the caller's; repeated
				// only after an error proving nothing was applied.
				for try := 0; ; try++ {
					_, err := once.Update(Counts{}).Add("Users", 1).Upsert().Run(ctx)
					count(err)
					mu.Lock()
					switch {
					case err == nil:
						onceApplied++
					case !notApplied(err):
						onceUnknown++
					}
					mu.Unlock()
					if err == nil || !notApplied(err) {
						break
					}
					if try == 50 {
						return fmt.Errorf("exactly-once increment: %w", err)
					}
				}
				// Plain ADD, retried by the caller until it succeeds.
				for try := 0; ; try++ {
					_, err := counts.Update(Counts{}).Add("Elections", 1).Upsert().Run(ctx)
					count(err)
					if err == nil {
						break
					}
					if try == 50 {
						return fmt.Errorf("plain increment: %w", err)
					}
				}
				// Versioned: read, increment on that version, re-read on a
				// conflict.
				for try := 0; ; try++ {
					m, err := retryRead(t, func() (Meter, error) {
						return meters.Get(ctx, Meter{Name: "m"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
					})
					if err != nil {
						return err
					}
					_, err = meters.Update(Meter{Name: "m", Version: m.Version}).Add("N", 1).Run(ctx)
					count(err)
					mu.Lock()
					switch {
					case err == nil:
						meterApplied++
					case !notApplied(err):
						meterUnknown++
					}
					mu.Unlock()
					if err == nil || !notApplied(err) || try == 200 {
						break
					}
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	ft.SetEnabled(false)
	stats := ft.Stats()

	c, err := counts.Get(ctx, Counts{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	m, err := meters.Get(ctx, Meter{Name: "m"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	o, err := once.Get(ctx, Counts{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	require.NoError(t, err)
	want := workers * each
	lost, dups := 0, 0
	if c.Users != want {
		if c.Users < want {
			lost += want - c.Users
		} else {
			dups += c.Users - want
		}
	}
	assert.Equal(t, want, c.Users, "idempotent increments: exact")
	assert.Equal(t, m.Version-1, m.N, "every applied versioned increment moved the version once")
	assert.GreaterOrEqual(t, m.N, meterApplied, "no acknowledged versioned increment lost")
	assert.LessOrEqual(t, m.N, meterApplied+meterUnknown, "no versioned increment applied twice")
	if m.N < meterApplied {
		lost += meterApplied - m.N
	}
	if m.N > meterApplied+meterUnknown {
		dups += m.N - meterApplied - meterUnknown
	}
	assert.GreaterOrEqual(t, o.Users, onceApplied, "ExactlyOnceCounters: no acknowledged increment lost")
	assert.LessOrEqual(t, o.Users, onceApplied+onceUnknown, "ExactlyOnceCounters: no increment applied twice")
	assert.Equal(t, want, onceApplied+onceUnknown, "every increment ran to an answer")
	onceLost, onceDups := max(onceApplied-o.Users, 0), max(o.Users-onceApplied-onceUnknown, 0)
	assert.GreaterOrEqual(t, c.Elections, want, "plain ADD: never fewer")
	t.Logf("rate %.0f%%: %d ops (%d errors), %d faults %v; idempotent %d/%d, versioned %d (acknowledged %d, unknown %d), exactly-once %d (acknowledged %d, unknown %d), plain ADD %d for %d (%d double-applied)",
		rate*100, ops, errs, stats.Total(), stats.Faults, c.Users, want, m.N, meterApplied, meterUnknown, o.Users, onceApplied, onceUnknown, c.Elections, want, c.Elections-want)
	reportFaults(testfaults.Row{Suite: "Counters: Idempotent ADD and versioned increments", Rate: rate, Ops: ops, Errors: errs,
		Faults: stats.Total(), Checked: 2, Lost: lost, Dups: dups,
		Notes: fmt.Sprintf("token count exact (%d); versioned count = version moves, between acknowledged and acknowledged+unknown", want)})
	reportFaults(testfaults.Row{Suite: "Counters: Add of an ExactlyOnceCounters entity (no caller token)", Rate: rate, Ops: want, Errors: onceUnknown,
		Faults: stats.Faults[ddbfault.LostResponse], Checked: 1, Lost: onceLost, Dups: onceDups,
		Notes: fmt.Sprintf("%d of %d acknowledged, count %d: none applied twice by the SDK's or the library's retries; errors = Runs ended in doubt, not repeated (a caller's retry is not covered); faults = lost responses in the run", onceApplied, want, o.Users)})
	reportFaults(testfaults.Row{Suite: "Counters: plain ADD retried by the caller (contrast, not a library guarantee)", Rate: rate, Ops: workers * each,
		Faults: stats.Faults[ddbfault.LostResponse], Checked: 1, Dups: c.Elections - want,
		Notes: "duplicated = increments applied twice after lost responses: why counters need a token or a condition; faults = lost responses in the run", Contrast: true})
}

// EventRec is an event appended with a gap-free sequence number; Ref
// identifies the call that appended it.
type EventRec struct {
	Seq int64  `dynamodbav:"Seq"`
	Ref string `dynamodbav:"Ref"`
}

var EventRecs = singletable.MustDefine(singletable.Schema[EventRec]{Type: "EventRec", PK: "LOG", SK: "{Seq}"})

// TestSequenceAppendsUnderFaults appends events with Sequence.Append from
// several goroutines under faults. Afterwards the numbers are 1…N without
// a gap, the counter says N, every acknowledged append is there with the
// number it returned, and no call's event is there twice (a lost response
// must not append the same event under two numbers).
func TestSequenceAppendsUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runSequenceFaultSuite)
}

func runSequenceFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	seed := uint64(rate*1000) + 17
	var events *singletable.Repo[EventRec]
	var seq *singletable.Sequence
	_, ft := testfaults.Table(t, rate, seed, func(tbl *singletable.Table) {
		events = singletable.MustBind(tbl, EventRecs)
		seq = singletable.NewSequence(tbl, "log", func(o *singletable.SequenceOptions) {
			o.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}
			o.MaxAttempts = 400
		})
	})
	ft.SetEnabled(true)

	const workers, each = 6, 10
	var mu sync.Mutex
	acked := map[string]int64{}
	var ops, errs int
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			for i := range each {
				ref := fmt.Sprintf("w%d-%d", w, i)
				n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
					return []singletable.WriteOp{events.CreateOp(EventRec{Seq: n, Ref: ref})}, nil
				})
				mu.Lock()
				ops++
				if err != nil {
					errs++
					var te *singletable.TransactionError
					if errors.As(err, &te) && !te.MaybeApplied && len(te.Reasons) == 0 {
						t.Errorf("append %s: %v", ref, err)
					}
				} else {
					acked[ref] = n
				}
				mu.Unlock()
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	ft.SetEnabled(false)
	stats := ft.Stats()

	all, err := events.Query(EventRec{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Collect(ctx)
	require.NoError(t, err)
	last, err := seq.Current(ctx)
	require.NoError(t, err)
	lost, dups, gaps := 0, 0, 0
	seen := map[string]int64{}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			gaps++
			t.Errorf("event %d has number %d", i+1, e.Seq)
		}
		if prev, dup := seen[e.Ref]; dup {
			dups++
			t.Errorf("%s appended twice, as %d and %d", e.Ref, prev, e.Seq)
		}
		seen[e.Ref] = e.Seq
	}
	for ref, n := range acked {
		if seen[ref] != n {
			lost++
			t.Errorf("acknowledged %s as %d; the log has it as %d", ref, n, seen[ref])
		}
	}
	if last != int64(len(all)) {
		gaps++
		t.Errorf("counter at %d for %d events", last, len(all))
	}
	t.Logf("rate %.0f%%: %d appends (%d errors), %d requests, %d faults %v; %d events, counter %d, %d lost, %d duplicated, %d gaps",
		rate*100, ops, errs, stats.Requests, stats.Total(), stats.Faults, len(all), last, lost, dups, gaps)
	reportFaults(testfaults.Row{Suite: "Sequence.Append (gap-free event numbers)", Rate: rate, Ops: ops, Errors: errs,
		Faults: stats.Total(), Checked: len(all), Lost: lost, Dups: dups, Broken: gaps,
		Notes: "numbers 1…N without gap, counter = N, every acknowledged append at its number, no event twice"})
}
