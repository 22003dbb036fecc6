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
	readSpec
	t           *Table
	index       string
	keyConds    []expr.KeyCond // the partition's
	parts       []string       // the partition's key values
	sort        SortCondition
	cursorKeys  []string
	skipUnknown bool
}

// Collection returns the collection in the table partition that key
// belongs to: key supplies the fields of r's partition key template, and
// every item with that partition key, of any entity, is in the collection.
// For the skills service, users.Collection(User{Username: "john"}) holds
// john's profile and his skills. [ReadOptions] set by optFns apply to
// every request; Fields names Go fields of the targets (resolved as
// [Collection.Filter]'s names are), and the entity type and key
// attributes, which routing and cursors need, are read too.
func (r *Repo[T]) Collection(key T, optFns ...func(*ReadOptions)) *Collection {
	return r.collection("", reflect.ValueOf(&key).Elem(), optFns)
}

// IndexCollection returns the collection in a partition of the named
// global secondary index: key supplies the fields of r's partition key for
// that index (templated or multi-attribute), and every item of any entity
// in that index partition is in the collection. A write-sharded index
// (Shards > 0) has no collection: the call reports a *ValidationError
// before any request; read it with [Repo.QueryIndex]. optFns are as for
// [Repo.Collection]; a global secondary index has no consistent reads.
func (r *Repo[T]) IndexCollection(index string, key T, optFns ...func(*ReadOptions)) *Collection {
	return r.collection(index, reflect.ValueOf(&key).Elem(), optFns)
}

// collection is [Repo.IndexCollection] given the key's value kv (index
// "": [Repo.Collection]).
func (r *repo) collection(index string, kv reflect.Value, optFns []func(*ReadOptions)) *Collection {
	c := &Collection{t: r.t, index: index, readSpec: readSpec{what: "collection: "}}
	c.readOptions(optFns)
	var idx *indexPlan
	if index != "" {
		var err error
		if idx, err = r.e.index(index); err != nil {
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
	}
	conds, parts, err := r.partitionCond(idx, kv)
	if err != nil {
		c.errs = append(c.errs, err)
		return c
	}
	c.keyConds, c.parts, c.cursorKeys = conds, parts, r.t.cursorKeys(idx)
	return c
}

func (c *Collection) clone() *Collection {
	d := *c
	d.readSpec = c.readSpec.clone()
	return &d
}

// SkipUnknown makes items of entity types that no target accepts (and
// items without an entity type) be skipped instead of failing the read.
// Skipped items do not count towards Limit.
func (c *Collection) SkipUnknown() *Collection { d := c.clone(); d.skipUnknown = true; return d }

// Desc reads the partition in descending sort key order.
func (c *Collection) Desc() *Collection { d := c.clone(); d.desc = true; return d }

// Limit caps the items delivered to targets: a page holds exactly n items
// unless the partition runs out, and its cursor resumes right after the
// last one.
func (c *Collection) Limit(n int) *Collection { d := c.clone(); d.limitTo(n); return d }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (c *Collection) PageSize(n int) *Collection { d := c.clone(); d.pageSizeOf(n); return d }

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
	d.filterBy(cond)
	return d
}

// SortCondition is a sort key condition for a [Collection]
// ([Collection.Where]), stated as a [Query] of one member entity on the
// collection's index: *Query[T] is a SortCondition. A collection holds
// several entities whose sort keys have different shapes (PROFILE,
// SKILL#{Name}); the query's condition reads the range its entity's key
// shape and values describe, so it is as typed as [Query.Where] and needs
// no knowledge of the rendered keys. A Query without a sort condition
// narrows to its entity's shape: the sort keys starting with the constant
// text its template begins with (all of SKILL#{SkillName}'s, "SKILL#"); a
// template starting with a field, or a multi-attribute index, has no shape
// to narrow to and reads every sort key.
//
// Make it with [Repo.Query] for a table collection and [Repo.QueryIndex]
// on the same index for an [Repo.IndexCollection]; the query's key gives
// only the sort key values (its partition is the collection's), and the
// rest of the read (Filter, Limit, [ReadOptions], …) is the collection's.
// Mistakes (a field that is not in the sort key, a missing value, a query
// of another index, table or with more than a sort condition) are reported
// by the collection's final call, before any request is sent.
type SortCondition interface {
	// collectionSort renders the condition for a collection of table t
	// on index ("": the table's sort key): the key conditions after the
	// partition's, and whether the range is empty.
	collectionSort(t *Table, index string) ([]expr.KeyCond, bool, error)
}

