package singletable

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// Scan reads every item of one entity in the table ([Scan API]): the
// admin reads that have no partition to query ("list all users", usage
// statistics). Build it with [Repo.Scan]; it takes the builder vocabulary
// of [Query] (Filter, Fields, Limit, PageSize, After, ConsistentRead) and
// adds segments: [Scan.Segment] reads one segment of a parallel scan (one
// per worker, each with its own cursors), [Scan.Segments] makes All,
// Collect and Count read n segments at once.
//
// A scan reads (and bills) the whole table: items of other entities are
// read and dropped by a filter on the entity type attribute, as a Query's
// are. Builder methods return a copy and record mistakes, which the final
// call reports before sending anything.
//
// [Scan API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Scan.html
type Scan[T any] struct {
	r *Repo[T]
	s scanSpec
}

// TableScan reads every item of the table, whatever its entity type,
// routing each to the [Target] made for its entity as a [Collection] does
// (an item no target accepts is an *UnknownTypeError unless
// [TableScan.SkipUnknown] is set). Build it with [Table.Scan]; it has the
// builder methods of [Scan].
type TableScan struct {
	t           *Table
	s           scanSpec
	skipUnknown bool
}

// scanSpec is what a Scan and a TableScan are built from.
type scanSpec struct {
	segment, total int // Segment(segment, total); total 0: the whole table
	workers        int // Segments(n)
	filter         *expression.ConditionBuilder
	project        []string
	limit          int
	pageSize       int32
	after          string
	consistent     bool
	errs           []error
}

// Scan starts a scan of r's items.
func (r *Repo[T]) Scan() *Scan[T] { return &Scan[T]{r: r} }

// Scan starts a scan of every item of the table.
func (t *Table) Scan() *TableScan { return &TableScan{t: t} }

func (s scanSpec) clone() scanSpec {
	s.errs = slices.Clone(s.errs)
	s.project = slices.Clone(s.project)
	return s
}

func (s *scanSpec) segmentOf(i, total int) {
	if total < 1 || total > 1000000 || i < 0 || i >= total {
		s.errs = append(s.errs, validationErr("", "", "scan: Segment(%d, %d): total must be 1 to 1,000,000 and the segment 0 to total-1", i, total))
	}
	s.segment, s.total = i, total
}

func (s *scanSpec) segmentsOf(n int) {
	if n < 1 || n > 1000000 {
		s.errs = append(s.errs, validationErr("", "", "scan: Segments(%d): must be 1 to 1,000,000", n))
	}
	s.workers = n
}

func (s *scanSpec) filterBy(cond expression.ConditionBuilder) {
	if s.filter != nil {
		f := s.filter.And(cond)
		s.filter = &f
	} else {
		s.filter = &cond
	}
}

func (s *scanSpec) limitTo(n int) {
	if n < 0 {
		s.errs = append(s.errs, validationErr("", "", "scan: negative Limit"))
	}
	s.limit = n
}

func (s *scanSpec) pageSizeOf(n int) {
	if n < 1 || n > 1<<30 {
		s.errs = append(s.errs, validationErr("", "", "scan: PageSize must be positive"))
	}
	s.pageSize = int32(n)
}

// Segment makes the scan read segment i of total (0 <= i < total), as
// one worker of a parallel scan: every item is in exactly one segment.
// Each segment pages with its own cursors.
func (q *Scan[T]) Segment(i, total int) *Scan[T] {
	c := q.clone()
	c.s.segmentOf(i, total)
	return c
}

// Segments makes All, Collect and Count read the table as n segments at
// once, one goroutine each; items arrive in no fixed order, and All holds
// at most one response per segment plus the one it is yielding. A page
// is read from one segment: Page and After take [Scan.Segment] instead.
func (q *Scan[T]) Segments(n int) *Scan[T] {
	c := q.clone()
	c.s.segmentsOf(n)
	return c
}

