package singletable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// SortOp is a comparison on a sort key, used with [Query.Where].
type SortOp int

// Sort key comparisons. The field named is compared with the operator and
// the sort key fields before it equal the query key's; Eq on a field
// before the sort key's last is a prefix match (begins_with on the
// rendered key).
const (
	Eq SortOp = iota + 1
	Lt
	Le
	Gt
	Ge
)

// sortOps are the SortOps' key condition operators.
var sortOps = [...]string{Eq: expr.OpEq, Lt: expr.OpLt, Le: expr.OpLe, Gt: expr.OpGt, Ge: expr.OpGe}

// String returns the operator as a key condition writes it ("<=").
func (op SortOp) String() string {
	if op < Eq || op > Ge {
		return fmt.Sprintf("SortOp(%d)", int(op))
	}
	return strings.TrimSpace(sortOps[op])
}

const (
	sortNone = iota
	sortCmp
	sortBetween
	sortBeginsWith
)

// Query reads one partition of the table or of an index ([Query API]),
// optionally narrowed by a sort key condition. Builder methods return a
// copy and record mistakes, which the final call reports before sending.
//
// [Query API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
type Query[T any] struct {
	querySpec
	r   *Repo[T]
	key T
	hi  T
}

// querySpec is a Query apart from its key values: the part that does not
// depend on T, compiled once rather than once per entity type.
type querySpec struct {
	readSpec
	r      *repo
	index  string
	kind   int
	op     SortOp
	field  string // the sort key field the condition names
	prefix string
	whole  bool // Complete
}

// readSpec is what the builders of every read record; entity and what
// name the read in their mistakes.
type readSpec struct {
	entity, what string
	filter       *expression.ConditionBuilder
	project      []string
	desc         bool
	limit        int
	pageSize     int32
	after        string
	consistent   bool
	strict       bool // ReadOptions.StrictDecode
	errs         []error
}

// Query starts a query of the entity's items in key's partition (key
// supplies every field of the PK template). optFns' [ReadOptions] apply to
// every request; Fields reads the named Go fields plus the keys.
func (r *Repo[T]) Query(key T, optFns ...func(*ReadOptions)) *Query[T] {
	q := &Query[T]{querySpec: querySpec{r: &r.repo, readSpec: readSpec{entity: r.e.name}}, r: r, key: key}
	q.readOptions(optFns)
	return q
}

// QueryIndex starts a query on the named index: key supplies every field of
// the index's partition key. optFns are as for [Repo.Query]; a global
// secondary index has no consistent reads.
func (r *Repo[T]) QueryIndex(index string, key T, optFns ...func(*ReadOptions)) *Query[T] {
	q := r.Query(key, optFns...)
	q.index = index
	if _, err := r.e.index(index); err != nil {
		q.errs = append(q.errs, err)
	}
	return q
}

// readOptions records the options of a read.
func (s *readSpec) readOptions(optFns []func(*ReadOptions)) {
	if len(optFns) > 0 {
		o := readOpts(optFns)
		s.project, s.consistent, s.strict = o.Fields, o.ConsistentRead, o.StrictDecode
	}
}

func (s readSpec) clone() readSpec {
	s.errs = slices.Clone(s.errs)
	s.project = slices.Clone(s.project)
	return s
}

// fail records a mistake of the read's builder.
func (s *readSpec) fail(format string, args ...any) {
	s.errs = append(s.errs, validationErr(s.entity, "", s.what+format, args...))
}

// dir names the read's direction in its cursors' binding.
func (s *readSpec) dir() string {
	if s.desc {
		return "desc"
	}
	return "asc"
}

func (s *readSpec) limitTo(n int) {
	if n < 0 {
		s.fail("negative Limit")
	}
	s.limit = n
}

func (s *readSpec) pageSizeOf(n int) {
	if n < 1 || n > 1<<30 {
		s.fail("PageSize must be positive")
	}
	s.pageSize = int32(n)
}

func (q *Query[T]) clone() *Query[T] {
	c := *q
	c.readSpec = q.readSpec.clone()
	return &c
}

func (q *Query[T]) setSort(kind int, op SortOp, field string) *Query[T] {
	c := q.clone()
	if c.kind != sortNone {
		c.fail("only one sort key condition per query")
	}
	c.kind, c.op, c.field = kind, op, field
	return c
}

// setValue sets the named field of the key value v (a *T) to x (nil:
// leaves it), recording a wrong field or a value that does not fit it.
func (q *querySpec) setValue(v any, field string, x any) {
	f, err := q.r.e.field(field)
	if err != nil {
		q.errs = append(q.errs, err)
		return
	}
	if x == nil {
		return
	}
	if err := f.SetValue(reflect.ValueOf(v).Elem(), x); err != nil {
		q.errs = append(q.errs, validationErr(q.r.e.name, field, "sort condition value: %v", err))
	}
}

