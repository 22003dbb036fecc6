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

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/paging"
)

// Scan reads every item of one entity in the table or an index ([Scan
// API]): it reads (and bills) the whole table or index, dropping other
// entities' items by a filter. Builder methods are as [Query]'s.
//
// [Scan API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Scan.html
type Scan[T any] struct {
	readSpec
	r *Repo[T]
}

// TableScan reads every item of the table, routing each to the [Target]
// made for its entity as a [Collection] does. Build it with [Table.Scan];
// it has the builder methods of [Scan].
type TableScan struct {
	readSpec
	t *Table
}

// Scan starts a scan of r's items; optFns are as for [Repo.Query].
func (r *Repo[T]) Scan(optFns ...func(*ReadOptions)) *Scan[T] {
	return &Scan[T]{r: r, readSpec: newReadSpec("", "scan: ", optFns)}
}

// ScanIndex starts a scan of r's items in the named index (a sparse index
// holds only the items with its keys); optFns are as for [Repo.QueryIndex].
func (r *Repo[T]) ScanIndex(index string, optFns ...func(*ReadOptions)) *Scan[T] {
	q := r.Scan(optFns...)
	q.onIndex(&r.repo, index)
	return q
}

// Scan starts a scan of every item of the table. optFns are as for
// [Repo.Collection].
func (t *Table) Scan(optFns ...func(*ReadOptions)) *TableScan {
	return &TableScan{t: t, readSpec: newReadSpec("", "scan: ", optFns)}
}

func segmentOf(i, total int) func(*readSpec) {
	return func(s *readSpec) {
		if total < 1 || total > 1000000 || i < 0 || i >= total {
			s.fail("Segment(%d, %d): total must be 1 to 1,000,000 and the segment 0 to total-1", i, total)
		}
		s.segment, s.total = i, total
	}
}

func segmentsOf(n int) func(*readSpec) {
	return func(s *readSpec) {
		if n < 1 || n > 1000000 {
			s.fail("Segments(%d): must be 1 to 1,000,000", n)
		}
		s.workers = n
	}
}

func (q *Scan[T]) spec() *readSpec   { return &q.readSpec }
func (q *TableScan) spec() *readSpec { return &q.readSpec }

// Segment makes the scan read segment i of total (0 <= i < total), as
// one worker of a parallel scan; each segment pages with its own cursors.
func (q *Scan[T]) Segment(i, total int) *Scan[T] { return edited(q, segmentOf(i, total)) }

// Segments makes All, Collect and Count read n segments at once, one
// goroutine each; items arrive in no fixed order. Page and After take
// [Scan.Segment] instead.
func (q *Scan[T]) Segments(n int) *Scan[T] { return edited(q, segmentsOf(n)) }

// Filter is [Query.Filter].
func (q *Scan[T]) Filter(cond expression.ConditionBuilder) *Scan[T] { return edited(q, filterBy(cond)) }

// Limit caps the items returned: a page holds exactly n items unless the
// scan runs out.
func (q *Scan[T]) Limit(n int) *Scan[T] { return edited(q, limitTo(n)) }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Scan[T]) PageSize(n int) *Scan[T] { return edited(q, pageSizeOf(n)) }

// After resumes the scan after the page that returned cursor ("": from
// the beginning). A cursor from another scan or segment is [ErrInvalidCursor].
func (q *Scan[T]) After(cursor string) *Scan[T] { return edited(q, afterCursor(cursor)) }

// Segment is [Scan.Segment].
func (q *TableScan) Segment(i, total int) *TableScan { return edited(q, segmentOf(i, total)) }

// Segments is [Scan.Segments].
func (q *TableScan) Segments(n int) *TableScan { return edited(q, segmentsOf(n)) }

// Filter is [Collection.Filter].
func (q *TableScan) Filter(cond expression.ConditionBuilder) *TableScan {
	return edited(q, filterBy(cond))
}

