package singletable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// Collection reads an item collection: every item of one partition of the
// table or of an index, whatever its entity type, with one [Query API]
// request per page. Each item is routed by its entity type attribute to
// the [Target] made for that entity ([Repo.Into], [Repo.IntoOne],
// [Repo.IntoFunc], [Repo.Member]) and decoded there, so a user profile and its skills, or an
// election with its candidates, voters and ballots, come back in one read
// as typed values.
//
// An item whose type no target accepts is an *UnknownTypeError unless
// [Collection.SkipUnknown] is set: it is never decoded into the wrong
// type. Build a Collection with [Repo.Collection] or
// [Repo.IndexCollection]; builder methods return a copy and record
// mistakes, which the final call ([Collection.Collect], [Collection.Page],
// [Collection.All]) reports before sending anything.
//
// [Query API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
type Collection struct {
	t           *Table
	index       string
	keyConds    []keyCond
	partition   string
	cursorKeys  []string
	skipUnknown bool
	desc        bool
	consistent  bool
	limit       int
	pageSize    int32
	after       string
	filter      *expression.ConditionBuilder
	errs        []error
}

// Collection returns the collection in the table partition that key
// belongs to: key supplies the fields of r's partition key template, and
// every item with that partition key, of any entity, is in the collection.
// For the skills service, users.Collection(User{Username: "john"}) holds
// john's profile and his skills.
func (r *Repo[T]) Collection(key T) *Collection {
	c := &Collection{t: r.t}
	kv := reflect.ValueOf(&key).Elem()
	pk, err := r.e.renderKey(r.e.pk, kv, "", "PK")
	if err != nil {
		c.errs = append(c.errs, err)
		return c
	}
	c.partition = pk
	c.keyConds = []keyCond{*keyCmp(r.t.opts.PartitionKey, expr.OpEq, pk)}
	c.cursorKeys = r.t.primaryKeyAttrs()
	return c
}

// IndexCollection returns the collection in a partition of the named
// global secondary index: key supplies the fields of r's partition key for
// that index (templated or multi-attribute), and every item of any entity
// in that index partition is in the collection. A write-sharded index
// (Shards > 0) has no collection: the call reports a *ValidationError
// before any request; read it with [Repo.QueryIndex].
func (r *Repo[T]) IndexCollection(index string, key T) *Collection {
	c := &Collection{t: r.t, index: index}
	idx, err := r.e.index(index)
	if err != nil {
		c.errs = append(c.errs, err)
		return c
	}
	if idx.shards > 0 {
		// The partition is spread over shard partitions of mixed entity
		// types; one request per page would read only the unsuffixed key
		// and find nothing. Refuse rather than return an empty collection.
		c.errs = append(c.errs, validationErr(r.e.name, index, "collection on write-sharded index %s (%d shards) is not supported: read it with QueryIndex, which merges the shards", index, idx.shards))
		return c
	}
	kv := reflect.ValueOf(&key).Elem()
	if !idx.multi {
		pk, err := r.e.renderKey(idx.pk, kv, idx.name, idx.pkAttr)
		if err != nil {
			c.errs = append(c.errs, err)
			return c
		}
		c.partition = pk
		c.keyConds = []keyCond{*keyCmp(idx.pkAttr, expr.OpEq, pk)}
		c.cursorKeys = []string{idx.pkAttr}
		if idx.skAttr != "" {
			c.cursorKeys = append(c.cursorKeys, idx.skAttr)
		}
	} else {
		var parts []string
		for _, f := range idx.partition {
			var av types.AttributeValue
			if f.Present(kv) {
				av, err = r.e.marshalField(f, kv)
			}
			if err != nil || av == nil {
				c.errs = append(c.errs, keyErrorOr(err, &KeyError{Entity: r.e.name, Index: idx.name, Key: f.Attr, Missing: []string{f.Name}, Err: err}))
				return c
			}
			c.keyConds = append(c.keyConds, keyCond{attr: f.Attr, op: expr.OpEq, v1: av})
			parts = append(parts, avString(av))
		}
		c.partition = strings.Join(parts, "\x00")
		for _, f := range idx.deps {
			c.cursorKeys = append(c.cursorKeys, f.Attr)
		}
	}
	c.cursorKeys = append(c.cursorKeys, r.t.primaryKeyAttrs()...)
	return c
}

