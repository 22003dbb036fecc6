package singletable

import (
	"context"
	"time"

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
	// Op is the DynamoDB API called: "GetItem", "PutItem", "UpdateItem",
	// "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem",
	// "TransactGetItems", "TransactWriteItems" (table administration is
	// observed too: "CreateTable", "DescribeTable", ...).
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
	// (a version, old unique values, the other fields of an index key, a
	// sequence's counter): they are part of the write's cost.
	PlanRead bool
	// Capacity is the capacity the request consumed, as DynamoDB reported
	// it (ReturnConsumedCapacity INDEXES, which the library asks for when
	// a hook is installed): one entry per table, with the table's and
	// each index's share. Nil when the request failed or DynamoDB did not
	// say. [Observation.Units] sums it.
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
	// Unprocessed is the number of items a batch left unprocessed
	// (DynamoDB's throttling of batches): the library sends them again,
	// in a request observed with Retry above 0.
	Unprocessed int
	// Retry is 0 for a request the library sends the first time, and n
	// for its n-th retry by the library's own backoff (unprocessed batch
	// items, throttled or conflicting transactions).
	Retry int
	// Attempts is the number of HTTP attempts the SDK made for this
	// request (1 + its own retries), and Throttles how many of them were
	// throttled. Both count only when the table's client is the SDK's
	// (or passes its option functions on to it).
	Attempts, Throttles int
	// Latency is the time from sending the request to its answer, SDK
	// retries included.
	Latency time.Duration
	// Err is the request's error, nil when it succeeded.
	Err error
	// Keys are the primary keys of the items the request addresses
	// (GetItem, PutItem, UpdateItem, DeleteItem: one; batches and
	// transactions: each item's), only with [TableOptions.ObserveKeys].
	// Query and Scan name no item. Key values are the only values an
	// Observation holds.
	Keys []map[string]types.AttributeValue
}

// Units returns the capacity units o consumed: read units and write
// units, table and indexes together. Which one the capacity counts as is
// decided by the operation: writes consume write units, every other
// request read units.
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
// requests made with it serve, for [TableOptions.Observe]: the name of
// the pattern as the catalog lists it (for example "AP3" or "Get user
// by email"), so that observations and measured capacity are reported
// per pattern.
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

// observing is the Client through which a table with an Observe hook sends
// a request: it asks for the consumed capacity, counts the SDK's attempts
// and reports the request to the hook. It is made per request (it holds the
// entity), only when a hook is installed.
type observing struct {
	t      *Table
	next   Client
	entity string
	plan   bool
}

// observe sends a copy of in through send, with ReturnConsumedCapacity
// set where the operation has it, and reports the request; fill takes from
// the input and output what the Observation holds.
func observe[I, O any](c *observing, ctx context.Context, op string, in *I, optFns []func(*dynamodb.Options),
	send func(context.Context, *I, ...func(*dynamodb.Options)) (*O, error), fill func(*Observation, *I, *O)) (*O, error) {
	cp := *in
	askCapacity(&cp)
	att := &attemptCounter{}
	opts := append(optFns[:len(optFns):len(optFns)], afterRetry("singletable.observe", att.handle))
	start := time.Now()
	out, err := send(ctx, &cp, opts...)
	o := Observation{
		Op: op, Table: c.t.name, Entity: c.entity, Pattern: PatternOf(ctx), PlanRead: c.plan,
		Latency: time.Since(start), Err: err, Retry: backoff.Retry(ctx),
		Attempts: att.attempts, Throttles: att.throttles,
	}
	if fill != nil {
		fill(&o, &cp, out)
	}
	c.t.opts.Observe(ctx, &o)
	return out, err
}

// askCapacity asks for the consumed capacity per index on a request that
// can return it and does not ask already.
func askCapacity(in any) {
	var rc *types.ReturnConsumedCapacity
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.PutItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.UpdateItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.DeleteItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.QueryInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.ScanInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.BatchGetItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.BatchWriteItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.TransactGetItemsInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.TransactWriteItemsInput:
		rc = &in.ReturnConsumedCapacity
	default:
		return // administration requests have no capacity
	}
	if *rc == "" {
		*rc = types.ReturnConsumedCapacityIndexes
	}
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

func (c *observing) keys(o *Observation, ks ...map[string]types.AttributeValue) {
	if c.t.opts.ObserveKeys {
		o.Keys = append(o.Keys, ks...)
	}
}

func capacityOf(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// read fills what a Query or Scan page reports.
func read(o *Observation, index *string, startKey map[string]types.AttributeValue, cc *types.ConsumedCapacity, count, scanned int32) {
	if index != nil {
		o.Index = *index
	}
	o.Continued = startKey != nil
	o.Capacity = capacityOf(cc)
	o.Count, o.Scanned = int(count), int(scanned)
}

func (c *observing) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return observe(c, ctx, "GetItem", in, optFns, c.next.GetItem, func(o *Observation, in *dynamodb.GetItemInput, out *dynamodb.GetItemOutput) {
		c.keys(o, in.Key)
		if out != nil {
			o.Capacity = capacityOf(out.ConsumedCapacity)
			if len(out.Item) > 0 {
				o.Count = 1
			}
			o.Scanned = o.Count
		}
	})
}

func (c *observing) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return observe(c, ctx, "PutItem", in, optFns, c.next.PutItem, func(o *Observation, in *dynamodb.PutItemInput, out *dynamodb.PutItemOutput) {
		if c.t.opts.ObserveKeys {
			c.keys(o, c.itemKey(in.Item))
		}
		if out != nil {
			o.Capacity = capacityOf(out.ConsumedCapacity)
		}
	})
}