// Where adds the sort key condition "field op value". field is a field of
// the sort key (of the index, for [Repo.QueryIndex]); the sort key fields
// before it come from the query's key and must equal it; value has the
// field's type, or is a constant that fits it ("open" for a named string
// type, 3 for an int64), else the read is a *ValidationError. A nil value
// takes the field's value from the query's key, as the sort fields before
// it do (so a query can be described, [Query.Describe], without one); a
// zero value is a real value there as anywhere in a key: 0 is a number,
// "" a missing string (*KeyError).
//
// For example
//
//	Query(Skill{User: "u1", Level: "senior"}).Where("Years", singletable.Ge, 3)
//
// matches Level = "senior" and Years >= 3. Eq on a field before the sort
// key's last matches every key with that prefix.
func (q *Query[T]) Where(field string, op SortOp, value any) *Query[T] {
	c := q.setSort(sortCmp, op, field)
	if op < Eq || op > Ge {
		c.fail("unknown sort operator %d", int(op))
	}
	c.setValue(&c.key, field, value)
	return c
}

// Between adds the sort key condition lo <= field <= hi, field and the
// values as for [Query.Where].
func (q *Query[T]) Between(field string, lo, hi any) *Query[T] {
	c := q.setSort(sortBetween, 0, field)
	c.hi = c.key
	c.setValue(&c.key, field, lo)
	c.setValue(&c.hi, field, hi)
	return c
}

// BeginsWith adds the sort key condition "field starts with prefix" (a
// string field, or one whose placeholder has a format), the sort key
// fields before it equal to the key's: BeginsWith("Date", "2024-01")
// matches every date in January 2024.
func (q *Query[T]) BeginsWith(field, prefix string) *Query[T] {
	c := q.setSort(sortBeginsWith, 0, field)
	c.prefix = prefix
	return c
}

// Filter adds a FilterExpression, ANDed to any given; items it drops still
// cost read capacity. cond names Go fields (or stored attribute names; a Go
// name wins), any other name is a *ValidationError.
func (q *Query[T]) Filter(cond expression.ConditionBuilder) *Query[T] {
	c := q.clone()
	c.filterBy(cond)
	return c
}

// filterBy joins cond to the read's filter with AND.
func (s *readSpec) filterBy(cond expression.ConditionBuilder) {
	if s.filter != nil {
		cond = s.filter.And(cond)
	}
	s.filter = &cond
}

// Complete makes a query of an index that does not hold everything
// ([IndexSchema].Projection) read its items whole from the table, with
// Fields if given: a BatchGetItem per response. An item the table no
// longer holds is left out. Other reads are unchanged.
func (q *Query[T]) Complete() *Query[T] { c := q.clone(); c.whole = true; return c }

// Desc returns items in descending sort key order.
func (q *Query[T]) Desc() *Query[T] { c := q.clone(); c.desc = true; return c }

// Limit caps the items returned: a page holds exactly n items unless the
// query runs out, however many the filters drop.
func (q *Query[T]) Limit(n int) *Query[T] { c := q.clone(); c.limitTo(n); return c }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Query[T]) PageSize(n int) *Query[T] { c := q.clone(); c.pageSizeOf(n); return c }

// After resumes the query after the last item of the page that returned
// cursor. An empty cursor starts from the beginning.
func (q *Query[T]) After(cursor string) *Query[T] { c := q.clone(); c.after = cursor; return c }

// Page is one page of results; Cursor is empty when there are no more.
// Skipped holds a *DecodeError for each item read past (see [DecodeError]);
// they do not count towards Limit and the cursor moves past them.
// Unprojected lists the Go fields of T the items leave at their zero
// values because the index read does not hold them
// ([IndexSchema].Projection; without [Query.Complete] or Fields).
type Page[T any] struct {
	Items       []T
	Cursor      string
	Skipped     []*DecodeError
	Unprojected []string
}

// plan is a validated query, ready to send.
type plan struct {
	in         *dynamodb.QueryInput
	binding    binding // what cursors are bound to
	cursorKeys []string
	empty      bool // the sort range is empty: no request needed

	shards   []*dynamodb.QueryInput // one per shard of a write-sharded index
	shardPos []cursor.ShardPos      // from the cursor, for sharded queries

	// On an index holding less than everything (IndexSchema.Projection).
	byShape     bool     // the index lacks the entity type: the keys tell the items
	whole       wholeFn  // Complete
	unprojected []string // the fields the index does not hold
}

func (q *Query[T]) plan(count bool) (*plan, error) {
	return q.querySpec.plan(count, reflect.ValueOf(&q.key).Elem(), reflect.ValueOf(&q.hi).Elem())
}

