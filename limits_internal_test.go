package singletable

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// The update operator count follows what the SDK's builder renders.
func TestUpdateOpsCount(t *testing.T) {
	ub := expression.Set(expression.Name("a"), expression.Value(1)).
		Set(expression.Name("b"), expression.IfNotExists(expression.Name("b"), expression.Value(2))).
		Remove(expression.Name("c")).
		Add(expression.Name("d"), expression.Value(1))
	expr, err := expression.NewBuilder().WithUpdate(ub).Build()
	if err != nil {
		t.Fatal(err)
	}
	// a =, b = if_not_exists(…), REMOVE c, ADD d: four actions and a function.
	if got := updateOps(*expr.Update()); got != 5 {
		t.Fatalf("updateOps(%q) = %d, want 5", *expr.Update(), got)
	}

	ub = expression.UpdateBuilder{}
	for i := range maxUpdateOps + 1 {
		ub = ub.Set(expression.Name(strings.Repeat("f", 1+i%5)+string(rune('a'+i%26))), expression.Value(i))
	}
	expr, err = expression.NewBuilder().WithUpdate(ub).Build()
	if err != nil {
		t.Fatal(err)
	}
	err = checkExprLimits("E", exprParts{update: expr.Update(), names: expr.Names(), values: expr.Values()})
	if _, ok := err.(*ValidationError); !ok {
		t.Fatalf("an update of %d actions: got %v, want a *ValidationError", maxUpdateOps+1, err)
	}
}

func TestMaxInList(t *testing.T) {
	cases := map[string]int{
		"#0 = :0":    0,
		"#0 IN (:0)": 1,
		"(#0 IN (:0, :1, :2)) AND (#1 IN (:3, :4))": 3,
	}
	for expr, want := range cases {
		if got := maxInList(expr); got != want {
			t.Errorf("maxInList(%q) = %d, want %d", expr, got, want)
		}
	}
}
