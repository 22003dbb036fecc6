package backoff

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdk wraps err the way the SDK returns an API error from an operation.
func sdk(err error) error {
	return &smithy.OperationError{
		ServiceID:     "DynamoDB",
		OperationName: "PutItem",
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{
				Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 400}},
				Err:      err,
			},
			RequestID: "REQ",
		},
	}
}

func generic(code string) error {
	return &smithy.GenericAPIError{Code: code, Message: "m", Fault: smithy.FaultClient}
}

func throttled() error {
	return sdk(&types.ProvisionedThroughputExceededException{Message: aws.String("slow down")})
}

func txConflict() error {
	return sdk(&types.TransactionConflictException{Message: aws.String("locked")})
}

func canceled(codes ...string) error {
	reasons := make([]types.CancellationReason, len(codes))
	for i, c := range codes {
		if c != "<nil>" {
			reasons[i].Code = aws.String(c)
		}
	}
	return sdk(&types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: reasons})
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name                     string
		err                      error
		throttle, retry, retryTx bool
	}{
		{"nil", nil, false, false, false},
		{"plain", errors.New("boom"), false, false, false},
		{"context canceled", context.Canceled, false, false, false},
		{"deadline", fmt.Errorf("op: %w", context.DeadlineExceeded), false, false, false},

		{"typed ProvisionedThroughputExceeded", throttled(), true, true, true},
		{"typed RequestLimitExceeded", sdk(&types.RequestLimitExceeded{}), true, true, true},
		{"typed ThrottlingException", sdk(&types.ThrottlingException{}), true, true, true},
		{"bare typed (not wrapped)", &types.ProvisionedThroughputExceededException{}, true, true, true},
		{"typed with a code override", sdk(&types.ThrottlingException{ErrorCodeOverride: aws.String("Throttling")}), true, true, true},
		{"under the SDK retryer's MaxAttemptsError", &retry.MaxAttemptsError{Attempt: 3, Err: throttled()}, true, true, true},
		{"generic ThrottlingException", sdk(generic("ThrottlingException")), true, true, true},
		{"generic ProvisionedThroughputExceededException", sdk(generic("ProvisionedThroughputExceededException")), true, true, true},
		{"generic RequestLimitExceeded", generic("RequestLimitExceeded"), true, true, true},

		{"typed InternalServerError", sdk(&types.InternalServerError{}), false, true, true},
		{"generic InternalServerError", sdk(generic("InternalServerError")), false, true, true},
		{"generic ServiceUnavailable", sdk(generic("ServiceUnavailable")), false, true, true},

		{"typed TransactionConflictException", txConflict(), false, false, true},
		{"generic TransactionConflictException", sdk(generic("TransactionConflictException")), false, false, true},

		{"ConditionalCheckFailedException", sdk(&types.ConditionalCheckFailedException{}), false, false, false},
		{"ValidationException", sdk(generic("ValidationException")), false, false, false},
		{"ResourceNotFoundException", sdk(&types.ResourceNotFoundException{}), false, false, false},
		{"LimitExceededException (control plane)", sdk(&types.LimitExceededException{}), false, false, false},

		{"canceled: throttling only", canceled("None", "ThrottlingError", "None"), true, true, true},
		{"canceled: provisioned throughput", canceled("ProvisionedThroughputExceeded"), true, true, true},
		{"canceled: conflict", canceled("None", "TransactionConflict"), false, false, true},
		{"canceled: conflict and throttling", canceled("TransactionConflict", "ThrottlingError"), false, false, true},
		{"canceled: condition failed", canceled("ConditionalCheckFailed", "None"), false, false, false},
		{"canceled: conflict and condition failed", canceled("TransactionConflict", "ConditionalCheckFailed"), false, false, false},
		{"canceled: throttling and validation", canceled("ThrottlingError", "ValidationError"), false, false, false},
		{"canceled: missing code", canceled("TransactionConflict", "<nil>"), false, false, false},
		{"canceled: only None", canceled("None", "None"), false, false, false},
		{"canceled: no reasons", canceled(), false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsThrottle(tt.err); got != tt.throttle {
				t.Errorf("IsThrottle = %v, want %v", got, tt.throttle)
			}
			if got := IsRetryable(tt.err); got != tt.retry {
				t.Errorf("IsRetryable = %v, want %v", got, tt.retry)
			}
			if got := IsRetryableTx(tt.err); got != tt.retryTx {
				t.Errorf("IsRetryableTx = %v, want %v", got, tt.retryTx)
			}
		})
	}
}
