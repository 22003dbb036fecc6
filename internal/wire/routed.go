package wire

import (
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
)

// Routed is the Sink of a read whose items go to several feeds, one per
// struct type (a collection's targets, told apart by entity type or key
// shape), each keeping in its heads what routing reads. An item is
// decoded first by the feed the last item went to, whose head Route then
// reads; when Route names another feed, that one decodes the item again
// from its text, and when it names none, the item's head is kept alone.
// Items of one type come together (sorted by key), so most are decoded
// once; an item after one of another type is decoded twice, and a custom
// unmarshaler of the first type's fields runs on it (its result dropped).
type Routed struct {
	Heads // the items' heads, each its feed's (Heads.Heads only)
	Feeds []Typed
	// Route returns the index in Feeds of the feed of the item whose
	// head is head; -1 for none (an item no target takes).
	Route func(head map[string]types.AttributeValue) int
	At    []BatchItem // At[i]: the Item-th of Feeds[Feed] (Feed -1: none) is the i-th item
	last  int         // the feed that decodes the next item first
	d     codec.JSON  // reads an item's text again, for its feed
}

// Typed is a Feed of one struct type that can drop its last item.
type Typed interface {
	Feed
	Drop() // drops the last item, whose head the caller may keep
}

// NewRouted returns the Routed of a read into feeds (at least one).
func NewRouted(route func(map[string]types.AttributeValue) int, feeds []Typed) *Routed {
	return &Routed{Feeds: feeds, Route: route}
}

// Reset drops the items of the last response.
func (r *Routed) Reset() {
	r.Heads.Reset()
	for _, f := range r.Feeds {
		f.Reset()
	}
	r.At = r.At[:0]
}

// Item decodes an item into its feed.
func (r *Routed) Item(d *codec.JSON, _ string, _ int) error {
	d.Peek() // to the item's first byte
	start, f := d.Offset(), r.last
	for again := false; ; again = true {
		n := len(r.Feeds[f].Got().Heads)
		if err := r.Feeds[f].Item(d, "", 0); err != nil {
			return err
		}
		head := r.Feeds[f].Got().Heads[n]
		to := r.Route(head)
		if to == f || again {
			r.Heads.Heads, r.At = append(r.Heads.Heads, head), append(r.At, BatchItem{Feed: f, Item: n})
			return nil
		}
		r.Feeds[f].Drop()
		if to < 0 {
			r.Heads.Heads, r.At = append(r.Heads.Heads, head), append(r.At, BatchItem{Feed: -1})
			return nil
		}
		r.last, f = to, to
		r.d.Reset(d.Bytes()[start:d.Offset()])
		d = &r.d
	}
}

// Release hands back the heads of r's feeds.
func (r *Routed) Release() {
	for _, f := range r.Feeds {
		f.Got().Release()
	}
}

// Skipped is the Sink of a read that counts (Select COUNT): its items, if
// any, are read past.
type Skipped struct{ Heads }

// Item reads past an item.
func (s *Skipped) Item(d *codec.JSON, _ string, _ int) error { return d.Skip() }

// Sinks are the sinks of a read, one per request, read by one goroutine
// (a parallel read's segments fill theirs in others).
type Sinks[S Feed] struct {
	List []S
	cur  int // 1 + the index of the one whose items a parallel read takes; 0: any
}

// Taking returns what tells s that a parallel read takes the items of
// the i-th sink (whose segment waits): Find looks at no other, which may
// be filling.
func (s *Sinks[S]) Taking(i int) func() { return func() { s.cur = i + 1 } }

// Release hands back the heads of the sinks (s nil: none).
func (s *Sinks[S]) Release() {
	if s == nil {
		return
	}
	for _, sink := range s.List {
		if r, ok := any(sink).(interface{ Release() }); ok {
			r.Release()
		}
	}
}

// Find returns the sink whose next item (each sink's items are taken in
// order) has the head item, and that item's index, taking it; ok is false
// for an item that is no sink's (one the SDK decoded; s nil: none).
func (s *Sinks[S]) Find(item map[string]types.AttributeValue) (sink S, i int, ok bool) {
	if s == nil {
		return sink, 0, false
	}
	list := s.List
	if s.cur > 0 {
		list = list[s.cur-1 : s.cur]
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&item))
	for _, sink := range list {
		h := sink.Got()
		if h.Filled && h.Next < len(h.Heads) && *(*unsafe.Pointer)(unsafe.Pointer(&h.Heads[h.Next])) == p {
			h.Next++
			return sink, h.Next - 1, true
		}
	}
	return sink, 0, false
}
