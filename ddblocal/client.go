package ddblocal

import (
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/singletable-go/singletable/wire"
)

// Region is the region NewClient configures. DynamoDB Local accepts any region.
const Region = "us-east-1"

// NewClient returns a DynamoDB client for the DynamoDB Local server at endpoint
// (for example "http://127.0.0.1:8000").
//
// The configuration is built directly, without config.LoadDefaultConfig, so the
// client never reads ~/.aws or AWS_* environment variables: static credentials,
// region us-east-1, response checksum validation disabled (DynamoDB Local sends
// CRC32 headers the SDK rejects on some errors), and the standard retryer with
// client-side retry quotas disabled, so fault-injection tests are not cut short
// by the token bucket. With WireEnv set to 1 the client is built with
// [wire.Enable] (singletable's direct wire path), so a test suite runs on
// that path unchanged (make test-wire). optFns are applied last and may
// override any of this.
func NewClient(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	opts := make([]func(*dynamodb.Options), 0, 2+len(optFns))
	opts = append(opts, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.DisableValidateResponseChecksum = true
	})
	if Wire() {
		opts = append(opts, wire.Enable)
	}
	opts = append(opts, optFns...)
	return dynamodb.NewFromConfig(localConfig(), opts...)
}

// WireEnv names the environment variable that, set to 1, makes NewClient
// build its clients with [wire.Enable].
const WireEnv = "SINGLETABLE_WIRE"

// Wire reports whether WireEnv is set to 1: test fixtures that build
// their own clients, or wrap NewClient's, follow it too.
func Wire() bool { return os.Getenv(WireEnv) == "1" }

// localConfig is the configuration of the clients for DynamoDB Local.
func localConfig() aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider("ddblocal", "ddblocal", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 5
				o.MaxBackoff = 2 * time.Second
				o.RateLimiter = ratelimit.None
			})
		},
	}
}

// NewStreamsClient returns a DynamoDB Streams client for the DynamoDB
// Local server at endpoint, configured as [NewClient] configures its
// DynamoDB client. DynamoDB Local serves the streams of its tables.
func NewStreamsClient(endpoint string, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	opts := make([]func(*dynamodbstreams.Options), 0, 1+len(optFns))
	opts = append(opts, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(endpoint) })
	opts = append(opts, optFns...)
	return dynamodbstreams.NewFromConfig(localConfig(), opts...)
}