// plan is [Query.plan] given the key kv and Between's upper bound hv.
func (q *querySpec) plan(count bool, kv, hv reflect.Value) (*plan, error) {
	if len(q.errs) > 0 {
		return nil, errors.Join(q.errs...)
	}
	var idx *indexPlan
	if q.index != "" {
		idx, _ = q.r.e.index(q.index)
		if q.consistent {
			return nil, validationErr(q.r.e.name, q.index, "global secondary indexes do not support consistent reads")
		}
	}
	kc, err := q.keyCondition(idx, kv, hv)
	if err != nil {
		return nil, err
	}
	p := &plan{cursorKeys: q.r.t.cursorKeys(idx), empty: kc.empty}
	p.binding = partitionBinding(q.r.t.name, q.index, q.r.e.name, kc.parts, q.dir())
	proj, err := q.projection(p, idx, count) // attribute names to read, nil for all
	if err != nil {
		return nil, err
	}
	if idx != nil && idx.shards > 0 {
		return p, q.planShards(p, kc, idx, proj, count)
	}
	if p.in, err = q.input(idx, kc.conds, proj, count); err != nil || q.after == "" {
		return p, err
	}
	if p.in.ExclusiveStartKey, err = q.r.t.decodeBoundCursor(q.after, p.binding, p.cursorKeys, kc.conds, kc.nPart); err != nil {
		return nil, err
	}
	return p, nil
}

// projection is what p, a read of index idx (nil: the table), reads: nil
// for all; with Fields, theirs and the cursor's keys, refusing one idx does
// not hold unless Complete reads them from the table.
func (q *querySpec) projection(p *plan, idx *indexPlan, count bool) ([]string, error) {
	t, partial := q.r.t, idx != nil && !idx.proj.All()
	p.byShape = partial && !t.holds(idx, t.opts.EntityTypeAttr)
	if partial && q.whole && !count {
		var ka types.KeysAndAttributes
		var err error
		if len(q.project) > 0 {
			ka.ProjectionExpression, ka.ExpressionAttributeNames, err = q.r.fieldsProjection(q.project)
		}
		p.whole = repo{t: t, e: q.r.e, byShape: p.byShape}.readWhole(ka, p.cursorKeys)
		return nil, err
	}
	if len(q.project) == 0 || count {
		if partial {
			p.unprojected = q.r.e.unprojected(t, idx)
		}
		return nil, nil
	}
	attrs, err := q.r.projectionAttrs(q.project)
	for _, a := range attrs {
		if !t.holds(idx, a) && a != t.opts.EntityTypeAttr {
			return nil, validationErr(q.r.e.name, a, "Fields: index %s does not hold attribute %s (projection %s); Complete reads it from the table", idx.name, a, idx.proj)
		}
	}
	attrs = slices.DeleteFunc(attrs, func(a string) bool { return a == t.opts.EntityTypeAttr && p.byShape })
	return append(attrs, p.cursorKeys...), err
}

// planShards plans one request per shard of a write-sharded index.
func (q *querySpec) planShards(p *plan, kc keyCondition, idx *indexPlan, proj []string, count bool) error {
	shards := idx.shards
	shardConds := make([][]expr.KeyCond, shards)
	for shard := range shards {
		sc := slices.Clone(kc.conds)
		sc[0].V1 = &types.AttributeValueMemberS{Value: shardKey(kc.parts[0], shard)}
		shardConds[shard] = sc
		in, err := q.input(idx, sc, proj, count)
		if err != nil {
			return err
		}
		p.shards = append(p.shards, in)
	}
	p.in = p.shards[0]
	if q.after == "" {
		return nil
	}
	pos, err := q.r.t.cursorCodec().DecodeShards(q.after, p.binding.bind, p.cursorKeys, shards)
	if err != nil {
		return cursorErr(err)
	}
	for i, sp := range pos {
		if sp.State == cursor.ShardAfter {
			if err := checkCursorKey(sp.Key, shardConds[i], kc.nPart); err != nil {
				return err
			}
			p.shards[i].ExclusiveStartKey = sp.Key
		}
	}
	p.shardPos = pos
	return nil
}

// keyCondition is a query's key condition: the first nPart on the
// partition's attributes, then on the sort key's.
type keyCondition struct {
	conds []expr.KeyCond
	nPart int
	parts []string // the partition's key values, which the cursor is bound to
	empty bool     // the sort range holds nothing
}

// keyCondition builds the key condition on the index idx (nil: the table).
func (q *querySpec) keyCondition(idx *indexPlan, kv, hv reflect.Value) (keyCondition, error) {
	var kc keyCondition
	var err error
	if kc.conds, kc.parts, err = q.r.partitionCond(idx, kv); err != nil {
		return kc, err
	}
	kc.nPart = len(kc.conds)
	sc, empty, err := q.sortCondition(idx, kv, hv)
	kc.conds, kc.empty = append(kc.conds, sc...), empty
	return kc, err
}

