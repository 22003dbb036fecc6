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
// DeleteItem carries no client request token, so when a conditional write
// is applied and its response lost, the SDK's retry meets the state the
// first attempt made (a Create finds its own item). When an attempt of the
// call ended without a definite answer (attemptLog) and the call ends with
// a failed condition, the item as it is now (ALL_OLD) is compared with
// what the write makes. The request is built once per call, timestamps and
// version included, so every attempt carries the same item. Another writer
// producing exactly the same state in between cannot be told apart; a
// transaction's client request token makes its retry exact.

// attemptLog records whether an attempt of one call may have been applied
// without the caller learning it.
type attemptLog struct{ maybeApplied atomic.Bool }

// option records every attempt of the call it is given to.
func (l *attemptLog) option() func(*dynamodb.Options) {
	return afterRetry("singletable.attemptLog", l.handle)
}

// afterRetry returns a call option that runs handle on every attempt of
// the call (after the SDK's retry middleware, or first without one).
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
// failed (err), given the item as it is now (old). When an attempt may have
// been applied unseen (maybeApplied), old that is what the write makes
// means done, and any other old proves nothing (ErrMaybeApplied, except
// for a Create), since the lost attempt may have been overwritten.
func conditionFailed(kind, entity string, it txItem, maybeApplied bool, old map[string]types.AttributeValue, err error) (execResult, error) {
	var res execResult
	if len(old) == 0 {
		old = nil
	}
	if maybeApplied && it.applied != nil && it.applied(old) {
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