// Where narrows the collection to the sort keys cond matches: the sort
// condition of a query of one member entity, as in
// users.Collection(User{Username: "john"}).Where(skills.Query(UserSkill{SkillName: "p"}).Where(singletable.Ge, "SkillName")),
// which reads john's skills from "p" on (see [SortCondition]). It is a key
// condition, so only the matching range is read and billed. Items of every
// entity whose sort keys fall in the range are in it (routed to their
// targets as usual); a collection takes one sort condition.
func (c *Collection) Where(cond SortCondition) *Collection {
	d := c.clone()
	switch {
	case cond == nil:
		d.fail("nil sort condition (give a Query of a member entity)")
	case d.sort != nil:
		d.fail("only one sort key condition per collection")
	}
	d.sort = cond
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
	names  attrNamer                                               // resolves the names of a collection's filter
	image  func(item map[string]types.AttributeValue) (any, error) // decodes without delivering (Decoder)
	// keysMatch, set when the entity matches keys (Schema.MatchKeys),
	// reports whether an item without the entity type attribute is its.
	keysMatch func(item map[string]types.AttributeValue) bool
}

// Count returns how many items the target has received.
func (t *Target) Count() int { return t.n }

// Entity returns the entity type the target receives.
func (t *Target) Entity() string { return t.entity }

// Into returns a target appending r's items to *dst.
func (r *Repo[T]) Into(dst *[]T) *Target {
	return r.target(false, func(v T) error { *dst = append(*dst, v); return nil })
}

// IntoOne returns a target storing r's item in *dst; a second item of that
// type is an error. *dst is left as it is when there is none: check
// [Target.Count].
func (r *Repo[T]) IntoOne(dst *T) *Target {
	return r.target(true, func(v T) error { *dst = v; return nil })
}

// IntoFunc returns a target calling fn with each of r's items; an error
// from fn stops the read and is returned.
func (r *Repo[T]) IntoFunc(fn func(T) error) *Target { return r.target(false, fn) }

// Member returns a target that decodes r's items and stores them nowhere:
// for [Collection.All], which yields the decoded values.
func (r *Repo[T]) Member() *Target { return r.target(false, func(T) error { return nil }) }

// target returns a target handing each of r's items, decoded, to deliver.
func (r *Repo[T]) target(one bool, deliver func(T) error) *Target {
	image := func(item map[string]types.AttributeValue) (any, error) { return r.e.decode(r.t, item) }
	return &Target{entity: r.e.name, table: r.t, names: r.e, image: image, keysMatch: r.keysMatch(), one: one, decode: func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(r.t, item)
		if err != nil {
			return nil, err
		}
		return v, deliver(v)
	}}
}

// keysMatch is the Target's test of an untyped item: nil unless the entity
// matches keys.
func (r *repo) keysMatch() func(item map[string]types.AttributeValue) bool {
	if !r.e.foreign.matchKeys {
		return nil
	}
	return func(item map[string]types.AttributeValue) bool { return r.e.keysMatch(&r.t.opts, item) }
}

// UnknownTypeError reports an item of a collection whose entity type no
// target accepts (Type is "" when the item has no entity type attribute).
// An item without one goes to the target whose entity matches keys
// ([Schema].MatchKeys) and whose templates parse its key; Ambiguous names
// the entities when several do.
type UnknownTypeError struct {
	Type string
	// Ambiguous names the target entities matching keys whose templates
	// all parse the key of an item without an entity type.
	Ambiguous []string
	// Key is the item's primary key.
	Key map[string]types.AttributeValue

	keys keyNames // the table's, to print Key in key order
	in   string   // what read the item: "" for a collection, "decode" for a Decoder
}

// Error names the type and the item.
func (e *UnknownTypeError) Error() string {
	in := e.in
	if in == "" {
		in = "collection"
	}
	if e.Type == "" && len(e.Ambiguous) > 0 {
		return fmt.Sprintf("singletable: %s: item %s has no entity type and its key parses with the templates of several targets (%s): ambiguous", in, e.keys.text(e.Key), strings.Join(e.Ambiguous, ", "))
	}
	if e.Type == "" {
		return fmt.Sprintf("singletable: %s: item %s has no entity type", in, e.keys.text(e.Key))
	}
	return fmt.Sprintf("singletable: %s: no target for entity type %q (item %s); add one or use SkipUnknown", in, e.Type, e.keys.text(e.Key))
}

