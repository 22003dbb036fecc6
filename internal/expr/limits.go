package expr

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// DynamoDB's documented limits on expression parameters (Developer Guide,
// "Constraints in Amazon DynamoDB", Expression parameters). A request over
// one of them is refused by DynamoDB with a ValidationException; the
// library refuses it first, before sending anything ([CheckLimits]).
const (
	// MaxExprBytes is the longest expression string (condition, filter,
	// key condition, projection or update expression).
	MaxExprBytes = 4 << 10
	// MaxSubstitutionBytes bounds all the substitution variables of one
	// expression: the ExpressionAttributeNames and ExpressionAttributeValues.
	MaxSubstitutionBytes = 2 << 20
	// MaxUpdateOps is the most operators or functions an UpdateExpression
	// may hold.
	MaxUpdateOps = 300
	// MaxInOperands is the most operands of one IN comparator.
	MaxInOperands = 100
)

// CheckLimits returns the first limit one request's expressions break, as
// the reason of an error, "" when they break none. exprs are the
// expression strings (nil when absent), kinds their names in the reason
// ("filter", "projection", …); update is the update expression, nil
// without one; names and values are the substitution variables. A value
// that cannot be stored (codec.Check) counts as a broken limit: values the
// library encodes are checked as they are made, but the operands of the
// caller's conditions and filters are made by the SDK's expression
// builder.
func CheckLimits(kinds []string, exprs []*string, update *string, names map[string]string, values map[string]types.AttributeValue) string {
	for i, e := range exprs {
		if e == nil {
			continue
		}
		if n := len(*e); n > MaxExprBytes {
			return fmt.Sprintf("the %s expression is %d bytes; DynamoDB allows %d (fewer fields or conditions per request)", kinds[i], n, MaxExprBytes)
		}
		if n := MaxInList(*e); n > MaxInOperands {
			return fmt.Sprintf("an IN in the %s expression has %d operands; DynamoDB allows %d", kinds[i], n, MaxInOperands)
		}
	}
	if update != nil {
		if n := UpdateOps(*update); n > MaxUpdateOps {
			return fmt.Sprintf("the update expression has %d operators and functions; DynamoDB allows %d (split the update)", n, MaxUpdateOps)
		}
	}
	total := 0
	for k, v := range names {
		total += len(k) + len(v)
	}
	bad, why := "", ""
	for k, v := range values {
		total += len(k) + itemsize.Value(v)
		// The smallest placeholder is named, so the reason does not depend
		// on the map's order.
		if why == "" || k < bad {
			if err := codec.Check(v); err != nil {
				bad, why = k, err.(*codec.InvalidError).Reason
			}
		}
	}
	if why != "" {
		return fmt.Sprintf("a value in the request's expressions (%s: an operand of a condition or filter, or a value an update sets) cannot be stored: %s", bad, why)
	}
	if total > MaxSubstitutionBytes {
		return fmt.Sprintf("the expression attribute names and values are %d bytes; DynamoDB allows %d", total, MaxSubstitutionBytes)
	}
	return ""
}

// MaxInList returns the largest operand count of the IN comparators in an
// expression rendered by the SDK's expression builder ("#0 IN (:0, :1)").
// Placeholders contain no parentheses or commas, so counting commas up to
// the closing parenthesis counts the operands.
func MaxInList(expr string) int {
	most := 0
	for rest := expr; ; {
		i := strings.Index(rest, " IN (")
		if i < 0 {
			return most
		}
		rest = rest[i+len(" IN ("):]
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return most
		}
		most = max(most, strings.Count(rest[:end], ",")+1)
		rest = rest[end:]
	}
}

// UpdateOps counts the operators and functions of an update expression
// as DynamoDB counts them against its limit: each function call
// (if_not_exists, list_append, …) and each arithmetic + or -. The = of a
// SET action is assignment, not an operator, and clause keywords and
// commas count nothing: DynamoDB Local accepts 400 plain SET actions and
// refuses 301 actions of the form "#a = :a + :b" with "operator count:
// 301" (the root package's TestUpdateOperatorLimitMatchesDynamoDB). Names and values are
// placeholders (#n0, :v0), so a '-' or '(' is always syntax.
func UpdateOps(expr string) int {
	n := 0
	for _, c := range expr {
		switch c {
		case '(', '+', '-':
			n++
		}
	}
	return n
}
