package expr

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestKeyCondition(t *testing.T) {
	var b Builder
	between := KeyCmp("SK", OpBetween, "a")
	between.V2 = &types.AttributeValueMemberS{Value: "c"}
	got := b.KeyCondition([]KeyCond{*KeyCmp("PK", OpEq, "p"), *between})
	if want := "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2"; got != want {
		t.Fatalf("KeyCondition = %q, want %q", got, want)
	}
	if got := b.KeyCondition([]KeyCond{*KeyCmp("SK", OpBeginsWith, "x")}); got != "begins_with(#n1, :v3)" {
		t.Fatalf("KeyCondition = %q", got)
	}
}

func TestKeyCondHolds(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	between := KeyCmp("SK", OpBetween, "b")
	between.V2 = s("d")
	for _, c := range []struct {
		cond KeyCond
		v    types.AttributeValue
		want bool
	}{
		{*KeyCmp("SK", OpEq, "b"), s("b"), true},
		{*KeyCmp("SK", OpEq, "b"), s("c"), false},
		{*KeyCmp("SK", OpLt, "b"), s("a"), true},
		{*KeyCmp("SK", OpLe, "b"), s("b"), true},
		{*KeyCmp("SK", OpGt, "b"), s("b"), false},
		{*KeyCmp("SK", OpGe, "b"), s("b"), true},
		{*between, s("c"), true},
		{*between, s("e"), false},
		{*KeyCmp("SK", OpBeginsWith, "ab"), s("abc"), true},
		{*KeyCmp("SK", OpBeginsWith, "ab"), s("b"), false},
		{*KeyCmp("SK", OpBeginsWith, "ab"), &types.AttributeValueMemberN{Value: "1"}, false},
		{*KeyCmp("SK", OpEq, "1"), &types.AttributeValueMemberN{Value: "1"}, false},
		{*KeyCmp("SK", OpEq, "b"), nil, false},
	} {
		if got := c.cond.Holds(c.v); got != c.want {
			t.Errorf("%s %q Holds(%v) = %v, want %v", c.cond.Op, c.cond.V1.(*types.AttributeValueMemberS).Value, c.v, got, c.want)
		}
	}
}
