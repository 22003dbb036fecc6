package singletable

// Items other services write: without the entity type attribute (matched
// by their key shape), with fields held only in the key, with times
// without a zone.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// foreignPlan is what an entity needs to read items other services wrote.
type foreignPlan struct {
	matchKeys bool           // Schema.MatchKeys
	keyOnly   []*model.Field // the Schema.KeyOnly fields, which writes leave out
	// loc reads zone-less time texts (nil: UTC, as the codec reads them);
	// times lists the top-level time fields stored as text, re-read in loc.
	loc   *time.Location
	times []*model.Field
}

// compileForeign checks and records the schema's MatchKeys, KeyOnly and
// Location.
func (e *entityPlan) compileForeign(s Schema[reflect.Value]) error {
	e.foreign.matchKeys = s.MatchKeys
	for _, name := range s.KeyOnly {
		f := e.byName[name]
		if f == nil {
			return e.unknownField("KeyOnly", "KeyOnly", name)
		}
		if !slices.Contains(e.pk.fields, f) && !slices.Contains(e.sk.fields, f) {
			return validationErr(e.name, name, "KeyOnly: field %s is in neither primary key template (PK %q, SK %q): it would not be stored anywhere", name, e.pk.tpl.Raw, e.sk.tpl.Raw)
		}
		for _, p := range e.indexes {
			// A templated index's key is rendered from the field, which
			// the primary key gives back; a multi-attribute index stores
			// the field itself as its key attribute.
			if p.multi && slices.Contains(p.deps, f) {
				return validationErr(e.name, name, "KeyOnly: field %s is a key attribute of multi-attribute index %s, which stores it as an attribute", name, p.name)
			}
		}
		if g := &e.guards; g.version == f || g.created == f || g.updated == f || g.ttl == f {
			return validationErr(e.name, name, "KeyOnly: field %s is managed by the library (Version, CreatedAt, UpdatedAt or TTL)", name)
		}
		if !slices.Contains(e.foreign.keyOnly, f) {
			e.foreign.keyOnly = append(e.foreign.keyOnly, f)
		}
	}
	if s.Location != nil {
		e.foreign.loc = s.Location
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
				setTime(fv, tm)
			}
		}
	}
	return nil
}

// fillKeyFields sets the key fields whose attributes item lacks from its
// key attributes, when it has them.
func (e *entityPlan) fillKeyFields(o *TableOptions, item map[string]types.AttributeValue, rv reflect.Value) error {
	for _, k := range []struct {
		ck   *compiledKey
		attr string
		name string
	}{{&e.pk, o.PartitionKey, "PK"}, {&e.sk, o.SortKey, "SK"}} {
		if !k.ck.defined() || !missingAny(item, k.ck.fields) {
			continue
		}
		s, ok := item[k.attr].(*types.AttributeValueMemberS)
		if !ok {
			continue
		}
		if err := e.parseKey(*k.ck, s.Value, rv, item); err != nil {
			return &KeyError{Entity: e.name, Key: k.name, Err: err}
		}
	}
	return nil
}

func missingAny(item map[string]types.AttributeValue, fs []*model.Field) bool {
	for _, f := range fs {
		if _, ok := item[f.Attr]; !ok {
			return true
		}
	}
	return false
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
	for _, k := range [...]struct {
		ck         *compiledKey
		attr, name string
	}{{&e.pk, o.PartitionKey, "PK"}, {&e.sk, o.SortKey, "SK"}} {
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

// sharedPrefix reports whether item's primary key starts with the literal
// prefixes of the entity's templates, one at least not empty, and their
// length.
func (e *entityPlan) sharedPrefix(o *TableOptions, item map[string]types.AttributeValue) (int, bool) {
	n, ok := 0, true
	for _, k := range [...]struct {
		ck   *compiledKey
		attr string
	}{{&e.pk, o.PartitionKey}, {&e.sk, o.SortKey}} {
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

// ownershipOf is writeplan.Ownership for the entity in table options o.
func (e *entityPlan) ownershipOf(o *TableOptions, i writeplan.Intent) writeplan.Condition {
	return writeplan.Ownership(i, o.PartitionKey, o.EntityTypeAttr, e.name, e.foreign.matchKeys)
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
