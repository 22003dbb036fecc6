package singletable_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
)

type Event struct {
	Stream string `dynamodbav:"Stream"`
	Seq    int    `dynamodbav:"Seq"`
	Kind   string `dynamodbav:"Kind"`
	Size   int    `dynamodbav:"Size"`
}

var Events = singletable.MustDefine(singletable.Schema[Event]{
	Type: "Event",
	PK:   "STREAM#{Stream}",
	SK:   "SEQ#{Seq}",
	Indexes: []singletable.IndexSchema[Event]{
		{Name: "GSI1", PK: "KIND#{Kind}", SK: "SEQ#{Seq}"},
	},
})

// TestPaginationExact reads 1,000 items through pages of random Limit and
// PageSize with random filters: every matching item is seen exactly once, in
// order, and every page but the last holds exactly Limit items.
func TestPaginationExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[Event]
	_, _ = newTable(t, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, Events) })
	kinds := []string{"a", "b", "c"}
	var items []Event
	for i := 0; i < 1000; i++ {
		items = append(items, Event{Stream: "s", Seq: i, Kind: kinds[i%3], Size: i % 10})
	}
	putEach(t, events, items)

	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 12; round++ {
		limit := 1 + rng.IntN(97)
		pageSize := 0
		if rng.IntN(2) == 0 {
			pageSize = 1 + rng.IntN(150)
		}
		maxSize := rng.IntN(11) // Size < maxSize; 0 means no filter
		desc := rng.IntN(3) == 0
		onIndex := rng.IntN(3) == 0
		name := fmt.Sprintf("limit=%d,pageSize=%d,filter<%d,desc=%v,index=%v", limit, pageSize, maxSize, desc, onIndex)
		t.Run(name, func(t *testing.T) {
			var want []int
			for i := 0; i < 1000; i++ {
				if (maxSize == 0 || i%10 < maxSize) && (!onIndex || kinds[i%3] == "b") {
					want = append(want, i)
				}
			}
			if desc {
				for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
					want[i], want[j] = want[j], want[i]
				}
			}
			q := events.Query(Event{Stream: "s"})
			if onIndex {
				q = events.QueryIndex("GSI1", Event{Kind: "b"})
			}
			if maxSize > 0 {
				q = q.Filter(expression.Name("Size").LessThan(expression.Value(maxSize)))
			}
			if pageSize > 0 {
				q = q.PageSize(pageSize)
			}
			if desc {
				q = q.Desc()
			}
			q = q.Limit(limit)
			var got []int
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 2000, "pagination does not end")
				page, err := q.After(cursor).Page(ctx)
				require.NoError(t, err)
				if page.Cursor != "" {
					require.Len(t, page.Items, limit, "a page before the last must hold exactly Limit items")
				} else {
					require.LessOrEqual(t, len(page.Items), limit)
				}
				for _, e := range page.Items {
					got = append(got, e.Seq)
				}
				if page.Cursor == "" {
					break
				}
				cursor = page.Cursor
			}
			assert.Equal(t, want, got)

			// The iterator agrees.
			var all []int
			for e, err := range q.Limit(0).All(ctx) {
				require.NoError(t, err)
				all = append(all, e.Seq)
			}
			assert.Equal(t, want, all)
			n, err := q.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
		})
	}
}

// putEach writes items with Put from a few goroutines.
func putEach[T any](t testing.TB, r *singletable.Repo[T], items []T) {
	t.Helper()
	ctx := context.Background()
	var g errgroup.Group
	g.SetLimit(8)
	for _, v := range items {
		g.Go(func() error { _, err := r.Put(ctx, v); return err })
	}
	require.NoError(t, g.Wait())
}

