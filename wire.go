package singletable

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/wire"
)

// The direct wire path (docs/performance.md): on a *dynamodb.Client built
// with wire.Enable, a read of one entity's items decodes each response's
// JSON straight into T (internal/wire, codec.UnmarshalJSON), keeping as
// attribute values only the attributes the read looks at besides the
// fields (wireKeep): the item's head.

// wireSink is the wire.Sink of a read of T: each response's items, their
// heads, whether each was complete and its field error.
type wireSink[T any] struct {
	vals []T
	wireHeads
}

type wireHeads struct {
	typ      reflect.Type
	plan     *codec.Plan // codec.StructPlan(typ)
	keep     *codec.Keep
	heads    []map[string]types.AttributeValue
	complete []bool
	errs     []error
	done     bool // the last response was decoded here
	next     int  // the index of the next item taken
}

func (s *wireSink[T]) Reset() {
	clear(s.vals)
	s.vals = s.vals[:0]
	s.heads, s.complete, s.errs = s.heads[:0], s.complete[:0], s.errs[:0]
	s.done, s.next = false, 0
}

func (s *wireSink[T]) Item(d *codec.JSON, _ string, _ int) error {
	var zero T
	s.vals = append(s.vals, zero)
	return s.add(d, unsafe.Pointer(&s.vals[len(s.vals)-1]))
}

func (s *wireHeads) Done() { s.done = true }

func (s *wireHeads) add(d *codec.JSON, ptr unsafe.Pointer) error {
	head := make(map[string]types.AttributeValue, s.keep.Size())
	complete, ferr, err := codec.UnmarshalJSON(d, s.typ, s.plan, ptr, s.keep, head)
	if err != nil {
		return err
	}
	s.heads, s.complete, s.errs = append(s.heads, head), append(s.complete, complete), append(s.errs, ferr)
	return nil
}

// wireFeed is what request reads of its wireSink.
type wireFeed interface {
	wire.Sink
	direct() *wireHeads
}

func (s *wireHeads) direct() *wireHeads { return s }

// wireKeep lists the attributes a read of e looks at besides its fields:
// the values of the keys, the cursor's keys, the times re-read in a
// Location and, when typed (a Get, or an entity matching keys, whose reads
// the type filter does not settle), the entity type; whether the fields
// the keys fill are there (decodeRest). Cached per entity, table and keys.
func (e *entityPlan) wireKeep(o *TableOptions, cursorKeys []string, typed bool) *codec.Keep {
	typed = typed || e.foreign.matchKeys
	ck := keepKey{e: e, o: o, typed: typed, n: len(cursorKeys)}
	cacheable := copy(ck.keys[:], cursorKeys) == len(cursorKeys)
	if k, ok := wireKeeps.Load(ck); ok && cacheable {
		return k.(*codec.Keep)
	}
	vals := append([]string{o.PartitionKey, o.SortKey}, cursorKeys...)
	if typed {
		vals = append(vals, o.EntityTypeAttr)
	}
	for _, f := range e.foreign.times {
		vals = append(vals, f.Attr)
	}
	var present []string
	for _, k := range e.primaryKeys(o) {
		for _, f := range k.ck.fields {
			if !slices.Contains(vals, f.Attr) && !slices.Contains(present, f.Attr) {
				present = append(present, f.Attr)
			}
		}
	}
	slices.Sort(vals)
	k := &codec.Keep{Values: slices.Compact(vals), Present: present}
	if cacheable {
		wireKeeps.Store(ck, k)
	}
	return k
}

// wireKeeps caches wireKeep.
var wireKeeps sync.Map // keepKey → *codec.Keep

type keepKey struct {
	e     *entityPlan
	o     *TableOptions
	typed bool
	n     int
	keys  [4]string
}

// wireHeads starts the sink of a read of e (typed: see wireKeep).
func (e *entityPlan) wireHeads(o *TableOptions, cursorKeys []string, typed bool) wireHeads {
	return wireHeads{typ: e.typ, plan: codec.StructPlan(e.typ), keep: e.wireKeep(o, cursorKeys, typed)}
}

