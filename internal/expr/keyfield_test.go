package expr

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// keyFieldResolver resolves "Day" as a field only the sort key holds: = is
// begins_with(SK, "D#<value>#"), begins_with is begins_with(SK,
// "D#<prefix>"), and any other use is refused, the refusal recorded; every
// other name is an attribute of its own.
func keyFieldResolver(refused *[]string) Resolver {
	day := &KeyField{
		Equal: func(av types.AttributeValue) ([]KeyCond, error) {
			return []KeyCond{*KeyCmp("SK", OpBeginsWith, "D#"+av.(*types.AttributeValueMemberS).Value+"#")}, nil
		},
		BeginsWith: func(prefix string) ([]KeyCond, error) {
			return []KeyCond{*KeyCmp("SK", OpBeginsWith, "D#"+prefix)}, nil
		},
		Refuse: func(why error) error {
			*refused = append(*refused, strings.SplitN(why.Error(), ":", 2)[0])
			return errors.New("refused: " + why.Error())
		},
	}
	return func(name string) (Resolution, error) {
		if name == "Day" {
			return Resolution{Attr: "SK", Key: day}, nil
		}
		return Resolution{Attr: strings.ToLower(name)}, nil
	}
}

// TestConditionsRewriteKeyFields: each comparison of a key field with
// values becomes the KeyField's condition (<> its negation, IN a
// disjunction, a value-first comparison the same as name-first), in place
// within NOT, AND and OR; the names and values it no longer uses are
// dropped, so DynamoDB sees none unused.
func TestConditionsRewriteKeyFields(t *testing.T) {
	v := func(s string) expression.OperandBuilder { return expression.Value(s) }
	day, other := expression.Name("Day"), expression.Name("Other")
	cases := []struct {
		name   string
		cond   expression.ConditionBuilder
		text   string
		names  map[string]string
		values []string // in placeholder order
	}{
		{"equal", day.Equal(v("mon")), "begins_with(#n0, :v0)", map[string]string{"#n0": "SK"}, []string{":v0=D#mon#"}},
		{"value first", expression.Equal(v("mon"), day), "begins_with(#n0, :v0)", map[string]string{"#n0": "SK"}, []string{":v0=D#mon#"}},
		{"not equal", day.NotEqual(v("mon")), "NOT (begins_with(#n0, :v0))", map[string]string{"#n0": "SK"}, []string{":v0=D#mon#"}},
		{"in", day.In(v("mon"), v("tue")), "(begins_with(#n0, :v0)) OR (begins_with(#n0, :v1))",
			map[string]string{"#n0": "SK"}, []string{":v0=D#mon#", ":v1=D#tue#"}},
		{"begins_with", day.BeginsWith("m"), "begins_with(#n0, :v0)", map[string]string{"#n0": "SK"}, []string{":v0=D#m"}},
		{"among others", expression.And(other.Equal(v("x")), expression.Not(day.Equal(v("mon"))), expression.Or(other.AttributeExists(), day.BeginsWith("t"))),
			"(#0 = :0) AND (NOT (begins_with(#n0, :v0))) AND ((attribute_exists (#0)) OR (begins_with(#n0, :v1)))",
			map[string]string{"#0": "other", "#n0": "SK"}, []string{":0=x", ":v0=D#mon#", ":v1=D#t"}},
		{"nested elsewhere", expression.And(day.Equal(v("mon")), expression.Name("Meta.Day").Equal(v("x"))),
			"(begins_with(#n0, :v0)) AND (#1.#0 = :1)", map[string]string{"#0": "Day", "#1": "meta", "#n0": "SK"}, []string{":1=x", ":v0=D#mon#"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var refused []string
			var b Builder
			text, err := b.Conditions(keyFieldResolver(&refused), c.cond)
			if err != nil {
				t.Fatal(err)
			}
			if text != c.text || !reflect.DeepEqual(b.Names(), c.names) {
				t.Errorf("%q %v, want %q %v", text, b.Names(), c.text, c.names)
			}
			var values []string
			for ref, av := range b.Values() {
				values = append(values, ref+"="+av.(*types.AttributeValueMemberS).Value)
			}
			if !sameSet(values, c.values) {
				t.Errorf("values %v, want %v", values, c.values)
			}
		})
	}
}

// TestConditionsRefuseKeyFieldUses: every use of a key field that is not
// =, <>, IN or begins_with with values is refused through the KeyField's
// Refuse, naming the use: ranges (value-first ones flipped), BETWEEN, size,
// attribute_exists, a path into it, a comparison with another attribute.
func TestConditionsRefuseKeyFieldUses(t *testing.T) {
	v := func(s string) expression.OperandBuilder { return expression.Value(s) }
	day := expression.Name("Day")
	cases := []struct {
		name string
		cond expression.ConditionBuilder
		use  string
	}{
		{"less than", day.LessThan(v("m")), "<"},
		{"value first greater", expression.GreaterThan(v("m"), day), "<"},
		{"at least", expression.And(expression.Name("Other").Equal(v("x")), day.GreaterThanEqual(v("m"))), ">="},
		{"between", day.Between(v("a"), v("b")), "BETWEEN"},
		{"size", day.Size().GreaterThan(expression.Value(1)), "size"},
		{"exists", day.AttributeExists(), "attribute_exists"},
		{"not exists", day.AttributeNotExists(), "attribute_not_exists"},
		{"contains", day.Contains("x"), "contains"},
		{"path into it", expression.Name("Day.x").Equal(v("a")), "a document path into it"},
		{"another attribute", day.Equal(expression.Name("Other")), "a comparison with another attribute"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var refused []string
			var b Builder
			if _, err := b.Conditions(keyFieldResolver(&refused), c.cond); err == nil || !strings.HasPrefix(err.Error(), "refused") {
				t.Fatalf("%v, want the KeyField's refusal", err)
			}
			if len(refused) != 1 || refused[0] != c.use {
				t.Fatalf("refused %q, want %q", refused, c.use)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestConditionsKeyFieldWhereAndErrors: Where's condition is ANDed with
// each rewritten comparison, and an error of Equal is returned through
// Refuse.
func TestConditionsKeyFieldWhereAndErrors(t *testing.T) {
	kf := &KeyField{
		Equal: func(av types.AttributeValue) ([]KeyCond, error) {
			if av.(*types.AttributeValueMemberS).Value == "" {
				return nil, errors.New("empty")
			}
			return []KeyCond{*KeyCmp("PK", OpEq, "P#x"), *KeyCmp("PK", OpEq, "P#y")}, nil
		},
		Where:  func(b *Builder) string { return Compare(b.Name("type"), OpEq, b.ValueS("T")) },
		Refuse: func(why error) error { return errors.New("refused: " + why.Error()) },
	}
	resolve := func(name string) (Resolution, error) { return Resolution{Attr: "PK", Key: kf}, nil }
	var b Builder
	text, err := b.Conditions(resolve, expression.Name("P").Equal(expression.Value("x")))
	if want := "(#n0 = :v0) AND ((#n1 = :v1) OR (#n1 = :v2))"; err != nil || text != want {
		t.Fatalf("%q %v, want %q", text, err, want)
	}
	var b2 Builder
	if _, err := b2.Conditions(resolve, expression.Name("P").Equal(expression.Value(""))); err == nil || err.Error() != "refused: empty" {
		t.Fatalf("%v, want Equal's error through Refuse", err)
	}
}