func TestCursorBinding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[Event]
	_, c := newTable(t, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, Events) })
	var items []Event
	for i := 0; i < 30; i++ {
		items = append(items, Event{Stream: "s", Seq: i, Kind: "k"}, Event{Stream: "t", Seq: i, Kind: "k"})
	}
	putEach(t, events, items)
	page, err := events.Query(Event{Stream: "s"}).Limit(10).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, page.Cursor)
	cur := page.Cursor

	c.requests.Store(0)
	bad := map[string]*singletable.Query[Event]{
		"other partition":  events.Query(Event{Stream: "t"}).After(cur),
		"other direction":  events.Query(Event{Stream: "s"}).Desc().After(cur),
		"other index":      events.QueryIndex("GSI1", Event{Kind: "k"}).After(cur),
		"garbage":          events.Query(Event{Stream: "s"}).After("not-a-cursor!"),
		"truncated":        events.Query(Event{Stream: "s"}).After(cur[:len(cur)-3]),
		"empty-ish base64": events.Query(Event{Stream: "s"}).After("AA"),
	}
	// Flip every character of the cursor in turn.
	for i := 0; i < len(cur); i++ {
		b := []byte(cur)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		bad[fmt.Sprintf("edited byte %d", i)] = events.Query(Event{Stream: "s"}).After(string(b))
	}
	for name, q := range bad {
		_, err := q.Page(ctx)
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor, name)
	}
	assert.Zero(t, c.requests.Load(), "invalid cursors must be rejected before any request")

	// The good cursor resumes where the page ended.
	next, err := events.Query(Event{Stream: "s"}).Limit(10).After(cur).Page(ctx)
	require.NoError(t, err)
	require.Len(t, next.Items, 10)
	assert.Equal(t, 10, next.Items[0].Seq)
}

func TestSealedCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	oldKey, newKey := []byte(strings.Repeat("k", 32)), []byte(strings.Repeat("n", 32))
	var events *singletable.Repo[Event]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, Events) },
		func(o *singletable.TableOptions) { o.CursorKeys = [][]byte{oldKey} })
	var items []Event
	for i := 0; i < 20; i++ {
		items = append(items, Event{Stream: "secret-stream", Seq: i, Kind: "k"})
	}
	putEach(t, events, items)
	page, err := events.Query(Event{Stream: "secret-stream"}).Limit(5).Page(ctx)
	require.NoError(t, err)
	assert.NotContains(t, page.Cursor, "secret")

	// Rotate: a table with the new key first still opens the old cursor.
	rotated := singletable.NewTable(tbl.Client(), tbl.Name(), func(o *singletable.TableOptions) { o.CursorKeys = [][]byte{newKey, oldKey} })
	rEvents := singletable.MustBind(rotated, Events)
	next, err := rEvents.Query(Event{Stream: "secret-stream"}).Limit(5).After(page.Cursor).Page(ctx)
	require.NoError(t, err)
	assert.Equal(t, 5, next.Items[0].Seq)

	// A table without the old key rejects it, and an unsealed table rejects sealed cursors.
	only := singletable.MustBind(singletable.NewTable(tbl.Client(), tbl.Name(), func(o *singletable.TableOptions) { o.CursorKeys = [][]byte{newKey} }), Events)
	_, err = only.Query(Event{Stream: "secret-stream"}).After(page.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	plain := singletable.MustBind(singletable.NewTable(tbl.Client(), tbl.Name()), Events)
	_, err = plain.Query(Event{Stream: "secret-stream"}).After(page.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
}

// Marker shares the event streams' partitions and sorts after every
// event: a page of events that ends at the last event has read it too.
type Marker struct {
	Stream string `dynamodbav:"Stream"`
}

var Markers = singletable.MustDefine(singletable.Schema[Marker]{Type: "Marker", PK: "STREAM#{Stream}", SK: "ZZ-MARKER"})

// TestExactFitPages reads partitions whose item count is a multiple of
// Limit on the table, index, write-sharded index and collection paths: the
// page holding the last item has an empty cursor (never a cursor to an
// empty page), and in the common case (no filter, no PageSize) that costs
// no request beyond one per page.
func TestExactFitPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[Event]
	var markers *singletable.Repo[Marker]
	var posts *singletable.Repo[Post]
	_, c := newTable(t, func(tbl *singletable.Table) {
		events = singletable.MustBind(tbl, Events)
		markers = singletable.MustBind(tbl, Markers)
		posts = singletable.MustBind(tbl, Posts)
	})
	var items []Event
	for i := 0; i < 20; i++ {
		items = append(items, Event{Stream: "s", Seq: i, Kind: "k", Size: i}, Event{Stream: "m", Seq: i, Kind: "km", Size: i})
	}
	putEach(t, events, items)
	_, err := markers.Put(ctx, Marker{Stream: "m"})
	require.NoError(t, err)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var ps []Post
	for i := 0; i < 20; i++ {
		ps = append(ps, Post{Author: "a", ID: i, At: base.Add(time.Duration(i) * time.Minute)})
	}
	putEach(t, posts, ps)

	// pages reads every page and returns the item count per page, the
	// requests sent, and fails on a page after an empty cursor's.
	type pager func(cursor string) (n int, next string, err error)
	pages := func(t *testing.T, read pager) (sizes []int, requests int64) {
		t.Helper()
		c.requests.Store(0)
		cursor := ""
		for {
			require.Less(t, len(sizes), 50)
			n, next, err := read(cursor)
			require.NoError(t, err)
			sizes = append(sizes, n)
			if next == "" {
				return sizes, c.requests.Load()
			}
			cursor = next
		}
	}
	query := func(q *singletable.Query[Event]) pager {
		return func(cursor string) (int, string, error) {
			p, err := q.After(cursor).Page(ctx)
			return len(p.Items), p.Cursor, err
		}
	}
	for _, tc := range []struct {
		name     string
		read     pager
		want     []int
		requests int64 // the most requests allowed; 0 when not measured
	}{
		{"table limit 10", query(events.Query(Event{Stream: "s"}).Limit(10)), []int{10, 10}, 2},
		{"table limit 20", query(events.Query(Event{Stream: "s"}).Limit(20)), []int{20}, 1},
		{"table limit 5 desc", query(events.Query(Event{Stream: "s"}).Desc().Limit(5)), []int{5, 5, 5, 5}, 4},
		{"index limit 10", query(events.QueryIndex("GSI1", Event{Kind: "k"}).Limit(10)), []int{10, 10}, 2},
		{"index limit 20", query(events.QueryIndex("GSI1", Event{Kind: "k"}).Limit(20)), []int{20}, 1},
		// Another entity's item after the last event: the extra item read
		// is filtered out, so the page looks ahead once.
		{"table, another entity last", query(events.Query(Event{Stream: "m"}).Limit(10)), []int{10, 10}, 3},
		{"table filtered", query(events.Query(Event{Stream: "s"}).Filter(expression.Name("Size").GreaterThanEqual(expression.Value(4))).Limit(8)), []int{8, 8}, 0},
		{"table page size", query(events.Query(Event{Stream: "s"}).PageSize(5).Limit(10)), []int{10, 10}, 0},
		{"index page size", query(events.QueryIndex("GSI1", Event{Kind: "k"}).PageSize(10).Limit(10)), []int{10, 10}, 0},
		// Without Limit a page holds one response; a response that ends
		// the query's items exactly (PageSize 10 of 20, or a filter that
		// drops everything after) still reports more, so the page looks
		// ahead instead of giving a cursor to an empty page.
		{"table page size, no limit", query(events.Query(Event{Stream: "s"}).PageSize(10)), []int{10, 10}, 4},
		{"index page size, no limit", query(events.QueryIndex("GSI1", Event{Kind: "k"}).PageSize(5)), []int{5, 5, 5, 5}, 8},
		{"table filtered, no limit", query(events.Query(Event{Stream: "s"}).Filter(expression.Name("Size").LessThan(expression.Value(10))).PageSize(10)), []int{10}, 3},
		{"table, another entity last, no limit", query(events.Query(Event{Stream: "m"}).PageSize(20)), []int{20}, 3},
		{"sharded index limit 10", func(cursor string) (int, string, error) {
			p, err := posts.QueryIndex("GSI1", Post{}).Limit(10).After(cursor).Page(ctx)
			return len(p.Items), p.Cursor, err
		}, []int{10, 10}, 0},
		{"sharded index limit 20", func(cursor string) (int, string, error) {
			p, err := posts.QueryIndex("GSI1", Post{}).Limit(20).After(cursor).Page(ctx)
			return len(p.Items), p.Cursor, err
		}, []int{20}, 4},
		{"collection limit 10", func(cursor string) (int, string, error) {
			p, err := events.QueryCollection(Event{Stream: "s"}).Limit(10).After(cursor).Page(ctx, events.Target())
			return len(p.Items), p.Cursor, err
		}, []int{10, 10}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sizes, requests := pages(t, tc.read)
			assert.Equal(t, tc.want, sizes, "items per page; the last page's cursor must be empty")
			t.Logf("%d requests", requests)
			if tc.requests > 0 {
				assert.LessOrEqual(t, requests, tc.requests, "requests")
			}
		})
	}
}

