// Package backoff paces the library's own retries of DynamoDB work: work
// that was throttled or left unprocessed (BatchWriteItem and BatchGetItem
// UnprocessedItems and UnprocessedKeys, throttling errors that outlast the
// SDK's own retryer), transactions cancelled by conflicts, and conditional
// writes that lost a race and start over (sequence appends, backfills).
//
// Delays use exponential backoff with full jitter: the delay before retry n
// (counting from 0) is uniform in [0, min(Max, Base·2ⁿ)). A Policy is a
// value; it holds no random source, so the caller passes one to Delay (a
// seeded source in tests, nil for math/rand/v2's global one).
//
// Policy.Do runs every retry loop of the library: it calls an operation,
// sleeps, and calls it again, until the operation succeeds, fails for good,
// or the policy's tries are spent. An operation that made progress but has
// work left (BatchWriteItem's UnprocessedItems) or must start over (a
// conditional write that lost a race and was planned again) returns Again,
// which Do retries whatever its classifier says:
//
//	err := p.Do(ctx, nil, backoff.IsRetryable, func(ctx context.Context) error {
//		out, err := client.BatchWriteItem(ctx, in(pending))
//		if err != nil {
//			return err // retried if throttled
//		}
//		if pending = out.UnprocessedItems; len(pending) > 0 {
//			return backoff.Again(nil)
//		}
//		return nil
//	})
//	// err is nil, op's final error, ErrWorkLeft when the tries ran out
//	// with work left, or an *InterruptedError when ctx ended a wait.
//
// # Classifying errors
//
// IsThrottle, IsRetryable and IsRetryableTx look through wrapped errors
// (errors.As) for the SDK's typed exceptions and for any smithy.APIError by
// its error code, so they also recognise errors that reach the caller as a
// generic API error.
//
//   - IsThrottle: ThrottlingException, ProvisionedThroughputExceededException,
//     RequestLimitExceeded; and a TransactionCanceledException whose every
//     cancellation reason other than "None" is a throttling one
//     ("ThrottlingError", "ProvisionedThroughputExceeded").
//   - IsRetryable: IsThrottle, and the transient server errors
//     InternalServerError and ServiceUnavailable.
//   - IsRetryableTx: IsRetryable, and the conflicts with other transactions
//     that a caller who writes items that transactions also touch may choose
//     to retry: TransactionConflictException (a single-item write that hit an
//     item locked by a transaction) and a TransactionCanceledException whose
//     every reason other than "None" is "TransactionConflict" or a throttling
//     one. A ConditionalCheckFailed or validation reason makes it final.
//
// Conflicts are left out of IsRetryable on purpose: a conflict means a
// transaction was changing the same item at that moment, and retrying an
// unconditional write then silently overwrites what the transaction wrote.
// A caller for whom that is acceptable, or whose writes are conditional,
// opts in by choosing IsRetryableTx.
package backoff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Policy describes exponential backoff with full jitter.
type Policy struct {
	// Base is the ceiling of the first retry's delay; it doubles with each
	// retry. A Base of 0 or less means no delay.
	Base time.Duration
	// Max caps the ceiling. 0 or less means no cap.
	Max time.Duration
	// Attempts is the number of tries in all, the first one included; less
	// than 1 counts as 1 (no retry).
	Attempts int
}

// Default is the policy for UnprocessedItems and throttling: delays up to
// 25ms, 50ms, 100ms, … capped at 2s, for at most 10 tries (9 retries whose
// ceilings add up to 7.175s, so about 3.6s of waiting on average).
var Default = Policy{Base: 25 * time.Millisecond, Max: 2 * time.Second, Attempts: 10}

// Ceiling returns the largest delay before retry number attempt (from 0):
// min(Max, Base·2^attempt), without overflow. A negative attempt counts as 0.
func (p Policy) Ceiling(attempt int) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	limit := p.Max
	if limit <= 0 {
		limit = math.MaxInt64
	}
	if attempt < 0 {
		attempt = 0
	}
	if p.Base >= limit || attempt >= 63 || p.Base > limit>>attempt {
		return limit
	}
	return p.Base << attempt
}

