package wire

import (
	"fmt"

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

// Done records that a response was decoded whole.
func (b *Batch) Done() { b.Filled = true }

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
