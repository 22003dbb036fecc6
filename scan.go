package singletable

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
)

// Scan reads every item of one entity in the table or an index ([Scan
// API]): it reads (and bills) the whole table or index, dropping other
// entities' items by a filter. Builder methods are as [Query]'s.
//
// [Scan API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Scan.html
type Scan[T any] struct {
	r *Repo[T]
	s scanSpec
}

// TableScan reads every item of the table, routing each to the [Target]
// made for its entity as a [Collection] does. Build it with [Table.Scan];
// it has the builder methods of [Scan].
type TableScan struct {
	t           *Table
	s           scanSpec
	skipUnknown bool
}

// scanSpec is what a Scan and a TableScan are built from.
type scanSpec struct {
	readSpec
	segment, total int    // Segment(segment, total); total 0: the whole table
	workers        int    // Segments(n)
	index          string // the index scanned ("": the table)
}

// Scan starts a scan of r's items; optFns are as for [Repo.Query].
func (r *Repo[T]) Scan(optFns ...func(*ReadOptions)) *Scan[T] {
	q := &Scan[T]{r: r, s: scanSpec{readSpec: readSpec{what: "scan: "}}}
	q.s.readOptions(optFns)
	return q
}

// ScanIndex starts a scan of r's items in the named index (a sparse index
// holds only the items with its keys); optFns are as for [Repo.QueryIndex].
func (r *Repo[T]) ScanIndex(index string, optFns ...func(*ReadOptions)) *Scan[T] {
	q := r.Scan(optFns...)
	q.s.index = index
	if _, err := r.e.index(index); err != nil {
		q.s.errs = append(q.s.errs, err)
	}
	return q
}

// Scan starts a scan of every item of the table. optFns are as for
// [Repo.QueryCollection].
func (t *Table) Scan(optFns ...func(*ReadOptions)) *TableScan {
	q := &TableScan{t: t, s: scanSpec{readSpec: readSpec{what: "scan: "}}}
	q.s.readOptions(optFns)
	return q
}

func (s scanSpec) clone() scanSpec {
	s.readSpec = s.readSpec.clone()
	return s
}

func (s *scanSpec) segmentOf(i, total int) {
	if total < 1 || total > 1000000 || i < 0 || i >= total {
		s.fail("Segment(%d, %d): total must be 1 to 1,000,000 and the segment 0 to total-1", i, total)
	}
	s.segment, s.total = i, total
}

func (s *scanSpec) segmentsOf(n int) {
	if n < 1 || n > 1000000 {
		s.fail("Segments(%d): must be 1 to 1,000,000", n)
	}
	s.workers = n
}

// Segment makes the scan read segment i of total (0 <= i < total), as
// one worker of a parallel scan; each segment pages with its own cursors.
func (q *Scan[T]) Segment(i, total int) *Scan[T] { c := q.clone(); c.s.segmentOf(i, total); return c }

// Segments makes All, Collect and Count read n segments at once, one
// goroutine each; items arrive in no fixed order. Page and After take
// [Scan.Segment] instead.
func (q *Scan[T]) Segments(n int) *Scan[T] { c := q.clone(); c.s.segmentsOf(n); return c }

// Filter is [Query.Filter].
func (q *Scan[T]) Filter(cond expression.ConditionBuilder) *Scan[T] {
	c := q.clone()
	c.s.filterBy(cond)
	return c
}

// Limit caps the items returned: a page holds exactly n items unless the
// scan runs out.
func (q *Scan[T]) Limit(n int) *Scan[T] { c := q.clone(); c.s.limitTo(n); return c }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Scan[T]) PageSize(n int) *Scan[T] { c := q.clone(); c.s.pageSizeOf(n); return c }

// After resumes the scan after the page that returned cursor ("": from
// the beginning). A cursor from another scan or segment is [ErrInvalidCursor].
func (q *Scan[T]) After(cursor string) *Scan[T] { c := q.clone(); c.s.after = cursor; return c }