// router hands each item of a mixed read (a collection, a table scan) to
// the target made for its entity type.
type router struct {
	t           *Table
	targets     map[string]*Target
	untyped     []*Target // the targets whose entities match keys (Schema.MatchKeys)
	skipUnknown bool
}

// newRouter checks targets (at least one when needTargets) and indexes
// them by entity type.
func newRouter(t *Table, targets []*Target, needTargets, skipUnknown bool) (*router, []error) {
	var errs []error
	if needTargets && len(targets) == 0 {
		errs = append(errs, validationErr("", "", "collection: no targets"))
	}
	byType := make(map[string]*Target, len(targets))
	var untyped []*Target
	for _, tg := range targets {
		if tg == nil {
			errs = append(errs, validationErr("", "", "collection: nil target"))
			continue
		}
		if byType[tg.entity] != nil {
			errs = append(errs, validationErr(tg.entity, "", "collection: two targets for one entity type"))
		}
		if tg.table != t {
			errs = append(errs, validationErr(tg.entity, "", "collection: target's repository is bound to table %s, the collection reads %s", tg.table.name, t.name))
		}
		byType[tg.entity] = tg
		if tg.keysMatch != nil {
			untyped = append(untyped, tg)
		}
	}
	return &router{t: t, targets: byType, untyped: untyped, skipUnknown: skipUnknown}, errs
}

// target returns the target of item's entity type, nil when none. An item
// without the entity type attribute goes to the one target whose entity
// matches keys and whose templates parse its key; when several do, none
// is chosen (never guess) and ambiguous names them.
func (rt *router) target(item map[string]types.AttributeValue) (tg *Target, typ string, ambiguous []string) {
	if s, isS := item[rt.t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); isS {
		typ = s.Value
	}
	tg = rt.targets[typ]
	if _, typed := item[rt.t.opts.EntityTypeAttr]; !typed && len(rt.untyped) > 0 {
		tg, ambiguous = routeUntyped(rt.untyped, item)
		if tg != nil {
			typ = tg.entity // recognised by its key: a change names it
		}
	}
	return tg, typ, ambiguous
}

// routeUntyped returns the one target among untyped whose entity's
// templates parse item's key; nil and the entities' names when several do
// (never guess), nil and none when no one does.
func routeUntyped(untyped []*Target, item map[string]types.AttributeValue) (*Target, []string) {
	var found *Target
	var names []string
	for _, tg := range untyped {
		if !tg.keysMatch(item) {
			continue
		}
		if found != nil {
			if names == nil {
				names = []string{found.entity}
			}
			names = append(names, tg.entity)
			continue
		}
		found = tg
	}
	if names != nil {
		return nil, names
	}
	return found, nil
}

// counts reports whether route would not skip item.
func (rt *router) counts(item map[string]types.AttributeValue) bool {
	if !rt.skipUnknown {
		return true
	}
	tg, _, _ := rt.target(item)
	return tg != nil
}

// route hands item to its target. ok is false when the item was skipped.
func (rt *router) route(item map[string]types.AttributeValue) (v any, ok bool, err error) {
	tg, typ, ambiguous := rt.target(item)
	if tg == nil {
		if rt.skipUnknown {
			return nil, false, nil
		}
		return nil, false, &UnknownTypeError{Type: typ, Ambiguous: ambiguous, Key: rt.t.primaryKeyOf(item), keys: rt.t.keyNames()}
	}
	if tg.one && tg.n > 0 {
		return nil, false, fmt.Errorf("singletable: collection: more than one %s item for IntoOne (second is %s)", tg.entity, rt.t.keyText(item))
	}
	v, err = tg.decode(item)
	if err != nil {
		return nil, false, err
	}
	tg.n++
	return v, true, nil
}

// mixedProjection is the projection of a read routed to targets: the
// entity type attribute (routing needs it), the named fields' attributes
// as the targets store them (resolved as a filter's names are), and the
// key attributes (cursors, and decoding key fields).
func mixedProjection(t *Table, targets []*Target, fields, keyAttrs []string) ([]string, error) {
	names := collectionNames(t, targets)
	attrs := make([]string, 0, len(fields)+len(keyAttrs)+1)
	attrs = append(attrs, t.opts.EntityTypeAttr)
	for _, f := range fields {
		a, _, err := names(f)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
	}
	return append(attrs, keyAttrs...), nil
}

