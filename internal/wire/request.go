package wire

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/singletable-go/singletable/internal/codec"
)

// The request half of the path: the body of a direct call of PutItem,
// BatchGetItem, TransactGetItems or BatchWriteItem is written here, from the very input
// the SDK's middleware holds, as the SDK's awsJson 1.0 serializer writes
// it (members in the same order, strings escaped alike), without the
// SDK's schema walk. The SDK's middleware sees the input whole (every
// scalar and map), and signs, retries and logs the body as its own. An
// input this file cannot write (a legacy member set: Expected,
// ConditionalOperator, AttributesToGet; an attribute value the SDK
// would not write) is serialized by the SDK.

// target is the X-Amz-Target prefix and contentType the Content-Type of
// DynamoDB's awsJson 1.0 protocol (TestSameRequestBytes checks both
// against the SDK's).
const (
	target      = "DynamoDB_20120810."
	contentType = "application/x-amz-json-1.0"
)

var awsJSON10 = smithy.ShapeID{Namespace: "aws.protocols", Name: "awsJson1_0"}

// Write returns, when on, ctx carrying the call whose input is in (the
// pointer the operation is called with), for a call whose response no
// Sink reads (a write): its request body is written by the path. It
// returns ctx itself when not on.
func Write(ctx context.Context, in any, on bool) context.Context {
	if !on {
		return ctx
	}
	return With(ctx, in, nil)
}

// SerializeRequest writes the body of a direct call's request; the
// wrapped protocol serializes every other.
func (p *Protocol) SerializeRequest(ctx context.Context, schema *smithy.OperationSchema, in smithy.Serializable, req *smithyhttp.Request) error {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil || c.in != any(in) || p.ClientProtocol.ID() != awsJSON10 {
		return p.ClientProtocol.SerializeRequest(ctx, schema, in, req)
	}
	scratch := scratches.Get().(*[]byte)
	defer scratches.Put(scratch)
	b, ok := AppendInput((*scratch)[:0], in)
	if cap(b) <= 64<<10 {
		*scratch = b[:0]
	}
	if !ok {
		return p.ClientProtocol.SerializeRequest(ctx, schema, in, req)
	}
	req.Method = http.MethodPost
	if len(req.URL.Path) == 0 {
		req.URL.Path = "/"
	}
	req.Header.Set("X-Amz-Target", targetOf(schema.ID().Name))
	req.Header.Set("Content-Type", contentType)
	sreq, err := req.SetStream(bytes.NewReader(bytes.Clone(b)))
	if err != nil {
		return fmt.Errorf("set stream: %w", err)
	}
	*req = *sreq
	return nil
}

// targetOf is the X-Amz-Target of operation op, a constant for those the
// path writes.
func targetOf(op string) string {
	switch op {
	case "PutItem":
		return target + "PutItem"
	case "BatchWriteItem":
		return target + "BatchWriteItem"
	case "BatchGetItem":
		return target + "BatchGetItem"
	case "TransactGetItems":
		return target + "TransactGetItems"
	}
	return target + op
}

var scratches = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// AppendInput appends the JSON body of in, a *PutItemInput,
// *BatchGetItemInput, *TransactGetItemsInput or *BatchWriteItemInput, as
// the SDK writes it;
// false for any other input, or one the SDK must write (see above).
func AppendInput(b []byte, in any) ([]byte, bool) {
	o := object{b: append(b, '{'), ok: true}
	switch v := in.(type) {
	case *dynamodb.PutItemInput:
		if v.ConditionalOperator != "" || v.Expected != nil {
			return b, false
		}
		o.str("ConditionExpression", v.ConditionExpression)
		o.names("ExpressionAttributeNames", v.ExpressionAttributeNames)
		o.item("ExpressionAttributeValues", v.ExpressionAttributeValues)
		o.item("Item", v.Item)
		o.enum("ReturnConsumedCapacity", string(v.ReturnConsumedCapacity))
		o.enum("ReturnItemCollectionMetrics", string(v.ReturnItemCollectionMetrics))
		o.enum("ReturnValues", string(v.ReturnValues))
		o.enum("ReturnValuesOnConditionCheckFailure", string(v.ReturnValuesOnConditionCheckFailure))
		o.str("TableName", v.TableName)
	case *dynamodb.BatchGetItemInput:
		if v.RequestItems != nil {
			o.key("RequestItems")
			o.batchGet(v.RequestItems)
		}
		o.enum("ReturnConsumedCapacity", string(v.ReturnConsumedCapacity))
	case *dynamodb.TransactGetItemsInput:
		o.enum("ReturnConsumedCapacity", string(v.ReturnConsumedCapacity))
		if v.TransactItems != nil {
			o.key("TransactItems")
			o.txGets(v.TransactItems)
		}
	case *dynamodb.BatchWriteItemInput:
		if v.RequestItems != nil {
			o.key("RequestItems")
			o.batchWrite(v.RequestItems)
		}
		o.enum("ReturnConsumedCapacity", string(v.ReturnConsumedCapacity))
		o.enum("ReturnItemCollectionMetrics", string(v.ReturnItemCollectionMetrics))
	default:
		return b, false
	}
	return append(o.b, '}'), o.ok
}

