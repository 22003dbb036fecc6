package backoff

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Error codes, as smithy.APIError.ErrorCode reports them.
const (
	codeThrottling            = "ThrottlingException"
	codeProvisionedThroughput = "ProvisionedThroughputExceededException"
	codeRequestLimitExceeded  = "RequestLimitExceeded"
	codeInternalServerError   = "InternalServerError"
	codeServiceUnavailable    = "ServiceUnavailable"
	codeTransactionConflict   = "TransactionConflictException"
	reasonNone                = "None"
	reasonThrottling          = "ThrottlingError"
	reasonProvisionedExceeded = "ProvisionedThroughputExceeded"
	reasonTransactionConflict = "TransactionConflict"
)

// IsThrottle reports whether err, or an error it wraps, is DynamoDB
// throttling: ThrottlingException, ProvisionedThroughputExceededException,
// RequestLimitExceeded, or a TransactionCanceledException cancelled only by
// throttling.
func IsThrottle(err error) bool {
	if err == nil {
		return false
	}
	var (
		pte *types.ProvisionedThroughputExceededException
		rle *types.RequestLimitExceeded
		te  *types.ThrottlingException
	)
	if errors.As(err, &pte) || errors.As(err, &rle) || errors.As(err, &te) {
		return true
	}
	if isThrottleCode(apiCode(err)) {
		return true
	}
	return canceledOnly(err, false)
}

// IsRetryable reports whether err is worth retrying after a backoff:
// IsThrottle, or a transient server error (InternalServerError,
// ServiceUnavailable). It does not retry conflicts with transactions; see
// IsRetryableTx.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if IsThrottle(err) {
		return true
	}
	var ise *types.InternalServerError
	if errors.As(err, &ise) {
		return true
	}
	switch apiCode(err) {
	case codeInternalServerError, codeServiceUnavailable:
		return true
	}
	return false
}

// IsRetryableTx is IsRetryable for callers that opt in to retrying
// conflicts with transactions: it also accepts TransactionConflictException
// and a TransactionCanceledException whose reasons are only transaction
// conflicts and throttling. Use it where repeating the operation after a
// concurrent transaction is safe: conditional writes (DynamoDB re-evaluates
// the condition on each try) and writes that may overwrite the transaction.
func IsRetryableTx(err error) bool {
	if err == nil {
		return false
	}
	if IsRetryable(err) {
		return true
	}
	var tce *types.TransactionConflictException
	if errors.As(err, &tce) || apiCode(err) == codeTransactionConflict {
		return true
	}
	return canceledOnly(err, true)
}

// apiCode is the error code of the first smithy.APIError in err's chain, or
// "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func isThrottleCode(code string) bool {
	switch code {
	case codeThrottling, codeProvisionedThroughput, codeRequestLimitExceeded:
		return true
	}
	return false
}

// canceledOnly reports whether err wraps a TransactionCanceledException with
// at least one reason other than "None", all of them throttling (or, when
// conflicts is set, throttling or transaction conflicts). A missing code
// counts as an unknown reason, which makes the cancellation final.
func canceledOnly(err error, conflicts bool) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || tce == nil {
		return false
	}
	found := false
	for _, r := range tce.CancellationReasons {
		code := ""
		if r.Code != nil {
			code = *r.Code
		}
		switch code {
		case reasonNone:
			continue
		case reasonThrottling, reasonProvisionedExceeded:
		case reasonTransactionConflict:
			if !conflicts {
				return false
			}
		default:
			return false
		}
		found = true
	}
	return found
}
