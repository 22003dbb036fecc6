package singletable

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/expr"
)

// DynamoDB Local agrees with expr.UpdateOps and expr.MaxUpdateOps: 400 plain SET
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
	}{{400, false, true}, {expr.MaxUpdateOps, true, true}, {expr.MaxUpdateOps + 1, true, false}} {
		upd, names, values := update(tc.n, tc.plus)
		if got, want := expr.UpdateOps(upd), map[bool]int{false: 0, true: tc.n}[tc.plus]; got != want {
			t.Fatalf("%d actions: updateOps = %d, want %d", tc.n, got, want)
		}
		libErr := checkExprLimits("E", exprParts{update: &upd, names: names, values: values})
		if tc.accepted != (libErr == nil) {
			t.Errorf("%d actions (plus %v): library check %v, want accepted=%v", tc.n, tc.plus, libErr, tc.accepted)
		}
		_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name,
			Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"}},
			UpdateExpression: &upd, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		if tc.accepted != (err == nil) {
			t.Errorf("%d actions (plus %v): DynamoDB Local says %v, want accepted=%v", tc.n, tc.plus, err, tc.accepted)
		}
	}
}