// Limit is [Scan.Limit]; skipped items do not count.
func (q *TableScan) Limit(n int) *TableScan { return edited(q, limitTo(n)) }

// PageSize is [Scan.PageSize].
func (q *TableScan) PageSize(n int) *TableScan { return edited(q, pageSizeOf(n)) }

// After is [Scan.After].
func (q *TableScan) After(cursor string) *TableScan { return edited(q, afterCursor(cursor)) }

// SkipUnknown is [Collection.SkipUnknown].
func (q *TableScan) SkipUnknown() *TableScan { return edited(q, (*readSpec).skipping) }

// scan plans the scan ri describes: one request per segment to read.
// skipping says whether some items read are skipped; errs are the
// targets' mistakes.
func (s *readSpec) scan(t *Table, ri *readInput, skipping, page bool, errs []error) (*read, error) {
	if err := s.checkScan(ri.entity, page, errs); err != nil {
		return nil, err
	}
	ri.what, ri.kind = "scan", "scan"
	if ri.entity != "" {
		ri.what += " " + ri.entity
	}
	if s.index != "" {
		ri.what += " index " + s.index
	}
	in, err := s.input(t, ri)
	if err != nil {
		return nil, err
	}
	rd := &read{spec: s, sized: s.sized() && !skipping}
	newRequest := func(in paging.Input) *request {
		seg := "all"
		if in.Scan.TotalSegments != nil {
			seg = strconv.Itoa(int(*in.Scan.Segment)) + "/" + strconv.Itoa(int(*in.Scan.TotalSegments))
		}
		r := t.request(in, ri.entity, ri.what, cursor.Binding(t.name, s.index, "\x00scan", ri.entity, seg), ri.cursorKeys)
		r.Size, r.ProbeOne = rd.sized, ri.typed == nil && s.filter == nil
		rd.reqs = append(rd.reqs, r)
		return r
	}
	if s.workers <= 1 {
		if s.total > 0 {
			in.Scan.Segment, in.Scan.TotalSegments = aws.Int32(int32(s.segment)), aws.Int32(int32(s.total))
		}
		r := newRequest(in)
		if s.after != "" {
			in.Scan.ExclusiveStartKey, err = t.decodeBoundCursor(s.after, binding{bind: r.Bind}, r.CursorKeys, nil, 0)
		}
		return rd, err
	}
	for i := range s.workers {
		si := *in.Scan
		si.Segment, si.TotalSegments = aws.Int32(int32(i)), aws.Int32(int32(s.workers))
		newRequest(paging.Input{Scan: &si})
	}
	return rd, nil
}

// checkScan reports the scan's mistakes.
func (s *readSpec) checkScan(reading string, page bool, errs []error) error {
	errs = append(slices.Clone(s.errs), errs...)
	if s.workers > 0 && s.total > 0 {
		errs = append(errs, validationErr(reading, "", "scan: Segment and Segments do not combine: a worker reading one segment takes Segment(i, n)"))
	}
	if s.workers > 1 && s.after != "" {
		errs = append(errs, validationErr(reading, "", "scan: After resumes one segment: use Segment(i, n) to page a parallel scan"))
	}
	if s.workers > 1 && page {
		errs = append(errs, validationErr(reading, "", "scan: a page is read from one segment: use Segment(i, n), or All and Collect with Segments"))
	}
	if s.index != "" && s.consistent {
		errs = append(errs, validationErr(reading, s.index, "global secondary indexes do not support consistent reads"))
	}
	return errors.Join(errs...)
}