// forgePlainCursor rewrites old to new in the key values of a plain
// (version 1) cursor and recomputes its checksum, as a client can.
func forgePlainCursor(t *testing.T, cur, old, new string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cur)
	require.NoError(t, err)
	require.Equal(t, byte(1), raw[0], "a plain cursor")
	p := raw[1 : len(raw)-8]
	require.Equal(t, len(old), len(new))
	i := bytes.Index(p[25:], []byte(old))
	require.GreaterOrEqual(t, i, 0, "cursor holds %q", old)
	p = bytes.Clone(p)
	copy(p[25+i:], new)
	sum := sha256.Sum256(p)
	out := append(append([]byte{1}, p...), sum[:8]...)
	return base64.RawURLEncoding.EncodeToString(out)
}

// TestCursorOtherPartition: a plain cursor whose key is edited to another
// partition, its checksum recomputed, still carries the binding of the
// query it came from; it is refused as ErrInvalidCursor before any request
// on the table, index, write-sharded index and collection paths.
func TestCursorOtherPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[Event]
	var posts *singletable.Repo[Post]
	_, c := newTable(t, func(tbl *singletable.Table) {
		events = singletable.MustBind(tbl, Events)
		posts = singletable.MustBind(tbl, Posts)
	})
	var items []Event
	for i := 0; i < 10; i++ {
		items = append(items, Event{Stream: "s", Seq: i, Kind: "k"}, Event{Stream: "t", Seq: i, Kind: "j"})
	}
	putEach(t, events, items)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var ps []Post
	for i := 0; i < 12; i++ {
		ps = append(ps, Post{Author: "a", ID: i, At: base.Add(time.Duration(i) * time.Minute)})
	}
	putEach(t, posts, ps)

	table, err := events.Query(Event{Stream: "s"}).Limit(3).Page(ctx)
	require.NoError(t, err)
	index, err := events.QueryIndex("GSI1", Event{Kind: "k"}).Limit(3).Page(ctx)
	require.NoError(t, err)
	coll, err := events.QueryCollection(Event{Stream: "s"}).Limit(3).Page(ctx, events.Target())
	require.NoError(t, err)
	sharded, err := posts.QueryIndex("GSI1", Post{}).Limit(6).Page(ctx)
	require.NoError(t, err)
	// The first shard that has a key in the cursor: its partition is
	// FEED#shard_N; move it to another shard.
	shardCur := sharded.Cursor
	for n := 0; n < 4; n++ {
		raw, _ := base64.RawURLEncoding.DecodeString(shardCur)
		if bytes.Contains(raw, []byte(fmt.Sprintf("FEED#shard_%d", n))) {
			shardCur = forgePlainCursor(t, shardCur, fmt.Sprintf("FEED#shard_%d", n), fmt.Sprintf("FEED#shard_%d", (n+1)%4))
			break
		}
	}
	require.NotEqual(t, sharded.Cursor, shardCur)

	c.requests.Store(0)
	for name, read := range map[string]func() error{
		"table": func() error {
			_, err := events.Query(Event{Stream: "s"}).Limit(3).After(forgePlainCursor(t, table.Cursor, "STREAM#s", "STREAM#t")).Page(ctx)
			return err
		},
		"index": func() error {
			_, err := events.QueryIndex("GSI1", Event{Kind: "k"}).Limit(3).After(forgePlainCursor(t, index.Cursor, "KIND#k", "KIND#j")).Page(ctx)
			return err
		},
		"collection": func() error {
			_, err := events.QueryCollection(Event{Stream: "s"}).Limit(3).After(forgePlainCursor(t, coll.Cursor, "STREAM#s", "STREAM#t")).Page(ctx, events.Target())
			return err
		},
		"sharded index": func() error {
			_, err := posts.QueryIndex("GSI1", Post{}).Limit(6).After(shardCur).Page(ctx)
			return err
		},
	} {
		assert.ErrorIs(t, read(), singletable.ErrInvalidCursor, name)
	}
	assert.Zero(t, c.requests.Load(), "forged cursors must be refused before any request")

	// The cursors as issued still resume.
	next, err := events.Query(Event{Stream: "s"}).Limit(3).After(table.Cursor).Page(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, next.Items[0].Seq)
	_, err = posts.QueryIndex("GSI1", Post{}).Limit(6).After(sharded.Cursor).Page(ctx)
	require.NoError(t, err)
}

