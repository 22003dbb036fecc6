package migrate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/expr"
)

// Shared runs: several processes (or machines) run one migration together.
// None of them takes the header's lease; each joins the migration and then
// claims scan segments one at a time, each by a lease of its own kept in
// the segment's checkpoint (Owner, LeaseUntil), renewed while it scans and
// given up when the segment is done. A worker that dies leaves its
// segments' leases to expire; another worker then claims them and resumes
// each from its last checkpoint. Workers stay until every segment is done;
// the one that sees it first records the migration completed (or failed)
// with the totals of all segments, the others find it so.
//
// An exclusive run (Run without Shared) and shared workers keep each other
// out: a segment claim checks, in the same transaction, that no exclusive
// lease is live on the header, and an exclusive run refuses to start while
// a segment lease is live.

// errHeaderChanged tells a shared worker that the migration's header no
// longer lets it claim segments (finished, restarted, or taken by an
// exclusive run).
var errHeaderChanged = errors.New("singletable: migration header changed")

// runShared is Run for one worker of a shared run.
func runShared(ctx context.Context, t *table, mig Migration, o RunOptions) (*Report, error) {
	rep := &Report{ID: mig.ID, Kind: mig.kind.name()}
	l := newLedger(t, mig.ID, newRunOwner())
	l.lease = o.Lease
	h, err := l.join(ctx, mig, o.Segments)
	if errors.Is(err, errCompleted) {
		rep.AlreadyCompleted = true
		rep.State = Completed
		rep.Counts = h.Counts
		rep.Segments = h.Segments
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	l.attempt = h.Attempt
	n := h.Segments
	rep.State = Interrupted

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	spec, err := mig.kind.source(runCtx, t)
	if err != nil {
		rep.Segments = n
		return rep, err
	}
	r := newRunner(t, mig, o, spec, l)
	src := &sharedSegments{l: l, n: n, r: r, held: map[int]*segmentState{},
		poll: min(max(o.Lease/4, 10*time.Millisecond), time.Second)}
	stopRenew := src.keepLeases(runCtx, cancel)
	err = r.runFrom(runCtx, n, src, min(o.WorkerSegments, n))
	stopRenew()
	r.fill(rep, nil)
	rep.Segments = n
	rep.Claimed, rep.TakenOver, rep.Resumed = src.claimed, src.takenOver, src.resumed

	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer rcancel()
	segs, rerr := l.segments(rctx, n)
	if rerr == nil {
		rep.Counts = Counts{}
		for _, s := range segs {
			rep.Counts.add(s.Counts)
		}
	}
	if err != nil {
		if c := context.Cause(runCtx); c != nil && !errors.Is(err, c) && errors.Is(c, ErrRunning) {
			err = c // a segment's lease was lost: that is why the run stopped
		}
		src.releaseAll(rctx)
		return rep, err
	}
	if rerr != nil {
		return rep, rerr
	}
	for _, s := range segs {
		if !s.Done {
			// The header changed under the run: restarted by another
			// worker, or taken by an exclusive run.
			return rep, wrap(ErrRunning, mig.ID+": this worker can no longer claim segments", nil)
		}
	}
	state := Completed
	if rep.Counts.Failed > 0 {
		state = Failed
	}
	final, err := l.finishShared(rctx, state, rep.Counts)
	if err != nil {
		return rep, err
	}
	rep.State = final
	if final == Failed {
		return rep, &Error{ID: mig.ID, Failed: rep.Counts.Failed, Failures: rep.Failures}
	}
	return rep, nil
}

// join enters a shared run of the migration: it creates the header (with
// segments segments) if there is none, restarts a failed migration with a
// new attempt (segments segments, every checkpoint stale), and otherwise
// joins the running one with its recorded segments. It returns the header
// as it is afterwards, errCompleted (with the header) for a completed
// migration, and ErrRunning while an exclusive run holds the migration.
func (l *ledger) join(ctx context.Context, mig Migration, segments int) (headerRecord, error) {
	for range 10 {
		h, ok, err := l.header(ctx)
		if err != nil {
			return h, err
		}
		now := l.t.now()
		switch {
		case ok && h.Status == Completed:
			return h, errCompleted
		case ok && h.LeaseOwner != "" && now.Before(h.LeaseUntil):
			return h, l.held(h, nil)
		}
		restart := ok && h.Status == Failed
		var b expr.Builder
		var u expr.Update
		l.startRun(&b, &u, mig, now)
		if restart {
			u.Set(b.Name(lgSegments), b.Value(avN(int64(segments))))
			attempt := b.Name(lgAttempt)
			u.Set(attempt, expr.Plus(expr.IfNotExists(attempt, b.Value(avN(0))), b.Value(avN(1))))
		} else {
			u.SetIfNotExists(b.Name(lgSegments), b.Value(avN(int64(segments))))
		}
		u.Remove(b.Name(lgLeaseOwner))
		u.Remove(b.Name(lgLeaseUntil))
		update := u.String()
		var cond string
		switch {
		case !ok:
			cond = expr.AttributeNotExists(b.Name(l.t.pk))
		case restart:
			cond = expr.And(b.Holds(lgStatus, avS(string(Failed))), b.Holds(lgAttempt, attemptAV(h.Attempt)))
		default:
			cond = expr.And(b.Holds(lgStatus, avS(string(Running))), l.noExclusiveLease(&b, now))
		}
		out, err := l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &l.t.name,
			Key:                       l.key(ledgerHeader),
			UpdateExpression:          &update,
			ConditionExpression:       &cond,
			ExpressionAttributeNames:  b.Names(),
			ExpressionAttributeValues: b.Values(),
			ReturnValues:              types.ReturnValueAllNew,
		})
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			continue // changed meanwhile: look again
		}
		if err != nil {
			return headerRecord{}, fmt.Errorf("singletable: migration %s: join: %w", l.id, err)
		}
		return decodeHeader(out.Attributes), nil
	}
	return headerRecord{}, wrap(ErrRunning, l.id+": its ledger keeps changing; could not join", nil)
}

