package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/cursor"
)

// A query on a write-sharded index merges its shards by sort key; its
// cursor records each shard's position.

// shardStream is one shard's side of a merge.
type shardStream struct {
	r    *request
	buf  []map[string]types.AttributeValue
	last bool // the buffer holds the shard's final items
	pos  cursor.ShardPos
}

// fill reads the shard's next page when its buffer is empty.
func (s *shardStream) fill(ctx context.Context) error {
	for len(s.buf) == 0 && !s.last && s.pos.State != cursor.ShardDone {
		items, last, err := s.r.next(ctx, 0)
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

func (s *shardStream) empty() bool {
	return len(s.buf) == 0 && (s.last || s.pos.State == cursor.ShardDone)
}

// shardMerge merges the shards of one sharded query plan.
type shardMerge struct {
	t          *Table
	streams    []*shardStream
	order      []string // attributes compared, most significant first
	desc       bool
	bind       [16]byte
	cursorKeys []string
	one        [1]map[string]types.AttributeValue // what next returns
}

// newShardMerge merges reqs, one per shard, from p's positions. Each
// request without a PageSize asks for limit items (0: any number).
func newShardMerge(t *Table, p *plan, reqs []*request, desc bool, limit int) *shardMerge {
	m := &shardMerge{t: t, order: p.cursorKeys[1:], desc: desc, bind: p.binding.bind, cursorKeys: p.cursorKeys}
	for i, r := range reqs {
		s := &shardStream{r: r}
		if p.shardPos != nil {
			s.pos = p.shardPos[i]
		}
		if limit > 0 && r.src.query.Limit == nil {
			r.src.query.Limit = aws.Int32(int32(min(limit, 1000)))
		}
		m.streams = append(m.streams, s)
	}
	return m
}

// next returns the next item in merged order; last is true at the end.
func (m *shardMerge) next(ctx context.Context, _ int) ([]map[string]types.AttributeValue, bool, error) {
	if err := m.load(ctx); err != nil {
		return nil, false, err
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
		return nil, true, nil
	}
	item := best.buf[0]
	best.buf = best.buf[1:]
	if len(best.buf) == 0 && best.last {
		best.pos = cursor.ShardPos{State: cursor.ShardDone}
	} else {
		best.pos = cursor.ShardPos{State: cursor.ShardAfter, Key: item}
	}
	m.one[0] = item
	return m.one[:], false, nil
}

// load reads a page for every shard that needs one, in parallel.
func (m *shardMerge) load(ctx context.Context) error {
	var g errgroup.Group
	for _, s := range m.streams {
		if len(s.buf) == 0 && !s.empty() {
			g.Go(func() error { return s.fill(ctx) })
		}
	}
	return g.Wait()
}

// ahead reports whether any shard holds another item.
func (m *shardMerge) ahead(ctx context.Context, _ func(map[string]types.AttributeValue) bool) (bool, error) {
	if err := m.load(ctx); err != nil {
		return false, err
	}
	for _, s := range m.streams {
		if !s.empty() {
			return true, nil
		}
	}
	return false, nil
}

// cursor records every shard's position.
func (m *shardMerge) cursor(map[string]types.AttributeValue) (string, error) {
	pos := make([]cursor.ShardPos, len(m.streams))
	for i, s := range m.streams {
		pos[i] = s.pos
	}
	return m.t.cursorCodec().EncodeShards(m.bind, m.cursorKeys, pos)
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