// partitionCond is the key condition on kv's partition of the index idx
// (nil: the table), and the partition's key values.
func (r *repo) partitionCond(idx *indexPlan, kv reflect.Value) ([]expr.KeyCond, []string, error) {
	if idx == nil || !idx.multi {
		pkAttr, pkKey, index, name := r.t.opts.PartitionKey, r.e.pk, "", "PK"
		if idx != nil {
			pkAttr, pkKey, index, name = idx.pkAttr, idx.pk, idx.name, idx.pkAttr
		}
		pk, err := r.e.renderKey(pkKey, kv, index, name)
		if err != nil {
			return nil, nil, err
		}
		return []expr.KeyCond{*expr.KeyCmp(pkAttr, expr.OpEq, pk)}, []string{pk}, nil
	}
	var conds []expr.KeyCond
	var parts []string
	for _, f := range idx.partition {
		av, err := r.multiValue(idx, f, kv)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, expr.KeyCond{Attr: f.Attr, Op: expr.OpEq, V1: av})
		parts = append(parts, avString(av))
	}
	return conds, parts, nil
}

// sortCondition builds the sort key part of the key condition on the
// index idx (nil: the table); empty reports an empty range.
func (q *querySpec) sortCondition(idx *indexPlan, kv, hv reflect.Value) (conds []expr.KeyCond, empty bool, err error) {
	var c *expr.KeyCond
	switch {
	case idx == nil:
		c, empty, err = q.templatedSort(q.r.e.sk, q.r.t.opts.SortKey, kv, hv)
	case idx.multi:
		conds, err = q.multiSort(idx, kv, hv)
	default:
		c, empty, err = q.templatedSort(idx.sk, idx.skAttr, kv, hv)
	}
	if c != nil {
		conds = []expr.KeyCond{*c}
	}
	if err != nil || len(conds) == 0 {
		return nil, empty, err
	}
	clampUpper(&conds[len(conds)-1])
	return conds, false, q.checkSortSize(conds...)
}

// cursorKeys are the attributes a cursor of a read of the index idx (nil:
// the table) holds: the key of the index read, then the table's.
func (t *Table) cursorKeys(idx *indexPlan) []string {
	var keys []string
	switch {
	case idx == nil:
	case idx.multi:
		for _, f := range idx.deps {
			keys = append(keys, f.Attr)
		}
	default:
		keys = append(keys, idx.pkAttr)
		if idx.skAttr != "" {
			keys = append(keys, idx.skAttr)
		}
	}
	return append(keys, t.primaryKeyAttrs()...)
}

// collectionSort makes a Query a [SortCondition].
func (q *Query[T]) collectionSort(t *Table, index string) ([]expr.KeyCond, bool, error) {
	if q == nil {
		return nil, false, validationErr("", "", "collection: nil sort condition (give a Query of a member entity)")
	}
	return q.querySpec.collectionSort(t, index, reflect.ValueOf(&q.key).Elem(), reflect.ValueOf(&q.hi).Elem())
}

// collectionSort is [Query.collectionSort] given the query's key values.
func (q *querySpec) collectionSort(t *Table, index string, kv, hv reflect.Value) ([]expr.KeyCond, bool, error) {
	e := q.r.e
	errs := slices.Clone(q.errs)
	if q.r.t != t {
		errs = append(errs, validationErr(e.name, "", "collection: sort condition's repository is bound to table %s, the collection reads %s", q.r.t.name, t.name))
	}
	if q.index != index {
		errs = append(errs, validationErr(e.name, q.index, "collection: the sort condition queries %s, the collection reads %s: use Query for a table collection, QueryIndex on its index for an index collection", indexText(q.index), indexText(index)))
	}
	if q.filter != nil || q.project != nil || q.consistent || q.desc || q.limit > 0 || q.pageSize > 0 || q.after != "" || q.whole {
		errs = append(errs, validationErr(e.name, "", "collection: a sort condition's query gives only the sort key condition: set Filter, Desc, Limit, PageSize, After and read options on the collection"))
	}
	if len(errs) > 0 {
		return nil, false, errors.Join(errs...)
	}
	var idx *indexPlan
	if index != "" {
		idx, _ = e.index(index)
	}
	return q.sortCondition(idx, kv, hv)
}

// indexText names an index, or the table for "".
func indexText(index string) string {
	if index == "" {
		return "the table"
	}
	return "index " + index
}

