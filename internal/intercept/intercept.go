// Package intercept passes every request a DynamoDB client sends through
// a hook: the mechanism under the root package's Observe hook and its
// Preview, which keep only their policy (what to report, what to record
// and whether to send). It also reads what an observation needs from the
// SDK's inputs and outputs: capacity, keys, counts. A call on the direct
// wire path (internal/wire) stays on it through the hook, its items
// counted as the path decodes them.
package intercept

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/wire"
)

// Client is the part of *dynamodb.Client the library uses: the method set
// of the root package's Client, which satisfies it.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Send sends the request a [Hook] was given through the next client, with
// extra call options after the caller's.
type Send = func(ctx context.Context, extra ...func(*dynamodb.Options)) (any, error)

// Hook is called in place of each request: op is the DynamoDB API
// ("GetItem", …), in a copy of the request's input (operations reuse
// theirs; the hook may set its fields), and send sends that copy. A hook
// returning a nil response and error gives the caller an empty response.
type Hook func(ctx context.Context, op string, in any, send Send) (any, error)

// Wrap returns a Client that passes every request through hook before
// next.
func Wrap(next Client, hook Hook) Client { return &wrapped{next: next, hook: hook} }

type wrapped struct {
	next Client
	hook Hook
}

func through[I, O any](w *wrapped, ctx context.Context, op string, in *I, optFns []func(*dynamodb.Options),
	send func(Client, context.Context, *I, ...func(*dynamodb.Options)) (*O, error)) (*O, error) {
	cp := *in
	ctx = wire.Rebind(ctx, in, &cp, counting) // a direct call stays direct
	out, err := w.hook(ctx, op, &cp, func(ctx context.Context, extra ...func(*dynamodb.Options)) (any, error) {
		out, err := send(w.next, ctx, &cp, append(optFns[:len(optFns):len(optFns)], extra...)...)
		if out == nil {
			return nil, err // an untyped nil, for the hook
		}
		return out, err
	})
	if out == nil {
		if err != nil {
			return nil, err
		}
		return new(O), nil
	}
	return out.(*O), err
}

// counted is the Sink of a direct call passed through a hook: the call's
// own, counting the items of the response decoded whole (which the output
// does not hold), for ResultOf.
type counted struct {
	wire.Sink
	n    int
	done bool
}

func counting(s wire.Sink) wire.Sink { return &counted{Sink: s} }

func (c *counted) Reset() { c.n, c.done = 0, false; c.Sink.Reset() }

func (c *counted) Item(d *codec.JSON, table string, pos int) error {
	c.n++
	return c.Sink.Item(d, table, pos)
}

func (c *counted) Done() { c.done = true; c.Sink.Done() }

// directItems returns the number of items of in's response decoded on
// the direct path (ctx is the hook's): 0 when it was not decoded there.
func directItems(ctx context.Context, in any) int {
	if c, _ := wire.SinkOf(ctx, in).(*counted); c != nil && c.done {
		return c.n
	}
	return 0
}

func (w *wrapped) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return through(w, ctx, "GetItem", in, optFns, Client.GetItem)
}

func (w *wrapped) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return through(w, ctx, "PutItem", in, optFns, Client.PutItem)
}

func (w *wrapped) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return through(w, ctx, "UpdateItem", in, optFns, Client.UpdateItem)
}

func (w *wrapped) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return through(w, ctx, "DeleteItem", in, optFns, Client.DeleteItem)
}

func (w *wrapped) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return through(w, ctx, "Query", in, optFns, Client.Query)
}

func (w *wrapped) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return through(w, ctx, "Scan", in, optFns, Client.Scan)
}

func (w *wrapped) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return through(w, ctx, "BatchGetItem", in, optFns, Client.BatchGetItem)
}

func (w *wrapped) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return through(w, ctx, "BatchWriteItem", in, optFns, Client.BatchWriteItem)
}

func (w *wrapped) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return through(w, ctx, "TransactGetItems", in, optFns, Client.TransactGetItems)
}

func (w *wrapped) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return through(w, ctx, "TransactWriteItems", in, optFns, Client.TransactWriteItems)
}

func (w *wrapped) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return through(w, ctx, "CreateTable", in, optFns, Client.CreateTable)
}

func (w *wrapped) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return through(w, ctx, "DescribeTable", in, optFns, Client.DescribeTable)
}

func (w *wrapped) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return through(w, ctx, "DeleteTable", in, optFns, Client.DeleteTable)
}

func (w *wrapped) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return through(w, ctx, "UpdateTimeToLive", in, optFns, Client.UpdateTimeToLive)
}

func (w *wrapped) DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return through(w, ctx, "DescribeTimeToLive", in, optFns, Client.DescribeTimeToLive)
}