// Filter adds a filter applied after reading (FilterExpression), joined
// with AND to any filter already given, naming fields by their Go names
// as [Query.Filter] does. Items it drops are still read and billed, and
// do not count towards Limit.
func (q *Scan[T]) Filter(cond expression.ConditionBuilder) *Scan[T] {
	c := q.clone()
	c.s.filterBy(cond)
	return c
}

// Fields limits the attributes read to the named Go fields (plus the
// keys), as [Query.Fields] does.
func (q *Scan[T]) Fields(names ...string) *Scan[T] {
	c := q.clone()
	c.s.project = append(c.s.project, names...)
	return c
}

// Limit caps the items returned: a page holds exactly n items unless the
// scan runs out, however many the filters drop; All and Collect stop
// after n.
func (q *Scan[T]) Limit(n int) *Scan[T] { c := q.clone(); c.s.limitTo(n); return c }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Scan[T]) PageSize(n int) *Scan[T] { c := q.clone(); c.s.pageSizeOf(n); return c }

// After resumes the scan after the last item of the page that returned
// cursor; an empty cursor starts from the beginning. A cursor from another
// scan (another entity, another segment) is [ErrInvalidCursor].
func (q *Scan[T]) After(cursor string) *Scan[T] { c := q.clone(); c.s.after = cursor; return c }

// ConsistentRead asks for strongly consistent reads.
func (q *Scan[T]) ConsistentRead() *Scan[T] { c := q.clone(); c.s.consistent = true; return c }

func (q *Scan[T]) clone() *Scan[T] { return &Scan[T]{r: q.r, s: q.s.clone()} }

// Segment is [Scan.Segment].
func (q *TableScan) Segment(i, total int) *TableScan {
	c := q.clone()
	c.s.segmentOf(i, total)
	return c
}

// Segments is [Scan.Segments].
func (q *TableScan) Segments(n int) *TableScan {
	c := q.clone()
	c.s.segmentsOf(n)
	return c
}

// Filter is [Scan.Filter], resolving names against the targets as
// [Collection.Filter] does.
func (q *TableScan) Filter(cond expression.ConditionBuilder) *TableScan {
	c := q.clone()
	c.s.filterBy(cond)
	return c
}

// Fields is [Scan.Fields], resolving names against the targets as
// [Collection.Fields] does.
func (q *TableScan) Fields(names ...string) *TableScan {
	c := q.clone()
	c.s.project = append(c.s.project, names...)
	return c
}

// Limit is [Scan.Limit]; skipped items do not count.
func (q *TableScan) Limit(n int) *TableScan { c := q.clone(); c.s.limitTo(n); return c }

// PageSize is [Scan.PageSize].
func (q *TableScan) PageSize(n int) *TableScan { c := q.clone(); c.s.pageSizeOf(n); return c }

// After is [Scan.After].
func (q *TableScan) After(cursor string) *TableScan { c := q.clone(); c.s.after = cursor; return c }

// ConsistentRead is [Scan.ConsistentRead].
func (q *TableScan) ConsistentRead() *TableScan { c := q.clone(); c.s.consistent = true; return c }

// SkipUnknown makes items that no target accepts be skipped, as
// [Collection.SkipUnknown] does.
func (q *TableScan) SkipUnknown() *TableScan { c := q.clone(); c.skipUnknown = true; return c }

func (q *TableScan) clone() *TableScan {
	return &TableScan{t: q.t, s: q.s.clone(), skipUnknown: q.skipUnknown}
}

// scanPlan is a validated scan: one reader per segment to read.
type scanPlan struct {
	readers []*reader
}