// input assembles one QueryInput.
func (q *querySpec) input(idx *indexPlan, conds []expr.KeyCond, proj []string, count bool) (*dynamodb.QueryInput, error) {
	t, e := q.r.t, q.r.e
	var b expr.Builder
	kc := b.KeyCondition(conds)
	var filter string
	if t.holds(idx, t.opts.EntityTypeAttr) { // else the key shape tells (repo.mine)
		filter = e.typeFilter(&b, &t.opts)
	}
	if q.filter != nil {
		user, err := b.Conditions(t.heldNames(e.name, idx, e.condNames(t, "filter", condScope{query: true, index: q.index})), *q.filter)
		if err != nil {
			return nil, condErr(e.name, "bad query filter", err)
		}
		filter = expr.And(filter, user)
	}
	in := &dynamodb.QueryInput{
		TableName:                 &t.name,
		KeyConditionExpression:    &kc,
		FilterExpression:          &filter,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	}
	if filter == "" {
		in.FilterExpression = nil
	}
	if proj != nil {
		in.ProjectionExpression = aws.String(b.Projection(proj...))
		in.ExpressionAttributeNames = b.Names()
	}
	if err := q.finishQuery(in, q.index); err != nil {
		return nil, err
	}
	if count {
		in.Select = types.SelectCount
	}
	return in, nil
}