func (q *Scan[T]) plan(count, page bool) *read {
	r := q.r
	var idx *indexPlan // nil for the table, or an unknown index checkScan reports
	if q.index != "" {
		idx, _ = r.e.index(q.index)
	}
	// An entity matching keys skips untyped items whose key is not its own;
	// on an index not holding the entity type, the key shape tells them.
	byShape := idx != nil && !r.t.holds(idx, r.t.opts.EntityTypeAttr)
	ri := &readInput{entity: r.e.name, cursorKeys: r.t.cursorKeys(idx), count: count}
	if !byShape {
		ri.typed = r.repo.e
	}
	if q.filter != nil {
		ri.names = r.t.heldNames(r.e.name, idx, r.e.condNames(r.t, "filter", condScope{}))
	}
	if len(q.project) > 0 && !count {
		ri.project = func() ([]string, error) {
			attrs, err := r.projectionAttrs(q.project)
			attrs, err = r.t.heldAttrs(r.e.name, idx, attrs, err)
			return append(attrs, ri.cursorKeys...), err
		}
	}
	rd, err := q.scan(r.t, ri, r.e.foreign.matchKeys || byShape, page, nil)
	if err == nil {
		rd.byShape = byShape
		if idx != nil && !idx.proj.All() && len(q.project) == 0 {
			rd.unprojected = r.e.unprojected(r.t, idx)
		}
	}
	return planned(rd, err)
}

func (q *TableScan) plan(targets []*Target, needTargets, count, page bool) *read {
	rt, errs := newRouter(q.t, targets, needTargets, q.skipUnknown)
	ri := &readInput{cursorKeys: q.t.primaryKeyAttrs(), count: count}
	if q.filter != nil {
		ri.names = collectionNames(q.t, targets, condScope{})
	}
	if len(q.project) > 0 && !count {
		ri.project = func() ([]string, error) { return mixedProjection(q.t, targets, q.project, ri.cursorKeys) }
	}
	rd, err := q.scan(q.t, ri, q.skipUnknown, page, errs)
	if err == nil {
		rd.rt = rt
	}
	return planned(rd, err)
}

// Page returns one page of r's items (of one segment), as [Query.Page] does.
func (q *Scan[T]) Page(ctx context.Context) (Page[T], error) {
	return pageOf(ctx, q.r, q.plan(false, true))
}

// All returns an iterator over r's items (at most Limit), holding one
// response at a time (per segment), as [Query.All] does; each use scans again.
func (q *Scan[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return allOf(ctx, q.r, func() *read { return q.plan(false, false) })
}

// Collect reads every item the scan returns (at most Limit) into a slice.
func (q *Scan[T]) Collect(ctx context.Context) ([]T, error) { return collect(q.All(ctx)) }

// Count returns how many of r's items the scan matches, as [Query.Count] does.
func (q *Scan[T]) Count(ctx context.Context) (int, error) {
	return q.plan(true, false).count(ctx, &q.r.repo)
}

// Request returns the ScanInput the scan sends first (the first
// segment's), as [Query.Request] does.
func (q *Scan[T]) Request() (*dynamodb.ScanInput, error) {
	in, err := q.plan(false, false).first()
	return in.Scan, err
}

// Page is [Collection.Page] for the table's items.
func (q *TableScan) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	return routedPage(ctx, q.plan(targets, true, false, true))
}

// All returns an iterator over the table's items (at most Limit), as
// [Collection.All] does. Targets are used by the iterating goroutine only.
func (q *TableScan) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return routedAll(ctx, func() *read { return q.plan(targets, true, false, false) })
}

// Collect is [Collection.Collect] for the table's items.
func (q *TableScan) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	return collect(q.All(ctx, targets...))
}

// Count returns how many items of any type the scan matches (after
// filters) with Select COUNT; targets, optional, resolve a filter's names.
func (q *TableScan) Count(ctx context.Context, targets ...*Target) (int, error) {
	return q.plan(targets, false, true, false).count(ctx, nil)
}

// Request returns the ScanInput the scan sends first, as [Scan.Request]
// does; targets are optional here and only checked.
func (q *TableScan) Request(targets ...*Target) (*dynamodb.ScanInput, error) {
	in, err := q.plan(targets, false, false, false).first()
	return in.Scan, err
}