// noExclusiveLease writes the condition that no exclusive run holds the
// header's lease at now.
func (l *ledger) noExclusiveLease(b *expr.Builder, now time.Time) string {
	return expr.Or(expr.AttributeNotExists(b.Name(lgLeaseOwner)),
		expr.Compare(b.Name(lgLeaseUntil), expr.OpLt, b.Value(avN(now.UnixMilli()))))
}

// attemptAV is the stored form of attempt n (absent for 0).
func attemptAV(n int64) types.AttributeValue {
	if n == 0 {
		return nil
	}
	return avN(n)
}

// claimSegment takes segment s, as read, for this run until now+lease: in
// one transaction, on condition that the header is running this attempt
// with no exclusive lease, and that the checkpoint is still as read (so
// free: s's lease had expired or there was none). It reports false when
// another run got there first, and errHeaderChanged when the header
// refused.
func (l *ledger) claimSegment(ctx context.Context, s *segmentState) (bool, error) {
	now := l.t.now()
	var hb expr.Builder
	hcond := expr.And(hb.Holds(lgStatus, avS(string(Running))), hb.Holds(lgAttempt, attemptAV(l.attempt)),
		l.noExclusiveLease(&hb, now))
	var sb expr.Builder
	var parts []string
	for _, a := range []string{lgOwner, lgPages, lgAttempt, lgLeaseUntil, lgDone} {
		parts = append(parts, sb.Holds(a, s.read[a]))
	}
	scond := expr.And(parts...)
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName: &l.t.name, Key: l.key(ledgerHeader), ConditionExpression: &hcond,
			ExpressionAttributeNames: hb.Names(), ExpressionAttributeValues: hb.Values(),
		}},
		{Put: &types.Put{
			TableName: &l.t.name, Item: l.segmentItem(s), ConditionExpression: &scond,
			ExpressionAttributeNames: sb.Names(), ExpressionAttributeValues: sb.Values(),
		}},
	}}
	err := backoff.Default.Do(ctx, nil, backoff.IsRetryableTx, func(ctx context.Context) error {
		_, err := l.t.client.TransactWriteItems(ctx, in)
		return err
	})
	if err == nil {
		return true, nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 {
		return false, fmt.Errorf("singletable: migration %s: claim segment %d: %w", l.id, s.Segment, err)
	}
	if aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
		return false, errHeaderChanged
	}
	// The checkpoint changed: another run claimed it, or the SDK resent
	// this claim after a lost response and the first one went through.
	res, rerr := l.t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &l.t.name, Key: l.key(segmentSK(s.Segment)), ConsistentRead: aws.Bool(true),
	})
	if rerr != nil {
		return false, fmt.Errorf("singletable: migration %s: read checkpoint: %w", l.id, rerr)
	}
	return getS(res.Item, lgOwner) == l.owner && getN(res.Item, lgPages) == s.Pages &&
		getN(res.Item, lgAttempt) == l.attempt, nil
}

