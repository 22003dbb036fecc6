package singletable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keycond"
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

// The kinds of sort key condition (internal/keycond).
const (
	sortNone       = keycond.None
	sortCmp        = keycond.Cmp
	sortBetween    = keycond.Between
	sortBeginsWith = keycond.BeginsWith
)

// Query reads one partition of the table or of an index ([Query API]),
// optionally narrowed by a sort key condition. Builder methods return a
// copy and record mistakes, which the final call reports before sending.
//
// [Query API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
type Query[T any] struct {
	querySpec
	r    *Repo[T]
	part T // the key as given: the partition's values, which no condition changes
	key  T
	hi   T
}

// querySpec is a Query apart from its key values: the part that does not
// depend on T, compiled once rather than once per entity type.
type querySpec struct {
	readSpec
	r      *repo
	kind   keycond.Kind
	op     SortOp
	field  string // the sort key field the condition names
	prefix string
	whole  bool // Complete
}

// Query starts a query of the entity's items in key's partition (key
// supplies every field of the PK template). optFns' [ReadOptions] apply to
// every request; Fields reads the named Go fields plus the keys.
func (r *Repo[T]) Query(key T, optFns ...func(*ReadOptions)) *Query[T] {
	return &Query[T]{querySpec: querySpec{r: &r.repo, readSpec: newReadSpec(r.e.name, "", optFns)}, r: r, part: key, key: key}
}

// QueryIndex starts a query on the named index: key supplies every field of
// the index's partition key. optFns are as for [Repo.Query]; a global
// secondary index has no consistent reads.
func (r *Repo[T]) QueryIndex(index string, key T, optFns ...func(*ReadOptions)) *Query[T] {
	q := r.Query(key, optFns...)
	q.onIndex(&r.repo, index)
	return q
}

func (q *Query[T]) spec() *readSpec { return &q.readSpec }

func (q *Query[T]) setSort(kind keycond.Kind, op SortOp, field string) *Query[T] {
	c := edited(q, nil)
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
	return edited(q, filterBy(cond))
}

// Complete makes a query of an index that does not hold everything
// ([IndexSchema].Projection) read its items whole from the table, with
// Fields if given: a BatchGetItem per response. An item the table no
// longer holds is left out. Other reads are unchanged.
func (q *Query[T]) Complete() *Query[T] { c := edited(q, nil); c.whole = true; return c }

// Desc returns items in descending sort key order.
func (q *Query[T]) Desc() *Query[T] { return edited(q, (*readSpec).descending) }

// Limit caps the items returned: a page holds exactly n items unless the
// query runs out, however many the filters drop.
func (q *Query[T]) Limit(n int) *Query[T] { return edited(q, limitTo(n)) }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Query[T]) PageSize(n int) *Query[T] { return edited(q, pageSizeOf(n)) }

// After resumes the query after the last item of the page that returned
// cursor. An empty cursor starts from the beginning.
func (q *Query[T]) After(cursor string) *Query[T] { return edited(q, afterCursor(cursor)) }

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

func (q *Query[T]) plan(count bool) *read {
	return planned(q.querySpec.plan(count, reflect.ValueOf(&q.part).Elem(), reflect.ValueOf(&q.key).Elem(), reflect.ValueOf(&q.hi).Elem()))
}

// plan is [Query.plan] given the partition's key pv, the sort condition's
// kv and Between's upper bound hv.
func (q *querySpec) plan(count bool, pv, kv, hv reflect.Value) (*read, error) {
	if len(q.errs) > 0 {
		return nil, errors.Join(q.errs...)
	}
	t, e := q.r.t, q.r.e
	var idx *indexPlan
	if q.index != "" {
		idx, _ = e.index(q.index)
		if q.consistent {
			return nil, validationErr(e.name, q.index, "global secondary indexes do not support consistent reads")
		}
	}
	kc, err := q.keyCondition(idx, pv, kv, hv)
	if err != nil {
		return nil, err
	}
	rd := &read{spec: &q.readSpec, empty: kc.empty, sized: q.sized()}
	ri := &readInput{entity: e.name, what: "query " + e.name, kind: "query", cursorKeys: t.cursorKeys(idx), count: count}
	if count {
		ri.what = "count " + e.name
	}
	if err := q.projection(rd, ri, idx); err != nil {
		return nil, err
	}
	if t.typeFiltered(idx) {
		ri.typed = e
	}
	if q.filter != nil {
		ri.names = t.heldNames(e.name, idx, e.condNames(t, "filter", condScope{query: true, index: q.index}))
	}
	shards := 0
	if idx != nil {
		shards = idx.shards
	}
	return rd, rd.partition(t, shards, kc, e.name, ri)
}

// projection sets what rd, a read of index idx (nil: the table), reads:
// everything; with Fields, theirs and the cursor's keys, refusing one idx
// does not hold unless Complete reads them from the table.
func (q *querySpec) projection(rd *read, ri *readInput, idx *indexPlan) error {
	t, partial := q.r.t, idx != nil && !idx.proj.All()
	rd.byShape = partial && !t.holds(idx, t.opts.EntityTypeAttr)
	if partial && q.whole && !ri.count {
		var ka types.KeysAndAttributes
		var err error
		if len(q.project) > 0 {
			ka.ProjectionExpression, ka.ExpressionAttributeNames, err = q.r.fieldsProjection(q.project)
		}
		ri.whole = repo{t: t, e: q.r.e, byShape: rd.byShape}.readWhole(ka, ri.cursorKeys)
		return err
	}
	if len(q.project) == 0 || ri.count {
		if partial {
			rd.unprojected = q.r.e.unprojected(t, idx)
		}
		return nil
	}
	attrs, err := q.r.projectionAttrs(q.project)
	attrs, err = t.heldAttrs(q.r.e.name, idx, attrs, err)
	attrs = append(attrs, ri.cursorKeys...)
	ri.project = func() ([]string, error) { return attrs, nil }
	return err
}

