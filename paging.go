package singletable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// feed is what the loop reads from.
type feed interface {
	// next returns the next items read and whether they are the last;
	// want is how many items the read still wants (0: no limit).
	next(ctx context.Context, want int) (items []map[string]types.AttributeValue, last bool, err error)
}

// pager is a feed a page can end in.
type pager interface {
	feed
	// ahead reports whether an item that counts follows those next
	// returned: a lookahead, which sends requests.
	ahead(ctx context.Context, counts func(map[string]types.AttributeValue) bool) (bool, error)
	// cursor resumes after item, the page's last, or, item nil, after
	// everything next returned.
	cursor(item map[string]types.AttributeValue) (string, error)
}

// takeFn takes one item read; taken is false when the item was skipped.
// left, how many items the read may still take from this response, is a
// hint to grow a slice once. errStop ends the read without error.
type takeFn func(item map[string]types.AttributeValue, left int) (taken bool, err error)

// errStop is a takeFn's way to end a read (the caller's loop broke).
var errStop = errors.New("singletable: read stopped")

// pageEnd ends the pages of a read: nil for a read of every item (All).
type pageEnd struct {
	f      pager
	counts func(map[string]types.AttributeValue) bool // whether an item would be taken
}

// paginate, the loop every read pages through, reads f's items into take,
// at most limit (0: every item). With a pageEnd it reads one page (without
// limit, one response's items) and returns its cursor.
func paginate(ctx context.Context, f feed, limit int, take takeFn, end *pageEnd) (string, error) {
	taken := 0
	for {
		want := 0
		if limit > 0 {
			want = limit - taken
		}
		items, last, err := f.next(ctx, want)
		if err != nil {
			return "", err
		}
		for i, item := range items {
			left := len(items) - i
			if want > 0 {
				left = min(left, limit-taken)
			}
			ok, err := take(item, left)
			if err == errStop {
				return "", nil
			}
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
			taken++
			if taken == limit {
				return end.cursor(ctx, items[i+1:], last, item)
			}
		}
		if last {
			return "", nil
		}
		if limit == 0 && taken > 0 && end != nil {
			return end.cursor(ctx, nil, false, nil)
		}
	}
}

// cursor is the exact fit: the cursor after item (nil: after the
// response), "" unless an item that counts follows in rest or read ahead.
func (e *pageEnd) cursor(ctx context.Context, rest []map[string]types.AttributeValue, last bool, item map[string]types.AttributeValue) (string, error) {
	if e == nil {
		return "", nil
	}
	if !slices.ContainsFunc(rest, e.counts) {
		if last {
			return "", nil
		}
		more, err := e.f.ahead(ctx, e.counts)
		if err != nil || !more {
			return "", err
		}
	}
	return e.f.cursor(item)
}

// DecodeError reports an item a read selected but could not decode, or an
// untyped item its key shape selected whose key does not parse
// (docs/adopting.md). The read goes on without it unless
// [ReadOptions].StrictDecode.
type DecodeError struct {
	Entity string                          // the entity the item was read as
	Key    map[string]types.AttributeValue // the item's primary key, none of its other values
	// Err is a *ValidationError (Reason "cannot decode item") holding a
	// *KeyError or the codec's error.
	Err  error
	keys keyNames
}

// Error names the entity, the item's key and why.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("singletable: %s item %s not decoded: %v", e.Entity, e.keys.text(e.Key), e.Err)
}

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// undecoded makes err, item's decode error, a *DecodeError.
func (r *repo) undecoded(item map[string]types.AttributeValue, err error) error {
	return &DecodeError{Entity: r.e.name, Key: r.t.primaryKeyOf(item), Err: err, keys: r.t.keyNames()}
}

// skip takes err, an item's: a *DecodeError a read goes on after (not
// strict) is added to *skipped; any other error is returned.
func skip(err error, strict bool, skipped *[]*DecodeError) error {
	de, ok := err.(*DecodeError)
	if !ok || strict {
		return err
	}
	*skipped = append(*skipped, de)
	return nil
}

// pageOf reads one page of r's items from f, decoded in place.
func pageOf[T any](ctx context.Context, f pager, limit int, r *Repo[T], strict bool) (Page[T], error) {
	var page Page[T]
	ws := wirePage(f, r)
	if ws != nil {
		defer ws.Release()
	}
	cursor, err := paginate(ctx, f, limit, func(item map[string]types.AttributeValue, left int) (bool, error) {
		if ws != nil && ws.Filled {
			return takeWire(r, ws, &page, left, strict)
		}
		if !r.mine(item) {
			return false, skip(r.selected(item), strict, &page.Skipped)
		}
		n := len(page.Items)
		if n == cap(page.Items) {
			page.Items = slices.Grow(page.Items, left)
		}
		page.Items = page.Items[:n+1]
		if err := r.e.decodeInto(r.t, item, &page.Items[n]); err != nil {
			var zero T // the next item decodes into this element
			page.Items[n], page.Items = zero, page.Items[:n]
			return false, skip(r.undecoded(item, err), strict, &page.Skipped)
		}
		return true, nil
	}, &pageEnd{f: f, counts: r.accounts})
	if err != nil {
		return Page[T]{}, err
	}
	page.Cursor = cursor
	return page, nil
}

