package singletable

import (
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// The library's checks are written directly; the caller's conditions go
// through the SDK's builder once, with placeholders of their own; OR and
// AND group as DynamoDB reads them.
func TestConditionText(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	owner := allOf(attrEq("OwnerPK", s("USER#a")), attrEq("OwnerSK", s("PROFILE")))
	c := check(anyOf(attrNotExists("PK"), owner)).
		and(userCond(expression.Name("Age").GreaterThan(expression.Value(3)))).
		and(check(attrExists("PK"))).
		and(userCond(expression.Name("Name").AttributeExists()))
	asIs := func(name string) (string, error) { return name, nil }
	ce, err := c.build("User", asIs)
	if err != nil {
		t.Fatal(err)
	}
	want := "((attribute_not_exists(#n0)) OR ((#n1 = :v0) AND (#n2 = :v1))) AND (attribute_exists(#n0)) AND ((#0 > :0) AND (attribute_exists (#1)))"
	if *ce.text != want {
		t.Fatalf("condition\n got %s\nwant %s", *ce.text, want)
	}
	wantNames := map[string]string{"#n0": "PK", "#n1": "OwnerPK", "#n2": "OwnerSK", "#0": "Age", "#1": "Name"}
	if !reflect.DeepEqual(ce.names, wantNames) {
		t.Fatalf("names %v, want %v", ce.names, wantNames)
	}
	if len(ce.values) != 3 {
		t.Fatalf("values %v", ce.values)
	}

	// and never shares a backing array between two conditions built from one.
	base := check(attrExists("A"))
	x, y := base.and(check(attrExists("X"))), base.and(check(attrExists("Y")))
	var bx, by expr.Builder
	x.write(&bx, nil)
	y.write(&by, nil)
	if bx.Names()["#n1"] != "X" || by.Names()["#n1"] != "Y" {
		t.Fatalf("two conditions from one base: names %v and %v", bx.Names(), by.Names())
	}

	if ce, err := (condition{}).build("User", nil); err != nil || ce.text != nil {
		t.Fatalf("empty condition: %v, %v", ce.text, err)
	}
	var bad expression.ConditionBuilder
	var ve *ValidationError
	if _, err := userCond(bad).build("User", asIs); !errors.As(err, &ve) {
		t.Fatalf("an invalid caller condition: %v, want a *ValidationError", err)
	}
	if _, err := userCond(expression.Name("A").AttributeExists()).build("User", nil); !errors.Is(err, errNoResolver) {
		t.Fatalf("a caller condition without a resolver: %v, want errNoResolver", err)
	}
}
