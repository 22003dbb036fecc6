package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/schema"
)

// Names in the caller's conditions and filters: callers name fields by
// their Go names everywhere. The library rewrites the first element of
// each name path when it writes the request (nested elements and map keys
// stay verbatim) to, in this order: a Go field's stored attribute name (a
// Go name wins over another field's stored name spelled the same); a
// stored attribute name the entity's items carry, kept as is; anything
// else is a *ValidationError before any request is sent. A field only
// keys hold (Schema.KeyOnly) is tested on them (resolveName, and
// internal/keys/match.go for what is exact), or refused the same way. The
// SDK splits expression.Name at dots: a stored name holding a dot is named
// by its field's Go name, or with expression.NameNoDotSplit.
//
// Values compared with a whole time field are written in the form the
// field is stored in (see operandOf), so
// expression.Name("Day").Equal(expression.Value(day)) holds whatever Day's
// tag (TestFilterOnTimeStoredInKeyForm).

// attrOf resolves name, the head of a name path in a condition on e's
// items in table t: the attribute it stands for, and whether it is known.
func (e *entityPlan) attrOf(t *Table, name string) (string, bool) {
	if f := e.byName[name]; f != nil && f.Attr != "" { // "": a KeyOnly field tagged "-"
		return f.Attr, true
	}
	if e.byAttr[name] != nil {
		return name, true
	}
	o := t.opts
	if name != "" && (name == o.PartitionKey || name == o.SortKey || name == o.EntityTypeAttr) {
		return name, true
	}
	for _, p := range e.indexes {
		if !p.multi && name != "" && (name == p.pkAttr || name == p.skAttr) {
			return name, true
		}
	}
	return "", false
}

// unknownName is the *ValidationError for a name in a condition (role:
// "filter", "condition") that is neither a field of e nor an attribute
// its items are stored with.
func (e *entityPlan) unknownName(role, name string) *ValidationError {
	return validationOf(e.fieldSet().UnknownName(role, name))
}

// condScope is where a condition on a field only keys hold is evaluated:
// a write's on the item whose table keys item holds; a Query's filter
// (query) of the table or index, whose keys it cannot name; typed: among
// several entities' items.
type condScope struct {
	item         map[string]types.AttributeValue
	query, typed bool
	index        string
}

// condNames is the resolver of the names of a caller's condition (role as
// for unknownName) on e's items in table t, evaluated in scope.
func (e *entityPlan) condNames(t *Table, role string, scope condScope) expr.Resolver {
	return func(name string) (expr.Resolution, error) {
		if r, ok := e.resolveName(t, name, role, scope); ok {
			return r, nil
		}
		return expr.Resolution{}, e.unknownName(role, name)
	}
}

// resolveName is what name stands for in a condition on e's items (see
// condNames), and whether it is known.
func (e *entityPlan) resolveName(t *Table, name, role string, scope condScope) (expr.Resolution, bool) {
	f := e.byName[name]
	if f == nil {
		f = e.byAttr[name]
	}
	if f != nil && slices.Contains(e.foreign.keyOnly, f) {
		hs := e.keyHolders(t, f, scope)
		return expr.Resolution{Attr: hs[0].Attr, Key: e.heldInKeys(t, f, role, hs, scope.typed)}, true
	}
	a, ok := e.attrOf(t, name)
	return expr.Resolution{Attr: a, Operand: e.operandOf(a)}, ok
}

// keyHolders lists the key attributes whose templates hold f, a field no
// attribute of its own holds (the table's keys, then the templated index
// keys), as a condition evaluated in scope sees them.
func (e *entityPlan) keyHolders(t *Table, f *model.Field, scope condScope) []keys.Holder {
	var hs []keys.Holder
	var queried []string
	if scope.query {
		queried = t.queriedKeys(scope.index)
	}
	add := func(k *compiledKey, attr string, table, suffixed bool) {
		if i := slices.Index(k.fields, f); i >= 0 && attr != "" {
			h := keys.Holder{Attr: attr, Tpl: &k.tpl, Place: i, Always: table, Suffixed: suffixed, Queried: slices.Contains(queried, attr)}
			if s, ok := scope.item[attr].(*types.AttributeValueMemberS); ok && table {
				h.Known = s.Value
			}
			hs = append(hs, h)
		}
	}
	add(&e.pk, t.opts.PartitionKey, true, false)
	add(&e.sk, t.opts.SortKey, true, false)
	for _, p := range e.indexes {
		if !p.multi {
			add(&p.pk, p.pkAttr, false, p.shards > 0)
			add(&p.sk, p.skAttr, false, false)
		}
	}
	return hs
}

// queriedKeys are the key attributes of the table (index "") or index a
// Query reads: DynamoDB refuses a Query's filter naming one.
func (t *Table) queriedKeys(index string) (out []string) {
	for _, d := range t.indexes() {
		for _, k := range append(d.Partition, d.Sort...) {
			if d.Name == index {
				out = append(out, k.Name)
			}
		}
	}
	if index == "" {
		out = t.primaryKeyAttrs()
	}
	return out
}

