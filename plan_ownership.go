package singletable

import (
	"errors"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The condition of one write is a writeplan.Condition: the library's checks,
// which it writes itself, and the caller's conditions ([WriteOptions].If,
// [Repo.TxCheck], [Update.If]), which the SDK's expression builder
// writes. buildCondition turns it into a request's condition expression.

// buildCondition writes c as a request's only expression, checked against
// DynamoDB's limits. names resolves the names of the caller's conditions
// (see names.go); it may be nil only when there are none. An error writing
// a caller's condition is a *ValidationError of entity.
func buildCondition(c writeplan.Condition, entity string, names expr.Resolver) (writeplan.CondExpr, error) {
	ce, err := c.Build(names)
	if err != nil {
		return writeplan.CondExpr{}, condErr(entity, "bad condition", err)
	}
	if ce.Text == nil {
		return ce, nil
	}
	if err := checkExprLimits(entity, exprParts{kinds: []string{"condition"}, exprs: []*string{ce.Text},
		names: ce.Names, values: ce.Values}); err != nil {
		return writeplan.CondExpr{}, err
	}
	return ce, nil
}

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
