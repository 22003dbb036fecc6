package paging

import (
	"context"
	"maps"

	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/cursor"
)

// A query on a write-sharded index merges its shards by sort key; its
// cursor records each shard's position.

// shard is one shard's side of a merge.
type shard struct {
	f    Feed
	buf  []Item
	last bool // the buffer holds the shard's final items
	pos  cursor.ShardPos
}

// fill reads the shard's next page when its buffer is empty.
func (s *shard) fill(ctx context.Context) error {
	for len(s.buf) == 0 && !s.last && s.pos.State != cursor.ShardDone {
		items, last, err := s.f.Next(ctx, 0)
		if err != nil {
			return err
		}
		s.buf, s.last = items, last
		if len(s.buf) == 0 && s.last {
			s.pos = cursor.ShardPos{State: cursor.ShardDone}
		}
	}
	return nil
}

func (s *shard) empty() bool {
	return len(s.buf) == 0 && (s.last || s.pos.State == cursor.ShardDone)
}

// Merge is the Pager of a query on a write-sharded index: its shards'
// items in sort key order.
type Merge struct {
	shards     []*shard
	order      []string // attributes compared, most significant first
	desc       bool
	codec      *cursor.Codec
	bind       [16]byte
	cursorKeys []string
	one        [1]Item // what Next returns
}

// NewMerge merges fs, one per shard, from the positions pos (nil: from
// the start), by the attributes order, descending when desc; its cursors
// are bound to bind and hold cursorKeys.
func NewMerge(fs []Feed, pos []cursor.ShardPos, order []string, desc bool, codec *cursor.Codec, bind [16]byte, cursorKeys []string) *Merge {
	m := &Merge{order: order, desc: desc, codec: codec, bind: bind, cursorKeys: cursorKeys}
	for i, f := range fs {
		s := &shard{f: f}
		if pos != nil {
			s.pos = pos[i]
		}
		m.shards = append(m.shards, s)
	}
	return m
}

// Next returns the next item in merged order; last is true at the end.
func (m *Merge) Next(ctx context.Context, _ int) ([]Item, bool, error) {
	if err := m.load(ctx); err != nil {
		return nil, false, err
	}
	var best *shard
	for _, s := range m.shards {
		if len(s.buf) == 0 {
			continue
		}
		if best == nil || m.less(s.buf[0], best.buf[0]) {
			best = s
		}
	}
	if best == nil {
		return nil, true, nil
	}
	item := best.buf[0]
	best.buf = best.buf[1:]
	switch {
	case len(best.buf) == 0 && best.last:
		best.pos = cursor.ShardPos{State: cursor.ShardDone}
	case len(best.buf) == 0: // the shard's next page may reuse item (a Holder's)
		best.pos = cursor.ShardPos{State: cursor.ShardAfter, Key: maps.Clone(item)}
	default:
		best.pos = cursor.ShardPos{State: cursor.ShardAfter, Key: item}
	}
	m.one[0] = item
	return m.one[:], false, nil
}

// load reads a page for every shard that needs one, in parallel.
func (m *Merge) load(ctx context.Context) error {
	var g errgroup.Group
	for _, s := range m.shards {
		if len(s.buf) == 0 && !s.empty() {
			g.Go(func() error { return s.fill(ctx) })
		}
	}
	return g.Wait()
}

// Ahead reports whether any shard holds another item.
func (m *Merge) Ahead(ctx context.Context, _ func(Item) bool) (bool, error) {
	if err := m.load(ctx); err != nil {
		return false, err
	}
	for _, s := range m.shards {
		if !s.empty() {
			return true, nil
		}
	}
	return false, nil
}

// Cursor records every shard's position.
func (m *Merge) Cursor(Item) (string, error) {
	pos := make([]cursor.ShardPos, len(m.shards))
	for i, s := range m.shards {
		pos[i] = s.pos
	}
	return m.codec.EncodeShards(m.bind, m.cursorKeys, pos)
}

func (m *Merge) less(a, b Item) bool {
	for _, attr := range m.order {
		c, _ := attrvalue.Compare(a[attr], b[attr])
		if c != 0 {
			if m.desc {
				return c > 0
			}
			return c < 0
		}
	}
	return false
}
