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

// observe sends in through send with ReturnConsumedCapacity set on a copy
// of it, and reports the request; fill takes from the input and output
// what the Observation holds.
func observe[I, O any](c *observing, ctx context.Context, op string, in *I, capacity func(*I) *types.ReturnConsumedCapacity,
	optFns []func(*dynamodb.Options), send func(*I, []func(*dynamodb.Options)) (*O, error), fill func(*Observation, *I, *O)) (*O, error) {
	cp := *in
	if rc := capacity(&cp); rc != nil && *rc == "" {
		*rc = types.ReturnConsumedCapacityIndexes
	}
	att := &attemptCounter{}
	opts := append(optFns[:len(optFns):len(optFns)], att.option())
	start := time.Now()
	out, err := send(&cp, opts)
	o := Observation{
		Op: op, Table: c.t.name, Entity: c.entity, Pattern: PatternOf(ctx), PlanRead: c.plan,
		Latency: time.Since(start), Err: err, Retry: backoff.Retry(ctx),
		Attempts: att.attempts, Throttles: att.throttles,
	}
	fill(&o, &cp, out)
	c.t.opts.Observe(ctx, &o)
	return out, err
}

// attemptCounter counts a request's HTTP attempts and the throttled ones,
// in a per-attempt middleware after the SDK's retry loop (as attemptLog).
type attemptCounter struct{ attempts, throttles int }

func (a *attemptCounter) option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			mw := middleware.FinalizeMiddlewareFunc("singletable.observe", a.handle)
			if _, ok := s.Finalize.Get("Retry"); ok {
				return s.Finalize.Insert(mw, "Retry", middleware.After)
			}
			return s.Finalize.Add(mw, middleware.Before)
		})
	}
}

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

func (c *observing) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return observe(c, ctx, "GetItem", in, func(in *dynamodb.GetItemInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.GetItemInput, opts []func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
			return c.next.GetItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.GetItemInput, out *dynamodb.GetItemOutput) {
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
	return observe(c, ctx, "PutItem", in, func(in *dynamodb.PutItemInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.PutItemInput, opts []func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
			return c.next.PutItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.PutItemInput, out *dynamodb.PutItemOutput) {
			if c.t.opts.ObserveKeys {
				c.keys(o, c.itemKey(in.Item))
			}
			if out != nil {
				o.Capacity = capacityOf(out.ConsumedCapacity)
			}
		})
}

func (c *observing) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return observe(c, ctx, "UpdateItem", in, func(in *dynamodb.UpdateItemInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.UpdateItemInput, opts []func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
			return c.next.UpdateItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.UpdateItemInput, out *dynamodb.UpdateItemOutput) {
			c.keys(o, in.Key)
			if out != nil {
				o.Capacity = capacityOf(out.ConsumedCapacity)
			}
		})
}

func (c *observing) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return observe(c, ctx, "DeleteItem", in, func(in *dynamodb.DeleteItemInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.DeleteItemInput, opts []func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
			return c.next.DeleteItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.DeleteItemInput, out *dynamodb.DeleteItemOutput) {
			c.keys(o, in.Key)
			if out != nil {
				o.Capacity = capacityOf(out.ConsumedCapacity)
			}
		})
}

func (c *observing) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return observe(c, ctx, "Query", in, func(in *dynamodb.QueryInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.QueryInput, opts []func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
			return c.next.Query(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.QueryInput, out *dynamodb.QueryOutput) {
			if in.IndexName != nil {
				o.Index = *in.IndexName
			}
			o.Continued = in.ExclusiveStartKey != nil
			if out != nil {
				o.Capacity = capacityOf(out.ConsumedCapacity)
				o.Count, o.Scanned = int(out.Count), int(out.ScannedCount)
			}
		})
}

func (c *observing) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return observe(c, ctx, "Scan", in, func(in *dynamodb.ScanInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.ScanInput, opts []func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
			return c.next.Scan(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.ScanInput, out *dynamodb.ScanOutput) {
			if in.IndexName != nil {
				o.Index = *in.IndexName
			}
			o.Continued = in.ExclusiveStartKey != nil
			if out != nil {
				o.Capacity = capacityOf(out.ConsumedCapacity)
				o.Count, o.Scanned = int(out.Count), int(out.ScannedCount)
			}
		})
}

func (c *observing) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return observe(c, ctx, "BatchGetItem", in, func(in *dynamodb.BatchGetItemInput) *types.ReturnConsumedCapacity { return &in.ReturnConsumedCapacity }, optFns,
		func(in *dynamodb.BatchGetItemInput, opts []func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
			return c.next.BatchGetItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.BatchGetItemInput, out *dynamodb.BatchGetItemOutput) {
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
	return observe(c, ctx, "BatchWriteItem", in, func(in *dynamodb.BatchWriteItemInput) *types.ReturnConsumedCapacity {
		return &in.ReturnConsumedCapacity
	}, optFns,
		func(in *dynamodb.BatchWriteItemInput, opts []func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
			return c.next.BatchWriteItem(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.BatchWriteItemInput, out *dynamodb.BatchWriteItemOutput) {
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
	return observe(c, ctx, "TransactGetItems", in, func(in *dynamodb.TransactGetItemsInput) *types.ReturnConsumedCapacity {
		return &in.ReturnConsumedCapacity
	}, optFns,
		func(in *dynamodb.TransactGetItemsInput, opts []func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
			return c.next.TransactGetItems(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.TransactGetItemsInput, out *dynamodb.TransactGetItemsOutput) {
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
	return observe(c, ctx, "TransactWriteItems", in, func(in *dynamodb.TransactWriteItemsInput) *types.ReturnConsumedCapacity {
		return &in.ReturnConsumedCapacity
	}, optFns,
		func(in *dynamodb.TransactWriteItemsInput, opts []func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
			return c.next.TransactWriteItems(ctx, in, opts...)
		},
		func(o *Observation, in *dynamodb.TransactWriteItemsInput, out *dynamodb.TransactWriteItemsOutput) {
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

// noCapacity is the capacity field of an administration request, which
// has none.
func noCapacity[I any](*I) *types.ReturnConsumedCapacity { return nil }

func noFill[I, O any](*Observation, *I, *O) {}

func (c *observing) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return observe(c, ctx, "CreateTable", in, noCapacity, optFns,
		func(in *dynamodb.CreateTableInput, opts []func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
			return c.next.CreateTable(ctx, in, opts...)
		}, noFill)
}

func (c *observing) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return observe(c, ctx, "DescribeTable", in, noCapacity, optFns,
		func(in *dynamodb.DescribeTableInput, opts []func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
			return c.next.DescribeTable(ctx, in, opts...)
		}, noFill)
}

func (c *observing) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return observe(c, ctx, "DeleteTable", in, noCapacity, optFns,
		func(in *dynamodb.DeleteTableInput, opts []func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
			return c.next.DeleteTable(ctx, in, opts...)
		}, noFill)
}

func (c *observing) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return observe(c, ctx, "UpdateTimeToLive", in, noCapacity, optFns,
		func(in *dynamodb.UpdateTimeToLiveInput, opts []func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
			return c.next.UpdateTimeToLive(ctx, in, opts...)
		}, noFill)
}

func (c *observing) DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return observe(c, ctx, "DescribeTimeToLive", in, noCapacity, optFns,
		func(in *dynamodb.DescribeTimeToLiveInput, opts []func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
			return c.next.DescribeTimeToLive(ctx, in, opts...)
		}, noFill)
}
