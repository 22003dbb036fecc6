package singletable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
)

// SortOp is a comparison on a sort key, used with [Query.Where].
type SortOp int

// Sort key comparisons. With fields f1..fn given, f1..fn-1 must equal the
// key's values and fn is compared with the operator; Eq with fewer fields
// than the sort key has is a prefix match (begins_with on the rendered key).
const (
	Eq SortOp = iota + 1
	Lt
	Le
	Gt
	Ge
)

func (op SortOp) String() string {
	switch op {
	case Eq:
		return "="
	case Lt:
		return "<"
	case Le:
		return "<="
	case Gt:
		return ">"
	case Ge:
		return ">="
	}
	return fmt.Sprintf("SortOp(%d)", int(op))
}

const (
	sortNone = iota
	sortCmp
	sortBetween
	sortBeginsWith
)

// maxRune is the largest code point. The key codec escapes it, so
// prefix+maxRune is above every key that starts with prefix.
const maxRune = "\U0010FFFF"

// Query reads the items of one partition of the table or of an index
// ([Query API]), optionally narrowed by a sort key condition. Build it with
// [Repo.Query] or [Repo.QueryIndex], then call [Query.Page], [Query.All] or
// [Query.Count]. Builder methods record mistakes; the final call reports
// them before sending anything. A Query is a value you may reuse.
//
// Limit counts items returned to you (after filters); PageSize is
// DynamoDB's Limit, the number of items read per request.
//
// [Query API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
type Query[T any] struct {
	querySpec
	r   *Repo[T]
	key T
	hi  T
}

// querySpec is what a Query says apart from its key values (key, and hi
// for Between): the part that does not depend on T, compiled once rather
// than once per entity type. Its r is the repository's boundEntity.
type querySpec struct {
	r          *boundEntity
	index      string
	kind       int
	op         SortOp
	fields     []string
	prefix     string
	filter     *expression.ConditionBuilder
	project    []string
	desc       bool
	limit      int
	pageSize   int32
	after      string
	consistent bool
	errs       []error
}

// Query starts a query on the table's primary key: key supplies every field
// of the PK template. Without a sort condition it returns all items of this
// entity in the partition.
func (r *Repo[T]) Query(key T) *Query[T] {
	return &Query[T]{querySpec: querySpec{r: &r.boundEntity}, r: r, key: key}
}

// QueryIndex starts a query on the named index: key supplies every field of
// the index's partition key.
func (r *Repo[T]) QueryIndex(index string, key T) *Query[T] {
	q := &Query[T]{querySpec: querySpec{r: &r.boundEntity, index: index}, r: r, key: key}
	if _, err := r.e.index(index); err != nil {
		q.errs = append(q.errs, err)
	}
	return q
}

func (q *Query[T]) clone() *Query[T] {
	c := *q
	c.errs = append([]error(nil), q.errs...)
	return &c
}

func (q *Query[T]) setSort(kind int, op SortOp, fields []string) *Query[T] {
	c := q.clone()
	if c.kind != sortNone {
		c.errs = append(c.errs, validationErr(q.r.e.name, "", "only one sort key condition per query"))
	}
	if len(fields) == 0 {
		c.errs = append(c.errs, validationErr(q.r.e.name, "", "a sort key condition names at least one field"))
	}
	c.kind, c.op, c.fields = kind, op, fields
	return c
}

// Where adds a sort key condition on the named sort key fields, whose values
// come from the query's key. The fields must be the sort key's first fields,
// in order: Where(Ge, "Level", "Years") means Level = key.Level and
// Years >= key.Years. A zero value is a real value: name only the fields you
// mean to give.
func (q *Query[T]) Where(op SortOp, fields ...string) *Query[T] {
	c := q.setSort(sortCmp, op, fields)
	if op < Eq || op > Ge {
		c.errs = append(c.errs, validationErr(q.r.e.name, "", "unknown sort operator %d", int(op)))
	}
	return c
}

// Between adds the sort key condition key.last <= last <= hi.last, where
// last is the final named field and the fields before it equal the key's.
func (q *Query[T]) Between(hi T, fields ...string) *Query[T] {
	c := q.setSort(sortBetween, 0, fields)
	c.hi = hi
	return c
}

// BeginsWith adds the sort key condition "the final named field starts with
// prefix" (a string field), the fields before it equal to the key's. This is
// a deliberate partial match: BeginsWith("2024-01", "Date") matches every
// date in January 2024.
func (q *Query[T]) BeginsWith(prefix string, fields ...string) *Query[T] {
	c := q.setSort(sortBeginsWith, 0, fields)
	c.prefix = prefix
	return c
}

