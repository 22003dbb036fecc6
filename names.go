package singletable

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/expr"
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

// condNames is the resolver of the names of a caller's condition (role as
// for unknownName) on e's items in table t.
func (e *entityPlan) condNames(t *Table, role string) expr.Resolver {
	return func(name string) (string, expr.Operand, error) {
		if a, ok := e.attrOf(t, name); ok {
			return a, e.operandOf(a), nil
		}
		return "", nil, e.unknownName(role, name)
	}
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
	attrOf(t *Table, name string) (string, bool)
	operandOf(attr string) expr.Operand
	unknownName(role, name string) *ValidationError
	excludes(name string) bool
}

func (e *entityPlan) excludes(name string) bool { return e.excluded[name] }

// condNames is the resolver of the names of the caller's conditions on
// r's items.
func (r *repo) condNames() expr.Resolver { return r.e.condNames(r.t, "condition") }

// collectionNames is the resolver of the names of a collection's filter:
// a name resolves when the targets that know it agree on its attribute (on
// the others' items the filter's test of it fails, as on the table); two
// attributes for one name make it ambiguous.
func collectionNames(t *Table, targets []*Target) expr.Resolver {
	return func(name string) (string, expr.Operand, error) {
		attr, by := "", ""
		var operand expr.Operand // the first target's that has one
		var knowers []string
		for _, tg := range targets {
			a, ok := tg.names.attrOf(t, name)
			if !ok {
				continue
			}
			knowers = append(knowers, tg.entity)
			if operand == nil {
				operand = tg.names.operandOf(a)
			}
			if by == "" {
				attr, by = a, tg.entity
				continue
			}
			if a != attr {
				return "", nil, validationErr(strings.Join(knowers, ", "), name,
					"collection filter names %q, which is ambiguous: %s stores it as attribute %q, %s as %q; name the attribute (e.g. with expression.NameNoDotSplit) or filter one entity with a Query",
					name, by, attr, tg.entity, a)
			}
		}
		if by != "" {
			return attr, operand, nil
		}
		switch len(targets) {
		case 0:
			return "", nil, validationErr("", name, "collection filter names %q, but the collection has no targets to resolve it against", name)
		case 1:
			return "", nil, targets[0].names.unknownName("collection filter", name)
		}
		ents := make([]string, 0, len(targets))
		for _, tg := range targets {
			if tg.names.excludes(name) {
				return "", nil, tg.names.unknownName("collection filter", name)
			}
			ents = append(ents, tg.entity)
		}
		slices.Sort(ents)
		return "", nil, validationErr(strings.Join(ents, ", "), name,
			"collection filter names %q, which is neither a Go field nor a stored attribute of any target entity", name)
	}
}
