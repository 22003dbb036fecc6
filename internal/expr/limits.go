package expr

import "strings"

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
