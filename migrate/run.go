package migrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/time/rate"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/expr"
)

// Run runs the migration with the given ID, or resumes it from its
// checkpoints if an earlier run stopped part-way. A completed migration
// does not run again: Run returns its recorded counts with
// AlreadyCompleted set. A migration that failed (items failed in its last
// run) starts over from the beginning.
//
// The scan runs in parallel segments, a page at a time; after every page,
// once all the page's writes are done, the segment's checkpoint (scan
// position and counts) is saved in the ledger. A run stopped by ctx or by
// an error leaves the migration interrupted, and the next run resumes
// after the last saved page: the writes of unsaved pages are made again,
// with the same content.
//
// Run returns an *[Error] when items failed, [ErrRunning] when another run
// holds the migration, and the cause when it stopped early (ctx's error, a
// scan or ledger error). The report is returned in every case but an
// unknown ID or a failure to read the ledger. Inside a
// [singletable.Table.Preview] it sends nothing and returns an error.
func (m *Migrator) Run(ctx context.Context, id string, optFns ...func(*RunOptions)) (*Report, error) {
	var o RunOptions
	for _, fn := range optFns {
		fn(&o)
	}
	mig, err := m.migration(ctx, id)
	if err != nil {
		return nil, err
	}
	o.normalize()
	switch {
	case o.DryRun:
		return runDry(ctx, m.t, mig, o)
	case o.Shared:
		return runShared(ctx, m.t, mig, o)
	}
	return runExclusive(ctx, m.t, mig, o)
}

// runDry is Run for a dry run: from the beginning, writing nothing.
func runDry(ctx context.Context, t *table, mig Migration, o RunOptions) (*Report, error) {
	rep := &Report{ID: mig.ID, Kind: mig.kind.name(), DryRun: true}
	st, err := readStatus(ctx, t, mig)
	if err != nil {
		return nil, err
	}
	rep.State = st.State
	spec, err := mig.kind.source(ctx, t)
	if err != nil {
		return rep, err
	}
	segs := make([]*segmentState, o.Segments)
	for i := range segs {
		segs[i] = &segmentState{Segment: i}
	}
	r := newRunner(t, mig, o, spec, nil)
	err = r.run(ctx, segs)
	r.fill(rep, segs)
	return rep, err
}

