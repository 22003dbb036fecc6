package singletable

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// foreignPlan is what an entity needs to read items other services wrote:
// untyped (matched by key shape), with fields only in the key, zone-less times.
type foreignPlan struct {
	matchKeys bool           // Schema.MatchKeys
	keyOnly   []*model.Field // the Schema.KeyOnly fields, which writes leave out
	// loc reads zone-less time texts and key times (nil: UTC, as the codec
	// reads them); times lists the top-level time fields stored as text, re-read in loc.
	loc   *time.Location
	times []*model.Field
}

// compileForeign checks and records the schema's MatchKeys, KeyOnly
// (schema.Fields.KeyOnly), Location.
func (e *entityPlan) compileForeign(s Schema[reflect.Value]) error {
	e.foreign.matchKeys = s.MatchKeys
	g := &e.guards
	var err error
	if e.foreign.keyOnly, err = e.fieldSet().KeyOnly(s.KeyOnly, e.pk.schemaKey(), e.sk.schemaKey(), e.indexDecls(), g.version, g.created, g.updated, g.ttl); err != nil {
		return invalid(err)
	}
	if s.Location != nil {
		for _, f := range e.fields {
			if isTimeType(f.Type) && !f.Form.Number() {
				e.foreign.times = append(e.foreign.times, f)
			}
		}
	}
	return nil
}

// MatchKeys reports whether the entity recognises items without the entity
// type attribute by their key shape ([Schema].MatchKeys).
func (e *entityPlan) MatchKeys() bool { return e.foreign.matchKeys }

// decodeRest completes rv, decoded by the codec from item: key fields
// item lacks are parsed from its keys (unless complete, the codec having
// found every field), and with a Location zone-less times are read in it.
func (e *entityPlan) decodeRest(o *TableOptions, item map[string]types.AttributeValue, rv reflect.Value, complete bool) error {
	if !complete {
		if err := e.fillKeyFields(o, item, rv); err != nil {
			return &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
		}
	}
	if loc := e.foreign.loc; loc != nil {
		for _, f := range e.foreign.times {
			s, ok := item[f.Attr].(*types.AttributeValueMemberS)
			if !ok || !format.Zoneless(s.Value) {
				continue
			}
			if fv, ok := f.Get(rv); ok {
				tm, _ := format.ParseStored(s.Value, loc)
				model.SetTime(fv, tm)
			}
		}
	}
	return nil
}

// fillKeyFields sets, from item's keys, every KeyOnly field and the
// template fields item holds no attribute for: from the primary key, then
// each templated index key in order. A key holding such a field that does
// not parse, or holding another value than an earlier key, is a *KeyError.
func (e *entityPlan) fillKeyFields(o *TableOptions, item map[string]types.AttributeValue, rv reflect.Value) error {
	var fills keys.Fills
	need := func(f *model.Field) bool {
		_, ok := item[f.Attr]
		return f.KeyOnly || !ok
	}
	return e.eachKey(o, func(k keyRef) error {
		s, ok := item[k.attr].(*types.AttributeValueMemberS)
		if !ok || !slices.ContainsFunc(k.ck.fields, need) {
			return nil
		}
		key := s.Value
		if k.shards > 0 {
			key = keys.TrimShard(key)
		}
		if err := fills.Fill(&k.ck.tpl, k.ck.fields, key, k.name, rv, need); err != nil {
			return &KeyError{Entity: e.name, Index: k.index, Key: k.name, Err: err}
		}
		return nil
	})
}

// keyRef is one of an entity's rendered keys: a primary key template or
// a templated index's own key, with its attribute.
type keyRef struct {
	ck         *compiledKey
	attr, name string // name: "PK", "SK" or the index key attribute
	index      string // "" for the primary key
	shards     int    // write shards of an index partition key
	own        bool   // the key is a field's own attribute, not rendered
}

func (e *entityPlan) primaryKeys(o *TableOptions) [2]keyRef {
	return [2]keyRef{{ck: &e.pk, attr: o.PartitionKey, name: "PK"}, {ck: &e.sk, attr: o.SortKey, name: "SK"}}
}

