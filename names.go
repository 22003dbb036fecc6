package singletable

import (
	"slices"
	"strings"

	"github.com/singletable-go/singletable/internal/expr"
)

// Names in the caller's conditions and filters.
//
// Callers name fields by their Go names everywhere: in Where, Set and
// Fields, and in the expression.ConditionBuilder values given to
// [Query.Filter], [Collection.Filter], [WriteOptions] If, [Update.If] and
// [Repo.TxCheck].
// The library rewrites a condition's names when it writes the request
// (expr.Builder.Conditions with the resolver made here): the first element
// of each name path is resolved, nested path elements ("Meta.Tags[0].Kind":
// "Tags" and "Kind") and map keys stay verbatim. A first element is, in
// this order:
//
//   - a Go field name of the entity: the field's stored attribute name. A
//     Go field name wins over another field's stored name that is spelled
//     the same (the Go names are the vocabulary; name that other field by
//     its Go name);
//   - a stored attribute name the entity's items carry: a field's
//     attribute, the table's key attributes, the entity's index key
//     attributes, the entity type attribute: kept as is;
//   - anything else: a *ValidationError naming it and the entity, before
//     any request is sent.
//
// The SDK splits expression.Name at dots, so expression.Name("a.b") is
// the path a → b; a stored attribute whose name holds a dot is named by
// its field's Go name, or with expression.NameNoDotSplit.

// attrOf resolves name, the head of a name path in a condition on e's
// items in table t: the attribute it stands for, and whether it is known.
func (e *entityDef) attrOf(t *Table, name string) (string, bool) {
	if f := e.byName[name]; f != nil {
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
func (e *entityDef) unknownName(role, name string) *ValidationError {
	if e.excluded[name] {
		return validationErr(e.name, name, "%s names field %s, which is excluded by its dynamodbav:\"-\" tag (it is never stored)", role, name)
	}
	return validationErr(e.name, name, "%s names %q, which is neither a Go field of %s nor an attribute its items are stored with", role, name, e.typ)
}

// condNames is the resolver of the names of a caller's condition (role as
// for unknownName) on e's items in table t.
func (e *entityDef) condNames(t *Table, role string) expr.Resolver {
	return func(name string) (string, error) {
		if a, ok := e.attrOf(t, name); ok {
			return a, nil
		}
		return "", e.unknownName(role, name)
	}
}

// attrNamer is an entity as a collection's filter sees it.
type attrNamer interface {
	attrOf(t *Table, name string) (string, bool)
	unknownName(role, name string) *ValidationError
	excludes(name string) bool
}

func (e *entityDef) excludes(name string) bool { return e.excluded[name] }

// condNames is the resolver of the names of the caller's conditions on
// r's items.
func (r *boundEntity) condNames() expr.Resolver { return r.e.condNames(r.t, "condition") }

// collectionNames is the resolver of the names of a collection's filter:
// a name resolves when the targets that know it agree on its attribute
// (a target that does not know it has no such attribute, so the filter's
// test of it fails on that target's items, as it would on the table); two
// targets resolving it to different attributes make it ambiguous.
func collectionNames(t *Table, targets []*Target) expr.Resolver {
	return func(name string) (string, error) {
		attr, by := "", ""
		var knowers []string
		for _, tg := range targets {
			a, ok := tg.names.attrOf(t, name)
			if !ok {
				continue
			}
			knowers = append(knowers, tg.entity)
			if by == "" {
				attr, by = a, tg.entity
				continue
			}
			if a != attr {
				return "", validationErr(strings.Join(knowers, ", "), name,
					"collection filter names %q, which is ambiguous: %s stores it as attribute %q, %s as %q; name the attribute (e.g. with expression.NameNoDotSplit) or filter one entity with a Query",
					name, by, attr, tg.entity, a)
			}
		}
		if by != "" {
			return attr, nil
		}
		switch len(targets) {
		case 0:
			return "", validationErr("", name, "collection filter names %q, but the collection has no targets to resolve it against", name)
		case 1:
			return "", targets[0].names.unknownName("collection filter", name)
		}
		ents := make([]string, 0, len(targets))
		for _, tg := range targets {
			if tg.names.excludes(name) {
				return "", tg.names.unknownName("collection filter", name)
			}
			ents = append(ents, tg.entity)
		}
		slices.Sort(ents)
		return "", validationErr(strings.Join(ents, ", "), name,
			"collection filter names %q, which is neither a Go field nor a stored attribute of any target entity", name)
	}
}
