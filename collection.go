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

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/wire"
)

// Collection reads every item of one partition of the table or of an
// index ([Query API]), routing each by its entity type to its [Target]; an
// item no target accepts is an *UnknownTypeError unless SkipUnknown.
// Builder methods are as [Query]'s.
//
// [Query API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Query.html
type Collection struct {
	readSpec
	t          *Table
	idx        *indexPlan   // the index's plan, nil for the table
	key        keyCondition // the partition's
	sort       SortCondition
	cursorKeys []string
}

// QueryCollection returns the collection in key's table partition (key
// supplies r's partition key fields): every entity's items there. It is
// named as [Repo.Query] and [Repo.QueryIndex] are, since it is one Query
// per page, and the table's and an index's are told apart as theirs are.
// optFns are as for [Repo.Query]; Fields names Go fields of the targets,
// read with the entity type and key attributes.
func (r *Repo[T]) QueryCollection(key T, optFns ...func(*ReadOptions)) *Collection {
	return r.collection("", reflect.ValueOf(&key).Elem(), optFns)
}

// QueryIndexCollection returns the collection in the partition of the
// named index that key belongs to. A write-sharded index has no
// collection (read it with [Repo.QueryIndex]); optFns are as for
// [Repo.QueryCollection].
func (r *Repo[T]) QueryIndexCollection(index string, key T, optFns ...func(*ReadOptions)) *Collection {
	return r.collection(index, reflect.ValueOf(&key).Elem(), optFns)
}

// collection is [Repo.QueryIndexCollection] given the key kv (index "": the table).
func (r *repo) collection(index string, kv reflect.Value, optFns []func(*ReadOptions)) *Collection {
	c := &Collection{t: r.t, readSpec: newReadSpec("", "collection: ", optFns)}
	var idx *indexPlan
	if index != "" {
		c.onIndex(r, index)
		if idx, _ = r.e.index(index); idx == nil {
			return c
		}
		if idx.shards > 0 {
			// One request per page would read only the unsuffixed key.
			c.errs = append(c.errs, validationErr(r.e.name, index, "collection on write-sharded index %s (%d shards) is not supported: read it with QueryIndex, which merges the shards", index, idx.shards))
			return c
		}
	}
	conds, parts, err := r.partitionCond(idx, kv)
	if err != nil {
		c.errs = append(c.errs, err)
		return c
	}
	c.key, c.cursorKeys, c.idx = keyCondition{conds: conds, nPart: len(conds), parts: parts}, r.t.cursorKeys(idx), idx
	return c
}

func (c *Collection) spec() *readSpec { return &c.readSpec }

// SkipUnknown skips items no target accepts instead of failing the read;
// they do not count towards Limit. An untyped item a target's key shape
// selects is reported all the same (see [Page].Skipped).
func (c *Collection) SkipUnknown() *Collection { return edited(c, (*readSpec).skipping) }

// Desc reads the partition in descending sort key order.
func (c *Collection) Desc() *Collection { return edited(c, (*readSpec).descending) }

// Limit caps the items delivered to targets: a page holds exactly n items
// unless the partition runs out.
func (c *Collection) Limit(n int) *Collection { return edited(c, limitTo(n)) }

// PageSize sets how many items each request reads (DynamoDB's Limit).
func (c *Collection) PageSize(n int) *Collection { return edited(c, pageSizeOf(n)) }

// Filter is [Query.Filter] for a collection: a name must mean one attribute
// to every target that knows it, and one no target knows is refused.
func (c *Collection) Filter(cond expression.ConditionBuilder) *Collection {
	return edited(c, filterBy(cond))
}

// SortCondition is a sort key condition for [Collection.Where]: a *Query[T]
// of a member entity on the collection's table or index, giving only sort
// key values. Without a sort condition it narrows to its template's
// constant prefix ("SKILL#" for SKILL#{SkillName}), if any.
type SortCondition interface {
	// collectionSort renders the key conditions after the partition's for
	// a collection of table t on index, and whether the range is empty.
	collectionSort(t *Table, index string) ([]expr.KeyCond, bool, error)
}

// Where narrows the collection, by key condition, to the sort keys cond
// matches: Where(skills.Query(UserSkill{}).Where("SkillName", singletable.Ge, "p"))
// reads the skills from "p" on, and items of any entity in that range.
func (c *Collection) Where(cond SortCondition) *Collection {
	d := edited(c, nil)
	switch {
	case cond == nil:
		d.fail("nil sort condition (give a Query of a member entity)")
	case d.sort != nil:
		d.fail("only one sort key condition per collection")
	}
	d.sort = cond
	return d
}

// After resumes the collection after the page that returned cursor ("":
// from the beginning). A cursor from another query is [ErrInvalidCursor].
func (c *Collection) After(cursor string) *Collection { return edited(c, afterCursor(cursor)) }