// take decodes an item of a read of r's items; ok is false for another's.
func (r *Repo[T]) take(item map[string]types.AttributeValue) (v T, ok bool, err error) {
	if !r.mine(item) {
		return v, false, r.selected(item)
	}
	if v, err = r.e.decode(r.t, item); err != nil {
		var zero T
		return zero, false, r.undecoded(item, err)
	}
	return v, true, nil
}

// page reads one page of f into rt's targets.
func (rt *router) page(ctx context.Context, f pager, limit int, strict bool) (Page[any], error) {
	var page Page[any]
	cursor, err := paginate(ctx, f, limit, func(item map[string]types.AttributeValue, _ int) (bool, error) {
		v, ok, err := rt.route(item)
		if ok {
			page.Items = append(page.Items, v)
		}
		return ok, skip(err, strict, &page.Skipped)
	}, &pageEnd{f: f, counts: rt.counts})
	if err != nil {
		return Page[any]{}, err
	}
	page.Cursor = cursor
	return page, nil
}

// yielder is the takeFn of an iterator yielding the values take makes; a
// *DecodeError is yielded and the read goes on, unless strict.
func yielder[V any](take func(map[string]types.AttributeValue) (V, bool, error), yield func(V, error) bool, strict bool) takeFn {
	return func(item map[string]types.AttributeValue, _ int) (bool, error) {
		v, ok, err := take(item)
		if de, isDE := err.(*DecodeError); isDE && !strict {
			if !yield(v, de) {
				return false, errStop
			}
			return false, nil
		}
		if err != nil || !ok {
			return false, err
		}
		if !yield(v, nil) {
			return true, errStop
		}
		return true, nil
	}
}

// seqOf is the iterator of a read: run yields the items and returns the
// error that ends the read, yielded last.
func seqOf[V any](run func(yield func(V, error) bool) error) iter.Seq2[V, error] {
	return func(yield func(V, error) bool) {
		if err := run(yield); err != nil {
			var zero V
			yield(zero, err)
		}
	}
}

