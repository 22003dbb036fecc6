package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// exprParts is one request's expressions and substitution variables.
type exprParts struct {
	kinds  []string  // "filter", "projection", …, for the error
	exprs  []*string // the expression strings, nil when absent
	update *string
	names  map[string]string
	values map[string]types.AttributeValue
}

// checkExprLimits reports the first of DynamoDB's limits on expression
// parameters that the request's expressions break (expr.CheckLimits), as
// a *ValidationError naming the entity, before anything is sent.
func checkExprLimits(entity string, p exprParts) error {
	if why := expr.CheckLimits(p.kinds, p.exprs, p.update, p.names, p.values); why != "" {
		return validationErr(entity, "", "%s", why)
	}
	return nil
}
