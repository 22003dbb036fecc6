package wire

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
)

// Feed is a Sink of one struct type's items that keeps their heads (a
// sink embedding Heads).
type Feed interface {
	Sink
	Got() *Heads
}

// Got returns h: the Feed method of a sink embedding Heads.
func (h *Heads) Got() *Heads { return h }

// Batch is the Sink of a BatchGetItem or TransactGetItems call whose
// items go to the ops of several readers (one Feed each, of its struct
// type), for the keys the call asked for.
//
// A TransactGetItems response's item is the op's at its position: ByPos
// names the feed that decodes it. A BatchGetItem response's items come in
// any order: each is decoded by Feeds[0] (its head gives its key, Route
// finds the key's number and the feeds of the ops reading it), and again,
// from its text, by each other feed Route names.
type Batch struct {
	Table string // BatchGetItem: the table read; another's items are skipped
	Feeds []Feed
	ByPos []int // TransactGetItems: ByPos[pos] is the feed of the op at pos
	// Route returns the readers of a BatchGetItem item whose head (as
	// Feeds[0] decoded it) is head: none for an item no key asked for.
	Route  func(head map[string]types.AttributeValue) []Reader
	Items  []BatchItem // the last response's items
	Filled bool        // the last response was decoded here
	rs     *Readers    // records where Done
}

// Reader is a reader of an item: the key numbered Key (the caller's) and
// the feed that decodes it.
type Reader struct{ Key, Feed int }

// BatchItem is where a Batch put an item: the Item-th of Feeds[Feed], for
// the key numbered Key (TransactGetItems: the position).
type BatchItem struct{ Key, Feed, Item int }

// Reset drops the items of the last response.
func (b *Batch) Reset() {
	for _, f := range b.Feeds {
		f.Reset()
	}
	b.Items, b.Filled = b.Items[:0], false
}

// Done records that a response was decoded whole, and with a Readers's
// Batch where its items were decoded.
func (b *Batch) Done() {
	b.Filled = true
	for _, it := range b.Items {
		if b.rs != nil {
			b.rs.at[it.Key] = Placed{b.Feeds[it.Feed], it.Item}
		}
	}
}

// Item decodes an item of the response into the feeds that read it.
func (b *Batch) Item(d *codec.JSON, table string, pos int) error {
	if b.ByPos != nil {
		if pos >= len(b.ByPos) {
			return fmt.Errorf("wire: %d responses for %d items", pos+1, len(b.ByPos))
		}
		return b.decode(d, pos, b.ByPos[pos])
	}
	if table != b.Table {
		return d.Skip()
	}
	d.Peek() // to the item's first byte
	start := d.Offset()
	first := b.Feeds[0].Got()
	n := len(first.Heads)
	if err := b.Feeds[0].Item(d, table, 0); err != nil {
		return err
	}
	raw, taken := d.Bytes()[start:d.Offset()], false
	for _, r := range b.Route(first.Heads[n]) {
		if r.Feed == 0 && !taken { // each other reader decodes its own copy
			b.Items, taken = append(b.Items, BatchItem{r.Key, 0, n}), true
			continue
		}
		if err := b.decode(codec.NewJSON(raw), r.Key, r.Feed); err != nil {
			return err
		}
	}
	return nil
}

// decode reads an item from d into feed f, for the key numbered key.
func (b *Batch) decode(d *codec.JSON, key, f int) error {
	n := len(b.Feeds[f].Got().Heads)
	if err := b.Feeds[f].Item(d, b.Table, 0); err != nil {
		return err
	}
	b.Items = append(b.Items, BatchItem{key, f, n})
	return nil
}

// Direct returns the items of the last response when it was decoded
// here, none otherwise (b nil included).
func (b *Batch) Direct() []BatchItem {
	if b == nil || !b.Filled {
		return nil
	}
	return b.Items
}

// Release hands back the feeds' heads (see Heads.Release).
func (b *Batch) Release() {
	for _, f := range b.Feeds {
		f.Got().Release()
	}
}

