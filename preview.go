package singletable

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Request is one request an operation would send, as [Table.Preview]
// recorded it.
type Request struct {
	// Op is the DynamoDB API: "GetItem", "PutItem", "UpdateItem",
	// "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem",
	// "TransactGetItems" or "TransactWriteItems".
	Op string
	// Input is the SDK input, of the type Op takes: *dynamodb.PutItemInput
	// for "PutItem", and so on. It is the request as the operation built
	// it, a copy of the input struct taken when it was made (the maps and
	// slices it points to are the operation's own).
	Input any
	// Sent is true for the reads a write makes to learn what is stored
	// (see [Table.Preview]): those were sent, and their answers used.
	Sent bool
}

// Preview runs fn and returns the requests that fn's operations would
// send, in the order they were made, without sending them: ElectroDB's
// params() for every operation. Nothing is written.
//
//	reqs, err := t.Preview(ctx, func(ctx context.Context) error {
//		_, err := users.Create(ctx, u)
//		return err
//	})
//	in := reqs[0].Input.(*dynamodb.PutItemInput)
//
// Every request made with the ctx given to fn, or a context derived from
// it, is recorded instead of being sent, through t or any other table
// (a preview never writes): Get, Create, Put, Update, Upsert, Delete and
// their op forms, Query and Collection pages, BatchGet, BatchWrite, Tx,
// TxGet, Sequence. Operations must use that ctx: a request made with
// another context is sent as usual.
//
// Each recorded request gets an empty successful response, so operations
// go on as if DynamoDB had answered: a Get finds nothing ([ErrNotFound]),
// a Query page is empty, a batch records every chunk (a BatchWrite of 60
// ops shows three BatchWriteItem requests), a transaction commits. A
// request that would only follow from a response (a query's next page,
// unprocessed items sent again) is therefore not shown. fn's own error is
// returned with the requests recorded until then; requests that several
// goroutines make at once (batch chunks, sharded queries) are listed in
// the order they were made.
//
// A write that must read the item before it can be built (a Put or
// Update of a versioned entity without a version, a write that moves a
// unique value, an Update of an index key field that needs the key's other
// fields, an Upsert, a Delete releasing unique values, [Sequence.Next]
// learning the counter) does send that read, strongly consistent like any
// such read: the write cannot be built without it. Those reads are listed
// too, with Sent set.
//
// Table administration ([Table.CreateTable], [Table.Check],
// [Table.DeleteTable]) is not previewed: it fails without sending.
// Package migrate's migrations refuse to run inside a preview and send
// nothing either ([InPreview]).
func (t *Table) Preview(ctx context.Context, fn func(ctx context.Context) error) ([]Request, error) {
	p := &previewer{}
	previews.Add(1)
	defer previews.Add(-1)
	err := fn(context.WithValue(ctx, previewKey{}, p))
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs, err
}

// previews counts the Preview calls running, so that requests outside
// them cost one atomic load and no context lookup.
var previews atomic.Int32

// InPreview reports whether ctx is the context of a [Table.Preview]'s fn,
// or derived from it: code that sends requests of its own rather than
// through a table (package migrate's engine) refuses to run there, so
// that a preview sends nothing.
func InPreview(ctx context.Context) bool {
	return previews.Load() != 0 && ctx.Value(previewKey{}) != nil
}

type previewKey struct{}

// previewer records the requests of one Preview.
type previewer struct {
	mu   sync.Mutex
	reqs []Request
}

func (p *previewer) add(op string, in any, sent bool) {
	p.mu.Lock()
	p.reqs = append(p.reqs, Request{Op: op, Input: in, Sent: sent})
	p.mu.Unlock()
}

// api is the client through which t sends an operation's requests for
// entity ("" when they carry several, or none): t's own; with an Observe
// hook, one reporting each request; inside a [Table.Preview], one
// recording them instead.
func (t *Table) api(ctx context.Context, entity string) Client {
	if previews.Load() == 0 && t.opts.Observe == nil {
		return t.client
	}
	return t.wrapClient(ctx, entity, false)
}

