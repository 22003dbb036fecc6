package singletable

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/paging"
	"github.com/singletable-go/singletable/internal/wire"
)

// The pages of a read (read.go): its requests sent through the table's
// client, its items decoded or routed to targets.

// request is a read's paging.Request, sent through the table's client
// (wrapped by Preview or Observe, or on the direct wire path: wire.go).
type request struct {
	paging.Request
	t      *Table
	entity string    // the entity read, for the Observe hook; "" for several
	whole  wholeFn   // nil, or reads each response's items whole (Query.Complete)
	sink   wire.Feed // set: read on the direct wire path (wire.go)
	taking func()    // with sink: tells the read's sinks a parallel read takes sink's items
}

// request is a request of in, reading entity ("" for several), its
// cursors bound to bind and holding cursorKeys; what names it in errors.
func (t *Table) request(in paging.Input, entity, what string, bind [16]byte, cursorKeys []string) *request {
	r := &request{t: t, entity: entity}
	r.Request = paging.Request{Input: in, Sender: r, What: what, Codec: *t.cursorCodec(), Bind: bind, CursorKeys: cursorKeys}
	return r
}

// Client is the client a lookahead is sent through.
func (r *request) Client(ctx context.Context) paging.Client { return r.t.api(ctx, r.entity) }

// Read sends in once, on the direct wire path where it may, with
// Complete's reads.
func (r *request) Read(ctx context.Context, in paging.Input) (paging.Response, error) {
	c := r.t.api(ctx, r.entity)
	resp, err := in.Send(r.direct(ctx, c), c)
	if err == nil && r.whole != nil {
		resp.Items, err = r.whole(ctx, resp.Items)
	}
	if err == nil && r.sink != nil && r.sink.Got().Filled {
		resp.Items = r.sink.Got().Heads
	}
	return resp, err
}

// DecodeError reports an item a read selected but could not decode, or an
// untyped item its key shape selected whose key does not parse
// (docs/adopting.md). The read goes on without it unless
// [ReadOptions].StrictDecode.
type DecodeError struct {
	Entity string                          // the entity the item was read as
	Key    map[string]types.AttributeValue // the item's primary key, none of its other values
	// Err is a *ValidationError (Reason "cannot decode item") holding a
	// *KeyError or the codec's error.
	Err  error
	keys keyNames
}

// Error names the entity, the item's key and why.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("singletable: %s item %s not decoded: %v", e.Entity, e.keys.text(e.Key), e.Err)
}

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// undecoded makes err, item's decode error, a *DecodeError.
func (r *repo) undecoded(item map[string]types.AttributeValue, err error) error {
	return &DecodeError{Entity: r.e.name, Key: r.t.primaryKeyOf(item), Err: err, keys: r.t.keyNames()}
}

// skip takes err, an item's: a *DecodeError a read goes on after (not
// strict) is added to *skipped; any other error is returned.
func skip(err error, strict bool, skipped *[]*DecodeError) error {
	de, ok := err.(*DecodeError)
	if !ok || strict {
		return err
	}
	*skipped = append(*skipped, de)
	return nil
}

// into decodes an item of a read into *out; ok is false for an item
// skipped, err then a *DecodeError to report (or nil), or what ends the
// read.
type into[V any] func(item map[string]types.AttributeValue, out *V) (ok bool, err error)

// pageOf reads one page of the planned read rd of r's items, decoded in
// place.
func pageOf[T any](ctx context.Context, r *Repo[T], rd *read) (Page[T], error) {
	if rd.err != nil || rd.empty {
		return Page[T]{}, rd.err
	}
	d := decoding(r, rd)
	defer d.sinks.Release()
	return pageWith(ctx, rd, d.into, d.r.accounts)
}

// routedPage reads one page of a mixed read into its targets.
func routedPage(ctx context.Context, rd *read) (Page[any], error) {
	if rd.err != nil || rd.empty {
		return Page[any]{}, rd.err
	}
	defer rd.rt.wired(rd).Release()
	return pageWith(ctx, rd, rd.rt.route, rd.rt.counts)
}

// pageWith reads one page of rd, each item decoded in place by into;
// counts tells the exact fit's items.
func pageWith[V any](ctx context.Context, rd *read, into into[V], counts func(map[string]types.AttributeValue) bool) (Page[V], error) {
	f, limit := rd.source(true)
	var page Page[V]
	cursor, err := paging.Paginate(ctx, f, limit, func(item map[string]types.AttributeValue, left int) (bool, error) {
		n := len(page.Items)
		if n == cap(page.Items) {
			page.Items = slices.Grow(page.Items, left)
		}
		page.Items = page.Items[:n+1]
		ok, err := into(item, &page.Items[n])
		if !ok {
			var zero V // the next item decodes into this element
			page.Items[n], page.Items = zero, page.Items[:n]
		}
		return ok, skip(err, rd.spec.strict, &page.Skipped)
	}, &paging.End{Pager: f, Counts: counts})
	if err != nil {
		return Page[V]{}, err
	}
	page.Cursor, page.Unprojected = cursor, rd.unprojected
	return page, nil
}

// allOf iterates over the items of the read plan makes of r's items.
func allOf[T any](ctx context.Context, r *Repo[T], plan func() *read) iter.Seq2[T, error] {
	return allWith(ctx, plan, func(rd *read) (into[T], func()) {
		d := decoding(r, rd)
		return d.into, d.sinks.Release
	})
}

// routedAll iterates over the items of the mixed read plan makes.
func routedAll(ctx context.Context, plan func() *read) iter.Seq2[any, error] {
	return allWith(ctx, plan, func(rd *read) (into[any], func()) { return rd.rt.route, rd.rt.wired(rd).Release })
}

// allWith iterates over the items of the read plan makes, decoded by the
// into wired makes (on the direct wire path when it may, release handing
// back its sinks); a *DecodeError is yielded and the read goes on,
// unless strict.
func allWith[V any](ctx context.Context, plan func() *read, wired func(*read) (into into[V], release func())) iter.Seq2[V, error] {
	return seqOf(func(yield func(V, error) bool) error {
		rd := plan()
		if rd.err != nil || rd.empty {
			return rd.err
		}
		into, release := wired(rd)
		defer release()
		return rd.readAll(ctx, func(item map[string]types.AttributeValue, _ int) (bool, error) {
			var v V
			ok, err := into(item, &v)
			if de, isDE := err.(*DecodeError); isDE && !rd.spec.strict {
				var zero V
				return false, stopIf(!yield(zero, de))
			}
			if err != nil || !ok {
				return false, err
			}
			return true, stopIf(!yield(v, nil))
		})
	})
}

// stopIf is paging.ErrStop when stop.
func stopIf(stop bool) error {
	if stop {
		return paging.ErrStop
	}
	return nil
}

// seqOf is the iterator of a read: run yields the items and returns the
// error that ends the read, yielded last.
func seqOf[V any](run func(yield func(V, error) bool) error) iter.Seq2[V, error] {
	return func(yield func(V, error) bool) {
		if err := run(yield); err != nil {
			var zero V
			yield(zero, err)
		}
	}
}

// collect gathers what an iterator yields, stopping at the first error.
func collect[V any](seq iter.Seq2[V, error]) ([]V, error) {
	var out []V
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