// Delay returns the delay before retry number attempt (0 for the retry
// after the first failed try): rnd() × Ceiling(attempt), which is uniform in
// [0, Ceiling(attempt)) when rnd is uniform in [0, 1) — full jitter.
//
// rnd is typically the Float64 method of a *rand.Rand (math/rand/v2 or
// math/rand); nil means math/rand/v2's Float64, which is safe for concurrent
// use. A value of rnd outside [0, 1) is clamped into it.
func (p Policy) Delay(attempt int, rnd func() float64) time.Duration {
	c := p.Ceiling(attempt)
	if c <= 0 {
		return 0
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	f := rnd()
	if !(f > 0) { // also NaN
		return 0
	}
	d := time.Duration(f * float64(c))
	if f >= 1 || d >= c || d < 0 {
		// float64 rounding can reach c for c above 2^53ns; stay below it.
		return c - 1
	}
	return d
}

// sleep waits for d or until ctx is done, whichever comes first. It returns
// ctx.Err() if ctx is done (even when d is 0 or less), and nil otherwise.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// With returns p with the settings a caller gave: a base above 0 replaces
// Base, one below 0 means no delay at all (for tests), and 0 keeps Base; a
// max or attempts above 0 replaces Max or Attempts.
func (p Policy) With(base, max time.Duration, attempts int) Policy {
	switch {
	case base < 0:
		p.Base = 0
	case base > 0:
		p.Base = base
	}
	if max > 0 {
		p.Max = max
	}
	if attempts > 0 {
		p.Attempts = attempts
	}
	return p
}

// ErrWorkLeft is what Do returns when its tries ran out while op still
// returned Again(nil).
var ErrWorkLeft = errors.New("work left after the last try")

// again is op's request for another try; see Again.
type again struct{ cause error }

func (a *again) Error() string { return "try again: " + a.cause.Error() }

// Again returns the error by which op asks Do for another try whatever
// Do's classifier says: op made what progress it could and has work left,
// or it must start over. cause says why (nil means ErrWorkLeft); Do returns
// cause if the tries run out. Do recognises only the error Again returns,
// not one that wraps it.
func Again(cause error) error {
	if cause == nil {
		cause = ErrWorkLeft
	}
	return &again{cause: cause}
}

// InterruptedError is what Do returns when ctx ends while it waits to try
// again. It wraps ctx's error and names op's last error in its text only,
// so that it is not itself classified as retryable.
type InterruptedError struct {
	Err   error // ctx.Err()
	Tries int   // the tries made
	Last  error // op's last error (the cause given to Again)
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("%v (after %d tries; last error: %v)", e.Err, e.Tries, e.Last)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// Do calls op until it returns nil, returns an error that retryable
// rejects, or p.Attempts tries have been made, sleeping p.Delay(n, rnd)
// before retry n; an error made by Again is retried whatever retryable
// says. It returns nil or op's last error (for Again, its cause); or, if
// ctx is done when a retry is due or ends while Do waits for it, an
// *InterruptedError. A nil retryable means IsRetryable.
func (p Policy) Do(ctx context.Context, rnd func() float64, retryable func(error) bool, op func(context.Context) error) error {
	if retryable == nil {
		retryable = IsRetryable
	}
	attempts := max(p.Attempts, 1)
	for n := 0; ; n++ {
		actx := ctx
		if n > 0 { // only retries pay for the context value
			actx = context.WithValue(ctx, retryKey{}, n)
		}
		err := op(actx)
		if err == nil {
			return nil
		}
		a, retry := err.(*again)
		if retry {
			err = a.cause
		} else {
			retry = retryable(err)
		}
		if !retry || n+1 >= attempts {
			return err
		}
		if serr := sleep(ctx, p.Delay(n, rnd)); serr != nil {
			return &InterruptedError{Err: serr, Tries: n + 1, Last: err}
		}
	}
}

type retryKey struct{}

// Retry returns which retry of [Policy.Do] ctx belongs to: 0 for the
// first attempt (or outside Do), n for the n-th retry.
func Retry(ctx context.Context) int {
	n, _ := ctx.Value(retryKey{}).(int)
	return n
}