// runExclusive is Run holding the migration's lease.
func runExclusive(ctx context.Context, t *table, mig Migration, o RunOptions) (*Report, error) {
	rep := &Report{ID: mig.ID, Kind: mig.kind.name()}
	l := newLedger(t, mig.ID, newRunOwner())
	prev, existed, err := l.acquire(ctx, mig, o.Segments, o.Lease)
	if errors.Is(err, errCompleted) {
		rep.AlreadyCompleted = true
		rep.State = Completed
		rep.Counts = prev.Counts
		rep.Segments = prev.Segments
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.State = Interrupted
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopRenew := l.keepLease(runCtx, o.Lease, cancel)
	segs, err := prepare(runCtx, l, prev, existed, o)
	var spec scanSpec
	if err == nil {
		spec, err = mig.kind.source(runCtx, t)
	}
	if err == nil {
		for _, s := range segs {
			if s.Pages > 0 {
				rep.Resumed = true
			}
		}
		r := newRunner(t, mig, o, spec, l)
		err = r.run(runCtx, segs)
		r.fill(rep, segs)
	}
	stopRenew()
	if err != nil {
		if c := context.Cause(runCtx); c != nil && !errors.Is(err, c) && errors.Is(c, ErrRunning) {
			err = c // the lease was lost: that is why the run stopped
		}
		// Record why, so `migrate status` can tell (not when another run
		// holds the migration: that is no failure of it); best effort with a
		// context of its own, since ctx may be the reason.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		cause := err
		if errors.Is(err, ErrRunning) {
			cause = nil
		}
		_ = l.release(rctx, cause)
		// A checkpoint whose save the cancel cut short may still have
		// landed: report what the ledger holds, which is what Status shows
		// and what a resumed run starts from.
		if len(segs) > 0 {
			if saved, rerr := l.segments(rctx, len(segs)); rerr == nil {
				rep.Counts = Counts{}
				for _, s := range saved {
					rep.Counts.add(s.Counts)
				}
			}
		}
		rcancel()
		return rep, err
	}
	state := Completed
	if rep.Counts.Failed > 0 {
		state = Failed
	}
	if err := l.finish(ctx, state, rep.Counts); err != nil {
		return rep, err
	}
	rep.State = state
	if state == Failed {
		return rep, &Error{ID: mig.ID, Failed: rep.Counts.Failed, Failures: rep.Failures}
	}
	return rep, nil
}

// prepare settles the number of segments and claims their checkpoints: a
// new or failed migration starts from scratch with o.Segments, an
// interrupted one resumes with the number it started with. A segment that
// a shared run holds by an unexpired lease keeps this run out.
func prepare(ctx context.Context, l *ledger, prev headerRecord, existed bool, o RunOptions) ([]*segmentState, error) {
	l.attempt = prev.Attempt
	n := o.Segments
	fresh := !existed || prev.Status == Failed || prev.Segments <= 0
	var segs []*segmentState
	if existed && prev.Segments > 0 {
		read, err := l.segments(ctx, prev.Segments)
		if err != nil {
			return nil, err
		}
		if err := l.checkUnleased(read); err != nil {
			return nil, err
		}
		if !fresh {
			n, segs = prev.Segments, read
		}
	}
	if fresh {
		if existed && prev.Segments != n {
			if err := l.setSegments(ctx, n); err != nil {
				return nil, err
			}
		}
		for i := range n {
			segs = append(segs, &segmentState{Segment: i})
		}
	}
	return segs, l.claim(ctx, segs)
}

// checkUnleased returns ErrRunning when another run holds one of segs by an
// unexpired per-segment lease.
func (l *ledger) checkUnleased(segs []*segmentState) error {
	now := l.t.now()
	for _, s := range segs {
		if s.leased(l.owner, now) {
			return wrap(ErrRunning, fmt.Sprintf("%s: segment %d is held by %s until %s",
				l.id, s.Segment, s.Owner, s.LeaseUntil.UTC().Format(time.RFC3339)), nil)
		}
	}
	return nil
}

// keepLease renews the lease every third of its duration until the
// returned function is called; if renewal fails the run is cancelled with
// the error as cause.
func (l *ledger) keepLease(ctx context.Context, lease time.Duration, cancel context.CancelCauseFunc) (stop func()) {
	ctx, stopCtx := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(lease/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := l.renew(ctx, lease); err != nil && ctx.Err() == nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return func() { stopCtx(); <-done }
}

// scanSpec describes the scan feeding a migration.
type scanSpec struct {
	client singletable.Client
	table  string
	// entity, when set, selects the entity's items: its filter, and the
	// items the filter kept that it does not own are dropped.
	entity *singletable.StoredItems
	// keyAttrs are the scanned table's key attributes, for ItemFailure.Key.
	keyAttrs []string
	// total is the table's approximate item count (0: unknown).
	total int64
}

// input is the request for the first page of one of segments scan
// segments; projection, when set, is the one attribute to read (a scan
// of the whole table, without an entity).
func (s scanSpec) input(segment, segments int, pageSize int32, projection string) *dynamodb.ScanInput {
	in := &dynamodb.ScanInput{
		TableName:     &s.table,
		Limit:         aws.Int32(pageSize),
		Segment:       aws.Int32(int32(segment)),
		TotalSegments: aws.Int32(int32(segments)),
	}
	if s.entity != nil {
		s.entity.FilterScan(in)
	}
	if projection != "" {
		var b expr.Builder
		in.ProjectionExpression = aws.String(b.Projection(projection))
		in.ExpressionAttributeNames = b.Names()
	}
	return in
}

// page reads one page, retrying throttling and server errors.
func (s scanSpec) page(ctx context.Context, in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) {
	var out *dynamodb.ScanOutput
	err := backoff.Default.Do(ctx, nil, backoff.IsRetryable, func(ctx context.Context) error {
		var err error
		out, err = s.client.Scan(ctx, in)
		return err
	})
	if err == nil && s.entity != nil {
		kept := out.Items[:0:0]
		for _, it := range out.Items {
			if s.entity.Owns(it) {
				kept = append(kept, it)
			}
		}
		out.Items, out.Count = kept, int32(len(kept))
	}
	return out, err
}

// describe fills keyAttrs and total from DescribeTable.
func (s *scanSpec) describe(ctx context.Context) error {
	out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	if err != nil {
		return fmt.Errorf("singletable: describe table %s: %w", s.table, err)
	}
	for _, k := range out.Table.KeySchema {
		s.keyAttrs = append(s.keyAttrs, aws.ToString(k.AttributeName))
	}
	s.total = aws.ToInt64(out.Table.ItemCount)
	return nil
}

// outcome is what happened to one scanned item.
type outcome uint8

const (
	outPending outcome = iota
	outWritten
	outSkipped
	outFailed
)

// page is one scan page travelling through the engine: its items, their
// outcomes as the writes complete, and the position to checkpoint once
// they all have.
type scanPage struct {
	segment int
	items   []map[string]types.AttributeValue
	lastKey map[string]types.AttributeValue
	scanned int64
	wg      sync.WaitGroup // one per submitted job

	mu      sync.Mutex
	state   []outcome
	errs    map[int]error
	fatal   error
	ops     map[string]int64
	wcu     int64
	retried int64
}

func newPage(segment int, out *dynamodb.ScanOutput) *scanPage {
	return &scanPage{
		segment: segment,
		items:   out.Items,
		lastKey: out.LastEvaluatedKey,
		scanned: int64(out.ScannedCount),
		state:   make([]outcome, len(out.Items)),
	}
}

// retryItem runs attempt for item i of p under the default backoff until
// it stops asking for another try (by returning [backoff.Again]). Each
// attempt records the item's outcome itself (set, fail or abort), so what
// is left to record here is a budget spent, a failure matching
// [singletable.ErrConditionFailed] saying the item kept changing, or the
// run stopping. what names the migration kind in the failure ("backfill").
func (r *runner) retryItem(ctx context.Context, p *scanPage, i int, what string, attempt func(context.Context) error) {
	policy := backoff.Default
	never := func(error) bool { return false }
	err := policy.Do(ctx, nil, never, attempt)
	switch {
	case err == nil:
	case stopsRun(ctx, err):
		p.abort(err)
	default:
		p.fail(i, wrap(singletable.ErrConditionFailed, fmt.Sprintf("%s %s: item still changing after %d attempts", what, r.mig.ID, max(policy.Attempts, 1)), err))
	}
}

// set records item i's outcome; a failure is final.
func (p *scanPage) set(i int, o outcome) {
	p.mu.Lock()
	if p.state[i] != outFailed {
		p.state[i] = o
	}
	p.mu.Unlock()
}

// fail records that item i failed, keeping the first reason.
func (p *scanPage) fail(i int, err error) {
	p.mu.Lock()
	p.state[i] = outFailed
	if p.errs == nil {
		p.errs = map[int]error{}
	}
	if p.errs[i] == nil {
		p.errs[i] = err
	}
	p.mu.Unlock()
}

// abort marks the page as not done: it is not checkpointed, and the run
// stops with err.
func (p *scanPage) abort(err error) {
	p.mu.Lock()
	if p.fatal == nil {
		p.fatal = err
	}
	p.mu.Unlock()
}

// wrote counts n writes of the given kind ("User put") and their capacity.
func (p *scanPage) wrote(kind string, n, wcu int64) {
	p.mu.Lock()
	if p.ops == nil {
		p.ops = map[string]int64{}
	}
	p.ops[kind] += n
	p.wcu += wcu
	p.mu.Unlock()
}

// retry counts a rewrite planned again after a concurrent change.
func (p *scanPage) retry() {
	p.mu.Lock()
	p.retried++
	p.mu.Unlock()
}

func (p *scanPage) counts() Counts {
	c := Counts{Scanned: p.scanned, Read: int64(len(p.items))}
	for _, o := range p.state {
		switch o {
		case outWritten:
			c.Written++
		case outSkipped:
			c.Skipped++
		default: // a pending item at the end had no decision: count it failed
			c.Failed++
		}
	}
	return c
}

// runner executes one run: scan segments, a pool of writers, the rate
// limit, checkpoints and progress.
type runner struct {
	t     *table
	mig   Migration
	o     RunOptions
	spec  scanSpec
	led   *ledger // nil in a dry run
	lim   *rate.Limiter
	limMu sync.Mutex // serializes waits on lim
	jobs  chan func()
	nsegs int
	fail  context.CancelCauseFunc
	start time.Time

	baseMu sync.Mutex
	base   Counts // from checkpoints, at the start (shared: when claimed)
	live   struct {
		scanned, read, written, skipped, failed, wcu, retried atomic.Int64
	}

	mu       sync.Mutex
	ops      map[string]int64
	failures []ItemFailure
}

func newRunner(t *table, mig Migration, o RunOptions, spec scanSpec, led *ledger) *runner {
	r := &runner{t: t, mig: mig, o: o, spec: spec, led: led, ops: map[string]int64{}}
	if o.WCU > 0 && !o.DryRun {
		// A bucket of half a second, starting empty: a writer that runs
		// late (a busy machine) can still use the units that accrued
		// meanwhile, so the average holds, and after an idle moment at
		// most half a second's worth goes out at once.
		burst := max(1, int(math.Ceil(o.WCU/2)))
		r.lim = rate.NewLimiter(rate.Limit(o.WCU), burst)
		r.lim.AllowN(time.Now(), burst) // start empty
	}
	return r
}

// run scans every unfinished segment of segs to its end, all at once. It
// returns nil when all are done, and otherwise why it stopped.
func (r *runner) run(ctx context.Context, segs []*segmentState) error {
	left := &fixedSegments{}
	for _, s := range segs {
		r.base.add(s.Counts)
		if !s.Done {
			left.segs = append(left.segs, s)
		}
	}
	return r.runFrom(ctx, len(segs), left, len(left.segs))
}

// segmentSource hands out the segments a run scans.
type segmentSource interface {
	// next returns the next segment to scan, nil when there is none left
	// for this run.
	next(ctx context.Context) (*segmentState, error)
	// finished tells the source that the scan of s stopped, at its end
	// (s.Done) or not.
	finished(s *segmentState)
}

// fixedSegments hands out a fixed list of segments.
type fixedSegments struct {
	mu   sync.Mutex
	segs []*segmentState
}

func (f *fixedSegments) next(context.Context) (*segmentState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.segs) == 0 {
		return nil, nil
	}
	s := f.segs[0]
	f.segs = f.segs[1:]
	return s, nil
}

func (f *fixedSegments) finished(*segmentState) {}

// runFrom scans the segments src hands out (of nsegs in all) with
// scanners segments at a time, until src has none left. It returns nil
// when all were scanned to their end, and otherwise why it stopped.
func (r *runner) runFrom(ctx context.Context, nsegs int, src segmentSource, scanners int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.fail = cancel
	r.start = time.Now()
	r.nsegs = nsegs

	r.jobs = make(chan func())
	var writers sync.WaitGroup
	for range r.o.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for job := range r.jobs {
				job()
			}
		}()
	}
	stopProgress := r.reportProgress()

	var wg sync.WaitGroup
	for range scanners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s, err := src.next(ctx)
				if err != nil {
					r.fail(err)
					return
				}
				if s == nil {
					return
				}
				r.segment(ctx, s)
				src.finished(s)
			}
		}()
	}
	wg.Wait()
	close(r.jobs)
	writers.Wait()
	stopProgress()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// segment scans one segment from its checkpoint, handing each page to the
