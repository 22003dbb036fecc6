// Package backoff paces retries of DynamoDB work that was throttled or left
// unprocessed: BatchWriteItem and BatchGetItem UnprocessedItems and
// UnprocessedKeys, and throttling errors that outlast the SDK's own retryer.
//
// Delays use exponential backoff with full jitter: the delay before retry n
// (counting from 0) is uniform in [0, min(Max, Base·2ⁿ)). A Policy is a
// value; it holds no random source, so the caller passes one to Delay (a
// seeded source in tests, nil for math/rand/v2's global one).
//
// A typical loop over unprocessed items:
//
//	p := backoff.Default
//	for attempt := 0; len(pending) > 0; attempt++ {
//		if attempt > 0 {
//			if attempt >= p.Attempts {
//				return errUnprocessed
//			}
//			if err := backoff.Sleep(ctx, p.Delay(attempt-1, nil)); err != nil {
//				return err
//			}
//		}
//		out, err := client.BatchWriteItem(ctx, in(pending))
//		...
//		pending = out.UnprocessedItems
//	}
//
// Policy.Do runs that loop for an operation that reports failure as an
// error, retrying the errors that a classifier such as IsRetryable accepts.
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

// Sleep waits for d or until ctx is done, whichever comes first. It returns
// ctx.Err() if ctx is done (even when d is 0 or less), and nil otherwise.
func Sleep(ctx context.Context, d time.Duration) error {
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

// Do calls op until it returns nil, returns an error that retryable rejects,
// or p.Attempts tries have been made, sleeping p.Delay(n, rnd) before retry
// n. It returns op's last error; or, if ctx is done while it waits, an error
// that wraps ctx.Err() (and names op's last error in its text only, so that
// it is not itself classified as retryable). A nil retryable means
// IsRetryable.
func (p Policy) Do(ctx context.Context, rnd func() float64, retryable func(error) bool, op func(context.Context) error) error {
	if retryable == nil {
		retryable = IsRetryable
	}
	attempts := max(p.Attempts, 1)
	for n := 0; ; n++ {
		err := op(ctx)
		if err == nil || n+1 >= attempts || !retryable(err) {
			return err
		}
		if serr := Sleep(ctx, p.Delay(n, rnd)); serr != nil {
			return fmt.Errorf("%w (after %d tries; last error: %v)", serr, n+1, err)
		}
	}
}