// eachKey calls fn with each key the entity renders in a table with
// options o: the primary key's, then each index's own (not a table key).
func (e *entityPlan) eachKey(o *TableOptions, fn func(keyRef) error) error {
	for i := -1; i < len(e.indexes); i++ {
		ks := e.primaryKeys(o)
		if i >= 0 {
			p := e.indexes[i]
			ks = [2]keyRef{{&p.pk, p.pkAttr, p.pkAttr, p.name, p.shards, p.pkOwn != nil}, {&p.sk, p.skAttr, p.skAttr, p.name, 0, p.skOwn != nil}}
		}
		for _, k := range ks {
			if _, held := tableHeld(o, e, k.attr); k.ck.defined() && (k.index == "" || !held && !k.own) {
				if err := fn(k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keysMatch reports whether item's primary key parses with the entity's
// templates: how an item without the entity type attribute is recognised.
func (e *entityPlan) keysMatch(o *TableOptions, item map[string]types.AttributeValue) bool {
	return e.keysErr(o, item) == nil
}

// keysErr is the *KeyError of item's first primary key that does not
// parse with the entity's template, naming the part that did not.
func (e *entityPlan) keysErr(o *TableOptions, item map[string]types.AttributeValue) error {
	rv := reflect.New(e.typ).Elem()
	for _, k := range e.primaryKeys(o) {
		if !k.ck.defined() {
			continue
		}
		s, ok := item[k.attr].(*types.AttributeValueMemberS)
		if !ok {
			return &KeyError{Entity: e.name, Key: k.name, Err: fmt.Errorf("no string attribute %s", k.attr)}
		}
		if err := e.parseKey(*k.ck, s.Value, rv, nil); err != nil {
			return &KeyError{Entity: e.name, Key: k.name, Err: err}
		}
	}
	return nil
}

// sharedPrefix reports whether item's primary key starts with the entity's
// literal prefixes, one at least not empty, and their length.
func (e *entityPlan) sharedPrefix(o *TableOptions, item map[string]types.AttributeValue) (int, bool) {
	n, ok := 0, true
	for _, k := range e.primaryKeys(o) {
		if !k.ck.defined() {
			continue
		}
		s, isS := item[k.attr].(*types.AttributeValueMemberS)
		p := k.ck.tpl.ConstantPrefix()
		ok = ok && isS && strings.HasPrefix(s.Value, p)
		n += len(p)
	}
	return n, ok && n > 0
}

// owns reports whether item is the entity's, by its entity type
// attribute or, when it has none, by keysMatch.
func (e *entityPlan) owns(o *TableOptions, item map[string]types.AttributeValue) bool {
	if s, ok := item[o.EntityTypeAttr].(*types.AttributeValueMemberS); ok {
		return s.Value == e.name
	}
	if _, ok := item[o.EntityTypeAttr]; ok || !e.foreign.matchKeys {
		return false
	}
	return e.keysMatch(o, item)
}

// typeFilter writes the filter keeping a read to the entity's items (and,
// for an entity matching keys, untyped ones, checked by repo.mine).
func (e *entityPlan) typeFilter(b *expr.Builder, o *TableOptions) string {
	if !e.foreign.matchKeys {
		return expr.Compare(b.Name(o.EntityTypeAttr), expr.OpEq, b.ValueS(e.name))
	}
	untyped := "attribute_not_exists(" + b.Name(o.EntityTypeAttr) + ")"
	if o.OmitEntityType {
		return untyped
	}
	// Not parenthesised: And parenthesises it when it joins a filter.
	return expr.Compare(b.Name(o.EntityTypeAttr), expr.OpEq, b.ValueS(e.name)) + " OR " + untyped
}

// typeFiltered reports whether a query of index idx (nil: the table) filters
// on the entity type: not where idx lacks it (repo.mine tells by key shape)
// or is keyed on it (the key condition pins it; DynamoDB refuses the filter).
func (t *Table) typeFiltered(idx *indexPlan) bool {
	a := t.opts.EntityTypeAttr
	return t.holds(idx, a) && (idx == nil || idx.pkAttr != a && idx.skAttr != a)
}

// ownershipOf is writeplan.Ownership for the entity in table options o.
func (e *entityPlan) ownershipOf(o *TableOptions, i writeplan.Intent) writeplan.Condition {
	return writeplan.Ownership(i, o.PartitionKey, o.EntityTypeAttr, e.name, e.foreign.matchKeys)
}

// codecItem is item as the codec decodes it: without an attribute named
// like a KeyOnly field (a key attribute carrying its name, or one another
// service stores), which the keys fill instead.
func (e *entityPlan) codecItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	for _, f := range e.foreign.keyOnly {
		if _, ok := item[f.Attr]; ok && f.Attr != "" {
			item = maps.Clone(item) // only for a KeyOnly field under a stored name
			delete(item, f.Attr)
		}
	}
	return item
}

// dropKeyOnly removes the KeyOnly fields' attributes from item, returning
// their size.
func (e *entityPlan) dropKeyOnly(item map[string]types.AttributeValue) int {
	n := 0
	for _, f := range e.foreign.keyOnly {
		if av, ok := item[f.Attr]; ok {
			var sz sizer
			sz.add(f.Attr, av)
			n += sz.size
			delete(item, f.Attr)
		}
	}
	return n
}