// migration and then to commit, which checkpoints pages in order. The
// next page is scanned while the previous one is being written.
func (r *runner) segment(ctx context.Context, s *segmentState) {
	// commit owns *s from here on.
	seg, lek := s.Segment, s.LastKey
	pages := make(chan *scanPage, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.commit(ctx, s, pages)
	}()
	for ctx.Err() == nil {
		out, err := r.scan(ctx, seg, lek)
		if err != nil {
			r.fail(err)
			break
		}
		p := newPage(seg, out)
		r.mig.kind.process(ctx, r, p)
		pages <- p
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		lek = out.LastEvaluatedKey
	}
	close(pages)
	<-done
}

// commit waits for each page's writes, then saves the segment's
// checkpoint. After a failure it only drains the remaining pages.
func (r *runner) commit(ctx context.Context, s *segmentState, pages <-chan *scanPage) {
	broken := false
	for p := range pages {
		p.wg.Wait()
		if broken {
			continue
		}
		p.mu.Lock()
		fatal := p.fatal
		p.mu.Unlock()
		if fatal != nil || ctx.Err() != nil {
			if fatal != nil {
				r.fail(fatal)
			}
			broken = true
			continue
		}
		c := p.counts()
		next := *s
		next.Counts.add(c)
		next.LastKey = p.lastKey
		next.Done = len(p.lastKey) == 0
		next.Pages++
		if r.led != nil {
			// Not cut short by the run's stop: the page's writes are all
			// done, and a save that landed must be counted by this run.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			err := r.led.save(sctx, &next)
			cancel()
			if err != nil {
				r.fail(err)
				broken = true
				continue
			}
		}
		*s = next
		r.committed(p, c)
	}
}