// renewSegment extends this run's lease on segment n; ok is false when
// the run no longer holds it (another run took it over) and true when it
// does or the segment is done.
func (l *ledger) renewSegment(ctx context.Context, n int) (ok bool, err error) {
	now := l.t.now()
	var b expr.Builder
	var u expr.Update
	u.Set(b.Name(lgLeaseUntil), b.Value(avN(now.Add(l.lease).UnixMilli())))
	u.Set(b.Name(lgUpdatedAt), b.Value(avTime(now)))
	update := u.String()
	cond := expr.And(b.Holds(lgOwner, avS(l.owner)), b.Holds(lgDone, &types.AttributeValueMemberBOOL{Value: false}))
	_, err = l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.t.name, Key: l.key(segmentSK(n)), UpdateExpression: &update, ConditionExpression: &cond,
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return getS(ccf.Item, lgOwner) == l.owner, nil // still ours: done meanwhile
	}
	if err != nil {
		return false, fmt.Errorf("singletable: migration %s: renew segment %d: %w", l.id, n, err)
	}
	return true, nil
}

// releaseSegment gives up this run's lease on segment n, if it still holds
// it, so that another worker takes the segment over at once.
func (l *ledger) releaseSegment(ctx context.Context, n int) {
	var b expr.Builder
	var u expr.Update
	u.Remove(b.Name(lgLeaseUntil))
	u.Set(b.Name(lgUpdatedAt), b.Value(avTime(l.t.now())))
	update := u.String()
	cond := b.Holds(lgOwner, avS(l.owner))
	_, _ = l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.t.name, Key: l.key(segmentSK(n)), UpdateExpression: &update, ConditionExpression: &cond,
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
	})
}

// finishShared records the end of a shared run's scan: state completed or
// failed with totals c, unless another worker did first. It returns the
// state recorded.
func (l *ledger) finishShared(ctx context.Context, state State, c Counts) (State, error) {
	now := l.t.now()
	var b expr.Builder
	var u expr.Update
	setFinished(&b, &u, state, c, now)
	update := u.String()
	cond := expr.And(b.Holds(lgStatus, avS(string(Running))), b.Holds(lgAttempt, attemptAV(l.attempt)),
		l.noExclusiveLease(&b, now))
	_, err := l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &l.t.name, Key: l.key(ledgerHeader), UpdateExpression: &update, ConditionExpression: &cond,
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values(),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// Another worker finished first (or this request was resent).
		if h, ok, rerr := l.header(ctx); rerr == nil && ok && h.Attempt == l.attempt &&
			(h.Status == Completed || h.Status == Failed) {
			return h.Status, nil
		}
		return "", wrap(ErrRunning, l.id+": the migration changed before this worker could finish it", err)
	}
	if err != nil {
		return "", fmt.Errorf("singletable: migration %s: write ledger: %w", l.id, err)
	}
	return state, nil
}

