package singletable

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/singletable-go/singletable/internal/intercept"
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
// send, in the order they were made, without sending them. Nothing is
// written.
//
//	reqs, err := t.Preview(ctx, func(ctx context.Context) error {
//		_, err := users.Create(ctx, u)
//		return err
//	})
//	in := reqs[0].Input.(*dynamodb.PutItemInput)
//
// Every request made with fn's ctx (or a context derived from it), through
// any table, is recorded instead of sent; a request made with another
// context is sent as usual. Each gets an empty successful response: a Get
// finds nothing, a Query page is empty, every valid write succeeds (an
// Update or Delete returns the zero value, as DynamoDB's answer would hold
// the item), so a request that would only follow from a response (a next
// page, unprocessed items) is not shown. fn's own error is returned with
// the requests recorded until then.
//
// A write that must read the item before it can be built (a version to
// learn, unique values to release, an index key's other fields, an
// Upsert, [Sequence.Next]'s counter) sends that read, listed with Sent
// set. Table administration is not previewed: it fails without sending,
// and package migrate refuses to run in a preview ([InPreview]).
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
		return t.client // inlined: the hot paths' one check
	}
	return t.wrapClient(ctx, entity, false)
}

// direct reports whether t's reads and writes made with ctx take the
// direct wire path (docs/performance.md): t's client carries it, and no
// Preview records them. An Observe hook's wrapper passes direct calls on
// (internal/intercept), observed as on the SDK path.
func (t *Table) direct(ctx context.Context) bool { return t.wire && !InPreview(ctx) }

// planAPI is the client through which t sends the reads a write makes to
// learn the stored item: inside a Preview, they are recorded and sent.
func (t *Table) planAPI(ctx context.Context, entity string) Client {
	if previews.Load() == 0 && t.opts.Observe == nil {
		return t.client
	}
	return t.wrapClient(ctx, entity, true)
}

// wrapClient is the client of api and planAPI when a Preview runs or a
// hook is installed. The observing client sits next to t's own, so that
// only requests actually sent are observed.
func (t *Table) wrapClient(ctx context.Context, entity string, plan bool) Client {
	c := t.client
	if t.opts.Observe != nil {
		c = intercept.Wrap(c, (&observing{t: t, entity: entity, plan: plan}).around)
	}
	if previews.Load() == 0 {
		return c
	}
	p, ok := ctx.Value(previewKey{}).(*previewer)
	if !ok {
		return c
	}
	plan = plan || ctx.Value(planReadKey{}) != nil
	return intercept.Wrap(c, (&recording{p: p, send: plan, table: t.name}).around)
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

// recording is the hook of a Preview: it records each request, and sends
// it only when send is set.
type recording struct {
	p     *previewer
	send  bool
	table string
}

// around records in and returns the real response when r sends, and
// none (an empty one) otherwise. It refuses table administration.
func (r *recording) around(ctx context.Context, op string, in any, send intercept.Send) (any, error) {
	if intercept.CapacityField(in) == nil {
		return nil, fmt.Errorf("singletable: %s of table %s: table administration is not previewed; nothing was sent", op, r.table)
	}
	r.p.add(op, in, r.send)
	if r.send {
		return send(ctx)
	}
	return nil, nil
}
