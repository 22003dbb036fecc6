package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// DynamoDB's documented limits on expression parameters (Developer Guide,
// "Constraints in Amazon DynamoDB", Expression parameters). A request over
// one of them is refused by DynamoDB with a ValidationException; the
// library refuses it first, with a *ValidationError, before sending
// anything.
const (
	// maxExprBytes is the longest expression string (condition, filter,
	// key condition, projection or update expression).
	maxExprBytes = 4 << 10
	// maxSubstitutionBytes bounds all the substitution variables of one
	// expression: the ExpressionAttributeNames and ExpressionAttributeValues.
	maxSubstitutionBytes = 2 << 20
	// maxUpdateOps is the most operators or functions an UpdateExpression
	// may hold.
	maxUpdateOps = 300
	// maxInOperands is the most operands of one IN comparator.
	maxInOperands = 100
)

// exprParts is one request's expressions and substitution variables.
type exprParts struct {
	kinds  []string  // "filter", "projection", …, for the error
	exprs  []*string // the expression strings, nil when absent
	update *string
	names  map[string]string
	values map[string]types.AttributeValue
}

// checkExprLimits reports the first limit the request's expressions break,
// as a *ValidationError naming the entity and the expression.
func checkExprLimits(entity string, p exprParts) error {
	for i, e := range p.exprs {
		if e == nil {
			continue
		}
		kind := p.kinds[i]
		if n := len(*e); n > maxExprBytes {
			return validationErr(entity, "", "the %s expression is %d bytes; DynamoDB allows %d (fewer fields or conditions per request)", kind, n, maxExprBytes)
		}
		if n := expr.MaxInList(*e); n > maxInOperands {
			return validationErr(entity, "", "an IN in the %s expression has %d operands; DynamoDB allows %d", kind, n, maxInOperands)
		}
	}
	if p.update != nil {
		if n := expr.UpdateOps(*p.update); n > maxUpdateOps {
			return validationErr(entity, "", "the update expression has %d operators and functions; DynamoDB allows %d (split the update)", n, maxUpdateOps)
		}
	}
	total := 0
	for k, v := range p.names {
		total += len(k) + len(v)
	}
	bad, why := "", ""
	for k, v := range p.values {
		total += len(k) + itemsize.Value(v)
		// Values the library encodes are checked as they are made; the
		// operands of the caller's conditions and filters are made by the
		// SDK's expression builder. The smallest placeholder is named, so
		// the error does not depend on the map's order.
		if why == "" || k < bad {
			if err := codec.Check(v); err != nil {
				bad, why = k, err.(*codec.InvalidError).Reason
			}
		}
	}
	if why != "" {
		return validationErr(entity, "", "a value in the request's expressions (%s: an operand of a condition or filter, or a value an update sets) cannot be stored: %s", bad, why)
	}
	if total > maxSubstitutionBytes {
		return validationErr(entity, "", "the expression attribute names and values are %d bytes; DynamoDB allows %d", total, maxSubstitutionBytes)
	}
	return nil
}