// Readers is what a batch read (BatchGet, TxGet) on the path keeps
// besides its keys: the ops' readers (their repositories), each with one
// Feed per call, which ops' items each response's items are, and where
// they were decoded.
type Readers struct {
	feed    func(reader any) Feed
	readers []any      // each reader once: reader f makes the Feeds[f] of each Batch
	of      []int      // of[i]: the reader of the i-th key given
	routes  [][]Reader // routes[u]: the keys given that are the distinct key u
	at      []Placed   // at[i]: where the item of the i-th key given was decoded
	mu      sync.Mutex
	batches []*Batch
}

// Placed is where a batch read's item was decoded: the Item-th of Feed.
type Placed struct {
	Feed Feed
	Item int
}

// NewReaders returns the Readers of n keys given, the i-th read by
// reader(i) (a comparable value); feed makes a reader's Feed. It returns
// nil (no Readers: the SDK's path) when not on.
func NewReaders(on bool, n int, reader func(i int) any, feed func(reader any) Feed) *Readers {
	if !on {
		return nil
	}
	rs := &Readers{feed: feed, of: make([]int, n), at: make([]Placed, n)}
	for i := range n {
		r := reader(i)
		f := slices.Index(rs.readers, r)
		if f < 0 {
			f, rs.readers = len(rs.readers), append(rs.readers, r)
		}
		rs.of[i] = f
	}
	return rs
}

// Keys records, for BatchGetItem calls, that the i-th key given is the
// distinct key at[i] of n.
func (rs *Readers) Keys(at []int, n int) {
	if rs == nil {
		return
	}
	rs.routes = make([][]Reader, n)
	flat := make([]Reader, len(at))
	for i, u := range at {
		if flat[i] = (Reader{Key: i, Feed: rs.of[i]}); rs.routes[u] == nil {
			rs.routes[u] = flat[i : i+1 : i+1]
		} else {
			rs.routes[u] = append(rs.routes[u], flat[i])
		}
	}
}

// With returns ctx carrying the Sink of one call whose input is in: a
// BatchGetItem of table, whose items find finds (the distinct key of the
// item whose head is head, false for one no key asked for), or with find
// nil a TransactGetItems. It returns ctx itself on nil rs.
func (rs *Readers) With(ctx context.Context, in any, table string, find func(head map[string]types.AttributeValue) (int, bool)) context.Context {
	if rs == nil {
		return ctx
	}
	b := &Batch{Table: table, Feeds: make([]Feed, len(rs.readers)), rs: rs}
	for f, r := range rs.readers {
		b.Feeds[f] = rs.feed(r)
	}
	if b.ByPos = rs.of; find != nil {
		b.ByPos, b.Route = nil, func(head map[string]types.AttributeValue) []Reader {
			if u, ok := find(head); ok {
				return rs.routes[u]
			}
			return nil
		}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.batches = append(rs.batches, b)
	return With(ctx, in, b)
}

// At returns where the item of the i-th key given was decoded: a nil
// Feed when it was not (none, the SDK's path, nil rs).
func (rs *Readers) At(i int) (Feed, int) {
	if rs == nil {
		return nil, 0
	}
	return rs.at[i].Feed, rs.at[i].Item
}

// Release hands back every Batch's feeds; nothing is read after.
func (rs *Readers) Release() {
	if rs == nil {
		return
	}
	for _, b := range rs.batches {
		b.Release()
	}
}

// Whole is a Feed keeping each item whole, as the SDK's deserializer
// would make it (codec.JSON.Item), as its head: for reads that look at
// the item's attributes only (a count of key-only items, told apart by
// entity type or key shape).
type Whole struct{ Heads }

// Item reads an item whole.
func (w *Whole) Item(d *codec.JSON, _ string, _ int) error {
	item, err := d.Item()
	if err == nil {
		w.Heads.Heads = append(w.Heads.Heads, item)
	}
	return err
}