// Filter adds a filter applied after reading (FilterExpression); items it
// drops still cost read capacity. Build cond with the SDK's expression
// package, naming fields by their Go names, as in Where and Fields:
// expression.Name("Public") for a field Public stored as "pub". The first
// element of each name path is resolved (nested elements and map keys, as
// in "Meta.Tags[0]", stay as written); an attribute name the items are
// stored with (a field's dynamodbav name, a key or index attribute, the
// entity type attribute) is accepted as is, and a Go field name wins over
// another field's stored name spelled the same. Any other name is a
// *ValidationError naming it, before a request is sent. A time value
// compared with a time field is written in the form the field is stored
// in (a date, epoch seconds, …), not the SDK's RFC 3339 text.
func (q *Query[T]) Filter(cond expression.ConditionBuilder) *Query[T] {
	c := q.clone()
	if c.filter != nil {
		f := c.filter.And(cond)
		c.filter = &f
	} else {
		c.filter = &cond
	}
	return c
}

// Fields limits the attributes read to the named Go fields, plus the keys
// (which give back the fields of the primary key templates, as for
// [ReadOptions].Fields).
func (q *Query[T]) Fields(names ...string) *Query[T] {
	c := q.clone()
	c.project = append(append([]string(nil), q.project...), names...)
	return c
}

// Desc returns items in descending sort key order.
func (q *Query[T]) Desc() *Query[T] { c := q.clone(); c.desc = true; return c }

// Limit caps the items returned: a page holds exactly n items unless the
// query runs out, however many the filters drop.
func (q *Query[T]) Limit(n int) *Query[T] {
	c := q.clone()
	if n < 0 {
		c.errs = append(c.errs, validationErr(q.r.e.name, "", "negative Limit"))
	}
	c.limit = n
	return c
}

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (q *Query[T]) PageSize(n int) *Query[T] {
	c := q.clone()
	if n < 1 || n > 1<<30 {
		c.errs = append(c.errs, validationErr(q.r.e.name, "", "PageSize must be positive"))
	}
	c.pageSize = int32(n)
	return c
}

// After resumes the query after the last item of the page that returned
// cursor. An empty cursor starts from the beginning.
func (q *Query[T]) After(cursor string) *Query[T] { c := q.clone(); c.after = cursor; return c }

// ConsistentRead asks for strongly consistent reads (table queries only).
func (q *Query[T]) ConsistentRead() *Query[T] { c := q.clone(); c.consistent = true; return c }

// Page is one page of results. Cursor is empty when there are no more.
type Page[T any] struct {
	Items  []T
	Cursor string
}

// plan is a validated query, ready to send.
type plan struct {
	in         *dynamodb.QueryInput
	bind       [16]byte
	binding    binding // bind, and the legacy binding cursors may carry
	cursorKeys []string
	empty      bool // the sort range is empty: no request needed

	shards   []*dynamodb.QueryInput // one per shard of a write-sharded index
	shardPos []cursor.ShardPos      // from the cursor, for sharded queries
}

func (q *Query[T]) plan(count bool) (*plan, error) {
	return q.querySpec.plan(count, reflect.ValueOf(&q.key).Elem(), reflect.ValueOf(&q.hi).Elem())
}