func (q *Scan[T]) clone() *Scan[T] { return &Scan[T]{r: q.r, s: q.s.clone()} }

// Segment is [Scan.Segment].
func (q *TableScan) Segment(i, total int) *TableScan {
	c := q.clone()
	c.s.segmentOf(i, total)
	return c
}

// Segments is [Scan.Segments].
func (q *TableScan) Segments(n int) *TableScan { c := q.clone(); c.s.segmentsOf(n); return c }

// Filter is [Collection.Filter].
func (q *TableScan) Filter(cond expression.ConditionBuilder) *TableScan {
	c := q.clone()
	c.s.filterBy(cond)
	return c
}

// Limit is [Scan.Limit]; skipped items do not count.
func (q *TableScan) Limit(n int) *TableScan { c := q.clone(); c.s.limitTo(n); return c }

// PageSize is [Scan.PageSize].
func (q *TableScan) PageSize(n int) *TableScan { c := q.clone(); c.s.pageSizeOf(n); return c }

// After is [Scan.After].
func (q *TableScan) After(cursor string) *TableScan { c := q.clone(); c.s.after = cursor; return c }

// SkipUnknown is [Collection.SkipUnknown].
func (q *TableScan) SkipUnknown() *TableScan { c := q.clone(); c.skipUnknown = true; return c }

func (q *TableScan) clone() *TableScan {
	return &TableScan{t: q.t, s: q.s.clone(), skipUnknown: q.skipUnknown}
}

// scanned says what a scan reads: one entity's items, or the table's.
type scanned struct {
	entity     string                           // the entity read, "" for the table
	typeFilter func(*expr.Builder) string       // the entity type items must carry; nil for the table
	names      expr.Resolver                    // resolves the filter's names
	project    func([]string) ([]string, error) // resolves the projection's
	skipping   bool                             // whether some items read are skipped
	cursorKeys []string                         // the attributes a cursor holds
	errs       []error                          // the targets' mistakes
}

// plan builds the scan's requests, one per segment to read.
func (s *scanSpec) plan(t *Table, sc scanned, count, paging bool) ([]*request, error) {
	if err := s.check(sc, paging); err != nil {
		return nil, err
	}
	in, err := s.input(t, sc, count)
	if err != nil {
		return nil, err
	}
	what := "scan"
	if sc.entity != "" {
		what = "scan " + sc.entity
	}
	if s.index != "" {
		what += " index " + s.index
	}
	newRequest := func(in *dynamodb.ScanInput) *request {
		seg := "all"
		if in.TotalSegments != nil {
			seg = strconv.Itoa(int(*in.Segment)) + "/" + strconv.Itoa(int(*in.TotalSegments))
		}
		return &request{t: t, src: scanSource(in), entity: sc.entity, what: what,
			size:     s.pageSize == 0 && s.filter == nil && !sc.skipping,
			probeOne: sc.typeFilter == nil && s.filter == nil,
			bind:     cursor.Binding(t.name, s.index, "\x00scan", sc.entity, seg), cursorKeys: sc.cursorKeys}
	}
	if s.workers <= 1 {
		if s.total > 0 {
			in.Segment, in.TotalSegments = aws.Int32(int32(s.segment)), aws.Int32(int32(s.total))
		}
		r := newRequest(in)
		if s.after != "" {
			if in.ExclusiveStartKey, err = t.decodeBoundCursor(s.after, binding{bind: r.bind}, r.cursorKeys, nil, 0); err != nil {
				return nil, err
			}
		}
		return []*request{r}, nil
	}
	reqs := make([]*request, s.workers)
	for i := range reqs {
		si := *in
		si.Segment, si.TotalSegments = aws.Int32(int32(i)), aws.Int32(int32(s.workers))
		reqs[i] = newRequest(&si)
	}
	return reqs, nil
}

