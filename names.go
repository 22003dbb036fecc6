package singletable

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// Names in the caller's conditions and filters: callers name fields by
// their Go names everywhere. The library rewrites the first element of
// each name path when it writes the request (nested elements and map keys
// stay verbatim) to, in this order: a Go field's stored attribute name (a
// Go name wins over another field's stored name spelled the same); a
// stored attribute name the entity's items carry, kept as is; anything
// else is a *ValidationError before any request is sent. The SDK splits
// expression.Name at dots: a stored name holding a dot is named by its
// field's Go name, or with expression.NameNoDotSplit.
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
	if e.excluded[name] {
		return validationErr(e.name, name, "%s names field %s, which is excluded by its dynamodbav:\"-\" tag (it is never stored)", role, name)
	}
	return validationErr(e.name, name, "%s names %q, which is neither a Go field of %s nor an attribute its items are stored with", role, name, e.typ)
}

// condScope is where a caller's condition is evaluated, for the fields
// only keys hold: a write's on the one item whose table key attributes
// item holds; a Query's filter on items whose key attributes queried
// (Table.queriedKeys) DynamoDB refuses in it; a Scan's on any item.
type condScope struct {
	item    map[string]types.AttributeValue
	queried []string
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
		return expr.Resolution{Attr: hs[0].Attr, Key: e.heldInKeys(f, role, hs)}, true
	}
	a, ok := e.attrOf(t, name)
	return expr.Resolution{Attr: a, Operand: e.operandOf(a)}, ok
}