// plan is [Query.plan] given the query's key values: kv the key, hv the
// upper bound of Between (addressable Ts).
func (q *querySpec) plan(count bool, kv, hv reflect.Value) (*plan, error) {
	if len(q.errs) > 0 {
		return nil, errors.Join(q.errs...)
	}
	r, e, t := q.r, q.r.e, q.r.t
	// conds is the key condition: the partition key first.
	var conds []keyCond
	var parts []string // the partition's key values
	nPart := 1         // how many of conds are the partition's
	p := &plan{}
	var idx *indexPlan
	if q.index != "" {
		idx, _ = e.index(q.index)
	}
	switch {
	case idx == nil || !idx.multi:
		pkAttr, skAttr, pkKey, skKey, name := t.opts.PartitionKey, t.opts.SortKey, e.pk, e.sk, "PK"
		if idx != nil {
			pkAttr, skAttr, pkKey, skKey, name = idx.pkAttr, idx.skAttr, idx.pk, idx.sk, idx.pkAttr
		}
		pk, err := e.renderKey(pkKey, kv, q.index, name)
		if err != nil {
			return nil, err
		}
		parts = []string{pk}
		conds = append(conds, keyCond{attr: pkAttr, op: expr.OpEq, v1: &types.AttributeValueMemberS{Value: pk}})
		p.cursorKeys = []string{pkAttr}
		if skAttr != "" {
			p.cursorKeys = append(p.cursorKeys, skAttr)
		}
		kc, empty, err := q.templatedSort(skKey, skAttr, kv, hv)
		if err != nil {
			return nil, err
		}
		if kc != nil {
			conds = append(conds, *kc)
		}
		p.empty = empty
	default:
		mc, mparts, err := q.multiKey(idx, kv, hv)
		if err != nil {
			return nil, err
		}
		conds, parts = mc, mparts
		nPart = len(idx.partition)
		for _, f := range idx.deps {
			p.cursorKeys = append(p.cursorKeys, f.Attr)
		}
	}
	if idx != nil {
		p.cursorKeys = append(p.cursorKeys, t.opts.PartitionKey)
		if t.opts.SortKey != "" {
			p.cursorKeys = append(p.cursorKeys, t.opts.SortKey)
		}
		if q.consistent {
			return nil, validationErr(e.name, q.index, "global secondary indexes do not support consistent reads")
		}
	}
	dir := "asc"
	if q.desc {
		dir = "desc"
	}
	p.binding = partitionBinding(t.name, q.index, e.name, parts, dir)
	p.bind = p.binding.bind

	var proj []string // attribute names to read, nil for all
	if len(q.project) > 0 && !count {
		attrs, err := r.projectionAttrs(q.project)
		if err != nil {
			return nil, err
		}
		proj = append(attrs, p.cursorKeys...)
	}
	if idx != nil && idx.shards > 0 {
		// A write-sharded index: one query per shard, merged by the caller.
		shardConds := make([][]keyCond, idx.shards)
		for shard := 0; shard < idx.shards; shard++ {
			sc := slices.Clone(conds)
			sc[0].v1 = &types.AttributeValueMemberS{Value: shardKey(parts[0], shard)}
			shardConds[shard] = sc
			in, err := q.input(sc, proj, count)
			if err != nil {
				return nil, err
			}
			p.shards = append(p.shards, in)
		}
		p.in = p.shards[0]
		if q.after != "" {
			pos, err := t.decodeShardCursor(q.after, p.bind, p.cursorKeys, idx.shards)
			if err != nil {
				return nil, err
			}
			for i, sp := range pos {
				if sp.State == cursor.ShardAfter {
					if err := checkCursorKey(sp.Key, shardConds[i], nPart); err != nil {
						return nil, err
					}
				}
			}
			p.shardPos = pos
		}
		return p, nil
	}
	in, err := q.input(conds, proj, count)
	if err != nil {
		return nil, err
	}
	if q.after != "" {
		start, err := t.decodeBoundCursor(q.after, p.binding, p.cursorKeys)
		if err != nil {
			return nil, err
		}
		if err := checkCursorKey(start, conds, nPart); err != nil {
			return nil, err
		}
		in.ExclusiveStartKey = start
	}
	p.in = in
	return p, nil
}

// keyCond is one comparison of a key condition.
type keyCond struct {
	attr   string
	op     string // an expr.Op constant, or between or beginsWith
	v1, v2 types.AttributeValue
}

const (
	opBetween    = "BETWEEN"
	opBeginsWith = "begins_with"
)

func keyCmp(attr, op string, v string) *keyCond {
	return &keyCond{attr: attr, op: op, v1: &types.AttributeValueMemberS{Value: v}}
}

// write writes the comparison into a key condition.
func (c keyCond) write(b *expr.Builder) string {
	name, v1 := b.Name(c.attr), b.Value(c.v1)
	switch c.op {
	case opBetween:
		return expr.Between(name, v1, b.Value(c.v2))
	case opBeginsWith:
		return expr.BeginsWith(name, v1)
	}
	return expr.Compare(name, c.op, v1)
}

// writeKeyConds writes a key condition: the comparisons joined by AND.
func writeKeyConds(b *expr.Builder, conds []keyCond) string {
	if len(conds) == 1 {
		return conds[0].write(b)
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.write(b)
	}
	return strings.Join(parts, " AND ")
}