// wireOn reports whether a request of t through c takes the direct path:
// c is t's own client (no Preview, no Observe hook) built with wire.Enable.
func (t *Table) wireOn(c Client) bool { return t.wire && c == t.client }

// wirePage makes f, a request of r's items, read them directly when its
// table's client allows; nil otherwise.
func wirePage[T any](f pager, r *Repo[T]) *wireSink[T] {
	req, ok := f.(*request)
	if !ok || !r.t.wire {
		return nil
	}
	s := &wireSink[T]{wireHeads: r.e.wireHeads(&r.t.opts, req.cursorKeys, false)}
	req.sink = s
	return s
}

// direct returns ctx carrying r's sink for a request through c, when it
// takes the direct path.
func (r *request) direct(ctx context.Context, c Client) context.Context {
	if r.sink == nil || !r.t.wireOn(c) {
		return ctx
	}
	r.sink.Reset()
	if r.src.query != nil {
		return wire.With(ctx, r.src.query, r.sink)
	}
	return wire.With(ctx, r.src.scan, r.sink)
}

// taken reads the head of the next item of s's response into a page, as
// pageOf's take does with the item (ok: handled here).
func takeWire[T any](r *Repo[T], s *wireSink[T], page *Page[T], left int, strict bool) (bool, error) {
	i := s.next
	s.next++
	head := s.heads[i]
	if !r.mine(head) {
		return false, skip(r.selected(head), strict, &page.Skipped)
	}
	if err := r.e.wireErr(s.errs[i]); err != nil {
		return false, skip(r.undecoded(head, err), strict, &page.Skipped)
	}
	n := len(page.Items)
	if n == cap(page.Items) {
		page.Items = slices.Grow(page.Items, left)
	}
	page.Items = append(page.Items, s.vals[i])
	if err := r.e.wireRest(r.t, head, &page.Items[n], s.complete[i]); err != nil {
		var zero T
		page.Items[n], page.Items = zero, page.Items[:n]
		return false, skip(r.undecoded(head, err), strict, &page.Skipped)
	}
	return true, nil
}

// wireErr is decodeInto's error for a field that did not decode.
func (e *entityPlan) wireErr(err error) error {
	if err == nil {
		return nil
	}
	return &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
}

// wireRest is what decodeInto does after the codec, given the item's head.
func (e *Entity[T]) wireRest(t *Table, head map[string]types.AttributeValue, out *T, complete bool) error {
	complete = complete && !e.foreign.unstored
	if !complete || e.foreign.loc != nil {
		return e.decodeRest(&t.opts, head, reflect.ValueOf(out).Elem(), complete)
	}
	return nil
}

// getWire is Get's GetItem on the direct path; ok is false when the
// table's client does not take it.
func (r *Repo[T]) getWire(ctx context.Context, in *dynamodb.GetItemInput) (v T, ok bool, err error) {
	c := r.t.api(ctx, r.e.name)
	if !r.t.wireOn(c) {
		return v, false, nil
	}
	s := &wireSink[T]{wireHeads: r.e.wireHeads(&r.t.opts, nil, true)}
	out, err := c.GetItem(wire.With(ctx, in, s), in)
	switch {
	case err != nil:
		return v, true, getErr(r.e.name, err)
	case !s.done: // a middleware changed the input: the SDK decoded it
		v, err = r.gotItem(out.Item)
		return v, true, err
	case len(s.heads) == 0 || !r.isMine(s.heads[0]):
		return v, true, ErrNotFound
	}
	if err := r.e.wireErr(s.errs[0]); err != nil {
		return v, true, err
	}
	v = s.vals[0]
	return v, true, r.e.wireRest(r.t, s.heads[0], &v, s.complete[0])
}

// gotItem is Get's result for the item GetItem returned.
func (r *Repo[T]) gotItem(item map[string]types.AttributeValue) (T, error) {
	if len(item) == 0 || !r.isMine(item) {
		var zero T
		return zero, ErrNotFound
	}
	return r.e.decode(r.t, item)
}