// finishQuery checks a Query's or a Collection's expressions against
// DynamoDB's limits and sets the index, direction, consistency and page size.
func (s *readSpec) finishQuery(in *dynamodb.QueryInput, index string) error {
	if err := checkExprLimits(s.entity, exprParts{kinds: []string{"key condition", "filter", "projection"},
		exprs: []*string{in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression},
		names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}); err != nil {
		return err
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if s.desc {
		in.ScanIndexForward = aws.Bool(false)
	}
	if s.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	return nil
}

// sortFields returns how many sort key fields, of have, the condition
// covers: up to and including the field it names.
func (q *querySpec) sortFields(have []*model.Field, what string) (int, error) {
	for i, f := range have {
		if f.Name == q.field {
			return i + 1, nil
		}
	}
	if _, err := q.r.e.field(q.field); err != nil {
		return 0, err
	}
	return 0, validationErr(q.r.e.name, q.field, "not a field of the sort key of %s, whose fields are, in order: %s", what, fieldNames(have))
}

func fieldNames(fs []*model.Field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// clampUpper rewrites an upper bound longer than a sort key can be into one
// DynamoDB accepts that matches the same keys (keys.ClampBound).
func clampUpper(c *expr.KeyCond) {
	limit := keyLimit(true)
	long := func(av types.AttributeValue) (string, bool) {
		if s, ok := av.(*types.AttributeValueMemberS); ok && len(s.Value) > limit {
			return s.Value, true
		}
		return "", false
	}
	switch c.Op {
	case expr.OpBetween:
		if u, ok := long(c.V2); ok {
			c.V2 = &types.AttributeValueMemberS{Value: keys.ClampBound(u, limit)}
		}
	case expr.OpLe, expr.OpLt:
		if u, ok := long(c.V1); ok {
			c.Op, c.V1 = expr.OpLe, &types.AttributeValueMemberS{Value: keys.ClampBound(u, limit)}
		}
	}
}

// checkSortSize refuses a sort key condition value over DynamoDB's
// 1024-byte limit before sending it.
func (q *querySpec) checkSortSize(conds ...expr.KeyCond) error {
	for _, c := range conds {
		for _, av := range []types.AttributeValue{c.V1, c.V2} {
			if n, limit := keyBytes(av), keyLimit(true); n > limit {
				return &KeyError{Entity: q.r.e.name, Index: q.index, Key: c.Attr,
					Err: fmt.Errorf("sort key condition value on %s is %d bytes, over DynamoDB's %d-byte limit", q.field, n, limit)}
			}
		}
	}
	return nil
}

// templatedSort builds the key condition on a rendered sort key; empty
// reports an empty range.
func (q *querySpec) templatedSort(sk compiledKey, attr string, kv, hv reflect.Value) (*expr.KeyCond, bool, error) {
	if q.kind == sortNone {
		return shapeCond(sk, attr), false, nil
	}
	where := attr
	if q.index != "" {
		where = "index " + q.index
	}
	if !sk.defined() {
		return nil, false, validationErr(q.r.e.name, where, "sort condition on a key without a sort key")
	}
	n, err := q.sortFields(sk.fields, where)
	if err != nil {
		return nil, false, err
	}
	r, err := q.sortRange(sk, attr, kv, n)
	if err != nil {
		return nil, false, err
	}
	switch q.kind {
	case sortBeginsWith:
		return r.beginsWith(q.prefix)
	case sortBetween:
		lo, err := r.encode(kv)
		if err != nil {
			return nil, false, err
		}
		hi, err := r.encode(hv)
		if err != nil {
			return nil, false, err
		}
		return r.between(r.prefix+lo, r.eqHigh(hi))
	}
	E, err := r.encode(kv)
	if err != nil {
		return nil, false, err
	}
	if q.op == Eq && n == len(sk.fields) {
		return expr.KeyCmp(attr, expr.OpEq, r.prefix+E+r.lit), false, nil // the whole key: lit ends it
	}
	return r.compare(q.op, E)
}

// shapeCond is the key condition of a query without a sort condition: the
// sort keys starting with the template's constant prefix (nil: none).
func shapeCond(sk compiledKey, attr string) *expr.KeyCond {
	if !sk.defined() {
		return nil
	}
	cp := sk.tpl.ConstantPrefix()
	switch {
	case cp == "":
		return nil
	case len(sk.fields) == 0:
		return expr.KeyCmp(attr, expr.OpEq, cp)
	}
	return expr.KeyCmp(attr, expr.OpBeginsWith, cp)
}

// sortRange is a sort condition on a rendered sort key; its ranges rely on
// rendered keys comparing as their field tuples (internal/keys/order.go).
type sortRange struct {
	q      *querySpec
	attr   string
	prefix string       // the rendered key up to the last named field's value
	lit    string       // the literal after that value ("" at the end of the template)
	last   *model.Field // the last named field
	place  *keys.Part   // its placeholder
}

// sortRange renders the prefix of a sort condition on sk from kv.
func (q *querySpec) sortRange(sk compiledKey, attr string, kv reflect.Value, n int) (sortRange, error) {
	r := sortRange{q: q, attr: attr, last: sk.fields[n-1], place: sk.places[n-1], lit: sk.tpl.LiteralAfter(n - 1)}
	b, err := sk.tpl.AppendPrefix(nil, sk.fields, kv, n-1)
	if err != nil {
		return r, renderKeyError(q.r.e.name, q.index, attr, err)
	}
	r.prefix = string(b)
	return r, nil
}

// encode renders the last named field's value in v.
func (r sortRange) encode(v reflect.Value) (string, error) {
	e := r.q.r.e
	if !r.last.Present(v) {
		return "", &KeyError{Entity: e.name, Index: r.q.index, Key: r.attr, Missing: []string{r.last.Name}}
	}
	fv, _ := r.last.Get(v)
	b, err := r.place.AppendValue(nil, fv)
	if err != nil {
		return "", valueKeyError(e.name, r.q.index, r.attr, r.last.Name, err)
	}
	return string(b), nil
}

// eqHigh is the highest key whose last named field's value is E.
func (r sortRange) eqHigh(E string) string {
	if r.lit == "" {
		return r.prefix + E
	}
	return r.prefix + E + r.lit + keys.AboveAll
}

// between is the condition lo <= key <= hi; empty when lo > hi.
func (r sortRange) between(lo, hi string) (*expr.KeyCond, bool, error) {
	if lo > hi {
		return nil, true, nil
	}
	c := expr.KeyCmp(r.attr, expr.OpBetween, lo)
	c.V2 = &types.AttributeValueMemberS{Value: hi}
	return c, false, nil
}

// beginsWith is the condition "the last named field starts with prefix".
func (r sortRange) beginsWith(prefix string) (*expr.KeyCond, bool, error) {
	e := r.q.r.e
	if k := r.last.Type.Kind(); r.place.Format == nil && k != reflect.String && !(k == reflect.Pointer && r.last.Type.Elem().Kind() == reflect.String) {
		return nil, false, validationErr(e.name, r.last.Name, "BeginsWith needs a string field or a placeholder with a format, not %s", r.last.Type)
	}
	if prefix == "" && r.prefix == "" {
		return nil, false, nil
	}
	b, err := r.place.AppendPrefix([]byte(r.prefix), prefix)
	if err != nil {
		return nil, false, valueKeyError(e.name, r.q.index, r.attr, r.last.Name, err)
	}
	return expr.KeyCmp(r.attr, expr.OpBeginsWith, string(b)), false, nil
}

// compare is the condition "the last named field op E" (E rendered); Eq
// is a prefix match, the sort key having fields after the last named one.
func (r sortRange) compare(op SortOp, E string) (*expr.KeyCond, bool, error) {
	P, L := r.prefix, r.lit
	switch op {
	case Eq:
		return expr.KeyCmp(r.attr, expr.OpBeginsWith, P+E+L), false, nil
	case Ge:
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpGe, E), false, nil
		}
		return r.between(P+E, P+keys.AboveAll)
	case Gt:
		// Escaped values continue with bytes from '%' up and delimiters
		// are below it: E+"%" is above E and at or below anything longer.
		above := E + "%"
		if r.place.Format != nil {
			above = keys.FormattedAbove(E, L)
		}
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpGe, above), false, nil
		}
		return r.between(P+above, P+keys.AboveAll)
	case Le:
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpLe, r.eqHigh(E)), false, nil
		}
		return r.between(P, r.eqHigh(E))
	}
	switch {
	case P == "":
		return expr.KeyCmp(r.attr, expr.OpLt, E), false, nil
	case r.place.Format != nil:
		return r.between(P, P+keys.FormattedBelow(E))
	}
	return r.between(P, P+keys.Predecessor(E)+keys.AboveAll)
}

