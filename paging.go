package singletable

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/paging"
)

// The pages of a read (read.go): its requests sent through the table's
// client, its items decoded or routed to targets.

// request is a read's paging.Request, sent through the table's client
// (wrapped by Preview or Observe, or on the direct wire path: wire.go).
type request struct {
	paging.Request
	t      *Table
	entity string   // the entity read, for the Observe hook; "" for several
	whole  wholeFn  // nil, or reads each response's items whole (Query.Complete)
	sink   wireFeed // set: read on the direct wire path (wire.go)
}

// pager is what a page reads (wire.go's read of it).
type pager = paging.Pager

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
	resp, err := in.Send(r.direct(ctx), c)
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

// shaped is r reading the items of rd: on an index that does not hold
// the entity type, telling them by key shape.
func shaped[T any](r *Repo[T], rd *read) *Repo[T] {
	if !rd.byShape {
		return r
	}
	c := *r
	c.byShape = true
	return &c
}

// pageOf reads one page of the planned read rd of r's items, decoded in
// place.
func pageOf[T any](ctx context.Context, r *Repo[T], rd *read) (Page[T], error) {
	if rd.err != nil || rd.empty {
		return Page[T]{}, rd.err
	}
	r = shaped(r, rd)
	f, limit := rd.source(true)
	var page Page[T]
	ws := wirePage(f, r)
	if ws != nil {
		defer ws.Release()
	}
	strict := rd.spec.strict
	cursor, err := paging.Paginate(ctx, f, limit, func(item map[string]types.AttributeValue, left int) (bool, error) {
		if ws != nil && ws.Filled {
			return takeWire(r, ws, &page, left, strict)
		}
		if !r.mine(item) {
			return false, skip(r.selected(item), strict, &page.Skipped)
		}
		n := len(page.Items)
		if n == cap(page.Items) {
			page.Items = slices.Grow(page.Items, left)
		}
		page.Items = page.Items[:n+1]
		if err := r.e.decodeInto(r.t, item, &page.Items[n]); err != nil {
			var zero T // the next item decodes into this element
			page.Items[n], page.Items = zero, page.Items[:n]
			return false, skip(r.undecoded(item, err), strict, &page.Skipped)
		}
		return true, nil
	}, &paging.End{Pager: f, Counts: r.accounts})
	if err != nil {
		return Page[T]{}, err
	}
	page.Cursor, page.Unprojected = cursor, rd.unprojected
	return page, nil
}

// take decodes an item of a read of r's items; ok is false for another's.
func (r *Repo[T]) take(item map[string]types.AttributeValue) (v T, ok bool, err error) {
	if !r.mine(item) {
		return v, false, r.selected(item)
	}
	if v, err = r.e.decode(r.t, item); err != nil {
		var zero T
		return zero, false, r.undecoded(item, err)
	}
	return v, true, nil
}

// allOf iterates over the items of the read plan makes of r's items.
func allOf[T any](ctx context.Context, r *Repo[T], plan func() *read) iter.Seq2[T, error] {
	return seqOf(func(yield func(T, error) bool) error {
		rd := plan()
		if rd.err != nil || rd.empty {
			return rd.err
		}
		return rd.readAll(ctx, yielder(shaped(r, rd).take, yield, rd.spec.strict))
	})
}

// routedPage reads one page of a mixed read into its targets.
func routedPage(ctx context.Context, rd *read) (Page[any], error) {
	if rd.err != nil || rd.empty {
		return Page[any]{}, rd.err
	}
	var page Page[any]
	f, limit := rd.source(true)
	cursor, err := paging.Paginate(ctx, f, limit, func(item map[string]types.AttributeValue, _ int) (bool, error) {
		v, ok, err := rd.rt.route(item)
		if ok {
			page.Items = append(page.Items, v)
		}
		return ok, skip(err, rd.spec.strict, &page.Skipped)
	}, &paging.End{Pager: f, Counts: rd.rt.counts})
	if err != nil {
		return Page[any]{}, err
	}
	page.Cursor = cursor
	return page, nil
}

// routedAll iterates over the items of the mixed read plan makes.
func routedAll(ctx context.Context, plan func() *read) iter.Seq2[any, error] {
	return seqOf(func(yield func(any, error) bool) error {
		rd := plan()
		if rd.err != nil || rd.empty {
			return rd.err
		}
		return rd.readAll(ctx, yielder(rd.rt.route, yield, rd.spec.strict))
	})
}

// yielder is the take of an iterator yielding the values take makes; a
// *DecodeError is yielded and the read goes on, unless strict.
func yielder[V any](take func(map[string]types.AttributeValue) (V, bool, error), yield func(V, error) bool, strict bool) paging.Take {
	return func(item map[string]types.AttributeValue, _ int) (bool, error) {
		v, ok, err := take(item)
		if de, isDE := err.(*DecodeError); isDE && !strict {
			if !yield(v, de) {
				return false, paging.ErrStop
			}
			return false, nil
		}
		if err != nil || !ok {
			return false, err
		}
		if !yield(v, nil) {
			return true, paging.ErrStop
		}
		return true, nil
	}
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
