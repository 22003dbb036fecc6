// Package tabledef is a table's definition as the declarations make it
// and as DescribeTable reports it: what each index holds of its items
// (its projection), and the differences Table.Check reports.
package tabledef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// Set is an index's projection: ALL, KEYS_ONLY, or INCLUDE with the
// non-key attributes it adds. The keys of the table and of the index are
// always projected and never listed.
type Set struct {
	Type  types.ProjectionType // never ""
	Attrs []string             // INCLUDE's attributes, sorted, each once
}

// Declared checks a declaration: typ "" is ALL, and include (attribute
// names) goes with INCLUDE only.
func Declared(typ types.ProjectionType, include []string) (Set, error) {
	switch typ {
	case "", types.ProjectionTypeAll, types.ProjectionTypeKeysOnly:
		if typ == "" {
			typ = types.ProjectionTypeAll
		}
		if len(include) > 0 {
			return Set{}, fmt.Errorf("projection %s takes no Include (%v): INCLUDE does", typ, include)
		}
		return Set{Type: typ}, nil
	case types.ProjectionTypeInclude:
		if len(include) == 0 {
			return Set{}, fmt.Errorf("projection INCLUDE names no attribute in Include: use KEYS_ONLY for the keys alone")
		}
		return Set{Type: typ, Attrs: sortedSet(include)}, nil
	}
	return Set{}, fmt.Errorf("unknown projection %q: use ALL, KEYS_ONLY or INCLUDE (types.ProjectionType)", typ)
}

// Of is the projection DescribeTable reports; nil is ALL.
func Of(p *types.Projection) Set {
	if p == nil || p.ProjectionType == "" {
		return Set{Type: types.ProjectionTypeAll}
	}
	s := Set{Type: p.ProjectionType}
	if s.Type == types.ProjectionTypeInclude {
		s.Attrs = sortedSet(p.NonKeyAttributes)
	}
	return s
}

func sortedSet(names []string) []string {
	s := slices.Clone(names)
	slices.Sort(s)
	return slices.Compact(s)
}

// All reports whether the index holds every attribute.
func (s Set) All() bool { return s.Type == types.ProjectionTypeAll }

// Without is s without the key attributes keys, which every projection
// holds: DynamoDB's NonKeyAttributes list none. An INCLUDE left with no
// attribute is KEYS_ONLY.
func (s Set) Without(keys ...string) Set {
	if s.Type != types.ProjectionTypeInclude {
		return s
	}
	attrs := slices.DeleteFunc(slices.Clone(s.Attrs), func(a string) bool { return slices.Contains(keys, a) })
	if len(attrs) == 0 {
		return Set{Type: types.ProjectionTypeKeysOnly}
	}
	return Set{Type: s.Type, Attrs: attrs}
}

// Holds reports whether a read of the index gives back attribute attr,
// given keys, the key attributes of the table and of the index.
func (s Set) Holds(attr string, keys ...string) bool {
	return s.All() || slices.Contains(keys, attr) || slices.Contains(s.Attrs, attr)
}

// Names is resolve refusing with refuse's error a name that stands for an
// attribute s does not hold (keys: the key attributes, always held), or
// for a field only keys hold whose comparisons name such a key: DynamoDB
// refuses an expression on it. It is resolve when s is ALL.
func (s Set) Names(resolve expr.Resolver, keys []string, refuse func(name, attr string) error) expr.Resolver {
	if s.All() {
		return resolve
	}
	return func(name string) (expr.Resolution, error) {
		r, err := resolve(name)
		switch {
		case err != nil:
		case r.Key == nil && !s.Holds(r.Attr, keys...):
			err = refuse(name, r.Attr)
		case r.Key != nil:
			k, key := *r.Key, r.Key
			held := func(conds []expr.KeyCond, err error) ([]expr.KeyCond, error) {
				for _, c := range conds {
					if err == nil && !s.Holds(c.Attr, keys...) {
						err = refuse(name, c.Attr)
					}
				}
				return conds, err
			}
			k.Equal = func(av types.AttributeValue) ([]expr.KeyCond, error) { return held(key.Equal(av)) }
			k.BeginsWith = func(prefix string) ([]expr.KeyCond, error) { return held(key.BeginsWith(prefix)) }
			r.Key = &k
		}
		return r, err
	}
}

// Equal reports whether two projections hold the same attributes.
func (s Set) Equal(o Set) bool { return s.Type == o.Type && slices.Equal(s.Attrs, o.Attrs) }

// Projection is s as CreateTable declares it.
func (s Set) Projection() *types.Projection {
	return &types.Projection{ProjectionType: s.Type, NonKeyAttributes: slices.Clone(s.Attrs)}
}

// Drift describes how live, the projection of the live index, differs
// from s, the declared one, or is "" when it holds what s does: the same
// type and, for INCLUDE, at least the declared attributes (more is
// harmless to reads).
func (s Set) Drift(live Set) string {
	var missing []string
	for _, a := range s.Attrs {
		if !live.Holds(a) {
			missing = append(missing, a)
		}
	}
	switch {
	case live.Type != s.Type:
		return fmt.Sprintf("projects %s, declared %s", live, s)
	case len(missing) > 0:
		return fmt.Sprintf("does not project %s, declared %s", strings.Join(missing, ", "), s)
	}
	return ""
}

// String writes s as "ALL", "KEYS_ONLY" or "INCLUDE (Email, SKU)".
func (s Set) String() string {
	if s.Type == types.ProjectionTypeInclude {
		return "INCLUDE (" + strings.Join(s.Attrs, ", ") + ")"
	}
	return string(s.Type)
}