// keyCondition is a query's key condition: the first nPart on the
// partition's attributes, then on the sort key's.
type keyCondition struct {
	conds []expr.KeyCond
	nPart int
	parts []string // the partition's key values, which the cursor is bound to
	empty bool     // the sort range holds nothing
}

// keyCondition builds the key condition on the index idx (nil: the table):
// the partition's from pv, the sort key's from kv and hv (a field in both
// keys keeps pv's value in the partition).
func (q *querySpec) keyCondition(idx *indexPlan, pv, kv, hv reflect.Value) (keyCondition, error) {
	var kc keyCondition
	var err error
	if kc.conds, kc.parts, err = q.r.partitionCond(idx, pv); err != nil {
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
	conds, err := keycond.Equal(idx.partition, r.multiValue(idx), kv)
	if err != nil {
		return nil, nil, err
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = avString(c.V1)
	}
	return conds, parts, nil
}

// sortCondition builds the sort key part of the key condition on the
// index idx (nil: the table); empty reports an empty range.
func (q *querySpec) sortCondition(idx *indexPlan, kv, hv reflect.Value) (conds []expr.KeyCond, empty bool, err error) {
	k, where, defined := q.sortKey(idx)
	c := keycond.Cond{Kind: q.kind, Op: sortOps[q.op], Prefix: q.prefix}
	if q.kind != sortNone {
		if !defined {
			return nil, false, validationErr(q.r.e.name, where, "sort condition on a key without a sort key")
		}
		if c.N, err = q.sortFields(k.Fields, where); err != nil {
			return nil, false, err
		}
	}
	conds, empty, err = keycond.Sort(k, c, kv, hv)
	ce, ok := err.(*keycond.Error)
	switch {
	case !ok:
		return conds, empty, err
	case ce.Reason != "":
		return nil, false, validationErr(q.r.e.name, ce.Field, "%s", ce.Reason)
	}
	if _, ok := ce.Err.(*keys.RenderError); ok {
		return nil, false, renderKeyError(q.r.e.name, q.index, ce.Attr, ce.Err)
	}
	return nil, false, &KeyError{Entity: q.r.e.name, Index: q.index, Key: ce.Attr, Err: ce.Err}
}

// sortKey is the sort key of the index idx (nil: the table), where names
// it in errors, and whether there is one.
func (q *querySpec) sortKey(idx *indexPlan) (k keycond.Key, where string, defined bool) {
	switch {
	case idx == nil:
		return q.r.e.sk.cond(q.r.t.opts.SortKey), q.r.t.opts.SortKey, q.r.e.sk.defined()
	case idx.multi:
		return keycond.Key{Fields: idx.sort, Value: q.r.multiValue(idx)}, "index " + idx.name, true
	}
	return idx.sk.cond(idx.skAttr), "index " + idx.name, idx.sk.defined()
}

// cond is k as keycond reads it, rendered into attr.
func (k *compiledKey) cond(attr string) keycond.Key {
	return keycond.Key{Attr: attr, Tpl: &k.tpl, Fields: k.fields, Places: k.places}
}

// shapeCond is the key condition of a query without a sort condition: the
// sort keys starting with the template's constant prefix (nil: none).
func shapeCond(sk compiledKey, attr string) *expr.KeyCond { return sk.cond(attr).Shape() }

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

// multiValue gives the value of a field of the multi-attribute index idx
// in a key value.
func (r *repo) multiValue(idx *indexPlan) func(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	e := r.e
	return func(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
		if !f.Present(v) {
			return nil, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}}
		}
		av, err := e.marshalField(f, v)
		if err != nil || av == nil {
			return nil, keyErrorOr(err, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}, Err: err})
		}
		return av, nil
	}
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
func (q *Query[T]) Page(ctx context.Context) (Page[T], error) { return pageOf(ctx, q.r, q.plan(false)) }

// All iterates over the items the query matches (at most Limit), one page
// in memory at a time. An item read past is yielded as a *DecodeError and
// the read goes on; any other error ends it. Each use runs the query again.
func (q *Query[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return allOf(ctx, q.r, func() *read { return q.plan(false) })
}

// Collect reads every item the query matches (at most Limit) into a
// slice; an item All yields a *DecodeError for fails it.
func (q *Query[T]) Collect(ctx context.Context) ([]T, error) { return collect(q.All(ctx)) }

// Count returns how many items the query matches (after filters), with
// Select COUNT. Limit is ignored. For an entity matching keys
// ([Schema].MatchKeys) the keys are read and the items counted.
func (q *Query[T]) Count(ctx context.Context) (int, error) { return q.plan(true).count(ctx, &q.r.repo) }

// Request returns the QueryInput the query would send first, without
// sending it. With Limit(n) and no Filter or PageSize it asks for n+1
// items, as Page and All do: the extra one tells whether the query goes on.
func (q *Query[T]) Request() (*dynamodb.QueryInput, error) {
	in, err := q.plan(false).first()
	return in.Query, err
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