// plan builds the scan's requests. reading names the scan in errors and
// cursors (an entity type, or "" for the table); typeFilter, when set, is
// the entity type the items must carry; names resolves the filter's
// names and project the projection's; counts tells the items a lookahead
// counts, skipping whether some items are skipped. count plans a Select
// COUNT, paging a Page.
func (s *scanSpec) plan(t *Table, reading string, typeFilter func(*expr.Builder) string, names expr.Resolver, project func([]string) ([]string, error), counts func(map[string]types.AttributeValue) bool, skipping, count, paging bool) (*scanPlan, error) {
	errs := slices.Clone(s.errs)
	if s.workers > 0 && s.total > 0 {
		errs = append(errs, validationErr(reading, "", "scan: Segment and Segments do not combine: a worker reading one segment takes Segment(i, n)"))
	}
	if s.workers > 1 && s.after != "" {
		errs = append(errs, validationErr(reading, "", "scan: After resumes one segment: use Segment(i, n) to page a parallel scan"))
	}
	if s.workers > 1 && paging {
		errs = append(errs, validationErr(reading, "", "scan: a page is read from one segment: use Segment(i, n), or All and Collect with Segments"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var b expr.Builder
	var filter string
	if typeFilter != nil {
		filter = typeFilter(&b)
	}
	if s.filter != nil {
		user, err := b.Conditions(names, *s.filter)
		if err != nil {
			return nil, condErr(reading, "bad scan filter", err)
		}
		if filter != "" {
			filter = expr.And(filter, user)
		} else {
			filter = user
		}
	}
	keyAttrs := t.primaryKeyAttrs()
	in := &dynamodb.ScanInput{TableName: &t.name}
	if filter != "" {
		in.FilterExpression = &filter
	}
	if len(s.project) > 0 && !count {
		attrs, err := project(s.project)
		if err != nil {
			return nil, err
		}
		in.ProjectionExpression = aws.String(b.Projection(append(attrs, keyAttrs...)...))
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
	if err := checkExprLimits(reading, exprParts{kinds: []string{"filter", "projection"},
		exprs: []*string{in.FilterExpression, in.ProjectionExpression},
		names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}); err != nil {
		return nil, err
	}
	if s.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	if count {
		in.Select = types.SelectCount
	}
	what := "scan"
	if reading != "" {
		what = "scan " + reading
	}
	newReader := func(in *dynamodb.ScanInput) *reader {
		seg := "all"
		if in.TotalSegments != nil {
			seg = strconv.Itoa(int(*in.Segment)) + "/" + strconv.Itoa(int(*in.TotalSegments))
		}
		return &reader{
			t:          t,
			entity:     reading,
			src:        source{scan: in},
			limit:      s.limit,
			size:       s.pageSize == 0 && s.filter == nil && !skipping,
			probeOne:   filter == "",
			bind:       cursorBinding(t.name, "", "\x00scan", reading, seg),
			cursorKeys: keyAttrs,
			what:       what,
			counts:     counts,
		}
	}
	p := &scanPlan{}
	switch {
	case s.total > 0:
		in.Segment, in.TotalSegments = aws.Int32(int32(s.segment)), aws.Int32(int32(s.total))
		p.readers = []*reader{newReader(in)}
	case s.workers > 1:
		for i := range s.workers {
			si := *in
			si.Segment, si.TotalSegments = aws.Int32(int32(i)), aws.Int32(int32(s.workers))
			p.readers = append(p.readers, newReader(&si))
		}
	default:
		p.readers = []*reader{newReader(in)}
	}
	if s.after != "" {
		rd := p.readers[0]
		start, err := t.decodeCursor(s.after, rd.bind, rd.cursorKeys)
		if err != nil {
			return nil, err
		}
		in.ExclusiveStartKey = start
	}
	return p, nil
}

func (q *Scan[T]) plan(count, paging bool) (*scanPlan, error) {
	r := q.r
	// An entity matching keys also reads items without the type attribute
	// (the filter cannot parse keys), so those whose key is not its own
	// are skipped here.
	return q.s.plan(r.t, r.e.name, func(b *expr.Builder) string { return r.e.typeFilter(b, &r.t.opts) },
		r.e.condNames(r.t, "filter"), r.projectionAttrs, q.mine, r.e.foreign.matchKeys, count, paging)
}

// mine reports whether a scanned item is the entity's: always, unless the
// entity matches keys and the item is untyped with a key of another shape.
func (q *Scan[T]) mine(item map[string]types.AttributeValue) bool {
	return !q.r.e.foreign.matchKeys || q.r.e.owns(&q.r.t.opts, item)
}

func (q *TableScan) plan(targets []*Target, needTargets, count, paging bool) (*scanPlan, *router, error) {
	rt, errs := newRouter(q.t, targets, needTargets, q.skipUnknown)
	if len(errs) > 0 {
		q2 := q.clone()
		q2.s.errs = append(q2.s.errs, errs...)
		q = q2
	}
	project := func(fields []string) ([]string, error) { return mixedProjection(q.t, targets, fields, nil) }
	p, err := q.s.plan(q.t, "", nil, collectionNames(q.t, targets), project, rt.counts, q.skipUnknown, count, paging)
	return p, rt, err
}

// Page returns one page of r's items: with Limit(n) exactly n unless the
// scan (or its segment) runs out, without it the items of one response
// (reading on past responses that the filters emptied). The cursor is ""
// when no item follows.
func (q *Scan[T]) Page(ctx context.Context) (Page[T], error) {
	var page Page[T]
	p, err := q.plan(false, true)
	if err != nil {
		return page, err
	}
	page.Cursor, err = p.readers[0].page(ctx, func(item map[string]types.AttributeValue) (bool, error) {
		if !q.mine(item) {
			return false, nil
		}
		n := len(page.Items)
		page.Items = append(page.Items, *new(T))
		return true, q.r.e.decodeInto(q.r.t, item, &page.Items[n])
	})
	if err != nil {
		return Page[T]{}, err
	}
	return page, nil
}

// All returns an iterator over r's items (at most Limit), reading one
// response at a time: only the response being yielded is held (with
// Segments(n), one per segment). It stops after yielding an error; each
// use scans again.
func (q *Scan[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		p, err := q.plan(false, false)
		if err != nil {
			yield(zero, err)
			return
		}
		take := func(item map[string]types.AttributeValue) (bool, error) {
			if !q.mine(item) {
				return false, nil
			}
			v, err := q.r.e.decode(q.r.t, item)
			if err != nil {
				return false, err
			}
			if !yield(v, nil) {
				return true, errStop
			}
			return true, nil
		}
		if err := readAll(ctx, p, q.s.limit, take); err != nil {
			yield(zero, err)
		}
	}
}

// Collect reads every item the scan returns (at most Limit) into a slice.
func (q *Scan[T]) Collect(ctx context.Context) ([]T, error) {
	var out []T
	for v, err := range q.All(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Count returns how many of r's items the scan matches (after filters),
// reading with Select COUNT so no item is sent back. Limit is ignored.
// For an entity matching keys ([Schema].MatchKeys) untyped items must be
// told apart by their keys, so the items are read (keys only) and counted.
func (q *Scan[T]) Count(ctx context.Context) (int, error) {
	if q.r.e.foreign.matchKeys {
		n := 0
		for _, err := range q.Fields().All(ctx) {
			if err != nil {
				return 0, err
			}
			n++
		}
		return n, nil
	}
	p, err := q.plan(true, false)
	if err != nil {
		return 0, err
	}
	return countAll(ctx, p)
}

// Request returns the ScanInput the scan sends first (the first
// segment's, with Segments), without sending it. With Limit(n) and no
// Filter or PageSize it asks for n+1 items, as Page and All send.
func (q *Scan[T]) Request() (*dynamodb.ScanInput, error) {
	p, err := q.plan(false, false)
	if err != nil {
		return nil, err
	}
	p.readers[0].sizeNext(0)
	return p.readers[0].src.scan, nil
}

// Page reads one page into the targets and returns the items delivered,
// as decoded values in read order, as [Collection.Page] does.
func (q *TableScan) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	var page Page[any]
	p, rt, err := q.plan(targets, true, false, true)
	if err != nil {
		return page, err
	}
	page.Cursor, err = p.readers[0].page(ctx, func(item map[string]types.AttributeValue) (bool, error) {
		v, ok, err := rt.route(item)
		if ok {
			page.Items = append(page.Items, v)
		}
		return ok, err
	})
	if err != nil {
		return Page[any]{}, err
	}
	return page, nil
}

// All returns an iterator over the table's items (at most Limit), each
// delivered to its target and yielded as the decoded value, as
// [Collection.All] does; it holds one response at a time (with
// Segments(n), one per segment). Targets are used by the iterating
// goroutine only, with or without Segments.
func (q *TableScan) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		p, rt, err := q.plan(targets, true, false, false)
		if err != nil {
			yield(nil, err)
			return
		}
		if err := readAll(ctx, p, q.s.limit, routeYield(rt, yield)); err != nil {
			yield(nil, err)
		}
	}
}

// Collect reads every item (at most Limit) into the targets and returns
// the items delivered, as [Collection.Collect] does.
func (q *TableScan) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	var out []any
	for v, err := range q.All(ctx, targets...) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Count returns how many items of any type the scan matches (after
// filters) with Select COUNT; targets, optional, resolve a filter's names.
func (q *TableScan) Count(ctx context.Context, targets ...*Target) (int, error) {
	p, _, err := q.plan(targets, false, true, false)
	if err != nil {
		return 0, err
	}
	return countAll(ctx, p)
}

// Request returns the ScanInput the scan sends first, as [Scan.Request]
// does; targets are optional here and only checked.
func (q *TableScan) Request(targets ...*Target) (*dynamodb.ScanInput, error) {
	p, _, err := q.plan(targets, false, false, false)
	if err != nil {
		return nil, err
	}
	p.readers[0].sizeNext(0)
	return p.readers[0].src.scan, nil
}

// readAll reads every reader's items into take (at most limit): in this
// goroutine for one reader, else one goroutine per segment sending whole
// responses to this one, which alone calls take.
func readAll(ctx context.Context, p *scanPlan, limit int, take takeFn) error {
	if len(p.readers) == 1 {
		return p.readers[0].all(ctx, take)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type response struct {
		items []map[string]types.AttributeValue
		err   error
	}
	ch := make(chan response)
	var wg sync.WaitGroup
	for _, rd := range p.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.sizeNext(0)
			for {
				items, next, _, err := rd.src.send(ctx, rd.t.api(ctx, rd.entity))
				if err != nil {
					err = rd.sendErr(err)
				}
				select {
				case ch <- response{items, err}:
				case <-ctx.Done():
					return
				}
				if err != nil || next == nil {
					return
				}
				rd.src.setStart(next)
			}
		}()
	}
	go func() { wg.Wait(); close(ch) }()
	// Whatever ends the read, the workers stop (cancel) and the channel
	// is drained so none stays blocked.
	defer func() {
		cancel()
		for range ch {
		}
	}()
	delivered := 0
	for resp := range ch {
		if resp.err != nil {
			return resp.err
		}
		for _, item := range resp.items {
			ok, err := take(item)
			if err == errStop {
				return nil
			}
			if err != nil {
				return err
			}
			if ok {
				delivered++
				if limit > 0 && delivered == limit {
					return nil
				}
			}
		}
	}
	return nil
}

// countAll sums the readers' counts, one goroutine per segment.
func countAll(ctx context.Context, p *scanPlan) (int, error) {
	if len(p.readers) == 1 {
		return p.readers[0].count(ctx)
	}
	counts := make([]int, len(p.readers))
	errs := make([]error, len(p.readers))
	var wg sync.WaitGroup
	for i, rd := range p.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = rd.count(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, nil
}
