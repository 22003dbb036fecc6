package singletable

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attempt"
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
	return attempt.LogApplied("singletable.attemptLog", &l.maybeApplied)
}

// afterRetry stays callable by observe.go.
var afterRetry = attempt.AfterRetry

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