// input assembles one QueryInput: the key condition, the entity type
// filter (and the caller's filter), and the projection.
func (q *querySpec) input(conds []keyCond, proj []string, count bool) (*dynamodb.QueryInput, error) {
	t, e := q.r.t, q.r.e
	var b expr.Builder
	keyCond := writeKeyConds(&b, conds)
	// Only this entity's items: a partition may hold several entity types.
	filter := e.typeFilter(&b, &t.opts)
	if q.filter != nil {
		user, err := b.Conditions(e.condNames(t, "filter"), *q.filter)
		if err != nil {
			return nil, condErr(e.name, "bad query filter", err)
		}
		filter = expr.And(filter, user)
	}
	in := &dynamodb.QueryInput{
		TableName:                 &t.name,
		KeyConditionExpression:    &keyCond,
		FilterExpression:          &filter,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	}
	if proj != nil {
		in.ProjectionExpression = aws.String(b.Projection(proj...))
		in.ExpressionAttributeNames = b.Names()
	}
	if err := checkExprLimits(e.name, exprParts{kinds: []string{"key condition", "filter", "projection"},
		exprs: []*string{in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression},
		names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}); err != nil {
		return nil, err
	}
	if q.index != "" {
		in.IndexName = aws.String(q.index)
	}
	if q.desc {
		in.ScanIndexForward = aws.Bool(false)
	}
	if q.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	if q.pageSize > 0 {
		in.Limit = aws.Int32(q.pageSize)
	}
	if count {
		in.Select = types.SelectCount
	}
	return in, nil
}