// keyHolders lists the key attributes whose templates hold f, a field no
// attribute of its own holds: the table's keys and the templated index
// keys (a condition uses the table's when it has f, since every item has
// them), as a condition evaluated in scope sees them.
func (e *entityPlan) keyHolders(t *Table, f *model.Field, scope condScope) []keys.Holder {
	var hs []keys.Holder
	add := func(k *compiledKey, attr string, table, suffixed bool) {
		if i := slices.Index(k.fields, f); i >= 0 && attr != "" {
			h := keys.Holder{Attr: attr, Tpl: &k.tpl, Place: i, Always: table, Suffixed: suffixed, Queried: slices.Contains(scope.queried, attr)}
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

// queriedKeys are the key attributes of the table (index "") or the index
// a Query reads: DynamoDB refuses a Query's filter naming one.
func (t *Table) queriedKeys(index string) []string {
	if index == "" {
		return t.primaryKeyAttrs()
	}
	var out []string
	for _, d := range t.indexes() {
		for _, k := range append(d.Partition, d.Sort...) {
			if d.Name == index {
				out = append(out, k.Name)
			}
		}
	}
	return out
}

// heldInKeys writes the comparisons of f, held only in the keys hs, against
// them (internal/keys, match.go), refusing what no condition on them
// matches exactly.
func (e *entityPlan) heldInKeys(f *model.Field, role string, hs []keys.Holder) expr.KeyField {
	return func(b *expr.Builder, op string, avs ...types.AttributeValue) (string, error) {
		conds, err := e.keyConds(f, hs, op, avs)
		if err != nil {
			held := make([]string, len(hs))
			for i, h := range hs {
				held[i] = fmt.Sprintf("%s %q", h.Attr, h.Tpl.Raw)
			}
			return "", &ValidationError{Entity: e.name, Field: f.Name, Err: err,
				Reason: fmt.Sprintf("%s on %s, which only key %s holds, cannot be written against it exactly", role, f.Name, strings.Join(held, ", "))}
		}
		kcs := make([]expr.KeyCond, len(conds))
		for i, c := range conds {
			kcs[i] = expr.KeyCond{Attr: c.Attr, Op: expr.OpEq, V1: &types.AttributeValueMemberS{Value: c.Key}}
			if c.Prefix {
				kcs[i].Op = expr.OpBeginsWith
			}
		}
		return b.AnyKey(kcs), nil
	}
}

// keyConds is the condition "f op avs" on the keys hs (see heldInKeys).
func (e *entityPlan) keyConds(f *model.Field, hs []keys.Holder, op string, avs []types.AttributeValue) ([]keys.Cond, error) {
	switch op {
	case expr.OpEq:
		item, err := e.condItem(f, avs[0])
		if err != nil {
			return nil, err
		}
		fv, _ := f.KeyValue(item)
		return keys.Equal(hs, fv)
	case expr.OpBeginsWith:
		if s, ok := avs[0].(*types.AttributeValueMemberS); ok {
			return keys.BeginsWith(hs, f.Type, s.Value)
		}
		return nil, fmt.Errorf("%w: begins_with on it needs a string", keys.ErrInexact)
	case expr.OpLt, expr.OpLe, expr.OpGt, expr.OpGe, expr.OpBetween:
		return nil, fmt.Errorf("%w: a filter does not range (%s) over a key part; a Query's sort condition (Where, Between) ranges over a sort key's fields", keys.ErrInexact, strings.TrimSpace(op))
	}
	return nil, fmt.Errorf("%w: %s of it has no attribute to test; =, <>, IN and begins_with are written against the key", keys.ErrInexact, op)
}

// condItem is a new item of e's type whose field f holds av, a value a
// condition compares f with: a time as RFC 3339 text (expression.Value's
// encoding of a time.Time), or as f's attribute holds it.
func (e *entityPlan) condItem(f *model.Field, av types.AttributeValue) (reflect.Value, error) {
	item := reflect.New(e.typ).Elem()
	fv := fieldByIndexAlloc(item, f.Index)
	var err error
	if want, _ := scalarType(f); want != "" && want != avType(av) { // a value of another type equals no stored one
		return item, fmt.Errorf("the value compared with it is not a %v", f.Type)
	}
	if s, ok := av.(*types.AttributeValueMemberS); ok && isTimeType(f.Type) {
		if at, terr := time.Parse(time.RFC3339Nano, s.Value); terr == nil {
			setTime(fv, at)
			return item, nil
		}
	}
	if plan := codec.For(e.typ); f.Attr != "" && plan.HasField(f.Attr, f.Index) {
		err = plan.Decode(map[string]types.AttributeValue{f.Attr: av}, item)
	} else {
		err = attributevalue.Unmarshal(av, fv.Addr().Interface())
	}
	if err != nil {
		return item, fmt.Errorf("the value compared with it cannot be read as a %v", f.Type)
	}
	if !f.Present(item) {
		return item, fmt.Errorf("the value compared with it is empty, which no key holds: %w", keys.ErrEmptyValue)
	}
	return item, nil
}

// avType is the scalar type of av, "" for another type.
func avType(av types.AttributeValue) types.ScalarAttributeType {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return types.ScalarAttributeTypeS
	case *types.AttributeValueMemberN:
		return types.ScalarAttributeTypeN
	case *types.AttributeValueMemberB:
		return types.ScalarAttributeTypeB
	}
	return ""
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
		setTime(fieldByIndexAlloc(item, f.Index), at)
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
	typeFilter(b *expr.Builder, o *TableOptions) string
	unknownName(role, name string) *ValidationError
	excludes(name string) bool
}

func (e *entityPlan) excludes(name string) bool { return e.excluded[name] }

// condNames is the resolver of the names of the caller's conditions on
// r's items, evaluated on the item whose key attributes at holds.
func (r *repo) condNames(at map[string]types.AttributeValue) expr.Resolver {
	return r.e.condNames(r.t, "condition", condScope{item: at})
}

// collectionNames is the resolver of the names of a collection's filter:
// a name resolves when the targets that know it agree on its attribute (on
// the others' items the filter's test of it fails, as on the table); two
// attributes for one name make it ambiguous. A field one target holds only
// in keys is tested on its keys and entity type, when no other target
// knows the name (queried: the key attributes the collection's Query reads
// by, nil for a scan).
func collectionNames(t *Table, targets []*Target, queried []string) expr.Resolver {
	return func(name string) (expr.Resolution, error) {
		var res expr.Resolution
		by := ""
		var keyed *Target
		var knowers []string
		var ambiguous error
		for _, tg := range targets {
			r, ok := tg.names.resolveName(t, name, "collection filter", condScope{queried: queried})
			if !ok {
				continue
			}
			knowers = append(knowers, tg.entity)
			if r.Key != nil {
				keyed = tg
			}
			if res.Operand == nil { // the first target's that has one
				res.Operand = r.Operand
			}
			if by == "" {
				res.Attr, res.Key, by = r.Attr, r.Key, tg.entity
				continue
			}
			if r.Attr != res.Attr && ambiguous == nil {
				ambiguous = validationErr(strings.Join(knowers, ", "), name,
					"collection filter names %q, which is ambiguous: %s stores it as attribute %q, %s as %q; name the attribute (e.g. with expression.NameNoDotSplit) or filter one entity with a Query",
					name, by, res.Attr, tg.entity, r.Attr)
			}
		}
		switch {
		case keyed == nil && ambiguous != nil:
			return expr.Resolution{}, ambiguous
		case keyed != nil && len(knowers) > 1:
			return expr.Resolution{}, validationErr(strings.Join(knowers, ", "), name,
				"collection filter names %q, which %s holds only in its keys: a filter of several entities' items cannot test it exactly; filter %s with a Query", name, keyed.entity, keyed.entity)
		case keyed != nil:
			key := res.Key
			res.Key = func(b *expr.Builder, op string, avs ...types.AttributeValue) (string, error) {
				c, err := key(b, op, avs...)
				if err != nil {
					return "", err
				}
				return expr.And(keyed.names.typeFilter(b, &t.opts), c), nil
			}
			return res, nil
		case by != "":
			return res, nil
		}
		switch len(targets) {
		case 0:
			return expr.Resolution{}, validationErr("", name, "collection filter names %q, but the collection has no targets to resolve it against", name)
		case 1:
			return expr.Resolution{}, targets[0].names.unknownName("collection filter", name)
		}
		ents := make([]string, 0, len(targets))
		for _, tg := range targets {
			if tg.names.excludes(name) {
				return expr.Resolution{}, tg.names.unknownName("collection filter", name)
			}
			ents = append(ents, tg.entity)
		}
		slices.Sort(ents)
		return expr.Resolution{}, validationErr(strings.Join(ents, ", "), name,
			"collection filter names %q, which is neither a Go field nor a stored attribute of any target entity", name)
	}
}