// Target receives the items of one entity type from a [Collection] (or a
// transaction's reads). A repository makes it, the method named for what
// happens to each of its items: [Repo.AppendTo] appends it to a slice,
// [Repo.StoreOne] stores the one item, [Repo.PassTo] passes it to a
// function, and [Repo.Target] only decodes it, for the values the read
// returns. It keeps counting across calls.
type Target struct {
	entity    string
	table     *Table
	one       bool
	n         int
	decode    func(item map[string]types.AttributeValue) (any, error)
	names     attrNamer                                               // resolves the names of a collection's filter
	image     func(item map[string]types.AttributeValue) (any, error) // decodes without delivering (Decoder)
	keyShapes repo                                                    // tells an untyped item by its key shape
	// On the direct wire path: a sink keeping keys, and the value of its i-th item.
	sink func(keys []string) wire.Typed
	take func(s wire.Typed, i int) (any, error)
}

// Count returns how many items the target has received.
func (t *Target) Count() int { return t.n }

// Entity returns the entity type the target receives.
func (t *Target) Entity() string { return t.entity }

// AppendTo returns a target appending r's items to *dst.
func (r *Repo[T]) AppendTo(dst *[]T) *Target {
	return r.deliverTo(false, func(v T) error { *dst = append(*dst, v); return nil })
}

// StoreOne returns a target storing r's item in *dst; a second item of
// that type is an error. *dst is left as it is when there is none: check
// [Target.Count].
func (r *Repo[T]) StoreOne(dst *T) *Target {
	return r.deliverTo(true, func(v T) error { *dst = v; return nil })
}

// PassTo returns a target passing each of r's items to fn; an error from
// fn stops the read and is returned.
func (r *Repo[T]) PassTo(fn func(T) error) *Target { return r.deliverTo(false, fn) }

// Target returns a target that decodes r's items and stores them nowhere:
// the read returns them ([Collection.All] yields the decoded values).
func (r *Repo[T]) Target() *Target { return r.deliverTo(false, func(T) error { return nil }) }

// deliverTo returns a target handing each of r's items, decoded, to deliver.
func (r *Repo[T]) deliverTo(one bool, deliver func(T) error) *Target {
	tg := &Target{entity: r.e.name, table: r.t, names: r.e, one: one}
	tg.image = func(item map[string]types.AttributeValue) (any, error) { return r.e.decode(r.t, item) }
	tg.decode = func(item map[string]types.AttributeValue) (any, error) {
		v, err := r.e.decode(r.t, item)
		if err != nil {
			return nil, r.undecoded(item, err)
		}
		return v, deliver(v)
	}
	tg.keyShapes = r.repo
	tg.sink = func(keys []string) wire.Typed {
		return &wireSink[T]{Heads: wire.NewHeads(r.e.typ, r.e.wireKeep(r.t, keys, true))}
	}
	tg.take = func(f wire.Typed, i int) (any, error) {
		s := f.(*wireSink[T])
		v, head := s.vals[i], s.Heads.Heads[i]
		if err := r.e.wireRest(r.t, head, &v, s.Complete[i], s.Errs[i]); err != nil {
			return nil, r.undecoded(head, err)
		}
		return v, deliver(v)
	}
	return tg
}

// UnknownTypeError reports an item of a collection whose entity type no
// target accepts (Type is "" when the item has no entity type attribute).
type UnknownTypeError struct {
	Type      string
	Ambiguous []string                        // the entities whose templates all parse an untyped item's key
	Key       map[string]types.AttributeValue // the item's primary key

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
	untyped     []*Target // the targets whose entities match keys (Schema.MatchKeys), or all byShape
	skipUnknown bool
	byShape     bool // an index read that does not hold the entity type: key shapes route every item
	sinks       *wire.Sinks[*wire.Routed]
}

// wired puts rd's requests on the direct wire path: each item is
// decoded into its target's sink, whose head (the entity type and cursor
// keys) routes it as route does. It returns the sinks.
func (rt *router) wired(rd *read) *wire.Sinks[*wire.Routed] {
	tgs := slices.Collect(maps.Values(rt.targets))
	if rt.sinks = nil; !rt.t.wire || len(tgs) == 0 {
		return nil
	}
	route := func(head map[string]types.AttributeValue) int {
		tg, _, _ := rt.target(head)
		return slices.Index(tgs, tg)
	}
	rt.sinks = wired(rd, func(req *request) *wire.Routed {
		feeds := make([]wire.Typed, len(tgs))
		for i, tg := range tgs {
			feeds[i] = tg.sink(req.CursorKeys)
		}
		return wire.NewRouted(route, feeds)
	})
	return rt.sinks
}

// newRouter checks targets (at least one when needTargets).
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
		if tg.keyShapes.e.foreign.matchKeys {
			untyped = append(untyped, tg)
		}
	}
	return &router{t: t, targets: byType, untyped: untyped, skipUnknown: skipUnknown}, errs
}

