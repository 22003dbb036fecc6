package expr

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// The update operator count follows DynamoDB's rule on what the SDK's
// builder renders: functions and arithmetic count, assignments do not.
func TestUpdateOpsCount(t *testing.T) {
	ub := expression.Set(expression.Name("a"), expression.Value(1)).
		Set(expression.Name("b"), expression.IfNotExists(expression.Name("b"), expression.Value(2))).
		Set(expression.Name("e"), expression.Name("e").Plus(expression.Value(3))).
		Remove(expression.Name("c")).
		Add(expression.Name("d"), expression.Value(1))
	expr, err := expression.NewBuilder().WithUpdate(ub).Build()
	if err != nil {
		t.Fatal(err)
	}
	// if_not_exists(…) and one +: two.
	if got := UpdateOps(*expr.Update()); got != 2 {
		t.Fatalf("UpdateOps(%q) = %d, want 2", *expr.Update(), got)
	}
}

func TestMaxInList(t *testing.T) {
	cases := map[string]int{
		"#0 = :0":    0,
		"#0 IN (:0)": 1,
		"(#0 IN (:0, :1, :2)) AND (#1 IN (:3, :4))": 3,
	}
	for expr, want := range cases {
		if got := MaxInList(expr); got != want {
			t.Errorf("MaxInList(%q) = %d, want %d", expr, got, want)
		}
	}
}