// heldInKeys writes the comparisons of f, held only in the keys hs, as
// conditions on them (internal/keys, match.go) and, when typed, on e's
// type, refusing what no condition on them matches exactly.
func (e *entityPlan) heldInKeys(t *Table, f *model.Field, role string, hs []keys.Holder, typed bool) *expr.KeyField {
	kf := &expr.KeyField{
		Equal: func(av types.AttributeValue) ([]expr.KeyCond, error) {
			item := reflect.New(e.typ).Elem()
			want, _ := f.Scalar() // a value of another type equals no stored one
			if typ := attrvalue.TypeText(av); want != "" && !strings.HasSuffix(typ, "("+string(want)+")") ||
				attributevalue.Unmarshal(av, fieldByIndexAlloc(item, f.Index).Addr().Interface()) != nil {
				return nil, fmt.Errorf("the value compared with it is %s, not a %v", typ, f.Type)
			}
			fv, _ := f.KeyValueIn(item, e.foreign.loc) // as f's key placeholders render it
			return keys.Equal(hs, fv)
		},
		BeginsWith: func(prefix string) ([]expr.KeyCond, error) { return keys.BeginsWith(hs, f.Type, prefix) },
		Refuse: func(why error) error {
			return &ValidationError{Entity: e.name, Field: f.Name, Err: why,
				Reason: fmt.Sprintf("%s on %s, a field only keys hold (%s), cannot be written against them exactly", role, f.Name, keys.Held(hs))}
		},
	}
	if typed {
		kf.Where = func(b *expr.Builder) string { return e.typeFilter(b, &t.opts) }
	}
	return kf
}

// operandOf writes a value a caller's condition compares attribute attr
// with in the form attr is stored in, or is nil where the SDK's encoding is
// that form. Only times differ: one under a tag option (date, unix, …, the
// TTL field) or in a multi-attribute index key, which expression.Value
// would write as RFC 3339 text. A number, or text that is not an RFC 3339
// time, is compared as given: the caller wrote the stored form.
func (e *entityPlan) operandOf(attr string) expr.Operand {
	f := e.byAttr[attr]
	if f == nil || !isTimeType(f.Type) {
		return nil
	}
	inKey := false
	for _, p := range e.indexes {
		inKey = inKey || (p.multi && slices.Contains(p.deps, f))
	}
	if f.Form == nil && !inKey {
		return nil
	}
	return func(av types.AttributeValue) (types.AttributeValue, error) {
		s, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			return av, nil
		}
		at, err := time.Parse(time.RFC3339Nano, s.Value)
		if err != nil {
			return av, nil
		}
		item := reflect.New(e.typ).Elem()
		model.SetTime(fieldByIndexAlloc(item, f.Index), at)
		var stored types.AttributeValue
		switch {
		case f == e.guards.ttl:
			stored = ttlValue(f, item)
		case inKey:
			stored, err = e.marshalKeyAttr(f, item)
		default:
			stored, err = e.marshalFieldPlain(f, item)
		}
		if err != nil || stored == nil {
			return nil, &ValidationError{Entity: e.name, Field: f.Name, Reason: "a condition's value cannot be written in the form the field is stored in", Err: err}
		}
		return stored, nil
	}
}

// attrNamer is an entity as a collection's filter sees it.
type attrNamer interface {
	resolveName(t *Table, name, role string, scope condScope) (expr.Resolution, bool)
	unknownName(role, name string) *ValidationError
	excludes(name string) bool
}

func (e *entityPlan) excludes(name string) bool { return e.excluded[name] }

// condNames is the resolver of the names of the caller's conditions on
// r's items, evaluated on the item whose key attributes at holds.
func (r *repo) condNames(at map[string]types.AttributeValue) expr.Resolver {
	return r.e.condNames(r.t, "condition", condScope{item: at})
}

// collectionNames is the resolver of the names of a collection's filter
// (schema.CollectionNames), evaluated in scope (a Query's, or a scan's).
func collectionNames(t *Table, targets []*Target, scope condScope) expr.Resolver {
	scope.typed = true
	named := make([]schema.Target, 0, len(targets))
	for _, tg := range targets {
		if tg == nil {
			continue // newRouter refuses it
		}
		named = append(named, schema.Target{Entity: tg.entity, Excludes: tg.names.excludes,
			Resolve: func(name string) (expr.Resolution, bool) {
				return tg.names.resolveName(t, name, "collection filter", scope)
			},
			Unknown: func(name string) error { return tg.names.unknownName("collection filter", name) }})
	}
	resolve := schema.CollectionNames(named)
	return func(name string) (expr.Resolution, error) {
		r, err := resolve(name)
		return r, invalid(err)
	}
}