// target returns the target of item's entity type, nil when none (see
// routeUntyped for an item without the entity type attribute).
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
		if !tg.keyShapes.e.keysMatch(&tg.keyShapes.t.opts, item) {
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

// counts reports whether route would take or report item.
func (rt *router) counts(item map[string]types.AttributeValue) bool {
	if !rt.skipUnknown {
		return true
	}
	tg, _, _ := rt.target(item)
	return tg != nil || rt.selected(item) != nil
}

// selected is the *DecodeError of an item no target takes that a
// target's key shape selected (see repo.selected), nil for any other.
func (rt *router) selected(item map[string]types.AttributeValue) error {
	for _, tg := range rt.untyped {
		if err := (&repo{t: tg.keyShapes.t, e: tg.keyShapes.e, byShape: rt.byShape}).selected(item); err != nil {
			return err
		}
	}
	return nil
}

// route hands item to its target, *out its value. ok is false when the
// item was skipped; err is a *DecodeError for an item reported (see
// Page.Skipped).
func (rt *router) route(item map[string]types.AttributeValue, out *any) (ok bool, err error) {
	s, i, direct := rt.sinks.Find(item) // first: it takes the item
	tg, typ, ambiguous := rt.target(item)
	if tg == nil {
		if err := rt.selected(item); err != nil && ambiguous == nil {
			return false, err
		}
		if rt.skipUnknown {
			return false, nil
		}
		return false, &UnknownTypeError{Type: typ, Ambiguous: ambiguous, Key: rt.t.primaryKeyOf(item), keys: rt.t.keyNames()}
	}
	if tg.one && tg.n > 0 {
		return false, fmt.Errorf("singletable: collection: more than one %s item for StoreOne (second is %s)", tg.entity, rt.t.keyText(rt.t.primaryKeyOf(item)))
	}
	if direct {
		*out, err = tg.take(s.Feeds[s.At[i].Feed], s.At[i].Item)
	} else {
		*out, err = tg.decode(item)
	}
	if err != nil {
		return false, err
	}
	tg.n++
	return true, nil
}

// mixedProjection is the projection of a read routed to targets: the
// entity type attribute, the named fields' attributes and keyAttrs.
func mixedProjection(t *Table, targets []*Target, fields, keyAttrs []string) ([]string, error) {
	names := collectionNames(t, targets, condScope{})
	attrs := make([]string, 0, len(fields)+len(keyAttrs)+1)
	attrs = append(attrs, t.opts.EntityTypeAttr)
	for _, f := range fields {
		r, err := names(f)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, r.Attr)
	}
	return append(attrs, keyAttrs...), nil
}

func (c *Collection) plan(targets []*Target, needTargets bool) *read {
	rt, terrs := newRouter(c.t, targets, needTargets, c.skipUnknown)
	if rt.byShape = !c.t.holds(c.idx, c.t.opts.EntityTypeAttr); rt.byShape {
		rt.untyped = targets
	}
	errs := append(slices.Clone(c.errs), terrs...)
	if c.index != "" && c.consistent {
		errs = append(errs, validationErr("", c.index, "global secondary indexes do not support consistent reads"))
	}
	if len(errs) > 0 {
		return planned(nil, errors.Join(errs...))
	}
	kc := c.key
	if c.sort != nil {
		sc, empty, err := c.sort.collectionSort(c.t, c.index)
		if err != nil {
			return planned(nil, err)
		}
		kc.conds, kc.empty = append(slices.Clone(kc.conds), sc...), empty
	}
	ri := &readInput{what: "collection query", kind: "collection", cursorKeys: c.cursorKeys}
	if c.filter != nil {
		ri.names = c.t.heldNames("", c.idx, collectionNames(c.t, targets, condScope{query: true, index: c.index}))
	}
	if len(c.project) > 0 {
		ri.project = func() ([]string, error) {
			attrs, err := mixedProjection(c.t, targets, c.project, c.cursorKeys)
			return c.t.heldAttrs("", c.idx, attrs, err)
		}
	}
	// A collection cursor is bound to the partition and direction, not to
	// the targets: another set of targets resumes at the same place.
	rd := &read{spec: &c.readSpec, empty: kc.empty, sized: c.sized(), rt: rt}
	return planned(rd, rd.partition(c.t, 0, kc, "\x00collection", ri))
}

// Page reads one page into the targets and returns the items delivered in
// read order (a T for a target of a *Repo[T]), as [Query.Page] does.
func (c *Collection) Page(ctx context.Context, targets ...*Target) (Page[any], error) {
	return routedPage(ctx, c.plan(targets, true))
}

// Collect reads the whole collection (at most Limit items) into the
// targets and returns the values [Collection.All] yields.
func (c *Collection) Collect(ctx context.Context, targets ...*Target) ([]any, error) {
	return collect(c.All(ctx, targets...))
}

// All delivers each item to its target and yields the decoded value (a
// type switch tells the entities apart), as [Query.All] does.
func (c *Collection) All(ctx context.Context, targets ...*Target) iter.Seq2[any, error] {
	return routedAll(ctx, func() *read { return c.plan(targets, true) })
}

// Request is [Query.Request] (with SkipUnknown, no extra item is asked
// for); targets are optional here and only checked.
func (c *Collection) Request(targets ...*Target) (*dynamodb.QueryInput, error) {
	in, err := c.plan(targets, false).first()
	return in.Query, err
}
