package singletable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// The plan's lost-response check. A single PutItem, UpdateItem or
// DeleteItem carries no client request token, so when DynamoDB applies a
// conditional write and the response is lost (a reset connection, a
// timeout, a 500 after the commit), the SDK's retry of the same request
// meets the state the first attempt made: a Create finds its own item and
// fails attribute_not_exists, a versioned write finds its own version.
// Reporting ErrAlreadyExists or ErrVersionConflict then would be wrong.
//
// The library tells these cases apart in two steps. First, attemptLog
// records, per call, whether any attempt ended without a definite answer
// from DynamoDB (no response, or a 5xx): only then may the write have been
// applied unseen. Second, when such a call ends with a failed condition,
// the item as it is now (ReturnValuesOnConditionCheckFailure ALL_OLD) is
// compared with what the write makes: a put's whole item, an update's set
// and removed attributes plus its next version, a delete's absence. The
// request is built once per call, managed timestamps and the version
// included, so every attempt carries exactly the same item and the
// comparison is with what the first attempt wrote.
//
// What this cannot tell apart: another writer producing exactly the same
// state between the lost attempt and its retry (same attributes,
// timestamps to the nanosecond, version). With CreatedAt/UpdatedAt managed
// that does not happen; an entity without them that uses Create as a
// mutual-exclusion lock with identical items should carry something
// distinguishing (an owner id) or use [Repo.CreateOp] in a transaction, whose
// client request token makes the retry exact. Writes made of several items
// (unique guards) are transactions and always carry a token.

// attemptLog records whether an attempt of one call may have been applied
// without the caller learning it.
type attemptLog struct{ maybeApplied atomic.Bool }

// option records every attempt of the call it is given to.
func (l *attemptLog) option() func(*dynamodb.Options) {
	return afterRetry("singletable.attemptLog", l.handle)
}

// afterRetry returns a call option that runs handle on every attempt of
// the call: in the Finalize step after the SDK's retry loop, so it sees
// each attempt, or first in that step on a client without one.
func afterRetry(name string, handle func(context.Context, middleware.FinalizeInput, middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error)) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			mw := middleware.FinalizeMiddlewareFunc(name, handle)
			if _, ok := s.Finalize.Get("Retry"); ok {
				return s.Finalize.Insert(mw, "Retry", middleware.After)
			}
			return s.Finalize.Add(mw, middleware.Before)
		})
	}
}

func (l *attemptLog) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	if err != nil && mayHaveApplied(err) {
		l.maybeApplied.Store(true)
	}
	return out, md, err
}

// mayHaveApplied reports whether a failed attempt may have been applied by
// DynamoDB: every failure except a 4xx response, which DynamoDB sends only
// for requests it rejected without writing.
func mayHaveApplied(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		code := re.HTTPStatusCode()
		return code < 400 || code >= 500
	}
	return true
}

// conditionFailed is the outcome of a single write of it whose condition
// failed (err), given the item as it is now (old, empty when none). When an
// attempt of the call may have been applied unseen (maybeApplied) and old
// is what the write makes, the write is done; when old is something else,
// the lost attempt may have applied and been overwritten since, so the
// failed condition proves nothing (ErrMaybeApplied; a Create's failure is
// still what it says). Otherwise it is the write's own classification.
func conditionFailed(kind, entity string, it txItem, maybeApplied bool, old map[string]types.AttributeValue, err error) (execResult, error) {
	var res execResult
	if len(old) == 0 {
		old = nil
	}
	if maybeApplied && it.applied != nil && it.applied(old) {
		// An earlier attempt of this call applied the write; this
		// retry's condition failed on the state that attempt made.
		if it.tw.Update != nil {
			res.attrs = old
		}
		res.unseen = true
		return res, nil
	}
	failed := it.failed(old)
	if maybeApplied && it.applied != nil && kind != "Create" {
		return res, wrapSentinel(ErrMaybeApplied, fmt.Sprintf("%s %s: the retry found: %s", strings.ToLower(kind), entity, strings.TrimPrefix(failed.Error(), "singletable: ")), err)
	}
	return res, withCause(failed, err)
}