// committed adds a checkpointed page to the run's totals.
func (r *runner) committed(p *scanPage, c Counts) {
	r.live.scanned.Add(c.Scanned)
	r.live.read.Add(c.Read)
	r.live.written.Add(c.Written)
	r.live.skipped.Add(c.Skipped)
	r.live.failed.Add(c.Failed)
	r.live.wcu.Add(p.wcu)
	r.live.retried.Add(p.retried)
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, n := range p.ops {
		r.ops[k] += n
	}
	for i, o := range p.state {
		if o != outFailed && o != outPending {
			continue
		}
		if len(r.failures) >= maxFailureDetails {
			break
		}
		err := p.errs[i]
		if err == nil {
			err = fmt.Errorf("singletable: migration %s: item left undecided", r.mig.ID)
		}
		r.failures = append(r.failures, ItemFailure{Segment: p.segment, Key: r.spec.keyOf(p.items[i]), Err: err})
	}
}

// scan reads one page of a segment, retrying throttling and server errors.
func (r *runner) scan(ctx context.Context, segment int, start map[string]types.AttributeValue) (*dynamodb.ScanOutput, error) {
	in := r.spec.input(segment, r.nsegs, r.o.PageSize, "")
	in.ExclusiveStartKey = start
	out, err := r.spec.page(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("singletable: migration %s: scan %s segment %d: %w", r.mig.ID, r.spec.table, segment, err)
	}
	return out, nil
}

