package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/singletable-go/singletable/internal/expr"
)

// Target is one entity among those whose names a collection's filter
// resolves.
type Target struct {
	Entity   string
	Resolve  func(name string) (expr.Resolution, bool) // what name stands for, and whether it is known
	Unknown  func(name string) error                   // the error of a name it does not know
	Excludes func(name string) bool                    // a field its dynamodbav:"-" tag excludes
}

// CollectionNames is the resolver of the names of a collection's filter:
// a name resolves when the targets that know it agree on its attribute
// (on the others' items the filter's test of it fails, as on the table);
// two attributes for one name make it ambiguous, and so does a field that
// only one target's keys hold. Its errors are Problems or the targets'.
func CollectionNames(targets []Target) expr.Resolver {
	return func(name string) (expr.Resolution, error) {
		var res expr.Resolution
		by := ""
		var knowers []string
		for _, tg := range targets {
			r, ok := tg.Resolve(name)
			if !ok {
				continue
			}
			knowers = append(knowers, tg.Entity)
			if res.Operand == nil { // the first target's that has one
				res.Operand = r.Operand
			}
			if by == "" {
				res.Attr, res.Key, by = r.Attr, r.Key, tg.Entity
				continue
			}
			if r.Attr != res.Attr || r.Key != nil || res.Key != nil {
				why := fmt.Sprintf("%s stores it as attribute %q, %s as %q", by, res.Attr, tg.Entity, r.Attr)
				if r.Key != nil || res.Key != nil {
					why = "one of them holds it only in its keys"
				}
				return expr.Resolution{}, problem(strings.Join(knowers, ", "), name,
					"collection filter names %q, which is ambiguous: %s; name the attribute (e.g. with expression.NameNoDotSplit) or filter one entity with a Query", name, why)
			}
		}
		if by != "" {
			return res, nil
		}
		return expr.Resolution{}, unknownToAll(targets, name)
	}
}

// unknownToAll is the error of a name no target knows.
func unknownToAll(targets []Target, name string) error {
	switch len(targets) {
	case 0:
		return problem("", name, "collection filter names %q, but the collection has no targets to resolve it against", name)
	case 1:
		return targets[0].Unknown(name)
	}
	ents := make([]string, 0, len(targets))
	for _, tg := range targets {
		if tg.Excludes(name) {
			return tg.Unknown(name)
		}
		ents = append(ents, tg.Entity)
	}
	slices.Sort(ents)
	return problem(strings.Join(ents, ", "), name,
		"collection filter names %q, which is neither a Go field nor a stored attribute of any target entity", name)
}
