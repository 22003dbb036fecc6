// Package wire turns on singletable's direct wire path on a
// *dynamodb.Client: reads of entities decode DynamoDB's JSON responses
// straight into the entity structs instead of through the SDK's
// map[string]types.AttributeValue, and the bodies of the library's
// PutItem, BatchWriteItem, BatchGetItem and TransactGetItems requests are
// written directly, byte for byte as the SDK writes them
// (docs/performance.md).
//
//	client := dynamodb.NewFromConfig(cfg, wire.Enable)
//	table := singletable.NewTable(client, "app")
//
// The path is opt-in, and chosen where the client is built, because it
// replaces the client's protocol (dynamodb.Options.Protocol), which only
// dynamodb.New and NewFromConfig set: a table cannot change the client it
// is given, and building a second client behind the caller's back would
// split its endpoint cache and clock-skew state. Every SDK behaviour is
// kept: endpoint resolution, SigV4, retries, the CRC32 check (made before
// any item is decoded), gzip, logging and tracing middleware, and errors
// (a non-2xx response is deserialized by the SDK, so errors.As reaches
// *types.ConditionalCheckFailedException as before).
//
// Calls the library does not make on the path, and every call of other
// code, go through the SDK's protocol unchanged. The library uses the
// path only when the table's client is this *dynamodb.Client itself: with
// any other Client (DAX, a wrapper, a fake), or inside Table.Preview, reads
// take the SDK path. A TableOptions.Observe hook (the OpenTelemetry
// adapter's too) keeps the path, and observes what it would on the SDK's.
//
// It needs service/dynamodb v1.69 or later (Options.Protocol); this
// module pins v1.73.1.
package wire

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	iwire "github.com/singletable-go/singletable/internal/wire"
)

// Enable is an option of dynamodb.New and dynamodb.NewFromConfig that
// lets the singletable library read responses directly on the client.
// Other calls of the client behave exactly as without it.
func Enable(o *dynamodb.Options) { iwire.Enable(o) }