func (c *Collection) clone() *Collection {
	d := *c
	d.errs = append([]error(nil), c.errs...)
	return &d
}

// SkipUnknown makes items of entity types that no target accepts (and
// items without an entity type) be skipped instead of failing the read.
// Skipped items do not count towards Limit.
func (c *Collection) SkipUnknown() *Collection { d := c.clone(); d.skipUnknown = true; return d }

// Desc reads the partition in descending sort key order.
func (c *Collection) Desc() *Collection { d := c.clone(); d.desc = true; return d }

// ConsistentRead asks for strongly consistent reads (table collections
// only).
func (c *Collection) ConsistentRead() *Collection { d := c.clone(); d.consistent = true; return d }

// Limit caps the items delivered to targets: a page holds exactly n items
// unless the partition runs out, and its cursor resumes right after the
// last one.
func (c *Collection) Limit(n int) *Collection {
	d := c.clone()
	if n < 0 {
		d.errs = append(d.errs, validationErr("", "", "collection: negative Limit"))
	}
	d.limit = n
	return d
}

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (c *Collection) PageSize(n int) *Collection {
	d := c.clone()
	if n < 1 || n > 1<<30 {
		d.errs = append(d.errs, validationErr("", "", "collection: PageSize must be positive"))
	}
	d.pageSize = int32(n)
	return d
}

// Filter adds a filter applied after reading (FilterExpression), joined
// with AND to any filter already given; items it drops are still read and
// billed, and do not count towards Limit. Name fields by their Go names
// (see [Query.Filter]); as a collection holds several entities, a name
// must mean one attribute to every target that knows it: a Go field name
// two targets store under different attributes is refused as ambiguous (a
// *ValidationError naming it, before any request is sent), and a name no
// target knows is refused too. Items of an entity without the field fail
// a test of it (attribute_exists, a comparison), as in DynamoDB.
func (c *Collection) Filter(cond expression.ConditionBuilder) *Collection {
	d := c.clone()
	if d.filter != nil {
		f := d.filter.And(cond)
		d.filter = &f
	} else {
		d.filter = &cond
	}
	return d
}

// After resumes the collection after the last item of the page that
// returned cursor. An empty cursor starts from the beginning. A cursor from
// another query is [ErrInvalidCursor].
func (c *Collection) After(cursor string) *Collection { d := c.clone(); d.after = cursor; return d }

// Target receives the items of one entity type from a [Collection] (or a
// transaction's reads). Make it with [Repo.Into], [Repo.IntoOne],
// [Repo.IntoFunc] or [Repo.Member]. A Target may be passed to several calls; it keeps counting.
type Target struct {
	entity string
	table  *Table
	one    bool
	n      int
	decode func(item map[string]types.AttributeValue) (any, error)
	names  attrNamer // resolves the names of a collection's filter
}

// Count returns how many items the target has received.
func (t *Target) Count() int { return t.n }

// Entity returns the entity type the target receives.
func (t *Target) Entity() string { return t.entity }

// Into returns a target appending r's items to *dst.
func (r *Repo[T]) Into(dst *[]T) *Target {
	return &Target{entity: r.e.name, table: r.t, names: r.e, decode: func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(item)
		if err != nil {
			return nil, err
		}
		*dst = append(*dst, v)
		return v, nil
	}}
}

// IntoOne returns a target storing r's item in *dst; a second item of that
// type is an error. *dst is left as it is when there is none: check
// [Target.Count].
func (r *Repo[T]) IntoOne(dst *T) *Target {
	return &Target{entity: r.e.name, table: r.t, names: r.e, one: true, decode: func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(item)
		if err != nil {
			return nil, err
		}
		*dst = v
		return v, nil
	}}
}

// IntoFunc returns a target calling fn with each of r's items; an error
// from fn stops the read and is returned.
func (r *Repo[T]) IntoFunc(fn func(T) error) *Target {
	return &Target{entity: r.e.name, table: r.t, names: r.e, decode: func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(item)
		if err != nil {
			return nil, err
		}
		return v, fn(v)
	}}
}