// object writes the members of a JSON object Begin opened, in the order
// called (the SDK's: by member name).
type object struct {
	b  []byte
	n  int  // members written
	ok bool // false once a value the SDK must write was met
}

func (o *object) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(codec.AppendString(o.b, name), ':')
}

func (o *object) str(name string, s *string) {
	if s != nil {
		o.key(name)
		o.b = codec.AppendString(o.b, *s)
	}
}

func (o *object) enum(name, s string) {
	if s != "" {
		o.key(name)
		o.b = codec.AppendString(o.b, s)
	}
}

func (o *object) names(name string, m map[string]string) {
	if m != nil {
		o.key(name)
		o.b = codec.AppendStringMap(o.b, m)
	}
}

func (o *object) item(name string, m map[string]types.AttributeValue) {
	if m != nil {
		o.key(name)
		o.avs(m)
	}
}

func (o *object) avs(m map[string]types.AttributeValue) {
	var ok bool
	o.b, ok = codec.AppendItem(o.b, m)
	o.ok = o.ok && ok
}

// nested writes a member object of o with fill.
func (o *object) nested(fill func(*object)) {
	in := object{b: append(o.b, '{'), ok: true}
	fill(&in)
	o.b, o.ok = append(in.b, '}'), o.ok && in.ok
}

// batchGet writes BatchGetItemInput.RequestItems.
func (o *object) batchGet(items map[string]types.KeysAndAttributes) {
	o.nested(func(t *object) {
		for table, ka := range items {
			if ka.AttributesToGet != nil {
				t.ok = false
			}
			t.key(table)
			t.nested(func(k *object) {
				if ka.ConsistentRead != nil {
					k.key("ConsistentRead")
					k.b = strconv.AppendBool(k.b, *ka.ConsistentRead)
				}
				k.names("ExpressionAttributeNames", ka.ExpressionAttributeNames)
				if ka.Keys != nil {
					k.key("Keys")
					k.b = append(k.b, '[')
					for i, key := range ka.Keys {
						if i > 0 {
							k.b = append(k.b, ',')
						}
						k.avs(key)
					}
					k.b = append(k.b, ']')
				}
				k.str("ProjectionExpression", ka.ProjectionExpression)
			})
		}
	})
}

// txGets writes TransactGetItemsInput.TransactItems.
func (o *object) txGets(items []types.TransactGetItem) {
	o.b = append(o.b, '[')
	for i, ti := range items {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.nested(func(t *object) {
			if g := ti.Get; g != nil {
				t.key("Get")
				t.nested(func(k *object) {
					k.names("ExpressionAttributeNames", g.ExpressionAttributeNames)
					k.item("Key", g.Key)
					k.str("ProjectionExpression", g.ProjectionExpression)
					k.str("TableName", g.TableName)
				})
			}
		})
	}
	o.b = append(o.b, ']')
}

// batchWrite writes BatchWriteItemInput.RequestItems.
func (o *object) batchWrite(items map[string][]types.WriteRequest) {
	o.nested(func(t *object) {
		for table, wrs := range items {
			t.key(table)
			t.b = append(t.b, '[')
			for i, wr := range wrs {
				if i > 0 {
					t.b = append(t.b, ',')
				}
				t.nested(func(w *object) {
					if wr.DeleteRequest != nil {
						w.key("DeleteRequest")
						w.nested(func(d *object) { d.item("Key", wr.DeleteRequest.Key) })
					}
					if wr.PutRequest != nil {
						w.key("PutRequest")
						w.nested(func(p *object) { p.item("Item", wr.PutRequest.Item) })
					}
				})
			}
			t.b = append(t.b, ']')
		}
	})
}
