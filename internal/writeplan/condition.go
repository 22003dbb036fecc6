// Package writeplan is the non-generic core of the write plan that every write
// of an entity derives from: the condition of one write (the library's
// own checks and the caller's, written through internal/expr), what the
// write expects of the item under its key (its Intent), what the library
// read before it (a Snapshot), and the one classification of a failed
// condition (Expectation.Failed, Expectation.Refuse).
//
// It knows nothing of an entity's type parameter, and nothing of the
// root package's errors: a classification is an Outcome, which the root
// package turns into its sentinel and typed errors.
package writeplan

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// Condition is the condition of one write: the checks the library makes
// (the item exists, is this entity's, has the version read, still holds the
// unique values read, …), which it writes itself, and the caller's
// conditions (WriteOptions.If, Repo.CheckOp, Update.If), which the SDK's
// expression builder writes. All of them must hold. The zero value is no
// condition.
type Condition struct {
	own  []Check
	user []expression.ConditionBuilder
	// OnlyOwnership marks the ownership condition alone (Repo.ownership
	// for AnyItem), which Repo.buildCond takes ready-made; And with a
	// condition that is not empty clears it.
	OnlyOwnership bool
}

// Check writes one check into a request's expression, naming its
// attributes and values through b.
type Check func(b *expr.Builder) string

// AttrExists holds when the item has attribute attr.
func AttrExists(attr string) Check {
	return func(b *expr.Builder) string { return expr.AttributeExists(b.Name(attr)) }
}

// AttrNotExists holds when the item has no attribute attr (or there is no
// item).
func AttrNotExists(attr string) Check {
	return func(b *expr.Builder) string { return expr.AttributeNotExists(b.Name(attr)) }
}

// AttrEq holds when the item's attribute attr equals av.
func AttrEq(attr string, av types.AttributeValue) Check {
	return func(b *expr.Builder) string { return expr.Compare(b.Name(attr), expr.OpEq, b.Value(av)) }
}

// AnyOf holds when one of ws does.
func AnyOf(ws ...Check) Check {
	return func(b *expr.Builder) string { return expr.Or(writeAll(b, ws)...) }
}

// AllOf holds when every one of ws does.
func AllOf(ws ...Check) Check {
	return func(b *expr.Builder) string { return expr.And(writeAll(b, ws)...) }
}

// Not holds when w does not (so also when w reads an attribute the item
// lacks, or there is no item).
func Not(w Check) Check {
	return func(b *expr.Builder) string { return "NOT (" + w(b) + ")" }
}

func writeAll(b *expr.Builder, ws []Check) []string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w(b)
	}
	return parts
}

// Own is a condition of the library's own checks.
func Own(ws ...Check) Condition { return Condition{own: ws} }

// User is a condition of the caller's.
func User(c expression.ConditionBuilder) Condition {
	return Condition{user: []expression.ConditionBuilder{c}}
}

// And is the condition that holds when c and o do: c itself when o is
// empty (an ownership condition alone stays one, see OnlyOwnership).
func (c Condition) And(o Condition) Condition {
	if o.Empty() {
		return c
	}
	return Condition{
		own:  append(c.own[:len(c.own):len(c.own)], o.own...),
		user: append(c.user[:len(c.user):len(c.user)], o.user...),
	}
}

// AsRead holds while each attribute in attrs is as in read (absent when it
// was).
func AsRead(read map[string]types.AttributeValue, attrs []string) Condition {
	still := make([]Check, len(attrs))
	for i, a := range attrs {
		if av, ok := read[a]; ok {
			still[i] = AttrEq(a, av)
		} else {
			still[i] = AttrNotExists(a)
		}
	}
	return Own(still...)
}

// Empty reports whether there is nothing to check.
func (c Condition) Empty() bool { return len(c.own)+len(c.user) == 0 }

// Write writes the condition through b (which may already hold the
// request's other expressions) and returns its text, "" when empty. names
// resolves the names of the caller's conditions; it may be nil only when
// there are none.
func (c Condition) Write(b *expr.Builder, names expr.Resolver) (string, error) {
	parts := make([]string, 0, len(c.own)+1)
	for _, w := range c.own {
		parts = append(parts, w(b))
	}
	if len(c.user) > 0 {
		if names == nil {
			return "", ErrNoResolver
		}
		u, err := b.Conditions(names, c.user...)
		if err != nil {
			return "", err
		}
		parts = append(parts, u)
	}
	return expr.And(parts...), nil
}

// CondExpr is a request's condition expression and its substitution
// variables.
type CondExpr struct {
	Text   *string // nil when there is no condition
	Names  map[string]string
	Values map[string]types.AttributeValue
}

// Build writes the condition as a request's only expression; names as for
// Write. The error is Write's, as it is: the caller says whose condition
// it was and checks the expression against DynamoDB's limits.
func (c Condition) Build(names expr.Resolver) (CondExpr, error) {
	if c.Empty() {
		return CondExpr{}, nil
	}
	var b expr.Builder
	text, err := c.Write(&b, names)
	if err != nil {
		return CondExpr{}, err
	}
	return CondExpr{Text: &text, Names: b.Names(), Values: b.Values()}, nil
}

// ErrNoResolver is a library bug: a caller's condition written without the
// resolver of its names.
var ErrNoResolver = errors.New("singletable: internal error: a caller's condition written without its names' resolver")
