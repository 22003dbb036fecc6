package writeplan

import (
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
)

// The library's checks are written directly; the caller's conditions go
// through the SDK's builder once, with placeholders of their own; OR and
// AND group as DynamoDB reads them.
func TestConditionText(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	owner := AllOf(AttrEq("OwnerPK", s("USER#a")), AttrEq("OwnerSK", s("PROFILE")))
	c := Own(AnyOf(AttrNotExists("PK"), owner)).
		And(User(expression.Name("Age").GreaterThan(expression.Value(3)))).
		And(Own(AttrExists("PK"))).
		And(User(expression.Name("Name").AttributeExists()))
	asIs := func(name string) (expr.Resolution, error) { return expr.Resolution{Attr: name}, nil }
	ce, err := c.Build(asIs)
	if err != nil {
		t.Fatal(err)
	}
	want := "((attribute_not_exists(#n0)) OR ((#n1 = :v0) AND (#n2 = :v1))) AND (attribute_exists(#n0)) AND ((#0 > :0) AND (attribute_exists (#1)))"
	if *ce.Text != want {
		t.Fatalf("condition\n got %s\nwant %s", *ce.Text, want)
	}
	wantNames := map[string]string{"#n0": "PK", "#n1": "OwnerPK", "#n2": "OwnerSK", "#0": "Age", "#1": "Name"}
	if !reflect.DeepEqual(ce.Names, wantNames) {
		t.Fatalf("names %v, want %v", ce.Names, wantNames)
	}
	if len(ce.Values) != 3 {
		t.Fatalf("values %v", ce.Values)
	}

	// And never shares a backing array between two conditions built from one.
	base := Own(AttrExists("A"))
	x, y := base.And(Own(AttrExists("X"))), base.And(Own(AttrExists("Y")))
	var bx, by expr.Builder
	x.Write(&bx, nil)
	y.Write(&by, nil)
	if bx.Names()["#n1"] != "X" || by.Names()["#n1"] != "Y" {
		t.Fatalf("two conditions from one base: names %v and %v", bx.Names(), by.Names())
	}

	// And with nothing is the condition itself: an ownership condition
	// alone stays one (Repo.buildCond takes it ready-made).
	owned := Ownership(AnyItem, "PK", "EntityType", "User", false)
	if !owned.And(Condition{}).OnlyOwnership || owned.And(Own(AttrExists("A"))).OnlyOwnership {
		t.Fatal("And: an empty condition must keep OnlyOwnership, another must clear it")
	}

	if ce, err := (Condition{}).Build(nil); err != nil || ce.Text != nil {
		t.Fatalf("empty condition: %v, %v", ce.Text, err)
	}
	if _, err := User(expression.Name("A").AttributeExists()).Build(nil); !errors.Is(err, ErrNoResolver) {
		t.Fatalf("a caller condition without a resolver: %v, want ErrNoResolver", err)
	}
}

// The snapshot condition checks what was read: the item's absence, or its
// presence and each unique attribute's value (or absence).
func TestSnapshotCond(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	email := &model.Field{Name: "Email", Attr: "email"}
	nick := &model.Field{Name: "Nick", Attr: "nick"}
	write := func(c Condition) (string, map[string]string) {
		var b expr.Builder
		text, err := c.Write(&b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return text, b.Names()
	}
	if text, names := write((&Snapshot{Fields: []*model.Field{email}}).Cond("PK")); text != "attribute_not_exists(#n0)" || names["#n0"] != "PK" {
		t.Fatalf("absent: %s %v", text, names)
	}
	snap := &Snapshot{Item: map[string]types.AttributeValue{"PK": s("U#1"), "email": s("a@x")}, Mine: true, Fields: []*model.Field{email, nick}}
	text, names := write(snap.Cond("PK"))
	if want := "(attribute_exists(#n0)) AND (#n1 = :v0) AND (attribute_not_exists(#n2))"; text != want {
		t.Fatalf("present:\n got %s\nwant %s", text, want)
	}
	if names["#n1"] != "email" || names["#n2"] != "nick" {
		t.Fatalf("present: names %v", names)
	}
}