// check reports the scan's mistakes.
func (s *scanSpec) check(sc scanned, paging bool) error {
	errs, reading := append(slices.Clone(s.errs), sc.errs...), sc.entity
	if s.workers > 0 && s.total > 0 {
		errs = append(errs, validationErr(reading, "", "scan: Segment and Segments do not combine: a worker reading one segment takes Segment(i, n)"))
	}
	if s.workers > 1 && s.after != "" {
		errs = append(errs, validationErr(reading, "", "scan: After resumes one segment: use Segment(i, n) to page a parallel scan"))
	}
	if s.workers > 1 && paging {
		errs = append(errs, validationErr(reading, "", "scan: a page is read from one segment: use Segment(i, n), or All and Collect with Segments"))
	}
	if s.index != "" && s.consistent {
		errs = append(errs, validationErr(reading, s.index, "global secondary indexes do not support consistent reads"))
	}
	return errors.Join(errs...)
}

// input builds the ScanInput every segment's request starts from.
func (s *scanSpec) input(t *Table, sc scanned, count bool) (*dynamodb.ScanInput, error) {
	var b expr.Builder
	var filter string
	if sc.typeFilter != nil {
		filter = sc.typeFilter(&b)
	}
	if s.filter != nil {
		user, err := b.Conditions(sc.names, *s.filter)
		if err != nil {
			return nil, condErr(sc.entity, "bad scan filter", err)
		}
		filter = expr.And(filter, user)
	}
	in := &dynamodb.ScanInput{TableName: &t.name}
	if s.index != "" {
		in.IndexName = aws.String(s.index)
	}
	if filter != "" {
		in.FilterExpression = &filter
	}
	if len(s.project) > 0 && !count {
		attrs, err := sc.project(s.project)
		if err != nil {
			return nil, err
		}
		in.ProjectionExpression = aws.String(b.Projection(append(attrs, sc.cursorKeys...)...))
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
	if err := checkExprLimits(sc.entity, exprParts{kinds: []string{"filter", "projection"},
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
	return in, nil
}

func (q *Scan[T]) plan(count, paging bool) ([]*request, error) {
	r := q.r
	var idx *indexPlan // nil for the table, or an unknown index check reports
	if q.s.index != "" {
		idx, _ = r.e.index(q.s.index)
	}
	// An entity matching keys skips untyped items whose key is not its own;
	// on an index not holding the entity type, the key shape tells them.
	typeFilter := func(b *expr.Builder) string { return r.e.typeFilter(b, &r.t.opts) }
	byShape := q.reader() != r
	if byShape {
		typeFilter = nil
	}
	project := func(fields []string) ([]string, error) {
		attrs, err := r.projectionAttrs(fields)
		for _, a := range attrs {
			if !r.t.holds(idx, a) && a != r.t.opts.EntityTypeAttr {
				return nil, validationErr(r.e.name, a, "Fields: index %s does not hold attribute %s (projection %s)", idx.name, a, idx.proj)
			}
		}
		return slices.DeleteFunc(attrs, func(a string) bool { return a == r.t.opts.EntityTypeAttr && byShape }), err
	}
	return q.s.plan(r.t, scanned{entity: r.e.name, typeFilter: typeFilter,
		names: r.t.heldNames(r.e.name, idx, r.e.condNames(r.t, "filter", condScope{})), project: project,
		skipping: r.e.foreign.matchKeys || byShape, cursorKeys: r.t.cursorKeys(idx)}, count, paging)
}

// reader is the repository reading the scan's items: on an index that
// does not hold the entity type, one telling them by key shape.
func (q *Scan[T]) reader() *Repo[T] {
	idx, err := q.r.e.index(q.s.index)
	if q.s.index == "" || err != nil || q.r.t.holds(idx, q.r.t.opts.EntityTypeAttr) {
		return q.r
	}
	c := *q.r
	c.byShape = true
	return &c
}

func (q *TableScan) plan(targets []*Target, needTargets, count, paging bool) ([]*request, *router, error) {
	rt, errs := newRouter(q.t, targets, needTargets, q.skipUnknown)
	project := func(fields []string) ([]string, error) { return mixedProjection(q.t, targets, fields, nil) }
	reqs, err := q.s.plan(q.t, scanned{names: collectionNames(q.t, targets, condScope{}), project: project, skipping: q.skipUnknown,
		cursorKeys: q.t.primaryKeyAttrs(), errs: errs}, count, paging)
	return reqs, rt, err
}

// Page returns one page of r's items (of one segment), as [Query.Page] does.
func (q *Scan[T]) Page(ctx context.Context) (Page[T], error) {
	reqs, err := q.plan(false, true)
	if err != nil {
		return Page[T]{}, err
	}
	page, err := pageOf(ctx, reqs[0], q.s.limit, q.reader(), q.s.strict)
	if idx, _ := q.r.e.index(q.s.index); q.s.index != "" && idx != nil && !idx.proj.All() && len(q.s.project) == 0 {
		page.Unprojected = q.r.e.unprojected(q.r.t, idx)
	}
	return page, err
}

// All returns an iterator over r's items (at most Limit), holding one
// response at a time (per segment), as [Query.All] does; each use scans again.
func (q *Scan[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return seqOf(func(yield func(T, error) bool) error {
		reqs, err := q.plan(false, false)
		if err != nil {
			return err
		}
		return readAll(ctx, reqs, q.s.limit, yielder(q.reader().take, yield, q.s.strict))
	})
}

// Collect reads every item the scan returns (at most Limit) into a slice.
func (q *Scan[T]) Collect(ctx context.Context) ([]T, error) { return collect(q.All(ctx)) }

// Count returns how many of r's items the scan matches, as [Query.Count] does.
func (q *Scan[T]) Count(ctx context.Context) (int, error) {
	reqs, err := q.plan(true, false)
	if err != nil {
		return 0, err
	}
	return q.reader().countItems(ctx, reqs)
}

// Request returns the ScanInput the scan sends first (the first
// segment's), as [Query.Request] does.
func (q *Scan[T]) Request() (*dynamodb.ScanInput, error) {
	reqs, err := q.plan(false, false)
	if err != nil {
		return nil, err
	}
	reqs[0].sizeFor(q.s.limit)
	return reqs[0].src.scan, nil
}

// Page is [Collection.Page] for the table's items.
func (q *TableScan) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	reqs, rt, err := q.plan(targets, true, false, true)
	if err != nil {
		return Page[any]{}, err
	}
	return rt.page(ctx, reqs[0], q.s.limit, q.s.strict)
}

// All returns an iterator over the table's items (at most Limit), as
// [Collection.All] does. Targets are used by the iterating goroutine only.
func (q *TableScan) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return seqOf(func(yield func(any, error) bool) error {
		reqs, rt, err := q.plan(targets, true, false, false)
		if err != nil {
			return err
		}
		return readAll(ctx, reqs, q.s.limit, yielder(rt.route, yield, q.s.strict))
	})
}

// Collect is [Collection.Collect] for the table's items.
func (q *TableScan) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	return collect(q.All(ctx, targets...))
}

// Count returns how many items of any type the scan matches (after
// filters) with Select COUNT; targets, optional, resolve a filter's names.
func (q *TableScan) Count(ctx context.Context, targets ...*Target) (int, error) {
	reqs, _, err := q.plan(targets, false, true, false)
	if err != nil {
		return 0, err
	}
	return count(ctx, reqs, nil)
}

// Request returns the ScanInput the scan sends first, as [Scan.Request]
// does; targets are optional here and only checked.
func (q *TableScan) Request(targets ...*Target) (*dynamodb.ScanInput, error) {
	reqs, _, err := q.plan(targets, false, false, false)
	if err != nil {
		return nil, err
	}
	reqs[0].sizeFor(q.s.limit)
	return reqs[0].src.scan, nil
}