// multiValue is field f's key attribute value in a multi-attribute index.
func (r *repo) multiValue(idx *indexPlan, f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	e := r.e
	if !f.Present(v) {
		return nil, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}}
	}
	av, err := e.marshalField(f, v)
	if err != nil || av == nil {
		return nil, keyErrorOr(err, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}, Err: err})
	}
	return av, nil
}

// multiSort builds the sort key conditions of a multi-attribute index.
func (q *querySpec) multiSort(idx *indexPlan, kv, hv reflect.Value) ([]expr.KeyCond, error) {
	if q.kind == sortNone {
		return nil, nil
	}
	n, err := q.sortFields(idx.sort, "index "+idx.name)
	if err != nil {
		return nil, err
	}
	var conds []expr.KeyCond
	for _, f := range idx.sort[:n-1] {
		av, err := q.r.multiValue(idx, f, kv)
		if err != nil {
			return nil, err
		}
		conds = append(conds, expr.KeyCond{Attr: f.Attr, Op: expr.OpEq, V1: av})
	}
	last := idx.sort[n-1]
	if q.kind == sortBeginsWith {
		if st, _ := scalarType(last); st != types.ScalarAttributeTypeS {
			return nil, validationErr(q.r.e.name, last.Name, "BeginsWith needs a string attribute")
		}
		return append(conds, *expr.KeyCmp(last.Attr, expr.OpBeginsWith, q.prefix)), nil
	}
	av, err := q.r.multiValue(idx, last, kv)
	if err != nil {
		return nil, err
	}
	c := expr.KeyCond{Attr: last.Attr, Op: sortOps[q.op], V1: av}
	if q.kind == sortBetween {
		if c.V2, err = q.r.multiValue(idx, last, hv); err != nil {
			return nil, err
		}
		c.Op = expr.OpBetween
	}
	return append(conds, c), nil
}

func avString(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return "S" + v.Value
	case *types.AttributeValueMemberN:
		return "N" + v.Value
	case *types.AttributeValueMemberB:
		return "B" + string(v.Value)
	}
	return ""
}

// Page returns one page: with Limit(n) exactly n items unless the query
// runs out; without it one response's items (on a write-sharded index,
// PageSize items, or 100). The cursor is empty when no item follows.
func (q *Query[T]) Page(ctx context.Context) (Page[T], error) {
	p, err := q.plan(false)
	if err != nil || p.empty {
		return Page[T]{}, err
	}
	f, limit := q.reader(p, true)
	page, err := pageOf(ctx, f, limit, q.reading(p), q.strict)
	page.Unprojected = p.unprojected
	return page, err
}

// reading is the repository reading p's items: on an index that does not
// hold the entity type, one telling them by key shape.
func (q *Query[T]) reading(p *plan) *Repo[T] {
	if !p.byShape {
		return q.r
	}
	c := *q.r
	c.byShape = true
	return &c
}

// mine reports whether an item the filter let through is the entity's: the
// filter cannot check an untyped item's key (entityPlan.owns), nor, by
// shape, the item of an index that does not hold the entity type.
func (r *repo) mine(item map[string]types.AttributeValue) bool {
	if r.byShape {
		if s, ok := item[r.t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); ok {
			return s.Value == r.e.name // read whole
		}
		return r.e.keysMatch(&r.t.opts, item)
	}
	return !r.e.foreign.matchKeys || r.e.owns(&r.t.opts, item)
}

// accounts reports whether a page accounts for item: it is the entity's
// or selected (see selected).
func (r *repo) accounts(item map[string]types.AttributeValue) bool {
	return r.mine(item) || r.selected(item) != nil
}

// selected returns the *DecodeError of an untyped item, read for an entity
// matching keys, whose keys start with the entity's literal prefixes but
// fail to parse before their end, and that no other entity owns or shares
// a longer prefix with; nil for any other item (docs/adopting.md).
func (r *repo) selected(item map[string]types.AttributeValue) error {
	e, o := r.e, &r.t.opts
	if _, typed := item[o.EntityTypeAttr]; typed || !e.foreign.matchKeys && !r.byShape {
		return nil
	}
	n, ok := e.sharedPrefix(o, item)
	if !ok {
		return nil
	}
	for _, other := range r.t.entities {
		if m, ok := other.sharedPrefix(o, item); other != e && (ok && m > n || other.keysMatch(o, item)) {
			return nil
		}
	}
	if err := e.keysErr(o, item); err != nil && !errors.Is(err, keys.ErrLonger) {
		return r.undecoded(item, &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err})
	}
	return nil
}

