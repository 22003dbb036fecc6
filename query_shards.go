package singletable

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/cursor"
)

// A query on a write-sharded index reads every shard and merges the
// streams: at each step it takes the smallest head (by index sort key, then
// the table's key; largest when descending). The cursor records, per shard,
// the key of the last item taken from it, so the next page resumes every
// shard exactly where this one stopped.

// shardStream is one shard's side of a merge.
type shardStream struct {
	in     *dynamodb.QueryInput
	buf    []map[string]types.AttributeValue
	last   bool // the buffer holds the shard's final items
	pos    cursor.ShardPos
	loaded bool
}

// fill reads the shard's next page when its buffer is empty.
func (s *shardStream) fill(ctx context.Context, c Client, limit int32) error {
	for len(s.buf) == 0 && !s.last && s.pos.State != cursor.ShardDone {
		if limit > 0 && s.in.Limit == nil {
			s.in.Limit = aws.Int32(limit)
		}
		out, err := c.Query(ctx, s.in)
		if err != nil {
			return err
		}
		s.loaded = true
		s.buf = out.Items
		if out.LastEvaluatedKey == nil {
			s.last = true
		} else {
			s.in.ExclusiveStartKey = out.LastEvaluatedKey
		}
		if len(s.buf) == 0 && s.last {
			s.pos = cursor.ShardPos{State: cursor.ShardDone}
		}
	}
	return nil
}

func (s *shardStream) empty() bool {
	return len(s.buf) == 0 && (s.last || s.pos.State == cursor.ShardDone)
}

// shardMerge merges the shards of one sharded query plan.
type shardMerge struct {
	client  Client
	streams []*shardStream
	order   []string // attributes compared, most significant first
	desc    bool
	limit   int32 // per-request Limit when the caller set none
}

func (q *Query[T]) newShardMerge(ctx context.Context, p *plan, extra int) *shardMerge {
	m := &shardMerge{client: q.r.t.api(ctx, q.r.e.name), order: p.cursorKeys[1:], desc: q.desc}
	for i, in := range p.shards {
		s := &shardStream{in: in}
		if p.shardPos != nil {
			s.pos = p.shardPos[i]
			if s.pos.State == cursor.ShardAfter {
				in.ExclusiveStartKey = s.pos.Key
			}
		}
		m.streams = append(m.streams, s)
	}
	if q.limit > 0 && q.pageSize == 0 && q.filter == nil {
		m.limit = int32(min(q.limit+extra, 1000))
	}
	return m
}

// next returns the next item in merged order, or nil at the end.
func (m *shardMerge) next(ctx context.Context) (map[string]types.AttributeValue, error) {
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	var best *shardStream
	for _, s := range m.streams {
		if len(s.buf) == 0 {
			continue
		}
		if best == nil || m.less(s.buf[0], best.buf[0]) {
			best = s
		}
	}
	if best == nil {
		return nil, nil
	}
	item := best.buf[0]
	best.buf = best.buf[1:]
	if len(best.buf) == 0 && best.last {
		best.pos = cursor.ShardPos{State: cursor.ShardDone}
	} else {
		best.pos = cursor.ShardPos{State: cursor.ShardAfter, Key: item}
	}
	return item, nil
}

// load reads a page for every shard that needs one, in parallel: on the
// first call that is all of them.
func (m *shardMerge) load(ctx context.Context) error {
	var g errgroup.Group
	for _, s := range m.streams {
		if len(s.buf) == 0 && !s.empty() {
			g.Go(func() error { return s.fill(ctx, m.client, m.limit) })
		}
	}
	return g.Wait()
}

// more reports whether any shard may still hold items: after load, whether
// any does.
func (m *shardMerge) more() bool {
	for _, s := range m.streams {
		if !s.empty() {
			return true
		}
	}
	return false
}

func (m *shardMerge) positions() []cursor.ShardPos {
	out := make([]cursor.ShardPos, len(m.streams))
	for i, s := range m.streams {
		out[i] = s.pos
	}
	return out
}

func (m *shardMerge) less(a, b map[string]types.AttributeValue) bool {
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

// shardedPage is Page for a sharded index.
func (q *Query[T]) shardedPage(ctx context.Context, p *plan) (Page[T], error) {
	var page Page[T]
	// One item more per shard than the page holds, so that a shard ending
	// exactly at the page's end says so without another request.
	m := q.newShardMerge(ctx, p, 1)
	limit := q.limit
	if limit == 0 {
		// Without Limit a sharded page holds one page's worth: PageSize
		// items, or 100.
		limit = 100
		if q.pageSize > 0 {
			limit = int(q.pageSize)
		}
	}
	for len(page.Items) < limit {
		item, err := m.next(ctx)
		if err != nil {
			return Page[T]{}, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err)
		}
		if item == nil {
			return page, nil
		}
		if q.notMine(item) {
			continue
		}
		v, err := q.r.e.decode(q.r.t, item)
		if err != nil {
			return Page[T]{}, err
		}
		page.Items = append(page.Items, v)
	}
	// A shard whose buffer ran out with more to read is read ahead, so
	// that the page gets a cursor only when another item follows.
	if err := m.load(ctx); err != nil {
		return Page[T]{}, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err)
	}
	if m.more() {
		var err error
		page.Cursor, err = q.r.t.encodeShardCursor(p.bind, p.cursorKeys, m.positions())
		if err != nil {
			return Page[T]{}, err
		}
	}
	return page, nil
}

// shardedAll is All for a sharded index.
func (q *Query[T]) shardedAll(ctx context.Context, p *plan, yield func(T, error) bool) {
	var zero T
	m := q.newShardMerge(ctx, p, 0)
	for n := 0; q.limit == 0 || n < q.limit; {
		item, err := m.next(ctx)
		if err != nil {
			yield(zero, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err))
			return
		}
		if item == nil {
			return
		}
		if q.notMine(item) {
			continue
		}
		n++
		v, err := q.r.e.decode(q.r.t, item)
		if !yield(v, err) || err != nil {
			return
		}
	}
}

// shardedCount is Count for a sharded index: the sum over the shards.
func (q *Query[T]) shardedCount(ctx context.Context, p *plan) (int, error) {
	counts := make([]int, len(p.shards))
	var g errgroup.Group
	for i, in := range p.shards {
		if p.shardPos != nil {
			switch p.shardPos[i].State {
			case cursor.ShardDone:
				continue
			case cursor.ShardAfter:
				in.ExclusiveStartKey = p.shardPos[i].Key
			}
		}
		g.Go(func() error {
			for {
				out, err := q.r.t.api(ctx, q.r.e.name).Query(ctx, in)
				if err != nil {
					return err
				}
				counts[i] += int(out.Count)
				if out.LastEvaluatedKey == nil {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	if err := g.Wait(); err != nil {
		return 0, fmt.Errorf("singletable: count %s: %w", q.r.e.name, err)
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	return total, nil
}