// Member returns a target that decodes r's items and stores them nowhere:
// for [Collection.All], which yields the decoded values.
func (r *Repo[T]) Member() *Target {
	return &Target{entity: r.e.name, table: r.t, names: r.e, decode: func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(item)
		if err != nil {
			return nil, err
		}
		return v, nil
	}}
}

// UnknownTypeError reports an item of a collection whose entity type no
// target accepts (Type is "" when the item has no entity type attribute).
type UnknownTypeError struct {
	Type string
	// Key is the item's primary key.
	Key map[string]types.AttributeValue

	keys keyNames // the table's, to print Key in key order
}

// Error names the type and the item.
func (e *UnknownTypeError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("singletable: collection: item %s has no entity type", e.keys.text(e.Key))
	}
	return fmt.Sprintf("singletable: collection: no target for entity type %q (item %s); add one or use SkipUnknown", e.Type, e.keys.text(e.Key))
}

// collPlan is a validated collection read, ready to send.
type collPlan struct {
	in      *dynamodb.QueryInput
	bind    [16]byte
	targets map[string]*Target
}

func (c *Collection) plan(targets []*Target, needTargets bool) (*collPlan, error) {
	errs := append([]error(nil), c.errs...)
	if needTargets && len(targets) == 0 {
		errs = append(errs, validationErr("", "", "collection: no targets"))
	}
	byType := make(map[string]*Target, len(targets))
	for _, tg := range targets {
		if tg == nil {
			errs = append(errs, validationErr("", "", "collection: nil target"))
			continue
		}
		if byType[tg.entity] != nil {
			errs = append(errs, validationErr(tg.entity, "", "collection: two targets for one entity type"))
		}
		if tg.table != c.t {
			errs = append(errs, validationErr(tg.entity, "", "collection: target's repository is bound to table %s, the collection reads %s", tg.table.name, c.t.name))
		}
		byType[tg.entity] = tg
	}
	if c.index != "" && c.consistent {
		errs = append(errs, validationErr("", c.index, "global secondary indexes do not support consistent reads"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var b expr.Builder
	kc := writeKeyConds(&b, c.keyConds)
	var filter *string
	if c.filter != nil {
		f, err := b.Conditions(collectionNames(c.t, targets), *c.filter)
		if err != nil {
			return nil, condErr("", "bad collection filter", err)
		}
		filter = &f
	}
	in := &dynamodb.QueryInput{
		TableName:                 &c.t.name,
		KeyConditionExpression:    &kc,
		FilterExpression:          filter,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	}
	if filter != nil {
		if err := checkExprLimits("", exprParts{kinds: []string{"key condition", "filter"},
			exprs: []*string{in.KeyConditionExpression, in.FilterExpression},
			names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}); err != nil {
			return nil, err
		}
	}
	dir := "asc"
	if c.index != "" {
		in.IndexName = aws.String(c.index)
	}
	if c.desc {
		in.ScanIndexForward = aws.Bool(false)
		dir = "desc"
	}
	if c.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	if c.pageSize > 0 {
		in.Limit = aws.Int32(c.pageSize)
	}
	// A collection cursor is bound to the partition and direction, not to
	// the targets: another set of targets resumes at the same place.
	p := &collPlan{in: in, bind: cursorBinding(c.t.name, c.index, "\x00collection", c.partition, dir), targets: byType}
	if c.after != "" {
		start, err := c.t.decodeCursor(c.after, p.bind, c.cursorKeys)
		if err != nil {
			return nil, err
		}
		if err := checkCursorKey(start, c.keyConds, len(c.keyConds)); err != nil {
			return nil, err
		}
		in.ExclusiveStartKey = start
	}
	return p, nil
}

// route hands item to its target. ok is false when the item was skipped.
func (c *Collection) route(p *collPlan, item map[string]types.AttributeValue) (v any, ok bool, err error) {
	typ := ""
	if s, isS := item[c.t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); isS {
		typ = s.Value
	}
	tg := p.targets[typ]
	if tg == nil {
		if c.skipUnknown {
			return nil, false, nil
		}
		return nil, false, &UnknownTypeError{Type: typ, Key: c.t.primaryKeyOf(item), keys: c.t.keyNames()}
	}
	if tg.one && tg.n > 0 {
		return nil, false, fmt.Errorf("singletable: collection: more than one %s item for IntoOne (second is %s)", tg.entity, c.t.keyText(item))
	}
	v, err = tg.decode(item)
	if err != nil {
		return nil, false, err
	}
	tg.n++
	return v, true, nil
}

// fillLimit sizes the next request to the items still wanted. Page asks
// for one more (extra), so that a page ending the collection says so
// instead of returning a cursor to an empty page.
func (c *Collection) fillLimit(in *dynamodb.QueryInput, delivered, extra int) {
	if c.limit > 0 && c.pageSize == 0 && !c.skipUnknown && c.filter == nil {
		in.Limit = aws.Int32(int32(min(c.limit-delivered+extra, 1000)))
	}
}

// Page reads one page into the targets and returns it: the items
// delivered, as decoded values in read order (a T for a target made from a
// *Repo[T]), and the cursor of the next page ("" when the collection is
// exhausted). With [Collection.Limit] the page holds exactly that many
// items unless the partition runs out.
func (c *Collection) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	var page Page[any]
	p, err := c.plan(targets, true)
	if err != nil {
		return page, err
	}
	in := p.in
	delivered := 0
	for {
		c.fillLimit(in, delivered, 1)
		out, err := c.t.api(ctx, "").Query(ctx, in)
		if err != nil {
			return Page[any]{}, fmt.Errorf("singletable: collection query: %w", err)
		}
		for i, item := range out.Items {
			v, ok, err := c.route(p, item)
			if err != nil {
				return Page[any]{}, err
			}
			if !ok {
				continue
			}
			page.Items = append(page.Items, v)
			delivered++
			if c.limit > 0 && delivered == c.limit {
				if i < len(out.Items)-1 || out.LastEvaluatedKey != nil {
					page.Cursor, err = c.t.encodeCursor(p.bind, c.cursorKeys, item)
				}
				return page, err
			}
		}
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		if c.limit == 0 && delivered > 0 {
			page.Cursor, err = c.t.encodeCursor(p.bind, c.cursorKeys, out.LastEvaluatedKey)
			return page, err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Collect reads the whole collection (at most Limit items) into the
// targets and returns the items delivered, as decoded values in read
// order (the same values [Collection.All] yields).
func (c *Collection) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	var out []any
	for v, err := range c.All(ctx, targets...) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// All returns an iterator over the collection (at most Limit items),
// reading page by page. Each item is delivered to its target and then
// yielded as the decoded value (a T for a target made from a *Repo[T]), so
// a type switch tells the entities apart; use [Repo.Member] targets to decode
// without storing. The iterator stops after yielding an error; each use
// runs the query again.
func (c *Collection) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		p, err := c.plan(targets, true)
		if err != nil {
			yield(nil, err)
			return
		}
		in := p.in
		delivered := 0
		for {
			c.fillLimit(in, delivered, 0)
			out, err := c.t.api(ctx, "").Query(ctx, in)
			if err != nil {
				yield(nil, fmt.Errorf("singletable: collection query: %w", err))
				return
			}
			for _, item := range out.Items {
				v, ok, err := c.route(p, item)
				if err != nil {
					yield(nil, err)
					return
				}
				if !ok {
					continue
				}
				if !yield(v, nil) {
					return
				}
				delivered++
				if c.limit > 0 && delivered == c.limit {
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

// Request returns the QueryInput that [Collection.All] would send first,
// without sending it (Page asks for one item more than Limit, to know
// whether the collection continues); targets are optional here and only
// checked.
func (c *Collection) Request(targets ...*Target) (*dynamodb.QueryInput, error) {
	p, err := c.plan(targets, false)
	if err != nil {
		return nil, err
	}
	c.fillLimit(p.in, 0, 0)
	return p.in, nil
}
