package singletable

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/intercept"
)

// Observation is what [TableOptions.Observe] learns of one request sent
// to DynamoDB: what it was for, what it cost, how it went. It carries no
// item values: at most the keys of the items a request addresses, and only
// with [TableOptions.ObserveKeys].
type Observation struct {
	// Op is the DynamoDB API called: "GetItem", "Query",
	// "TransactWriteItems", and so on (table administration included).
	Op string
	// Table is the table's name; Index the index a Query or Scan reads
	// ("" for the table).
	Index, Table string
	// Entity is the entity the request is for, when it is for one: "" for
	// requests carrying several (batches, transactions, collections) and
	// for the library's own items (sequences).
	Entity string
	// Pattern is the access pattern the request serves, as named with
	// [WithPattern] on its context; "" when none was named.
	Pattern string
	// PlanRead is set for the reads a write makes to learn what is stored
	// (a version, old unique values, ...): part of the write's cost.
	PlanRead bool
	// Capacity is the capacity the request consumed, as DynamoDB reported
	// it (ReturnConsumedCapacity INDEXES): one entry per table, with each
	// index's share; nil when the request failed. [Observation.Units] sums it.
	Capacity []types.ConsumedCapacity
	// Count is the number of items the request returned (Query, Scan:
	// after the filter; GetItem: 0 or 1; BatchGetItem: items found);
	// Scanned the number DynamoDB read to answer a Query or Scan (before
	// the filter), for which the request was charged.
	Count, Scanned int
	// Continued is set on a Query or Scan page that continues a previous
	// one (it carries ExclusiveStartKey): an operation's pages are its
	// observations, the first without Continued.
	Continued bool
	// Unprocessed is the number of items a batch left unprocessed; the
	// library sends them again in a request observed with Retry above 0.
	Unprocessed int
	// Retry is n for the n-th retry by the library's own backoff, 0 for a
	// first try.
	Retry int
	// Attempts is the number of HTTP attempts the SDK made (1 + its own
	// retries), Throttles how many were throttled; both only with the SDK's
	// client.
	Attempts, Throttles int
	// Latency is the time from sending the request to its answer, SDK
	// retries included.
	Latency time.Duration
	// Err is the request's error, nil when it succeeded.
	Err error
	// Keys are the primary keys of the items the request addresses (none
	// for Query and Scan), only with [TableOptions.ObserveKeys].
	Keys []map[string]types.AttributeValue
}

// Units returns the read and write units o consumed, table and indexes
// together (writes consume write units, other requests read units).
func (o *Observation) Units() (read, write float64) { return intercept.Units(o.Op, o.Capacity) }

// IndexUnits returns the capacity units o consumed on the table ("") and
// on each index by name, as DynamoDB broke them down.
func (o *Observation) IndexUnits() map[string]float64 { return intercept.IndexUnits(o.Capacity) }

type patternKey struct{}

// WithPattern returns a context naming the access pattern that the
// requests made with it serve, as the catalog lists it ("AP3"), so that
// [TableOptions.Observe] reports observations per pattern.
//
//	ctx = singletable.WithPattern(ctx, "AP3")
//	page, err := orders.Query(key).Page(ctx)
//
// Without a hook installed it costs the one context value.
func WithPattern(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, patternKey{}, name)
}

// PatternOf returns the access pattern named on ctx with [WithPattern],
// or "".
func PatternOf(ctx context.Context) string {
	s, _ := ctx.Value(patternKey{}).(string)
	return s
}

// observing is the hook through which a table with an Observe hook sends
// a request: it asks for the consumed capacity, counts the SDK's attempts
// and reports the request.
type observing struct {
	t      *Table
	entity string
	plan   bool
}

// around sends in with ReturnConsumedCapacity set where the operation has
// it, and reports the request.
func (c *observing) around(ctx context.Context, op string, in any, send intercept.Send) (any, error) {
	if rc := intercept.CapacityField(in); rc != nil && *rc == "" {
		*rc = types.ReturnConsumedCapacityIndexes
	}
	att := &intercept.Attempts{}
	start := time.Now()
	out, err := send(ctx, afterRetry("singletable.observe", att.Handle))
	o := Observation{
		Op: op, Table: c.t.name, Entity: c.entity, Pattern: PatternOf(ctx), PlanRead: c.plan,
		Latency: time.Since(start), Err: err, Retry: backoff.Retry(ctx),
		Attempts: att.N, Throttles: att.Throttled,
	}
	if c.t.opts.ObserveKeys {
		o.Keys = intercept.Keys(in, c.t.opts.PartitionKey, c.t.opts.SortKey)
	}
	r := intercept.ResultOf(ctx, in, out)
	o.Index, o.Continued, o.Capacity = r.Index, r.Continued, r.Capacity
	o.Count, o.Scanned, o.Unprocessed = r.Count, r.Scanned, r.Unprocessed
	c.t.opts.Observe(ctx, &o)
	return out, err
}
