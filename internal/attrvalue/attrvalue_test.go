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

// Key values order as DynamoDB orders keys: numbers as decimals, strings
// and binaries by bytes; values of different types do not order.
func TestCompare(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	b := func(v ...byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: v} }
	cases := []struct {
		name string
		a, b types.AttributeValue
		want int
		ok   bool
	}{
		{"strings", s("a"), s("b"), -1, true},
		{"equal strings", s("é"), s("é"), 0, true},
		{"strings by bytes, not runes", s("\uffff"), s("\U00010000"), -1, true},
		{"uppercase before lowercase", s("Z"), s("a"), -1, true},
		{"numbers by value", n("9"), n("10"), -1, true},
		{"numbers with exponents", n("1e2"), n("99.5"), 1, true},
		{"equal numbers written apart", n("1.0"), n("1"), 0, true},
		{"negative numbers", n("-10"), n("-9"), -1, true},
		// 38 significant digits, DynamoDB's precision: a float would
		// round these to one value.
		{"numbers at full precision", n("12345678901234567890123456789012345678"), n("12345678901234567890123456789012345679"), -1, true},
		{"small decimals", n("0.000000000000000000000000000000000001"), n("0"), 1, true},
		{"binaries", b(1, 2), b(1, 3), -1, true},
		{"binary prefix first", b(1), b(1, 0), -1, true},
		{"high byte after low", b(0xff), b(0x7f), 1, true},
		{"types differ", s("1"), n("1"), 0, false},
		{"missing", nil, s("a"), 0, false},
		{"not a key type", &types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: true}, 0, false},
		{"number that does not parse", n("x"), n("1"), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Compare(c.a, c.b)
			if got != c.want || ok != c.ok {
				t.Errorf("Compare = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
			got, ok = Compare(c.b, c.a)
			if got != -c.want || ok != c.ok {
				t.Errorf("Compare reversed = %d, %v; want %d, %v", got, ok, -c.want, c.ok)
			}
		})
	}
}

func TestTypeText(t *testing.T) {
	cases := map[string]types.AttributeValue{
		"a string (S)":                    &types.AttributeValueMemberS{Value: "x"},
		"a number set (NS)":               &types.AttributeValueMemberNS{Value: []string{"1"}},
		"a list (L)":                      &types.AttributeValueMemberL{},
		"*types.AttributeValueMemberNULL": &types.AttributeValueMemberNULL{Value: true},
	}
	for want, av := range cases {
		if got := TypeText(av); got != want {
			t.Errorf("TypeText(%T) = %q, want %q", av, got, want)
		}
	}
}
