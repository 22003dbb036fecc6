// Package attempt sees every attempt of one DynamoDB call, after the SDK's
// retries: whether one of them may have been applied without the caller
// learning it (the root's lost-response check), and what the Observe hook
// reports of each.
package attempt

import (
	"context"
	"errors"
	"net"
	"sync/atomic"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Handler handles one attempt of a call.
type Handler = func(context.Context, middleware.FinalizeInput, middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error)

// AfterRetry returns a call option that runs handle on every attempt of
// the call (after the SDK's retry middleware, or first without one).
func AfterRetry(name string, handle Handler) func(*dynamodb.Options) {
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

// LogApplied returns a call option (named name) that sets maybeApplied
// when an attempt of the call may have been applied unseen.
func LogApplied(name string, maybeApplied *atomic.Bool) func(*dynamodb.Options) {
	return AfterRetry(name, func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil && MayHaveApplied(err) {
			maybeApplied.Store(true)
		}
		return out, md, err
	})
}

// MayHaveApplied reports whether a failed attempt may have been applied by
// DynamoDB: every failure except a 4xx response, which DynamoDB sends only
// for requests it rejected without writing, and a failed dial, which sent
// nothing.
func MayHaveApplied(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		code := re.HTTPStatusCode()
		return code < 400 || code >= 500
	}
	var oe *net.OpError
	return !errors.As(err, &oe) || oe.Op != "dial"
}