// countItems counts the entity's items among those reqs match: with
// Select COUNT or, for an entity matching keys, by reading the keys (all
// an index that does not hold the entity type holds).
func (r *repo) countItems(ctx context.Context, reqs []*request) (int, error) {
	switch {
	case r.byShape:
		for _, req := range reqs {
			if req.src.query != nil {
				req.src.query.Select = types.SelectAllProjectedAttributes
			} else {
				req.src.scan.Select = types.SelectAllProjectedAttributes
			}
		}
		return count(ctx, reqs, r.mine)
	case !r.e.foreign.matchKeys:
		return count(ctx, reqs, nil)
	}
	for _, req := range reqs {
		req.src.keysOnly(&r.t.opts)
	}
	return count(ctx, reqs, r.mine)
}

// sized reports whether a request may ask for the items Limit wants, plus one.
func (q *querySpec) sized() bool { return q.pageSize == 0 && q.filter == nil }

// requests are the requests of the planned query: one, or one per shard
// (for a count, those the cursor does not say are done).
func (q *querySpec) requests(p *plan, count bool) []*request {
	what := "query " + q.r.e.name
	if count {
		what = "count " + q.r.e.name
	}
	newRequest := func(in *dynamodb.QueryInput) *request {
		// Without the caller's filter the next item likely counts: probe one.
		return &request{t: q.r.t, src: querySource(in), entity: q.r.e.name, what: what,
			probeOne: q.filter == nil, bind: p.binding.bind, cursorKeys: p.cursorKeys, whole: p.whole}
	}
	if p.shards == nil {
		r := newRequest(p.in)
		r.size = q.sized()
		return []*request{r}
	}
	reqs := make([]*request, 0, len(p.shards))
	for i, in := range p.shards {
		if !count || p.shardPos == nil || p.shardPos[i].State != cursor.ShardDone {
			reqs = append(reqs, newRequest(in))
		}
	}
	return reqs
}

// reader returns what a page (or All, page false) reads, and its limit.
func (q *querySpec) reader(p *plan, page bool) (pager, int) {
	reqs := q.requests(p, false)
	if p.shards == nil {
		return reqs[0], q.limit
	}
	perShard, limit := 0, q.limit
	if q.limit > 0 && q.sized() {
		// A page asks each shard for one item more than it holds, so that
		// a shard ending exactly at the page's end says so.
		perShard = q.limit
		if page {
			perShard++
		}
	}
	if limit == 0 && page {
		limit = 100
		if q.pageSize > 0 {
			limit = int(q.pageSize)
		}
	}
	return newShardMerge(q.r.t, p, reqs, q.desc, perShard), limit
}

// All iterates over the items the query matches (at most Limit), one page
// in memory at a time. An item read past is yielded as a *DecodeError and
// the read goes on; any other error ends it. Each use runs the query again.
func (q *Query[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return seqOf(func(yield func(T, error) bool) error {
		p, err := q.plan(false)
		if err != nil || p.empty {
			return err
		}
		f, limit := q.reader(p, false)
		_, err = paginate(ctx, f, limit, yielder(q.reading(p).take, yield, q.strict), nil)
		return err
	})
}

// Collect reads every item the query matches (at most Limit) into a
// slice; an item All yields a *DecodeError for fails it.
func (q *Query[T]) Collect(ctx context.Context) ([]T, error) { return collect(q.All(ctx)) }

// Count returns how many items the query matches (after filters), with
// Select COUNT. Limit is ignored. For an entity matching keys
// ([Schema].MatchKeys) the keys are read and the items counted.
func (q *Query[T]) Count(ctx context.Context) (int, error) {
	p, err := q.plan(true)
	if err != nil || p.empty {
		return 0, err
	}
	return q.reading(p).countItems(ctx, q.requests(p, true))
}

// Request returns the QueryInput the query would send first, without
// sending it. With Limit(n) and no Filter or PageSize it asks for n+1
// items, as Page and All do: the extra one tells whether the query goes on.
func (q *Query[T]) Request() (*dynamodb.QueryInput, error) {
	p, err := q.plan(false)
	if err != nil {
		return nil, err
	}
	if q.limit > 0 && q.sized() {
		p.in.Limit = aws.Int32(int32(min(q.limit+1, 1000)))
	}
	return p.in, nil
}