// sortFields checks that names are the first fields of the sort key, in
// order, and returns how many.
func (q *querySpec) sortFields(have []*model.Field, what string) error {
	if len(q.fields) > len(have) {
		return validationErr(q.r.e.name, what, "sort condition names %d fields; the sort key has %d (%s)", len(q.fields), len(have), fieldNames(have))
	}
	for i, name := range q.fields {
		if have[i].Name != name {
			if _, err := q.r.e.field(name); err != nil {
				return err
			}
			return validationErr(q.r.e.name, name, "not sort key field %d of %s: the sort key's fields are, in order: %s", i+1, what, fieldNames(have))
		}
	}
	return nil
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

// templatedSort builds the key condition on a rendered sort key. Because
// escaped values contain no byte below '%' and every placeholder is followed
// by a delimiter below '%' (or ends the key), comparing rendered keys
// compares field tuples; the ranges below rely on that. empty reports a
// range that can hold nothing.
func (q *querySpec) templatedSort(sk compiledKey, attr string, kv, hv reflect.Value) (*keyCond, bool, error) {
	c, empty, err := q.templatedSortCond(sk, attr, kv, hv)
	if err == nil && c != nil {
		clampUpper(c)
		err = q.checkSortSize(*c)
	}
	return c, empty, err
}

// clampUpper rewrites a sort key condition whose upper bound U is longer
// than a sort key can be (the library's bounds end in U+10FFFF, so a key
// near the limit gives one) into the condition that matches the same keys
// and that DynamoDB accepts: a key of at most 1024 bytes of UTF-8 is at or
// below U exactly when it is at or below U cut at its last rune boundary
// within the limit, followed by the greatest string that fits in the bytes
// left. (Below U is the same as at or below for such a key.)
func clampUpper(c *keyCond) {
	limit := keyLimit(true)
	long := func(av types.AttributeValue) (string, bool) {
		if s, ok := av.(*types.AttributeValueMemberS); ok && len(s.Value) > limit {
			return s.Value, true
		}
		return "", false
	}
	switch c.op {
	case opBetween:
		if u, ok := long(c.v2); ok {
			c.v2 = &types.AttributeValueMemberS{Value: clampBound(u, limit)}
		}
	case expr.OpLe, expr.OpLt:
		if u, ok := long(c.v1); ok {
			c.op, c.v1 = expr.OpLe, &types.AttributeValueMemberS{Value: clampBound(u, limit)}
		}
	}
}

// clampBound is the greatest string of at most limit bytes of UTF-8 that
// is at or below u on the strings of at most limit bytes (len(u) > limit).
func clampBound(u string, limit int) string {
	j := limit
	for j > 0 && !utf8.RuneStart(u[j]) {
		j--
	}
	// The rune at j does not fit; the greatest rune of the bytes left does.
	switch limit - j {
	case 0:
		return u[:j]
	case 1:
		return u[:j] + "\x7f"
	case 2:
		return u[:j] + "\u07ff"
	}
	return u[:j] + "\uffff"
}

// checkSortSize refuses, before the network, a sort key condition with a
// value DynamoDB refuses: one over its 1024-byte limit of a sort key
// attribute (as long as a key no item can have).
func (q *querySpec) checkSortSize(conds ...keyCond) error {
	for _, c := range conds {
		for _, av := range []types.AttributeValue{c.v1, c.v2} {
			if n, limit := keyBytes(av), keyLimit(true); n > limit {
				return &KeyError{Entity: q.r.e.name, Index: q.index, Key: c.attr,
					Err: fmt.Errorf("sort key condition value is %d bytes, over DynamoDB's %d-byte limit", n, limit)}
			}
		}
	}
	return nil
}

// templatedSortCond is templatedSort before the size check.
func (q *querySpec) templatedSortCond(sk compiledKey, attr string, kv, hv reflect.Value) (*keyCond, bool, error) {
	e := q.r.e
	where := attr
	if q.index != "" {
		where = "index " + q.index
	}
	if q.kind == sortNone {
		if !sk.defined() {
			return nil, false, nil
		}
		if cp := sk.tpl.ConstantPrefix(); cp != "" {
			if len(sk.fields) == 0 {
				return keyCmp(attr, expr.OpEq, cp), false, nil
			}
			return keyCmp(attr, opBeginsWith, cp), false, nil
		}
		return nil, false, nil
	}
	if !sk.defined() {
		return nil, false, validationErr(e.name, where, "sort condition on a key without a sort key")
	}
	if err := q.sortFields(sk.fields, where); err != nil {
		return nil, false, err
	}
	n := len(q.fields)
	last, place := sk.fields[n-1], sk.places[n-1]
	// prefix: the rendered key up to the last named field's value; L: the
	// literal after that value ("" at the end of the template).
	b, err := sk.tpl.AppendPrefix(nil, sk.fields, kv, n-1)
	if err != nil {
		return nil, false, renderKeyError(e.name, q.index, attr, err)
	}
	prefix, L := string(b), sk.tpl.LiteralAfter(n-1)
	encode := func(v reflect.Value) (string, error) {
		if !last.Present(v) {
			return "", &KeyError{Entity: e.name, Index: q.index, Key: attr, Missing: []string{last.Name}}
		}
		fv, _ := last.Get(v)
		b, err := place.AppendValue(nil, fv)
		if err != nil {
			return "", valueKeyError(e.name, q.index, attr, last.Name, err)
		}
		return string(b), nil
	}
	// eqHigh is the highest key whose last field equals E.
	eqHigh := func(E string) string {
		if L == "" {
			return prefix + E
		}
		return prefix + E + L + maxRune
	}
	var c *keyCond
	between := func(lo, hi string) (*keyCond, bool, error) {
		if lo > hi {
			return nil, true, nil
		}
		c := keyCmp(attr, opBetween, lo)
		c.v2 = &types.AttributeValueMemberS{Value: hi}
		return c, false, nil
	}
	switch q.kind {
	case sortBeginsWith:
		if k := last.Type.Kind(); place.Format == nil && k != reflect.String && !(k == reflect.Pointer && last.Type.Elem().Kind() == reflect.String) {
			return nil, false, validationErr(e.name, last.Name, "BeginsWith needs a string field or a placeholder with a format, not %s", last.Type)
		}
		if q.prefix == "" && prefix == "" {
			return nil, false, nil
		}
		b, err := place.AppendPrefix([]byte(prefix), q.prefix)
		if err != nil {
			return nil, false, valueKeyError(e.name, q.index, attr, last.Name, err)
		}
		return keyCmp(attr, opBeginsWith, string(b)), false, nil
	case sortBetween:
		lo, err := encode(kv)
		if err != nil {
			return nil, false, err
		}
		hi, err := encode(hv)
		if err != nil {
			return nil, false, err
		}
		return between(prefix+lo, eqHigh(hi))
	}
	E, err := encode(kv)
	if err != nil {
		return nil, false, err
	}
	switch q.op {
	case Eq:
		if n == len(sk.fields) {
			c = keyCmp(attr, expr.OpEq, prefix+E+L) // the whole key: L ends it
		} else {
			c = keyCmp(attr, opBeginsWith, prefix+E+L)
		}
	case Ge:
		if prefix == "" {
			c = keyCmp(attr, expr.OpGe, E)
		} else {
			return between(prefix+E, prefix+maxRune)
		}
	case Gt:
		// Escaped values continue with bytes from '%' up, and the
		// delimiter after them is below it, so E+"%" is above every key
		// holding E and at or below every key holding more.
		above := E + "%"
		if place.Format != nil {
			above = formattedAbove(E, L)
		}
		if prefix == "" {
			c = keyCmp(attr, expr.OpGe, above)
		} else {
			return between(prefix+above, prefix+maxRune)
		}
	case Le:
		if prefix == "" {
			c = keyCmp(attr, expr.OpLe, eqHigh(E))
		} else {
			return between(prefix, eqHigh(E))
		}
	case Lt:
		if prefix == "" {
			c = keyCmp(attr, expr.OpLt, E)
		} else if place.Format != nil {
			return between(prefix, prefix+formattedBelow(E))
		} else {
			return between(prefix, prefix+predecessor(E)+maxRune)
		}
	}
	return c, false, nil
}

// formattedAbove returns the lowest string, after the prefix, of the keys
// whose value for a formatted placeholder is above E (L is the literal
// after it): every key holding E is prefix+E+L+… (below prefix+E+L+maxRune,
// which no key equals) or, at the end of the template, prefix+E itself,
// whose successor is E+"\x00". A raw value continuing E is above both
// when it holds no byte below the delimiter (the catalog lint warns where
// it may).
func formattedAbove(E, L string) string {
	if L == "" {
		return E + "\x00"
	}
	return E + L + maxRune
}

// formattedBelow returns the highest string of the keys whose value for a
// formatted placeholder is below E (an inclusive bound): the strings below
// E are those at or below E without its last byte when that byte is NUL,
// and otherwise those below E with its last rune decremented, followed by
// anything (maxRune).
func formattedBelow(E string) string {
	if E[len(E)-1] == 0 {
		return E[:len(E)-1]
	}
	return predecessor(E) + maxRune
}

// predecessor returns E with its last rune decremented: every encoded value
// below E, followed by anything, sorts at or below predecessor(E)+maxRune.
// Encoded values end in a rune >= '&', so the result stays valid UTF-8.
func predecessor(E string) string {
	r, size := utf8.DecodeLastRuneInString(E)
	r--
	if r >= 0xD800 && r <= 0xDFFF {
		r = 0xD7FF
	}
	return E[:len(E)-size] + string(r)
}

// multiKey builds the key conditions of a multi-attribute index: equality
// on every partition attribute, then the sort attributes left to right.
func (q *querySpec) multiKey(idx *indexPlan, kv, hv reflect.Value) ([]keyCond, []string, error) {
	var conds []keyCond
	var parts []string
	for _, f := range idx.partition {
		av, err := q.multiValue(idx, f, kv)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, keyCond{attr: f.Attr, op: expr.OpEq, v1: av})
		parts = append(parts, avString(av))
	}
	sc, err := q.multiSort(idx, kv, hv)
	return append(conds, sc...), parts, err
}

