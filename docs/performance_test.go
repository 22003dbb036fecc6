package docs_test

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/wire"
)

// newProductionClient is the client construction docs/performance.md
// recommends for a service that runs up to maxInFlight requests at once.
func newProductionClient(ctx context.Context, maxInFlight int) (*dynamodb.Client, error) {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		// Keep one warm connection per request in flight: the SDK keeps
		// 10 idle connections per host, and every request beyond that
		// opens (and against AWS, TLS-handshakes) a new connection.
		t.MaxIdleConns = maxInFlight
		t.MaxIdleConnsPerHost = maxInFlight
	})
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(httpClient))
	if err != nil {
		return nil, err
	}
	// Everything else stays at its default: SigV4 signing, the standard
	// retryer with its retry quota, and CRC32 response checksum validation
	// are part of talking to DynamoDB correctly.
	return dynamodb.NewFromConfig(cfg), nil
}

var _ = newProductionClient

// directClient is the construction docs/performance.md shows for the
// direct wire path.
func directClient(cfg aws.Config) *singletable.Table {
	client := dynamodb.NewFromConfig(cfg, wire.Enable)
	table := singletable.NewTable(client, "app")
	return table
}

var _ = directClient
