package singletable

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// buildCondition says whose condition failed to write, as a
// *ValidationError, and checks the expression against DynamoDB's limits.
// (The condition's text is internal/writeplan's TestConditionText.)
func TestBuildCondition(t *testing.T) {
	asIs := func(name string) (expr.Resolution, error) { return expr.Resolution{Attr: name}, nil }
	if ce, err := buildCondition(writeplan.Condition{}, "User", nil); err != nil || ce.Text != nil {
		t.Fatalf("empty condition: %v, %v", ce.Text, err)
	}
	ce, err := buildCondition(writeplan.Own(writeplan.AttrExists("PK")), "User", nil)
	if err != nil || ce.Text == nil || *ce.Text != "attribute_exists(#n0)" || ce.Names["#n0"] != "PK" {
		t.Fatalf("own check: %v, %v", ce, err)
	}
	var bad expression.ConditionBuilder
	var ve *ValidationError
	if _, err := buildCondition(writeplan.User(bad), "User", asIs); !errors.As(err, &ve) || ve.Entity != "User" {
		t.Fatalf("an invalid caller condition: %v, want a *ValidationError of User", err)
	}
	if _, err := buildCondition(writeplan.User(expression.Name("A").AttributeExists()), "User", nil); !errors.Is(err, writeplan.ErrNoResolver) {
		t.Fatalf("a caller condition without a resolver: %v, want ErrNoResolver", err)
	}
	ops := make([]expression.OperandBuilder, 101)
	for i := range ops {
		ops[i] = expression.Value(i)
	}
	in := expression.Name("A").In(ops[0], ops[1:]...)
	if _, err := buildCondition(writeplan.User(in), "User", asIs); !errors.As(err, &ve) || !strings.Contains(err.Error(), "condition expression") {
		t.Fatalf("a condition over DynamoDB's limits: %v, want a *ValidationError", err)
	}
}
