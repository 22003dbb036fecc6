package singletable

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/ddblocal"
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
	if got := updateOps(*expr.Update()); got != 2 {
		t.Fatalf("updateOps(%q) = %d, want 2", *expr.Update(), got)
	}
}

// DynamoDB Local agrees with updateOps and maxUpdateOps: 400 plain SET
// actions are accepted, 300 actions with a + each are accepted, 301 are
// refused; the library refuses the 301 before the network and lets the
// others through.
func TestUpdateOperatorLimitMatchesDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	if err := NewTable(c, name).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	ddblocal.DeleteTableOnCleanup(t, c, name)
	update := func(n int, plus bool) (string, map[string]string, map[string]types.AttributeValue) {
		names := map[string]string{}
		values := map[string]types.AttributeValue{}
		parts := make([]string, n)
		for i := range parts {
			id := strconv.FormatInt(int64(i), 36)
			names["#"+id] = "A" + id
			values[":"+id] = &types.AttributeValueMemberN{Value: "1"}
			parts[i] = "#" + id + "=:" + id
			if plus {
				parts[i] += "+:" + id
			}
		}
		return "SET " + strings.Join(parts, ","), names, values
	}
	for _, tc := range []struct {
		n        int
		plus     bool
		accepted bool
	}{{400, false, true}, {maxUpdateOps, true, true}, {maxUpdateOps + 1, true, false}} {
		expr, names, values := update(tc.n, tc.plus)
		if got, want := updateOps(expr), map[bool]int{false: 0, true: tc.n}[tc.plus]; got != want {
			t.Fatalf("%d actions: updateOps = %d, want %d", tc.n, got, want)
		}
		libErr := checkExprLimits("E", exprParts{update: &expr, names: names, values: values})
		if tc.accepted != (libErr == nil) {
			t.Errorf("%d actions (plus %v): library check %v, want accepted=%v", tc.n, tc.plus, libErr, tc.accepted)
		}
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name,
			Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"}},
			UpdateExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		if tc.accepted != (err == nil) {
			t.Errorf("%d actions (plus %v): DynamoDB Local says %v, want accepted=%v", tc.n, tc.plus, err, tc.accepted)
		}
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