// sharedSegments hands a shared worker's scanners the segments it claims.
type sharedSegments struct {
	l    *ledger
	n    int
	r    *runner
	poll time.Duration

	claimMu sync.Mutex // one scanner claims at a time

	mu        sync.Mutex
	held      map[int]*segmentState // segments being scanned by this run
	claimed   int
	takenOver int
	resumed   bool // a claimed segment had checkpoints
	stopped   bool // the migration finished or restarted without this run
}

// next claims a segment that is not done and not leased by another run,
// waiting for leases to expire while other runs hold every segment left.
// It returns nil when every segment is done or scanned by this run.
func (w *sharedSegments) next(ctx context.Context) (*segmentState, error) {
	w.claimMu.Lock()
	defer w.claimMu.Unlock()
	for {
		w.mu.Lock()
		stopped := w.stopped
		w.mu.Unlock()
		if stopped {
			return nil, nil
		}
		segs, err := w.l.segments(ctx, w.n)
		if err != nil {
			return nil, err
		}
		now := w.l.t.now()
		waiting := false
		start := rand.IntN(w.n) // spread the workers' claims
		for k := range w.n {
			s := segs[(start+k)%w.n]
			if s.Done || w.holds(s.Segment) {
				continue
			}
			if s.leased(w.l.owner, now) {
				waiting = true
				continue
			}
			ok, err := w.l.claimSegment(ctx, s)
			if errors.Is(err, errHeaderChanged) {
				h, found, herr := w.l.header(ctx)
				if herr != nil {
					return nil, herr
				}
				if !found || h.Status != Running || h.Attempt != w.l.attempt {
					w.mu.Lock()
					w.stopped = true
					w.mu.Unlock()
					return nil, nil
				}
				// An exclusive run holds the header (or tries to): wait. If
				// it proceeds it claims every segment, and the checkpoints
				// of this run's scans fail.
				waiting = true
				break
			}
			if err != nil {
				// The claim may have been applied without an answer (the
				// run cancelled while it was in flight): held, it is
				// released with the others (only if it is this run's).
				w.mu.Lock()
				w.held[s.Segment] = s
				w.mu.Unlock()
				return nil, err
			}
			if !ok {
				waiting = true
				continue
			}
			taken := s.read != nil && s.Owner != "" && s.Owner != w.l.owner && getN(s.read, lgAttempt) == w.l.attempt
			w.mu.Lock()
			w.held[s.Segment] = s
			w.claimed++
			if taken {
				w.takenOver++
			}
			w.resumed = w.resumed || s.Pages > 0
			w.mu.Unlock()
			s.Owner = w.l.owner
			w.r.baseMu.Lock()
			w.r.base.add(s.Counts)
			w.r.baseMu.Unlock()
			return s, nil
		}
		if !waiting {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(w.poll):
		}
	}
}

func (w *sharedSegments) holds(n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held[n] != nil
}

// heldSegments lists the segments this run holds (their scans may have
// finished meanwhile: renewal and release are conditional).
func (w *sharedSegments) heldSegments() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	ns := make([]int, 0, len(w.held))
	for n := range w.held {
		ns = append(ns, n)
	}
	return ns
}

func (w *sharedSegments) finished(s *segmentState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.Done {
		delete(w.held, s.Segment)
	}
}

// keepLeases renews the leases of the segments this run holds every third
// of the lease, until the returned function is called; a lease lost to
// another run cancels the run with ErrRunning as the cause.
func (w *sharedSegments) keepLeases(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	ctx, stopCtx := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(w.l.lease/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, n := range w.heldSegments() {
				ok, err := w.l.renewSegment(ctx, n)
				if ctx.Err() != nil {
					return
				}
				if err == nil && !ok {
					err = wrap(ErrRunning, fmt.Sprintf("%s: this worker lost its lease on segment %d", w.l.id, n), nil)
				}
				if err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return func() { stopCtx(); <-done }
}

// releaseAll gives up the leases of the unfinished segments this run
// still holds.
func (w *sharedSegments) releaseAll(ctx context.Context) {
	for _, n := range w.heldSegments() {
		w.l.releaseSegment(ctx, n)
	}
}
