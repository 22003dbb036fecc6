package singletable

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/paging"
	"github.com/singletable-go/singletable/internal/wire"
)

// Every read (Query, Scan, Collection, Table.Scan) records its options in
// one readSpec and is planned as one read: its requests, which
// internal/paging pages through (paging.go decodes or routes the items).

// readSpec is what the builders of every read record; entity and what
// name the read in their mistakes.
type readSpec struct {
	entity, what   string
	index          string // the index read ("": the table)
	filter         *expression.ConditionBuilder
	project        []string
	desc           bool
	limit          int
	pageSize       int32
	after          string
	consistent     bool
	strict         bool // ReadOptions.StrictDecode
	skipUnknown    bool // a mixed read's SkipUnknown
	segment, total int  // a scan's Segment(segment, total); total 0: the whole table
	workers        int  // a scan's Segments(n)
	errs           []error
}

// newReadSpec records the options of a read.
func newReadSpec(entity, what string, optFns []func(*ReadOptions)) readSpec {
	s := readSpec{entity: entity, what: what}
	if len(optFns) > 0 {
		o := readOpts(optFns)
		s.project, s.consistent, s.strict = o.Fields, o.ConsistentRead, o.StrictDecode
	}
	return s
}

// onIndex makes the read one of r's index, recording an unknown one.
func (s *readSpec) onIndex(r *repo, index string) {
	s.index = index
	if _, err := r.e.index(index); err != nil {
		s.errs = append(s.errs, err)
	}
}

// builder is a read's builder: a *Query, *Scan, *TableScan or *Collection.
type builder[B any] interface {
	*B
	spec() *readSpec
}

// edited returns a copy of b, its spec cloned and given edit (nil: none):
// every builder method leaves its receiver as it was.
func edited[B any, P builder[B]](b P, edit func(*readSpec)) P {
	c := P(new(B))
	*c = *b
	s := c.spec()
	s.errs, s.project = slices.Clone(s.errs), slices.Clone(s.project)
	if edit != nil {
		edit(s)
	}
	return c
}

// fail records a mistake of the read's builder.
func (s *readSpec) fail(format string, args ...any) {
	s.errs = append(s.errs, validationErr(s.entity, "", s.what+format, args...))
}

// The builders' edits.

func filterBy(cond expression.ConditionBuilder) func(*readSpec) {
	return func(s *readSpec) {
		if s.filter != nil {
			cond = s.filter.And(cond)
		}
		s.filter = &cond
	}
}

func limitTo(n int) func(*readSpec) {
	return func(s *readSpec) {
		if n < 0 {
			s.fail("negative Limit")
		}
		s.limit = n
	}
}

func pageSizeOf(n int) func(*readSpec) {
	return func(s *readSpec) {
		if n < 1 || n > 1<<30 {
			s.fail("PageSize must be positive")
		}
		s.pageSize = int32(n)
	}
}

func afterCursor(cursor string) func(*readSpec) { return func(s *readSpec) { s.after = cursor } }
func (s *readSpec) descending()                 { s.desc = true }
func (s *readSpec) skipping()                   { s.skipUnknown = true }

// dir names the read's direction in its cursors' binding.
func (s *readSpec) dir() string {
	if s.desc {
		return "desc"
	}
	return "asc"
}

// sized reports whether a request may ask for the items Limit wants, plus
// one: nothing drops items after it.
func (s *readSpec) sized() bool { return s.pageSize == 0 && s.filter == nil && !s.skipUnknown }

// readInput is what a read's requests are built from besides its readSpec.
type readInput struct {
	entity     string                   // the entity read, "" for several
	what       string                   // names the requests in errors: "query User"
	kind       string                   // "query", "collection" or "scan", in a filter's errors
	conds      []expr.KeyCond           // a Query's key condition; nil for a Scan
	typed      *entityPlan              // the entity whose type the filter requires; nil for none
	names      expr.Resolver            // resolves the filter's names
	project    func() ([]string, error) // the attributes read; nil for every attribute
	cursorKeys []string                 // the attributes a cursor holds
	count      bool                     // Select COUNT
	whole      wholeFn                  // Complete
}

