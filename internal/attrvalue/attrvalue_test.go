package attrvalue

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute values compare as DynamoDB compares them.
func TestEqual(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	m := func(kv ...any) types.AttributeValue {
		out := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return &types.AttributeValueMemberM{Value: out}
	}
	cases := []struct {
		name string
		a, b types.AttributeValue
		want bool
	}{
		{"same string", s("a"), s("a"), true},
		{"other string", s("a"), s("b"), false},
		{"number by value", n("1.0"), n("1"), true},
		{"other number", n("1"), n("2"), false},
		{"string is not number", s("1"), n("1"), false},
		{"binary", &types.AttributeValueMemberB{Value: []byte{1}}, &types.AttributeValueMemberB{Value: []byte{1}}, true},
		{"bool", &types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: false}, false},
		{"null", &types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberNULL{Value: true}, true},
		{"string set in any order", &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, &types.AttributeValueMemberSS{Value: []string{"b", "a"}}, true},
		{"number set by value", &types.AttributeValueMemberNS{Value: []string{"1.50", "2"}}, &types.AttributeValueMemberNS{Value: []string{"2", "1.5"}}, true},
		{"list in order", &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), n("1")}}, &types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), s("a")}}, false},
		{"nested map", m("x", n("10"), "y", m("z", s("q"))), m("y", m("z", s("q")), "x", n("1e1")), true},
		{"map with another key", m("x", s("a")), m("y", s("a")), false},
		{"nil", nil, s("a"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Equal(c.a, c.b); got != c.want {
				t.Errorf("Equal = %v, want %v", got, c.want)
			}
			if got := Equal(c.b, c.a); got != c.want {
				t.Errorf("Equal reversed = %v, want %v", got, c.want)
			}
		})
	}
}