func (c *observing) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return observe(c, ctx, "UpdateItem", in, optFns, c.next.UpdateItem, func(o *Observation, in *dynamodb.UpdateItemInput, out *dynamodb.UpdateItemOutput) {
		c.keys(o, in.Key)
		if out != nil {
			o.Capacity = capacityOf(out.ConsumedCapacity)
		}
	})
}

func (c *observing) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return observe(c, ctx, "DeleteItem", in, optFns, c.next.DeleteItem, func(o *Observation, in *dynamodb.DeleteItemInput, out *dynamodb.DeleteItemOutput) {
		c.keys(o, in.Key)
		if out != nil {
			o.Capacity = capacityOf(out.ConsumedCapacity)
		}
	})
}

func (c *observing) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return observe(c, ctx, "Query", in, optFns, c.next.Query, func(o *Observation, in *dynamodb.QueryInput, out *dynamodb.QueryOutput) {
		if out == nil {
			out = &dynamodb.QueryOutput{}
		}
		read(o, in.IndexName, in.ExclusiveStartKey, out.ConsumedCapacity, out.Count, out.ScannedCount)
	})
}

func (c *observing) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return observe(c, ctx, "Scan", in, optFns, c.next.Scan, func(o *Observation, in *dynamodb.ScanInput, out *dynamodb.ScanOutput) {
		if out == nil {
			out = &dynamodb.ScanOutput{}
		}
		read(o, in.IndexName, in.ExclusiveStartKey, out.ConsumedCapacity, out.Count, out.ScannedCount)
	})
}

func (c *observing) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return observe(c, ctx, "BatchGetItem", in, optFns, c.next.BatchGetItem, func(o *Observation, in *dynamodb.BatchGetItemInput, out *dynamodb.BatchGetItemOutput) {
		for _, ka := range in.RequestItems {
			c.keys(o, ka.Keys...)
		}
		if out != nil {
			o.Capacity = out.ConsumedCapacity
			for _, items := range out.Responses {
				o.Count += len(items)
			}
			o.Scanned = o.Count
			for _, ka := range out.UnprocessedKeys {
				o.Unprocessed += len(ka.Keys)
			}
		}
	})
}

func (c *observing) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return observe(c, ctx, "BatchWriteItem", in, optFns, c.next.BatchWriteItem, func(o *Observation, in *dynamodb.BatchWriteItemInput, out *dynamodb.BatchWriteItemOutput) {
		if c.t.opts.ObserveKeys {
			for _, wrs := range in.RequestItems {
				for _, wr := range wrs {
					switch {
					case wr.PutRequest != nil:
						c.keys(o, c.itemKey(wr.PutRequest.Item))
					case wr.DeleteRequest != nil:
						c.keys(o, wr.DeleteRequest.Key)
					}
				}
			}
		}
		if out != nil {
			o.Capacity = out.ConsumedCapacity
			for _, wrs := range out.UnprocessedItems {
				o.Unprocessed += len(wrs)
			}
		}
	})
}

func (c *observing) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return observe(c, ctx, "TransactGetItems", in, optFns, c.next.TransactGetItems, func(o *Observation, in *dynamodb.TransactGetItemsInput, out *dynamodb.TransactGetItemsOutput) {
		for _, ti := range in.TransactItems {
			if ti.Get != nil {
				c.keys(o, ti.Get.Key)
			}
		}
		if out != nil {
			o.Capacity = out.ConsumedCapacity
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					o.Count++
				}
			}
			o.Scanned = o.Count
		}
	})
}

func (c *observing) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return observe(c, ctx, "TransactWriteItems", in, optFns, c.next.TransactWriteItems, func(o *Observation, in *dynamodb.TransactWriteItemsInput, out *dynamodb.TransactWriteItemsOutput) {
		if c.t.opts.ObserveKeys {
			for _, ti := range in.TransactItems {
				switch {
				case ti.Put != nil:
					c.keys(o, c.itemKey(ti.Put.Item))
				case ti.Update != nil:
					c.keys(o, ti.Update.Key)
				case ti.Delete != nil:
					c.keys(o, ti.Delete.Key)
				case ti.ConditionCheck != nil:
					c.keys(o, ti.ConditionCheck.Key)
				}
			}
		}
		if out != nil {
			o.Capacity = out.ConsumedCapacity
		}
	})
}

func (c *observing) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return observe[dynamodb.CreateTableInput, dynamodb.CreateTableOutput](c, ctx, "CreateTable", in, optFns, c.next.CreateTable, nil)
}

func (c *observing) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return observe[dynamodb.DescribeTableInput, dynamodb.DescribeTableOutput](c, ctx, "DescribeTable", in, optFns, c.next.DescribeTable, nil)
}

func (c *observing) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return observe[dynamodb.DeleteTableInput, dynamodb.DeleteTableOutput](c, ctx, "DeleteTable", in, optFns, c.next.DeleteTable, nil)
}

func (c *observing) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return observe[dynamodb.UpdateTimeToLiveInput, dynamodb.UpdateTimeToLiveOutput](c, ctx, "UpdateTimeToLive", in, optFns, c.next.UpdateTimeToLive, nil)
}

func (c *observing) DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return observe[dynamodb.DescribeTimeToLiveInput, dynamodb.DescribeTimeToLiveOutput](c, ctx, "DescribeTimeToLive", in, optFns, c.next.DescribeTimeToLive, nil)
}
