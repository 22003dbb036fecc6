package singletable

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/singletable-go/singletable/internal/backoff"
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
func (o *Observation) Units() (read, write float64) {
	var total float64
	for _, c := range o.Capacity {
		if c.CapacityUnits != nil {
			total += *c.CapacityUnits
		}
	}
	if isWriteOp(o.Op) {
		return 0, total
	}
	return total, 0
}

// IndexUnits returns the capacity units o consumed on the table ("") and
// on each index by name, as DynamoDB broke them down.
func (o *Observation) IndexUnits() map[string]float64 {
	m := make(map[string]float64, 1)
	for _, c := range o.Capacity {
		if c.Table != nil && c.Table.CapacityUnits != nil {
			m[""] += *c.Table.CapacityUnits
		} else if c.Table == nil && c.CapacityUnits != nil && len(c.GlobalSecondaryIndexes) == 0 && len(c.LocalSecondaryIndexes) == 0 {
			m[""] += *c.CapacityUnits
		}
		for _, ixs := range [2]map[string]types.Capacity{c.GlobalSecondaryIndexes, c.LocalSecondaryIndexes} {
			for name, ic := range ixs {
				if ic.CapacityUnits != nil {
					m[name] += *ic.CapacityUnits
				}
			}
		}
	}
	return m
}

func isWriteOp(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

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
func (c *observing) around(ctx context.Context, op string, in any, send func(context.Context, ...func(*dynamodb.Options)) (any, error)) (any, error) {
	if rc := capacityField(in); rc != nil && *rc == "" {
		*rc = types.ReturnConsumedCapacityIndexes
	}
	att := &attemptCounter{}
	start := time.Now()
	out, err := send(ctx, afterRetry("singletable.observe", att.handle))
	o := Observation{
		Op: op, Table: c.t.name, Entity: c.entity, Pattern: PatternOf(ctx), PlanRead: c.plan,
		Latency: time.Since(start), Err: err, Retry: backoff.Retry(ctx),
		Attempts: att.attempts, Throttles: att.throttles,
	}
	if c.t.opts.ObserveKeys {
		o.Keys = c.requestKeys(in)
	}
	fillResult(&o, in, out)
	c.t.opts.Observe(ctx, &o)
	return out, err
}

// capacityField returns the ReturnConsumedCapacity field of a request, nil
// for table administration, which has none.
func capacityField(in any) *types.ReturnConsumedCapacity {
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.PutItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.UpdateItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.DeleteItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.QueryInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.ScanInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.BatchGetItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.BatchWriteItemInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.TransactGetItemsInput:
		return &in.ReturnConsumedCapacity
	case *dynamodb.TransactWriteItemsInput:
		return &in.ReturnConsumedCapacity
	}
	return nil
}

// attemptCounter counts a request's HTTP attempts and the throttled ones.
type attemptCounter struct{ attempts, throttles int }

func (a *attemptCounter) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	a.attempts++
	if backoff.IsThrottle(err) {
		a.throttles++
	}
	return out, md, err
}

// itemKey returns the primary key attributes of item, for ObserveKeys.
func (c *observing) itemKey(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := make(map[string]types.AttributeValue, 2)
	for _, a := range [2]string{c.t.opts.PartitionKey, c.t.opts.SortKey} {
		if v, ok := item[a]; ok && a != "" {
			k[a] = v
		}
	}
	return k
}

// requestKeys returns the primary keys of the items a request addresses.
func (c *observing) requestKeys(in any) (ks []map[string]types.AttributeValue) {
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		ks = append(ks, in.Key)
	case *dynamodb.PutItemInput:
		ks = append(ks, c.itemKey(in.Item))
	case *dynamodb.UpdateItemInput:
		ks = append(ks, in.Key)
	case *dynamodb.DeleteItemInput:
		ks = append(ks, in.Key)
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			ks = append(ks, ka.Keys...)
		}
	case *dynamodb.BatchWriteItemInput:
		for _, wrs := range in.RequestItems {
			for _, wr := range wrs {
				switch {
				case wr.PutRequest != nil:
					ks = append(ks, c.itemKey(wr.PutRequest.Item))
				case wr.DeleteRequest != nil:
					ks = append(ks, wr.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, ti := range in.TransactItems {
			if ti.Get != nil {
				ks = append(ks, ti.Get.Key)
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, ti := range in.TransactItems {
			switch {
			case ti.Put != nil:
				ks = append(ks, c.itemKey(ti.Put.Item))
			case ti.Update != nil:
				ks = append(ks, ti.Update.Key)
			case ti.Delete != nil:
				ks = append(ks, ti.Delete.Key)
			case ti.ConditionCheck != nil:
				ks = append(ks, ti.ConditionCheck.Key)
			}
		}
	}
	return ks
}

func capacityOf(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// fillResult fills what the request reports: a Query's or Scan's index
// and start key, and what its output says (capacity, counts, unprocessed
// items).
func fillResult(o *Observation, in, out any) {
	switch in := in.(type) {
	case *dynamodb.QueryInput:
		o.Index, o.Continued = aws.ToString(in.IndexName), in.ExclusiveStartKey != nil
	case *dynamodb.ScanInput:
		o.Index, o.Continued = aws.ToString(in.IndexName), in.ExclusiveStartKey != nil
	}
	switch out := out.(type) { // nil when the request failed
	case *dynamodb.GetItemOutput:
		o.Capacity = capacityOf(out.ConsumedCapacity)
		if len(out.Item) > 0 {
			o.Count, o.Scanned = 1, 1
		}
	case *dynamodb.PutItemOutput:
		o.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		o.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		o.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		o.Capacity, o.Count, o.Scanned = capacityOf(out.ConsumedCapacity), int(out.Count), int(out.ScannedCount)
	case *dynamodb.ScanOutput:
		o.Capacity, o.Count, o.Scanned = capacityOf(out.ConsumedCapacity), int(out.Count), int(out.ScannedCount)
	case *dynamodb.BatchGetItemOutput:
		o.Capacity = out.ConsumedCapacity
		for _, items := range out.Responses {
			o.Count += len(items)
		}
		o.Scanned = o.Count
		for _, ka := range out.UnprocessedKeys {
			o.Unprocessed += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemOutput:
		o.Capacity = out.ConsumedCapacity
		for _, wrs := range out.UnprocessedItems {
			o.Unprocessed += len(wrs)
		}
	case *dynamodb.TransactGetItemsOutput:
		o.Capacity = out.ConsumedCapacity
		for _, r := range out.Responses {
			if len(r.Item) > 0 {
				o.Count++
			}
		}
		o.Scanned = o.Count
	case *dynamodb.TransactWriteItemsOutput:
		o.Capacity = out.ConsumedCapacity
	}
}
