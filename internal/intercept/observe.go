package intercept

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/singletable-go/singletable/internal/backoff"
)

// CapacityField returns the ReturnConsumedCapacity field of a request's
// input, nil for table administration, which has none.
func CapacityField(in any) *types.ReturnConsumedCapacity {
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

// Attempts counts a request's HTTP attempts and the throttled ones, as
// the finalize middleware Handle sees them.
type Attempts struct{ N, Throttled int }

// Handle is a finalize middleware handler counting each attempt.
func (a *Attempts) Handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleFinalize(ctx, in)
	a.N++
	if backoff.IsThrottle(err) {
		a.Throttled++
	}
	return out, md, err
}

// Keys returns the primary keys of the items a request addresses (none
// for Query and Scan): a put's key is its item's attributes pk and sk
// (sk "" for a table without a sort key).
func Keys(in any, pk, sk string) (ks []map[string]types.AttributeValue) {
	itemKey := func(item map[string]types.AttributeValue) map[string]types.AttributeValue {
		k := make(map[string]types.AttributeValue, 2)
		for _, a := range [2]string{pk, sk} {
			if v, ok := item[a]; ok && a != "" {
				k[a] = v
			}
		}
		return k
	}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		ks = append(ks, in.Key)
	case *dynamodb.PutItemInput:
		ks = append(ks, itemKey(in.Item))
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
					ks = append(ks, itemKey(wr.PutRequest.Item))
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
				ks = append(ks, itemKey(ti.Put.Item))
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

// Result is what a request reports: a Query's or Scan's index and whether
// it continues a previous page, and what its output says.
type Result struct {
	Index     string
	Continued bool
	// Capacity is the consumed capacity, one entry per table (nil when
	// the request failed).
	Capacity []types.ConsumedCapacity
	// Count is the items returned, Scanned the items read to answer,
	// Unprocessed a batch's items left unprocessed.
	Count, Scanned, Unprocessed int
}

// ResultOf returns what request in, sent with the hook's ctx, and its
// output out (nil when the request failed) report. Of a response decoded
// on the direct wire path, the items are counted as the path decoded them
// (out does not hold them).
func ResultOf(ctx context.Context, in, out any) (r Result) {
	direct := directItems(ctx, in)
	switch in := in.(type) {
	case *dynamodb.QueryInput:
		r.Index, r.Continued = aws.ToString(in.IndexName), in.ExclusiveStartKey != nil
	case *dynamodb.ScanInput:
		r.Index, r.Continued = aws.ToString(in.IndexName), in.ExclusiveStartKey != nil
	}
	switch out := out.(type) {
	case *dynamodb.GetItemOutput:
		r.Capacity = capacityOf(out.ConsumedCapacity)
		if len(out.Item) > 0 || direct > 0 {
			r.Count, r.Scanned = 1, 1
		}
	case *dynamodb.PutItemOutput:
		r.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		r.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		r.Capacity = capacityOf(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		r.Capacity, r.Count, r.Scanned = capacityOf(out.ConsumedCapacity), int(out.Count), int(out.ScannedCount)
	case *dynamodb.ScanOutput:
		r.Capacity, r.Count, r.Scanned = capacityOf(out.ConsumedCapacity), int(out.Count), int(out.ScannedCount)
	case *dynamodb.BatchGetItemOutput:
		r.Capacity = out.ConsumedCapacity
		r.Count = direct
		for _, items := range out.Responses {
			r.Count += len(items)
		}
		r.Scanned = r.Count
		for _, ka := range out.UnprocessedKeys {
			r.Unprocessed += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemOutput:
		r.Capacity = out.ConsumedCapacity
		for _, wrs := range out.UnprocessedItems {
			r.Unprocessed += len(wrs)
		}
	case *dynamodb.TransactGetItemsOutput:
		r.Capacity, r.Count = out.ConsumedCapacity, direct
		for _, tr := range out.Responses {
			if len(tr.Item) > 0 {
				r.Count++
			}
		}
		r.Scanned = r.Count
	case *dynamodb.TransactWriteItemsOutput:
		r.Capacity = out.ConsumedCapacity
	}
	return r
}

func capacityOf(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// Units returns the units caps sums to, table and indexes together, as
// read units or, for a write op, write units.
func Units(op string, caps []types.ConsumedCapacity) (read, write float64) {
	var total float64
	for _, c := range caps {
		if c.CapacityUnits != nil {
			total += *c.CapacityUnits
		}
	}
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return 0, total
	}
	return total, 0
}

// IndexUnits returns the units caps holds for the table ("") and for each
// index by name.
func IndexUnits(caps []types.ConsumedCapacity) map[string]float64 {
	m := make(map[string]float64, 1)
	for _, c := range caps {
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
