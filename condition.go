package singletable

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// condition is the condition of one write: the checks the library makes
// (the item exists, is this entity's, has the version read, still holds the
// unique values read, …), which it writes itself, and the caller's
// conditions ([If], [TxCheck], [Update.If]), which the SDK's expression
// builder writes. All of them must hold. The zero value is no condition.
type condition struct {
	own  []condWriter
	user []expression.ConditionBuilder
	// onlyOwnership marks the ownership condition alone (Repo.ownership
	// for anyItem), which Repo.buildCond takes ready-made; and clears it.
	onlyOwnership bool
}

// condWriter writes one check into a request's expression, naming its
// attributes and values through b.
type condWriter func(b *expr.Builder) string

func attrExists(attr string) condWriter {
	return func(b *expr.Builder) string { return expr.AttributeExists(b.Name(attr)) }
}

func attrNotExists(attr string) condWriter {
	return func(b *expr.Builder) string { return expr.AttributeNotExists(b.Name(attr)) }
}

func attrEq(attr string, av types.AttributeValue) condWriter {
	return func(b *expr.Builder) string { return expr.Compare(b.Name(attr), expr.OpEq, b.Value(av)) }
}

// anyOf holds when one of ws does.
func anyOf(ws ...condWriter) condWriter {
	return func(b *expr.Builder) string { return expr.Or(writeAll(b, ws)...) }
}

// allOf holds when every one of ws does.
func allOf(ws ...condWriter) condWriter {
	return func(b *expr.Builder) string { return expr.And(writeAll(b, ws)...) }
}

func writeAll(b *expr.Builder, ws []condWriter) []string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w(b)
	}
	return parts
}

// check is a condition of the library's own checks.
func check(ws ...condWriter) condition { return condition{own: ws} }

// userCond is a condition of the caller's.
func userCond(c expression.ConditionBuilder) condition {
	return condition{user: []expression.ConditionBuilder{c}}
}

// and is the condition that holds when c and o do.
func (c condition) and(o condition) condition {
	return condition{
		own:  append(c.own[:len(c.own):len(c.own)], o.own...),
		user: append(c.user[:len(c.user):len(c.user)], o.user...),
	}
}

// empty reports whether there is nothing to check.
func (c condition) empty() bool { return len(c.own)+len(c.user) == 0 }

// write writes the condition through b (which may already hold the
// request's other expressions) and returns its text, "" when empty. names
// resolves the names of the caller's conditions (see names.go); it may be
// nil only when there are none.
func (c condition) write(b *expr.Builder, names expr.Resolver) (string, error) {
	parts := make([]string, 0, len(c.own)+1)
	for _, w := range c.own {
		parts = append(parts, w(b))
	}
	if len(c.user) > 0 {
		if names == nil {
			return "", errNoResolver
		}
		u, err := b.Conditions(names, c.user...)
		if err != nil {
			return "", err
		}
		parts = append(parts, u)
	}
	return expr.And(parts...), nil
}

// condExpr is a request's condition expression and its substitution
// variables, checked against DynamoDB's limits.
type condExpr struct {
	text   *string // nil when there is no condition
	names  map[string]string
	values map[string]types.AttributeValue
}

// build writes the condition as a request's only expression; names as for
// write.
func (c condition) build(entity string, names expr.Resolver) (condExpr, error) {
	if c.empty() {
		return condExpr{}, nil
	}
	var b expr.Builder
	text, err := c.write(&b, names)
	if err != nil {
		return condExpr{}, condErr(entity, "bad condition", err)
	}
	ce := condExpr{text: &text, names: b.Names(), values: b.Values()}
	if err := checkExprLimits(entity, exprParts{kinds: []string{"condition"}, exprs: []*string{ce.text},
		names: ce.names, values: ce.values}); err != nil {
		return condExpr{}, err
	}
	return ce, nil
}

// errNoResolver is a library bug: a caller's condition written without the
// resolver of its names.
var errNoResolver = errors.New("singletable: internal error: a caller's condition written without its names' resolver")

// condErr wraps an error writing a caller's condition or filter (reason:
// "bad condition", …) as a *ValidationError of entity, unless it is one
// already (a name the resolver refused), which is returned as is.
func condErr(entity, reason string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return err
	}
	return &ValidationError{Entity: entity, Reason: reason, Err: err}
}