// multiValue is the key attribute value of field f of kv in a
// multi-attribute index.
func (q *querySpec) multiValue(idx *indexPlan, f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	e := q.r.e
	if !f.Present(v) {
		return nil, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}}
	}
	av, err := e.marshalField(f, v)
	if err != nil || av == nil {
		return nil, keyErrorOr(err, &KeyError{Entity: e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}, Err: err})
	}
	return av, nil
}

// multiSort builds the sort key conditions of a multi-attribute index:
// the sort attributes left to right.
func (q *querySpec) multiSort(idx *indexPlan, kv, hv reflect.Value) ([]keyCond, error) {
	e := q.r.e
	if q.kind == sortNone {
		return nil, nil
	}
	value := func(f *model.Field, v reflect.Value) (types.AttributeValue, error) { return q.multiValue(idx, f, v) }
	var conds []keyCond
	where := "index " + idx.name
	if err := q.sortFields(idx.sort, where); err != nil {
		return nil, err
	}
	n := len(q.fields)
	for _, f := range idx.sort[:n-1] {
		av, err := value(f, kv)
		if err != nil {
			return nil, err
		}
		conds = append(conds, keyCond{attr: f.Attr, op: expr.OpEq, v1: av})
	}
	last := idx.sort[n-1]
	if q.kind == sortBeginsWith {
		if st, _ := scalarType(last); st != types.ScalarAttributeTypeS {
			return nil, validationErr(e.name, last.Name, "BeginsWith needs a string attribute")
		}
		conds = append(conds, *keyCmp(last.Attr, opBeginsWith, q.prefix))
		return conds, q.checkSortSize(conds...)
	}
	av, err := value(last, kv)
	if err != nil {
		return nil, err
	}
	c := keyCond{attr: last.Attr, v1: av}
	switch {
	case q.kind == sortBetween:
		hi, err := value(last, hv)
		if err != nil {
			return nil, err
		}
		c.op, c.v2 = opBetween, hi
	case q.op == Eq:
		c.op = expr.OpEq
	case q.op == Lt:
		c.op = expr.OpLt
	case q.op == Le:
		c.op = expr.OpLe
	case q.op == Gt:
		c.op = expr.OpGt
	case q.op == Ge:
		c.op = expr.OpGe
	}
	clampUpper(&c)
	conds = append(conds, c)
	return conds, q.checkSortSize(conds...)
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

// cursorFor makes the cursor that resumes after item.
func (q *querySpec) cursorFor(p *plan, item map[string]types.AttributeValue) (string, error) {
	return q.r.t.encodeCursor(p.bind, p.cursorKeys, item)
}

// Page returns one page. With Limit(n) it holds exactly n items unless the
// query runs out, and its cursor resumes right after the last item. Without
// Limit it holds what one request returned (reading on past pages that the
// filters emptied). Either way the cursor is empty when no item follows:
// a page that ends where a response ended reads ahead (one request, more
// when filters empty the responses) to find out.
func (q *Query[T]) Page(ctx context.Context) (Page[T], error) {
	var page Page[T]
	p, err := q.plan(false)
	if err != nil || p.empty {
		return page, err
	}
	if p.shards != nil {
		return q.shardedPage(ctx, p)
	}
	in := p.in
	for {
		if q.limit > 0 && q.pageSize == 0 && q.filter == nil {
			// One item more than wanted: when the query ends exactly at
			// the page's end, DynamoDB says so (no LastEvaluatedKey) and
			// the page gets no cursor to an empty page.
			in.Limit = aws.Int32(int32(min(q.limit-len(page.Items)+1, 1000)))
		}
		out, err := q.r.t.api(ctx, q.r.e.name).Query(ctx, in)
		if err != nil {
			return Page[T]{}, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err)
		}
		grow := len(out.Items)
		if q.limit > 0 {
			grow = min(grow, q.limit-len(page.Items)) // the extra item is not decoded
		}
		page.Items = slices.Grow(page.Items, grow)
		for i, item := range out.Items {
			if q.notMine(item) {
				continue
			}
			// Decode in place: no copy of T per item.
			n := len(page.Items)
			page.Items = page.Items[:n+1]
			if err := q.r.e.decodeInto(q.r.t, item, &page.Items[n]); err != nil {
				return Page[T]{}, err
			}
			if q.limit > 0 && len(page.Items) == q.limit {
				more := i < len(out.Items)-1 && (!q.r.e.foreign.matchKeys || slices.ContainsFunc(out.Items[i+1:], q.mine))
				if !more && out.LastEvaluatedKey != nil {
					if more, err = q.r.t.moreAfter(ctx, in, out.LastEvaluatedKey, q.mine, false); err != nil {
						return Page[T]{}, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err)
					}
				}
				if more {
					if page.Cursor, err = q.cursorFor(p, item); err != nil {
						return Page[T]{}, err
					}
				}
				return page, nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		if q.limit == 0 && len(page.Items) > 0 {
			// A lookahead, as for a page that filled its Limit: the
			// cursor only when an item follows. Without a filter of the
			// caller's, the next item is mostly the entity's, so the
			// first probe reads one item; later ones read a page's worth.
			more, err := q.r.t.moreAfter(ctx, in, out.LastEvaluatedKey, q.mine, q.filter == nil)
			if err != nil {
				return Page[T]{}, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err)
			}
			if !more {
				return page, nil
			}
			page.Cursor, err = q.cursorFor(p, out.LastEvaluatedKey)
			return page, err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// mine reports whether an item the query's filter let through is the
// entity's: always, unless the entity matches keys, whose untyped items
// the filter checks only by their keys' constant text, and whose key must
// also parse with the entity's templates (see Entity.owns).
func (q *querySpec) mine(item map[string]types.AttributeValue) bool {
	return !q.r.e.foreign.matchKeys || q.r.e.owns(&q.r.t.opts, item)
}

// notMine is !mine, with the test of matchKeys inlined on the fast path.
func (q *querySpec) notMine(item map[string]types.AttributeValue) bool {
	return q.r.e.foreign.matchKeys && !q.r.e.owns(&q.r.t.opts, item)
}

// moreAfter reports whether the query in still returns an item after
// start: a page that filled its Limit exactly at the end of a response
// that had more to read looks ahead, so that it gives a cursor only when
// another item follows. Filters (the entity type's included) may drop
// whole responses, so it reads on until an item or the end. Only items
// mine accepts count (for an entity matching keys the filter's verdict on
// an untyped item is not final, see Query.mine).
//
// With probeOne the first request reads one item (a likely hit costs half a
// read unit); when that item does not count, the rest read as in does, so
// k items of other entities cost 1 + k/PageSize requests, not k.
func (t *Table) moreAfter(ctx context.Context, in *dynamodb.QueryInput, start map[string]types.AttributeValue, mine func(map[string]types.AttributeValue) bool, probeOne bool) (bool, error) {
	la := *in
	la.ExclusiveStartKey = start
	if probeOne {
		la.Limit = aws.Int32(1)
	}
	for {
		out, err := t.api(ctx, "").Query(ctx, &la)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(out.Items, mine) {
			return true, nil
		}
		if out.LastEvaluatedKey == nil {
			return false, nil
		}
		la.ExclusiveStartKey = out.LastEvaluatedKey
		la.Limit = in.Limit
	}
}

// All returns an iterator over every item the query matches (at most Limit,
// when set), reading pages as it goes: only one page is held at a time. It
// stops after yielding an error. Each call to the iterator runs the query
// again.
func (q *Query[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		p, err := q.plan(false)
		if err != nil {
			yield(zero, err)
			return
		}
		if p.empty {
			return
		}
		if p.shards != nil {
			q.shardedAll(ctx, p, yield)
			return
		}
		in := p.in
		n := 0
		for {
			if q.limit > 0 && q.pageSize == 0 && q.filter == nil {
				// n+1, as Page asks (and Request shows): one request shape.
				in.Limit = aws.Int32(int32(min(q.limit-n+1, 1000)))
			}
			out, err := q.r.t.api(ctx, q.r.e.name).Query(ctx, in)
			if err != nil {
				yield(zero, fmt.Errorf("singletable: query %s: %w", q.r.e.name, err))
				return
			}
			for _, item := range out.Items {
				if q.notMine(item) {
					continue
				}
				v, err := q.r.e.decode(q.r.t, item)
				if !yield(v, err) || err != nil {
					return
				}
				n++
				if q.limit > 0 && n == q.limit {
					return
				}
			}
			if out.LastEvaluatedKey == nil {
				return
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
}

// Collect reads every item the query matches (at most Limit) into a slice.
func (q *Query[T]) Collect(ctx context.Context) ([]T, error) {
	var out []T
	for v, err := range q.All(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Count returns how many items the query matches (after filters), reading
// with Select COUNT so no item is sent back. Limit is ignored.
func (q *Query[T]) Count(ctx context.Context) (int, error) {
	p, err := q.plan(true)
	if err != nil || p.empty {
		return 0, err
	}
	if p.shards != nil {
		return q.shardedCount(ctx, p)
	}
	total := 0
	in := p.in
	if q.r.e.foreign.matchKeys {
		q.countByKeys(in)
	}
	for {
		out, err := q.r.t.api(ctx, q.r.e.name).Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("singletable: count %s: %w", q.r.e.name, err)
		}
		if in.Select != types.SelectCount {
			for _, item := range out.Items {
				if q.mine(item) {
					total++
				}
			}
		} else {
			total += int(out.Count)
		}
		if out.LastEvaluatedKey == nil {
			return total, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// countByKeys makes a count of an entity matching keys read the keys and
// the entity type of the items instead (the filter's verdict on an untyped
// item is not final, see Query.mine): Count checks each.
func (q *querySpec) countByKeys(in *dynamodb.QueryInput) {
	o := &q.r.t.opts
	names := maps.Clone(in.ExpressionAttributeNames)
	refs := make([]string, 0, 3)
	for i, a := range []string{o.PartitionKey, o.SortKey, o.EntityTypeAttr} {
		if a == "" {
			continue
		}
		ref := fmt.Sprintf("#k%d", i)
		names[ref] = a
		refs = append(refs, ref)
	}
	in.Select = types.SelectSpecificAttributes
	in.ProjectionExpression = aws.String(strings.Join(refs, ", "))
	in.ExpressionAttributeNames = names
}

// Request returns the QueryInput the query would send first, without
// sending it: for logging, golden tests and learning what the library does.
// With Limit(n) and no Filter or PageSize it asks for n+1 items, as Page
// and All send: the extra item tells whether the query continues.
func (q *Query[T]) Request() (*dynamodb.QueryInput, error) {
	p, err := q.plan(false)
	if err != nil {
		return nil, err
	}
	if q.limit > 0 && q.pageSize == 0 && q.filter == nil {
		p.in.Limit = aws.Int32(int32(min(q.limit+1, 1000)))
	}
	return p.in, nil
}