// TestCursorOtherSortCondition: the cursor binding covers the partition
// and direction, not the sort condition, so a cursor can be reused with
// another one. When the cursor's key is outside the new condition it is
// ErrInvalidCursor before any request (DynamoDB would answer with a raw
// ValidationException); when the key is inside it, the query resumes.
func TestCursorOtherSortCondition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[Event]
	var posts *singletable.Repo[Post]
	_, c := newTable(t, func(tbl *singletable.Table) {
		events = singletable.MustBind(tbl, Events)
		posts = singletable.MustBind(tbl, Posts)
	})
	var items []Event
	for i := 0; i < 30; i++ {
		items = append(items, Event{Stream: "s", Seq: i, Kind: "k"})
	}
	putEach(t, events, items)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var ps []Post
	for i := 0; i < 12; i++ {
		ps = append(ps, Post{Author: "a", ID: i, At: base.Add(time.Duration(i) * time.Hour)})
	}
	putEach(t, posts, ps)

	// Pages ending at Seq 14 on the table and on the index.
	table, err := events.Query(Event{Stream: "s"}).Where("Seq", singletable.Ge, 10).Limit(5).Page(ctx)
	require.NoError(t, err)
	index, err := events.QueryIndex("GSI1", Event{Kind: "k"}).Where("Seq", singletable.Ge, 10).Limit(5).Page(ctx)
	require.NoError(t, err)
	sharded, err := posts.QueryIndex("GSI1", Post{}).Where("At", singletable.Ge, base.Add(6*time.Hour)).Limit(3).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, table.Cursor)
	require.NotEmpty(t, index.Cursor)
	require.NotEmpty(t, sharded.Cursor)

	c.requests.Store(0)
	bad := map[string]*singletable.Query[Event]{
		"table Lt":      events.Query(Event{Stream: "s"}).Where("Seq", singletable.Lt, 5).After(table.Cursor),
		"table Eq":      events.Query(Event{Stream: "s"}).Where("Seq", singletable.Eq, 3).After(table.Cursor),
		"table Gt":      events.Query(Event{Stream: "s"}).Where("Seq", singletable.Gt, 20).After(table.Cursor),
		"table Between": events.Query(Event{Stream: "s"}).Between("Seq", 2, 8).After(table.Cursor),
		"index Le":      events.QueryIndex("GSI1", Event{Kind: "k"}).Where("Seq", singletable.Le, 5).After(index.Cursor),
		"index Between": events.QueryIndex("GSI1", Event{Kind: "k"}).Between("Seq", 20, 25).After(index.Cursor),
	}
	for name, q := range bad {
		_, err := q.Page(ctx)
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor, name)
	}
	_, err = posts.QueryIndex("GSI1", Post{}).Where("At", singletable.Lt, base.Add(2*time.Hour)).After(sharded.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "sharded index Lt")
	assert.Zero(t, c.requests.Load(), "a cursor outside the sort condition must be refused before any request")

	// The same query resumes; so does a condition that still holds the
	// cursor's key, and the query without a sort condition.
	for name, q := range map[string]*singletable.Query[Event]{
		"same":  events.Query(Event{Stream: "s"}).Where("Seq", singletable.Ge, 10).Limit(5).After(table.Cursor),
		"wider": events.Query(Event{Stream: "s"}).Where("Seq", singletable.Ge, 2).Limit(5).After(table.Cursor),
		"none":  events.Query(Event{Stream: "s"}).Limit(5).After(table.Cursor),
	} {
		page, err := q.Page(ctx)
		require.NoError(t, err, name)
		require.NotEmpty(t, page.Items, name)
		assert.Equal(t, 15, page.Items[0].Seq, name)
	}
	next, err := posts.QueryIndex("GSI1", Post{}).Where("At", singletable.Ge, base.Add(6*time.Hour)).Limit(3).After(sharded.Cursor).Page(ctx)
	require.NoError(t, err)
	assert.Equal(t, 9, next.Items[0].ID)
}