// input builds a request's input: the key condition (a Query; none: a
// Scan), the filter (the entity type's, ANDed with the caller's), the
// projection, and the spec's index, direction, consistency and page
// size, checked against DynamoDB's expression limits.
func (s *readSpec) input(t *Table, ri *readInput) (paging.Input, error) {
	var b expr.Builder
	var kc, filter, proj *string
	if ri.conds != nil {
		kc = aws.String(b.KeyCondition(ri.conds))
	}
	f := ""
	if ri.typed != nil {
		f = ri.typed.typeFilter(&b, &t.opts)
	}
	if s.filter != nil {
		user, err := b.Conditions(ri.names, *s.filter)
		if err != nil {
			return paging.Input{}, condErr(ri.entity, "bad "+ri.kind+" filter", err)
		}
		f = expr.And(f, user)
	}
	if f != "" {
		filter = &f
	}
	if ri.project != nil {
		attrs, err := ri.project()
		if err != nil {
			return paging.Input{}, err
		}
		proj = aws.String(b.Projection(attrs...))
	}
	names, values := b.Names(), b.Values()
	if err := checkExprLimits(ri.entity, exprParts{kinds: []string{"key condition", "filter", "projection"},
		exprs: []*string{kc, filter, proj}, names: names, values: values}); err != nil {
		return paging.Input{}, err
	}
	var index *string
	var consistent, forward *bool
	var limit *int32
	var sel types.Select
	if s.index != "" {
		index = aws.String(s.index)
	}
	if s.consistent {
		consistent = aws.Bool(true)
	}
	if s.pageSize > 0 {
		limit = aws.Int32(s.pageSize)
	}
	if ri.count {
		sel = types.SelectCount
	}
	if kc == nil {
		return paging.Input{Scan: &dynamodb.ScanInput{TableName: &t.name, IndexName: index, FilterExpression: filter,
			ProjectionExpression: proj, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ConsistentRead: consistent, Limit: limit, Select: sel}}, nil
	}
	if s.desc {
		forward = aws.Bool(false)
	}
	return paging.Input{Query: &dynamodb.QueryInput{TableName: &t.name, IndexName: index, KeyConditionExpression: kc,
		FilterExpression: filter, ProjectionExpression: proj, ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ConsistentRead: consistent, Limit: limit, Select: sel, ScanIndexForward: forward}}, nil
}

// partition plans the requests of a Query of one partition, its key
// condition kc, read as reader (an entity, or "\x00collection"): one
// request, or one per shard of a write-sharded index (shards > 0). After's
// cursor must lie inside the key condition.
func (rd *read) partition(t *Table, shards int, kc keyCondition, reader string, ri *readInput) error {
	s := rd.spec
	b := partitionBinding(t.name, s.index, reader, kc.parts, s.dir())
	rd.sharded = shards > 0
	conds := [][]expr.KeyCond{kc.conds}
	if rd.sharded {
		conds = make([][]expr.KeyCond, shards)
		for shard := range conds {
			conds[shard] = slices.Clone(kc.conds)
			conds[shard][0].V1 = &types.AttributeValueMemberS{Value: shardKey(kc.parts[0], shard)}
		}
	}
	for _, c := range conds {
		ri.conds = c
		in, err := s.input(t, ri)
		if err != nil {
			return err
		}
		req := t.request(in, ri.entity, ri.what, b.bind, ri.cursorKeys)
		req.Size, req.ProbeOne, req.whole = rd.sized && !rd.sharded, s.filter == nil, ri.whole
		rd.reqs = append(rd.reqs, req)
	}
	switch {
	case s.after == "":
		return nil
	case !rd.sharded:
		key, err := t.decodeBoundCursor(s.after, b, ri.cursorKeys, kc.conds, kc.nPart)
		rd.reqs[0].Query.ExclusiveStartKey = key
		return err
	}
	pos, err := t.cursorCodec().DecodeShards(s.after, b.bind, ri.cursorKeys, shards)
	if err != nil {
		return cursorErr(err)
	}
	for i, sp := range pos {
		if sp.State == cursor.ShardAfter {
			if err := checkCursorKey(sp.Key, conds[i], kc.nPart); err != nil {
				return err
			}
			rd.reqs[i].Query.ExclusiveStartKey = sp.Key
		}
	}
	rd.shardPos = pos
	return nil
}