// submit hands a job for page p to the writers; p is complete when all
// its jobs have run.
func (r *runner) submit(ctx context.Context, p *scanPage, job func()) {
	p.wg.Add(1)
	select {
	case r.jobs <- func() { defer p.wg.Done(); job() }:
	case <-ctx.Done():
		p.wg.Done()
		p.abort(context.Cause(ctx))
	}
}

// throttle waits until the rate limit allows wcu more capacity units.
func (r *runner) throttle(ctx context.Context, wcu int64) error {
	if r.lim == nil {
		return nil
	}
	// One request's units are taken in one go: if writers took turns
	// chunk by chunk, every writer would wait for the tokens of all of
	// them and then send at once, a burst the size of all the batches.
	r.limMu.Lock()
	defer r.limMu.Unlock()
	burst := r.lim.Burst()
	for n := int(wcu); n > 0; {
		k := min(n, burst)
		if err := r.lim.WaitN(ctx, k); err != nil {
			return fmt.Errorf("singletable: migration %s: rate limit: %w", r.mig.ID, err)
		}
		n -= k
	}
	return nil
}

// stopsRun reports whether err stops the run rather than failing an item:
// the run's context is done, or the table does not exist.
func stopsRun(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var rnf *types.ResourceNotFoundException
	return errors.As(err, &rnf)
}

// progress snapshots the run.
func (r *runner) progress(done bool) Progress {
	run := Counts{
		Scanned: r.live.scanned.Load(),
		Read:    r.live.read.Load(),
		Written: r.live.written.Load(),
		Skipped: r.live.skipped.Load(),
		Failed:  r.live.failed.Load(),
	}
	r.baseMu.Lock()
	total := r.base
	r.baseMu.Unlock()
	total.add(run)
	p := Progress{ID: r.mig.ID, Counts: total, Total: r.spec.total, Elapsed: time.Since(r.start), Done: done}
	if secs := p.Elapsed.Seconds(); secs > 0 {
		p.Rate = float64(run.Read) / secs
		p.WCURate = float64(r.live.wcu.Load()) / secs
		if scanRate := float64(run.Scanned) / secs; scanRate > 0 && p.Total > 0 && !done {
			left := max(p.Total-total.Scanned, 0)
			p.ETA = time.Duration(float64(left) / scanRate * float64(time.Second))
		}
	}
	return p
}

// reportProgress calls o.Progress periodically until the returned function
// is called, which makes the final call.
func (r *runner) reportProgress() (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	return every(r.o.ProgressInterval, func(done bool) { r.o.Progress(r.progress(done)) })
}

// every calls fn(false) every interval, from one goroutine, until the
// returned function is called, which makes the last call, fn(true), and
// returns after it: the progress reports of runs and verifications.
func every(interval time.Duration, fn func(done bool)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				fn(true)
				return
			case <-tick.C:
				fn(false)
			}
		}
	}()
	return func() { close(quit); <-done }
}

// fill copies the run's results into rep.
func (r *runner) fill(rep *Report, segs []*segmentState) {
	rep.Segments = len(segs)
	rep.Counts = Counts{}
	for _, s := range segs {
		rep.Counts.add(s.Counts)
	}
	r.mu.Lock()
	rep.Ops = maps.Clone(r.ops)
	rep.Failures = append([]ItemFailure(nil), r.failures...)
	r.mu.Unlock()
	rep.RunCounts = Counts{
		Scanned: r.live.scanned.Load(),
		Read:    r.live.read.Load(),
		Written: r.live.written.Load(),
		Skipped: r.live.skipped.Load(),
		Failed:  r.live.failed.Load(),
	}
	rep.WCU = r.live.wcu.Load()
	rep.Retried = r.live.retried.Load()
	rep.Elapsed = time.Since(r.start)
}
