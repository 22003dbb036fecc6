package singletable

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/wire"
)

// The direct wire path's reads (docs/performance.md): on a client built
// with wire.Enable, a page of one entity's Query or Scan and Get decode
// the response JSON straight into T (internal/wire, codec.UnmarshalJSON),
// keeping of each item only its head (wireKeep).

// wireSink is the wire.Sink of a read of T: each response's items.
type wireSink[T any] struct {
	vals []T
	wire.Heads
}

func (s *wireSink[T]) Reset() { clear(s.vals); s.vals = s.vals[:0]; s.Heads.Reset() }

// Drop drops the last item (wire.Typed), its value left to the next.
func (s *wireSink[T]) Drop() { s.vals = s.vals[:len(s.vals)-1]; s.Heads.Drop() }

func (s *wireSink[T]) Item(d *codec.JSON, _ string, _ int) error {
	var zero T
	if len(s.vals) == cap(s.vals) { // a page's items in two allocations or so
		s.vals = slices.Grow(s.vals, max(16, len(s.vals)))
	}
	s.vals = append(s.vals, zero)
	return s.Add(d, unsafe.Pointer(&s.vals[len(s.vals)-1]))
}

// wireKeep lists what a read of e looks at besides the fields: the keys'
// and the cursor's keys' values, the times re-read in a Location, the
// entity type when typed (Get, or matching keys: the filter does not
// settle it), whether the key fields are there, and the index keys
// holding fields (Lazy: read when a field is missing; decodeRest).
func (e *entityPlan) wireKeep(t *Table, cursorKeys []string, typed bool) *codec.Keep {
	o := &t.opts
	typed = typed || e.foreign.matchKeys
	key := struct {
		e      *entityPlan
		t      *Table
		typed  bool
		cursor string
	}{e, t, typed, strings.Join(cursorKeys, "\x00")}
	return wire.Keeps(key, func() *codec.Keep {
		vals := append([]string{o.PartitionKey, o.SortKey}, cursorKeys...)
		if typed {
			vals = append(vals, o.EntityTypeAttr)
		}
		for _, f := range e.foreign.times {
			vals = append(vals, f.Attr)
		}
		var present, lazy []string
		_ = e.eachKey(o, func(k keyRef) error { // the keys decodeRest fills fields from
			if k.index != "" && !slices.Contains(vals, k.attr) {
				lazy = append(lazy, k.attr)
			}
			for _, f := range k.ck.fields {
				if !slices.Contains(vals, f.Attr) && !slices.Contains(present, f.Attr) {
					present = append(present, f.Attr)
				}
			}
			return nil
		})
		if len(e.foreign.keyOnly) > 0 { // decodeRest reads them whatever the codec found
			vals, lazy = append(vals, lazy...), nil
		}
		return &codec.Keep{Values: vals, Present: present, Lazy: lazy}
	})
}

// wired puts rd's requests on the direct wire path when their table's
// client may take it (Complete's excepted: it reads the table's items),
// each with the sink sink makes; it returns the sinks.
func wired[S wire.Feed](rd *read, sink func(*request) S) *wire.Sinks[S] {
	sinks := new(wire.Sinks[S])
	for _, req := range rd.reqs {
		if req.t.wire && req.whole == nil {
			req.sink, req.taking = sink(req), sinks.Taking(len(sinks.List))
			sinks.List = append(sinks.List, req.sink.(S))
		}
	}
	return sinks
}

// Holding makes r a paging.Holder: its items are its sink's heads.
func (r *request) Holding() func() { return r.taking }

// direct returns ctx carrying r's sink when a request through c takes the
// path: c is the table's own client (no Preview, no Observe hook).
func (r *request) direct(ctx context.Context, c Client) context.Context {
	if r.sink == nil || !r.t.wire || c != r.t.client {
		return ctx
	}
	r.sink.Reset()
	if r.Query != nil {
		return wire.With(ctx, r.Query, r.sink)
	}
	return wire.With(ctx, r.Scan, r.sink)
}

// decoder decodes the items of a read of r's items: those the direct
// wire path read from its sinks, the SDK's from their maps.
type decoder[T any] struct {
	r     *Repo[T]
	sinks *wire.Sinks[*wireSink[T]]
}

// decoding returns the decoder of rd, a read of r's items, putting its
// requests on the direct wire path.
func decoding[T any](r *Repo[T], rd *read) *decoder[T] {
	c := *r
	c.byShape = rd.byShape // an index without the entity type: the keys tell the items
	return &decoder[T]{r: &c, sinks: wired(rd, func(req *request) *wireSink[T] {
		return &wireSink[T]{Heads: wire.NewHeads(r.e.typ, r.e.wireKeep(r.t, req.CursorKeys, false))}
	})}
}

// into decodes item into *out; ok is false for an item that is not r's
// or does not decode, err then the *DecodeError to report (or nil).
func (d *decoder[T]) into(item map[string]types.AttributeValue, out *T) (ok bool, err error) {
	s, i, direct := d.sinks.Find(item) // first: it takes the item
	if r := d.r; !r.mine(item) {
		return false, r.selected(item)
	} else if direct {
		*out = s.vals[i]
		err = r.e.wireRest(r.t, item, out, s.Complete[i], s.Errs[i])
	} else {
		err = r.e.decodeInto(r.t, item, out)
	}
	if err != nil {
		return false, d.r.undecoded(item, err)
	}
	return true, nil
}

// wireRest is what decodeInto does besides the codec, given the item's
// head and the codec's error.
func (e *Entity[T]) wireRest(t *Table, head map[string]types.AttributeValue, out *T, complete bool, err error) error {
	if err != nil {
		return &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
	}
	if complete = complete && len(e.foreign.keyOnly) == 0; !complete || e.foreign.loc != nil {
		return e.decodeRest(&t.opts, head, reflect.ValueOf(out).Elem(), complete)
	}
	return nil
}

// getWire is Get's GetItem on the direct path; ok is false when the
// table's client does not take it.
func (r *Repo[T]) getWire(ctx context.Context, in *dynamodb.GetItemInput) (v T, ok bool, err error) {
	c := r.t.api(ctx, r.e.name)
	if !r.t.wire || c != r.t.client {
		return v, false, nil
	}
	s := &wireSink[T]{vals: make([]T, 0, 1), Heads: wire.NewHeads(r.e.typ, r.e.wireKeep(r.t, nil, true))}
	defer s.Release()
	out, err := c.GetItem(wire.With(ctx, in, s), in)
	switch {
	case err != nil:
		return v, true, getErr(r.e.name, err)
	case !s.Filled: // a middleware changed the input: the SDK decoded it
		v, err = r.gotItem(out.Item)
		return v, true, err
	case len(s.Heads.Heads) == 0 || !r.isMine(s.Heads.Heads[0]):
		return v, true, ErrNotFound
	}
	v = s.vals[0]
	return v, true, r.e.wireRest(r.t, s.Heads.Heads[0], &v, s.Complete[0], s.Errs[0])
}

// gotItem is Get's result for the item GetItem returned.
func (r *Repo[T]) gotItem(item map[string]types.AttributeValue) (T, error) {
	if len(item) == 0 || !r.isMine(item) {
		var zero T
		return zero, ErrNotFound
	}
	return r.e.decode(r.t, item)
}