// read is a planned read, ready to send; err is what planning found wrong.
type read struct {
	err   error
	spec  *readSpec
	reqs  []*request // one; one per shard of a write-sharded index; one per segment of a parallel scan
	empty bool       // the sort range holds nothing: nothing is sent
	sized bool       // a request may ask for the items Limit wants, plus one

	shardPos []cursor.ShardPos // the cursor's shard positions (a sharded read's reqs are its shards)
	sharded  bool

	byShape     bool     // an index without the entity type: the keys tell the items
	unprojected []string // the fields of T the index does not hold
	rt          *router  // a mixed read's targets
}

// planned is rd, or a read failing with err.
func planned(rd *read, err error) *read {
	if err != nil {
		return &read{err: err}
	}
	return rd
}

// source is what a page (page true) or All reads, and its limit: the
// request, or the merge of a write-sharded index's shards.
func (rd *read) source(page bool) (paging.Pager, int) {
	if !rd.sharded {
		return rd.reqs[0], rd.spec.limit
	}
	perShard, limit := 0, rd.spec.limit
	if limit > 0 && rd.sized {
		// A page asks each shard for one item more than it holds, so that
		// a shard ending exactly at the page's end says so.
		perShard = limit
		if page {
			perShard++
		}
	}
	if limit == 0 && page {
		limit = 100
		if rd.spec.pageSize > 0 {
			limit = int(rd.spec.pageSize)
		}
	}
	fs := make([]paging.Feed, len(rd.reqs))
	for i, r := range rd.reqs {
		if perShard > 0 && r.Query.Limit == nil {
			r.Query.Limit = aws.Int32(int32(min(perShard, 1000)))
		}
		fs[i] = r
	}
	r := rd.reqs[0]
	return paging.NewMerge(fs, rd.shardPos, r.CursorKeys[1:], rd.spec.desc, &r.Codec, r.Bind, r.CursorKeys), limit
}

// readAll reads every item (at most Limit) into take: the merge of the
// shards, or the segments of a parallel scan, one goroutine each.
func (rd *read) readAll(ctx context.Context, take paging.Take) error {
	if rd.sharded {
		f, limit := rd.source(false)
		_, err := paging.Paginate(ctx, f, limit, take, nil)
		return err
	}
	fs := make([]paging.Feed, len(rd.reqs))
	for i, r := range rd.reqs {
		fs[i] = r
	}
	return paging.ReadAll(ctx, fs, rd.spec.limit, take)
}

// count counts the items the read matches: with Select COUNT or, for an
// entity matching keys, by reading the keys (all an index that does not
// hold the entity type holds) and counting r's. r is nil for a read of
// every item.
func (rd *read) count(ctx context.Context, r *repo) (int, error) {
	if rd.err != nil || rd.empty {
		return 0, rd.err
	}
	var reqs []*paging.Request
	var fs []paging.Feed // the root's requests: on the path, Holders
	for i, req := range rd.reqs {
		if rd.shardPos == nil || rd.shardPos[i].State != cursor.ShardDone {
			reqs, fs = append(reqs, &req.Request), append(fs, req)
		}
	}
	if r == nil || !rd.byShape && !r.e.foreign.matchKeys {
		wired(rd, func(*request) *wire.Skipped { return new(wire.Skipped) })
		return paging.Count(ctx, reqs, fs, nil)
	}
	wired(rd, func(*request) *wire.Whole { return new(wire.Whole) })
	o := &r.t.opts
	for _, req := range reqs {
		if rd.byShape {
			req.Select(types.SelectAllProjectedAttributes)
		} else {
			req.KeysOnly(o.PartitionKey, o.SortKey, o.EntityTypeAttr)
		}
	}
	return paging.Count(ctx, reqs, fs, (&repo{t: r.t, e: r.e, byShape: rd.byShape}).mine)
}

// first is the input the read sends first: with Limit and a sized read,
// asking for Limit items plus one, as Page and All do.
func (rd *read) first() (paging.Input, error) {
	if rd.err != nil {
		return paging.Input{}, rd.err
	}
	r := rd.reqs[0]
	if rd.sized && rd.spec.limit > 0 {
		r.Size = true
		r.SizeFor(rd.spec.limit)
	}
	return r.Input, nil
}