// collect gathers what an iterator yields, stopping at the first error.
func collect[V any](seq iter.Seq2[V, error]) ([]V, error) {
	var out []V
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// source is the input of a request, a Query or a Scan.
type source struct {
	query *dynamodb.QueryInput
	scan  *dynamodb.ScanInput
	start *map[string]types.AttributeValue // ExclusiveStartKey
	limit **int32                          // Limit
}

func querySource(in *dynamodb.QueryInput) source {
	return source{query: in, start: &in.ExclusiveStartKey, limit: &in.Limit}
}

func scanSource(in *dynamodb.ScanInput) source {
	return source{scan: in, start: &in.ExclusiveStartKey, limit: &in.Limit}
}

// clone copies the input (not the maps it shares), for a lookahead.
func (s source) clone() source {
	if s.query != nil {
		q := *s.query
		return querySource(&q)
	}
	sc := *s.scan
	return scanSource(&sc)
}

// send sends the request once.
func (s source) send(ctx context.Context, c Client) (items []map[string]types.AttributeValue, next map[string]types.AttributeValue, count int32, err error) {
	if s.query != nil {
		out, err := c.Query(ctx, s.query)
		if err != nil {
			return nil, nil, 0, err
		}
		return out.Items, out.LastEvaluatedKey, out.Count, nil
	}
	out, err := c.Scan(ctx, s.scan)
	if err != nil {
		return nil, nil, 0, err
	}
	return out.Items, out.LastEvaluatedKey, out.Count, nil
}

// keysOnly makes a count read the keys and entity type of the items
// instead of Select COUNT, for an entity matching keys (see repo.mine).
func (s source) keysOnly(o *TableOptions) {
	keys := func(names map[string]string) (types.Select, *string, map[string]string) {
		names = maps.Clone(names)
		if names == nil {
			names = make(map[string]string, 3)
		}
		refs := make([]string, 0, 3)
		for i, a := range []string{o.PartitionKey, o.SortKey, o.EntityTypeAttr} {
			if a != "" {
				ref := fmt.Sprintf("#k%d", i)
				names[ref] = a
				refs = append(refs, ref)
			}
		}
		return types.SelectSpecificAttributes, aws.String(strings.Join(refs, ", ")), names
	}
	if s.query != nil {
		s.query.Select, s.query.ProjectionExpression, s.query.ExpressionAttributeNames = keys(s.query.ExpressionAttributeNames)
	} else {
		s.scan.Select, s.scan.ProjectionExpression, s.scan.ExpressionAttributeNames = keys(s.scan.ExpressionAttributeNames)
	}
}

// request is the feed of one Query or Scan, sent page after page.
type request struct {
	t      *Table
	src    source
	entity string // the entity read, for the Observe hook; "" for several
	what   string // names the read in errors: "query User", "collection query"
	// size makes each request ask for the items still wanted plus one, so
	// that a read ending with the page says so (every item read counts).
	size       bool
	probeOne   bool // a lookahead reads one item first: the next likely counts
	bind       [16]byte
	cursorKeys []string
	whole      wholeFn // nil, or reads each response's items whole (Query.Complete)

	sink  wireFeed                        // set: read on the direct wire path (wire.go)
	sized bool                            // the last request asked for the items wanted plus one
	after map[string]types.AttributeValue // the last response's LastEvaluatedKey
	count int                             // the responses' Count, summed
}

// sizeFor asks for want items plus one, when the request is sized.
func (r *request) sizeFor(want int) {
	r.sized = r.size && want > 0
	if r.sized {
		*r.src.limit = aws.Int32(int32(min(want+1, 1000)))
	}
}

func (r *request) sendErr(err error) error {
	return fmt.Errorf("singletable: %s: %w", r.what, err)
}

func (r *request) next(ctx context.Context, want int) ([]map[string]types.AttributeValue, bool, error) {
	r.sizeFor(want)
	c := r.t.api(ctx, r.entity)
	items, after, count, err := r.src.send(r.direct(ctx, c), c)
	if err == nil && r.whole != nil {
		items, err = r.whole(ctx, items)
	}
	if err != nil {
		return nil, false, r.sendErr(err)
	}
	if r.sink != nil && r.sink.Got().Filled {
		items = r.sink.Got().Heads
	}
	r.count += int(count)
	r.after = after
	if after != nil {
		*r.src.start = after
	}
	return items, after == nil, nil
}

// ahead reads on until an item that counts or the end. With probeOne (and
// the last request not sized) the first request reads one item, the rest
// as the request does: k dropped items cost 1 + k/PageSize requests.
func (r *request) ahead(ctx context.Context, counts func(map[string]types.AttributeValue) bool) (bool, error) {
	probe := r.src.clone()
	if r.probeOne && !r.sized {
		*probe.limit = aws.Int32(1)
	}
	for {
		items, after, _, err := probe.send(ctx, r.t.api(ctx, r.entity))
		if err != nil {
			return false, r.sendErr(err)
		}
		if slices.ContainsFunc(items, counts) {
			return true, nil
		}
		if after == nil {
			return false, nil
		}
		*probe.start, *probe.limit = after, *r.src.limit
	}
}

func (r *request) cursor(item map[string]types.AttributeValue) (string, error) {
	if item == nil {
		item = r.after
	}
	return r.t.cursorCodec().Encode(r.bind, r.cursorKeys, item)
}

// segments is the feed of a parallel scan: one goroutine per segment sends
// whole responses to the reading goroutine, which alone takes the items.
type segments struct {
	ch     chan segmentResponse
	cancel context.CancelFunc
}

type segmentResponse struct {
	items []map[string]types.AttributeValue
	err   error
}

// readSegments starts reading reqs, one goroutine each, want items each.
func readSegments(ctx context.Context, reqs []*request, want int) *segments {
	ctx, cancel := context.WithCancel(ctx)
	s := &segments{ch: make(chan segmentResponse), cancel: cancel}
	var g errgroup.Group
	for _, r := range reqs {
		g.Go(func() error {
			for {
				items, last, err := r.next(ctx, want)
				select {
				case s.ch <- segmentResponse{items, err}:
				case <-ctx.Done():
					return nil
				}
				if err != nil || last {
					return nil
				}
			}
		})
	}
	go func() { _ = g.Wait(); close(s.ch) }()
	return s
}

func (s *segments) next(context.Context, int) ([]map[string]types.AttributeValue, bool, error) {
	resp, ok := <-s.ch
	return resp.items, !ok, resp.err
}

// close stops the workers and drains the channel, so that none blocks.
func (s *segments) close() {
	s.cancel()
	for range s.ch {
	}
}

// readAll reads every item of reqs (at most limit) into take: in this
// goroutine for one request, else one goroutine per segment.
func readAll(ctx context.Context, reqs []*request, limit int, take takeFn) error {
	var f feed = reqs[0]
	if len(reqs) > 1 {
		s := readSegments(ctx, reqs, limit)
		defer s.close()
		f = s
	}
	_, err := paginate(ctx, f, limit, take, nil)
	return err
}

// count counts what reqs match, one goroutine per request: the responses'
// Count or, with counts (see keysOnly), the items counts accepts.
func count(ctx context.Context, reqs []*request, counts func(map[string]types.AttributeValue) bool) (int, error) {
	var total atomic.Int64
	var g errgroup.Group
	for _, r := range reqs {
		g.Go(func() error {
			for {
				items, last, err := r.next(ctx, 0)
				if err != nil {
					return err
				}
				for _, item := range items {
					if counts != nil && counts(item) {
						total.Add(1)
					}
				}
				if last {
					if counts == nil {
						total.Add(int64(r.count))
					}
					return nil
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return int(total.Load()), nil
}
