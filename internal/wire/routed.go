package wire

import (
	"reflect"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
)

// Routed is the Sink of a read whose items go to several feeds, one per
// struct type (a collection's targets, told apart by entity type or key
// shape): each item's head is read first (its embedded Heads, of no
// fields: only the attributes its Keep keeps), Route names the feed of
// that head, and that feed decodes the item from its text. Each item is
// decoded once, into its target's type.
type Routed struct {
	Heads
	Feeds []Feed
	// Route returns the index in Feeds of the feed decoding the item
	// whose head is head; -1 for none (an item no target takes).
	Route func(head map[string]types.AttributeValue) int
	At    []BatchItem // At[i]: the Item-th of Feeds[Feed] (Feed -1: none) is the i-th item
	d     codec.JSON  // reads an item's text again, for its feed
}

// NewRouted returns the Routed of a read keeping keep in its heads.
func NewRouted(keep *codec.Keep, route func(map[string]types.AttributeValue) int, feeds []Feed) *Routed {
	return &Routed{Heads: NewHeads(reflect.TypeFor[struct{}](), keep), Feeds: feeds, Route: route}
}

// Reset drops the items of the last response.
func (r *Routed) Reset() {
	r.Heads.Reset()
	for _, f := range r.Feeds {
		f.Reset()
	}
	r.At = r.At[:0]
}

// Item reads an item's head, then decodes the item into its feed.
func (r *Routed) Item(d *codec.JSON, _ string, _ int) error {
	d.Peek() // to the item's first byte
	start := d.Offset()
	var none struct{}
	if err := r.Add(d, unsafe.Pointer(&none)); err != nil {
		return err
	}
	f := r.Route(r.Heads.Heads[len(r.Heads.Heads)-1])
	if f < 0 {
		r.At = append(r.At, BatchItem{Feed: -1})
		return nil
	}
	n := len(r.Feeds[f].Got().Heads)
	r.d.Reset(d.Bytes()[start:d.Offset()])
	if err := r.Feeds[f].Item(&r.d, "", 0); err != nil {
		return err
	}
	r.At = append(r.At, BatchItem{Feed: f, Item: n})
	return nil
}

// Release hands back the heads of r and of its feeds.
func (r *Routed) Release() {
	for _, f := range r.Feeds {
		f.Got().Release()
	}
	r.Heads.Release()
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