// planAPI is the client through which t sends the reads a write makes to
// learn the stored item: inside a Preview, they are recorded and sent.
func (t *Table) planAPI(ctx context.Context, entity string) Client {
	if previews.Load() == 0 && t.opts.Observe == nil {
		return t.client
	}
	return t.wrapClient(ctx, entity, true)
}

// wrapClient is the client of api and planAPI when a Preview runs or a
// hook is installed: the observing client sits next to t's own, so that
// only requests actually sent are observed.
func (t *Table) wrapClient(ctx context.Context, entity string, plan bool) Client {
	c := t.client
	if t.opts.Observe != nil {
		c = &observing{t: t, next: c, entity: entity, plan: plan}
	}
	if previews.Load() == 0 {
		return c
	}
	p, ok := ctx.Value(previewKey{}).(*previewer)
	if !ok {
		return c
	}
	plan = plan || ctx.Value(planReadKey{}) != nil
	return &recording{real: c, p: p, send: plan, table: t.name}
}

type planReadKey struct{}

// planReads returns ctx for a caller's function that a write calls to
// learn what to write (Sequence's Highest): inside a Preview, the reads it
// makes are sent and listed as sent, as the write's own plan reads are.
func planReads(ctx context.Context) context.Context {
	if previews.Load() == 0 {
		return ctx
	}
	return context.WithValue(ctx, planReadKey{}, true)
}

// recording is the Client of a Preview: it records each request, and sends
// it only when send is set.
type recording struct {
	real  Client
	p     *previewer
	send  bool
	table string
}

// record records in (a copy of the struct, since operations set fields
// such as ExclusiveStartKey on the input they send again) and returns
// the real response when r sends, and an empty one otherwise.
func record[I, O any](r *recording, op string, in *I, send func(*I) (*O, error)) (*O, error) {
	cp := *in
	r.p.add(op, &cp, r.send)
	if r.send {
		return send(in)
	}
	return new(O), nil
}

// errAdmin refuses table administration inside a Preview.
func (r *recording) errAdmin(op string) error {
	return fmt.Errorf("singletable: %s of table %s: table administration is not previewed; nothing was sent", op, r.table)
}

func (r *recording) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return record(r, "GetItem", in, func(in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return r.real.GetItem(ctx, in, optFns...)
	})
}

func (r *recording) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return record(r, "PutItem", in, func(in *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
		return r.real.PutItem(ctx, in, optFns...)
	})
}

func (r *recording) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return record(r, "UpdateItem", in, func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return r.real.UpdateItem(ctx, in, optFns...)
	})
}

func (r *recording) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return record(r, "DeleteItem", in, func(in *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
		return r.real.DeleteItem(ctx, in, optFns...)
	})
}

func (r *recording) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return record(r, "Query", in, func(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
		return r.real.Query(ctx, in, optFns...)
	})
}

func (r *recording) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return record(r, "Scan", in, func(in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) {
		return r.real.Scan(ctx, in, optFns...)
	})
}

func (r *recording) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return record(r, "BatchGetItem", in, func(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
		return r.real.BatchGetItem(ctx, in, optFns...)
	})
}

func (r *recording) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return record(r, "BatchWriteItem", in, func(in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		return r.real.BatchWriteItem(ctx, in, optFns...)
	})
}

func (r *recording) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return record(r, "TransactGetItems", in, func(in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error) {
		return r.real.TransactGetItems(ctx, in, optFns...)
	})
}

func (r *recording) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return record(r, "TransactWriteItems", in, func(in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
		return r.real.TransactWriteItems(ctx, in, optFns...)
	})
}

func (r *recording) CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return nil, r.errAdmin("CreateTable")
}

func (r *recording) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return nil, r.errAdmin("DescribeTable")
}

func (r *recording) DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return nil, r.errAdmin("DeleteTable")
}

func (r *recording) UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return nil, r.errAdmin("UpdateTimeToLive")
}

func (r *recording) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return nil, r.errAdmin("DescribeTimeToLive")
}