// collPlan is a validated collection read, ready to send.
type collPlan struct {
	req   *request
	rt    *router
	empty bool // the sort condition's range is empty: nothing to read
}

func (c *Collection) plan(targets []*Target, needTargets bool) (*collPlan, error) {
	rt, terrs := newRouter(c.t, targets, needTargets, c.skipUnknown)
	errs := append(append([]error(nil), c.errs...), terrs...)
	if c.index != "" && c.consistent {
		errs = append(errs, validationErr("", c.index, "global secondary indexes do not support consistent reads"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	conds := c.keyConds
	empty := false
	if c.sort != nil {
		sc, e, err := c.sort.collectionSort(c.t, c.index)
		if err != nil {
			return nil, err
		}
		conds = append(slices.Clone(conds), sc...)
		empty = e
	}
	in, err := c.input(conds, targets)
	if err != nil {
		return nil, err
	}
	// A collection cursor is bound to the partition and direction, not to
	// the targets: another set of targets resumes at the same place.
	b := partitionBinding(c.t.name, c.index, "\x00collection", c.parts, c.dir())
	if c.after != "" {
		if in.ExclusiveStartKey, err = c.t.decodeBoundCursor(c.after, b, c.cursorKeys, conds, len(c.keyConds)); err != nil {
			return nil, err
		}
	}
	req := &request{t: c.t, src: querySource(in), what: "collection query",
		size:     c.pageSize == 0 && !c.skipUnknown && c.filter == nil,
		probeOne: c.filter == nil, bind: b.bind, cursorKeys: c.cursorKeys}
	return &collPlan{req: req, rt: rt, empty: empty}, nil
}

// input assembles the collection's QueryInput with the key condition
// conds.
func (c *Collection) input(conds []expr.KeyCond, targets []*Target) (*dynamodb.QueryInput, error) {
	var b expr.Builder
	kc := b.KeyCondition(conds)
	in := &dynamodb.QueryInput{TableName: &c.t.name, KeyConditionExpression: &kc}
	if c.filter != nil {
		f, err := b.Conditions(collectionNames(c.t, targets), *c.filter)
		if err != nil {
			return nil, condErr("", "bad collection filter", err)
		}
		in.FilterExpression = &f
	}
	if len(c.project) > 0 {
		attrs, err := mixedProjection(c.t, targets, c.project, c.cursorKeys)
		if err != nil {
			return nil, err
		}
		in.ProjectionExpression = aws.String(b.Projection(attrs...))
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
	return in, c.finishQuery(in, c.index)
}

// Page reads one page into the targets and returns it: the items
// delivered, as decoded values in read order (a T for a target made from a
// *Repo[T]), and the cursor of the next page, "" when no item follows
// (a page ending where a DynamoDB response ended reads ahead to know;
// see [Collection.Limit]). With [Collection.Limit] the page holds exactly
// that many items unless the collection runs out; without it, the items
// of one response (reading on past responses that held none).
func (c *Collection) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	p, err := c.plan(targets, true)
	if err != nil || p.empty {
		return Page[any]{}, err
	}
	return p.rt.page(ctx, p.req, c.limit)
}

// Collect reads the whole collection (at most Limit items) into the
// targets and returns the items delivered, as decoded values in read
// order (the same values [Collection.All] yields).
func (c *Collection) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	return collect(c.All(ctx, targets...))
}

// All returns an iterator over the collection (at most Limit items),
// reading page by page. Each item is delivered to its target and then
// yielded as the decoded value (a T for a target made from a *Repo[T]), so
// a type switch tells the entities apart; use [Repo.Member] targets to decode
// without storing. The iterator stops after yielding an error; each use
// runs the query again.
func (c *Collection) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return seqOf(func(yield func(any, error) bool) error {
		p, err := c.plan(targets, true)
		if err != nil || p.empty {
			return err
		}
		return readAll(ctx, []*request{p.req}, c.limit, yielder(p.rt.route, yield))
	})
}

// Request returns the QueryInput that [Collection.Page] and
// [Collection.All] send first, without sending it; with a Limit of n and
// nothing to drop items (no Filter, PageSize or SkipUnknown) it asks for
// n+1 items, the extra one telling whether the collection continues.
// Targets are optional here and only checked.
func (c *Collection) Request(targets ...*Target) (*dynamodb.QueryInput, error) {
	p, err := c.plan(targets, false)
	if err != nil {
		return nil, err
	}
	p.req.sizeFor(c.limit)
	return p.req.src.query, nil
}
