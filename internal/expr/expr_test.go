package expr

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestNamesAreReused(t *testing.T) {
	var b Builder
	pk, sk, pk2 := b.Name("PK"), b.Name("SK"), b.Name("PK")
	if pk != "#n0" || sk != "#n1" || pk2 != pk {
		t.Fatalf("names %q %q %q", pk, sk, pk2)
	}
	if want := map[string]string{"#n0": "PK", "#n1": "SK"}; !reflect.DeepEqual(b.Names(), want) {
		t.Fatalf("Names() = %v, want %v", b.Names(), want)
	}
	for i := 2; i < 40; i++ { // past the precomputed placeholders
		b.Name(string(rune('a' + i)))
	}
	if got := b.Name("z" + "z"); got != "#n40" {
		t.Fatalf("41st name: %q", got)
	}
}

func TestValuesAreDistinct(t *testing.T) {
	var b Builder
	a, c := b.ValueS("x"), b.ValueS("x")
	if a == c {
		t.Fatalf("two values share %q", a)
	}
	if len(b.Values()) != 2 {
		t.Fatalf("Values() = %v", b.Values())
	}
	var empty Builder
	if empty.Names() != nil || empty.Values() != nil {
		t.Fatal("an empty builder has substitution variables")
	}
}

func TestAnd(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"", ""}, ""},
		{[]string{"a = b"}, "a = b"},
		{[]string{"", "a = b", ""}, "a = b"},
		{[]string{"a", "b OR c"}, "(a) AND (b OR c)"},
	}
	for _, c := range cases {
		if got := And(c.in...); got != c.want {
			t.Errorf("And(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOr(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"a = b"}, "a = b"},
		{[]string{"", "a", ""}, "a"},
		{[]string{"a", "b AND c", "d"}, "(a) OR (b AND c) OR (d)"},
	}
	for _, c := range cases {
		if got := Or(c.in...); got != c.want {
			t.Errorf("Or(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Grouping nests as written.
	if got := Or("x", And("y", Or("z", "w"))); got != "(x) OR ((y) AND ((z) OR (w)))" {
		t.Errorf("nested: %q", got)
	}
}

// Holds is "equal", or "absent" for a nil value; names stay behind
// placeholders even when they have dots or are reserved words.
func TestHolds(t *testing.T) {
	var b Builder
	got := And(b.Holds("a.b", &types.AttributeValueMemberS{Value: "x"}), b.Holds("Status", nil), b.Holds("a.b", nil))
	if want := "(#n0 = :v0) AND (attribute_not_exists(#n1)) AND (attribute_not_exists(#n0))"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if want := map[string]string{"#n0": "a.b", "#n1": "Status"}; !reflect.DeepEqual(b.Names(), want) {
		t.Fatalf("names %v", b.Names())
	}
	if len(b.Values()) != 1 {
		t.Fatalf("values %v", b.Values())
	}
}

func TestUpdate(t *testing.T) {
	var u Update
	if u.String() != "" {
		t.Fatal("zero Update is not empty")
	}
	u.Remove("#r")
	u.Set("#a", ":a")
	u.Add("#c", ":c")
	u.SetIfNotExists("#b", ":b")
	u.Remove("#s")
	u.Set("#d", Plus(IfNotExists("#d", ":zero"), ":one"))
	u.Delete("#e", ":e")
	u.Set("#l", ListAppend(IfNotExists("#l", ":empty"), ":l"))
	want := "SET #a = :a, #b = if_not_exists(#b, :b), #d = if_not_exists(#d, :zero) + :one, #l = list_append(if_not_exists(#l, :empty), :l) REMOVE #r, #s ADD #c :c DELETE #e :e"
	if got := u.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestText(t *testing.T) {
	if got := Between("#k", ":a", ":b"); got != "#k BETWEEN :a AND :b" {
		t.Error(got)
	}
	if got := BeginsWith("#k", ":a"); got != "begins_with(#k, :a)" {
		t.Error(got)
	}
	if got := Compare("#k", OpLe, ":a"); got != "#k <= :a" {
		t.Error(got)
	}
	if got := AttributeExists("#k"); got != "attribute_exists(#k)" {
		t.Error(got)
	}
	if got := AttributeNotExists("#k"); got != "attribute_not_exists(#k)" {
		t.Error(got)
	}
	if got := Compare("#k", OpNe, ":a"); got != "#k <> :a" {
		t.Error(got)
	}
	var b Builder
	b.Name("b")
	if got := b.Projection("a", "b", "a"); got != "#n1, #n0" {
		t.Error(got)
	}
}

// The SDK's placeholders ("#0", ":0") and ours ("#n0", ":v0") never clash,
// and the SDK builder is used once per request.
func TestConditions(t *testing.T) {
	var b Builder
	own := Compare(b.Name("Type"), OpEq, b.ValueS("User"))
	user, err := b.Conditions(nil,
		expression.Name("Age").GreaterThan(expression.Value(3)),
		expression.Name("Type").Equal(expression.Value("User")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if own != "#n0 = :v0" || user != "(#0 > :0) AND (#1 = :1)" {
		t.Fatalf("own %q, user %q", own, user)
	}
	wantNames := map[string]string{"#n0": "Type", "#0": "Age", "#1": "Type"}
	if !reflect.DeepEqual(b.Names(), wantNames) {
		t.Fatalf("names %v, want %v", b.Names(), wantNames)
	}
	if n, ok := b.Values()[":0"].(*types.AttributeValueMemberN); !ok || n.Value != "3" {
		t.Fatalf("values %v", b.Values())
	}
	if _, err := b.Conditions(nil, expression.Name("X").AttributeExists()); !errors.Is(err, ErrTwice) {
		t.Fatalf("second Conditions: %v, want ErrTwice", err)
	}
	if s, err := b.Conditions(nil); s != "" || err != nil {
		t.Fatalf("no conditions: %q, %v", s, err)
	}
	var bad expression.ConditionBuilder // the zero builder is invalid
	var b2 Builder
	if _, err := b2.Conditions(nil, bad); err == nil {
		t.Fatal("an invalid condition built")
	}
}

// The resolver rewrites the head of each name path only: nested path
// elements, list indexes and names under NameNoDotSplit's single element
// stay as written; a placeholder the SDK shares between a head and a
// nested element parts in two.
func TestConditionsResolve(t *testing.T) {
	stored := map[string]string{"Public": "pub", "Meta": "m", "Tags": "tg", "Name": "display", "Title": "Name"}
	resolve := func(name string) (Resolution, error) {
		if a, ok := stored[name]; ok {
			return Resolution{Attr: a}, nil
		}
		if name == "pub" || name == "PK" {
			return Resolution{Attr: name}, nil
		}
		return Resolution{}, fmt.Errorf("unknown %q", name)
	}
	cases := []struct {
		name  string
		cond  expression.ConditionBuilder
		text  string
		names map[string]string
	}{
		{"plain", expression.Name("Public").Equal(expression.Value(true)),
			"#0 = :0", map[string]string{"#0": "pub"}},
		{"stored name as is", expression.Name("pub").Equal(expression.Value(true)),
			"#0 = :0", map[string]string{"#0": "pub"}},
		{"nested path", expression.Name("Meta.Public").Equal(expression.Value(1)),
			"#0.#1 = :0", map[string]string{"#0": "m", "#1": "Public"}},
		{"list index", expression.Name("Tags[2]").Equal(expression.Value("x")),
			"#0[2] = :0", map[string]string{"#0": "tg"}},
		{"index then nested", expression.Name("Meta.Name[1].Public").AttributeExists(),
			"attribute_exists (#0.#1[1].#2)", map[string]string{"#0": "m", "#1": "Name", "#2": "Public"}},
		{"size", expression.Name("Tags").Size().GreaterThan(expression.Value(0)),
			"size (#0) > :0", map[string]string{"#0": "tg"}},
		{"name operand", expression.Name("Public").Equal(expression.Name("pub")),
			"#0 = #1", map[string]string{"#0": "pub", "#1": "pub"}},
		{"head and nested share a placeholder", expression.Name("Meta.Public").Equal(expression.Name("Public")),
			"#0.#1 = #n0", map[string]string{"#0": "m", "#1": "Public", "#n0": "pub"}},
		{"Go name shadows a stored name", expression.Name("Name").AttributeExists(),
			"attribute_exists (#0)", map[string]string{"#0": "display"}},
		{"no dot split", expression.NameNoDotSplit("pub").AttributeExists(),
			"attribute_exists (#0)", map[string]string{"#0": "pub"}},
	}
	for _, c := range cases {
		var b Builder
		text, err := b.Conditions(resolve, c.cond)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if text != c.text || !reflect.DeepEqual(b.Names(), c.names) {
			t.Errorf("%s: %q %v, want %q %v", c.name, text, b.Names(), c.text, c.names)
		}
	}

	var b Builder
	if _, err := b.Conditions(resolve, expression.Name("Meta.Public").Equal(expression.Value(1)),
		expression.Name("Nope.Public").AttributeExists()); err == nil || err.Error() != `unknown "Nope"` {
		t.Fatalf("unknown head: %v", err)
	}
	var b2 Builder
	if _, err := b2.Conditions(resolve, expression.Name("a.b").AttributeExists()); err == nil || err.Error() != `unknown "a"` {
		t.Fatalf("dotted name: %v", err)
	}
}

// Conditions re-encodes, with the resolver's Operand, exactly the values a
// condition compares a whole attribute with: both sides of a comparison,
// BETWEEN's bounds, IN's list. Values compared with a nested path, with
// size(), or given to a function (begins_with) stay as the SDK wrote them,
// as do the values of an attribute without an Operand.
func TestConditionsReencodeOperands(t *testing.T) {
	mark := func(av types.AttributeValue) (types.AttributeValue, error) {
		return &types.AttributeValueMemberS{Value: "stored:" + av.(*types.AttributeValueMemberS).Value}, nil
	}
	resolve := func(name string) (Resolution, error) {
		if name == "At" {
			return Resolution{Attr: "at", Operand: mark}, nil
		}
		return Resolution{Attr: name}, nil
	}
	v := func(s string) expression.OperandBuilder { return expression.Value(s) }
	at := expression.Name("At")
	cases := []struct {
		name string
		cond expression.ConditionBuilder
		want []string // the values after building, sorted
	}{
		{"equal", at.Equal(v("a")), []string{"stored:a"}},
		{"value first", expression.LessThan(v("a"), at), []string{"stored:a"}},
		{"every comparison", expression.And(at.NotEqual(v("a")), at.LessThan(v("b")), at.LessThanEqual(v("c")), at.GreaterThan(v("d")), at.GreaterThanEqual(v("e"))),
			[]string{"stored:a", "stored:b", "stored:c", "stored:d", "stored:e"}},
		{"between", at.Between(v("a"), v("b")), []string{"stored:a", "stored:b"}},
		{"in", at.In(v("a"), v("b"), v("c")), []string{"stored:a", "stored:b", "stored:c"}},
		{"not and or", expression.Not(expression.Or(at.Equal(v("a")), expression.Name("Other").Equal(v("b")))), []string{"b", "stored:a"}},
		{"other attribute", expression.Name("Other").Equal(v("a")), []string{"a"}},
		{"nested path", expression.Name("Meta.At").Equal(v("a")), []string{"a"}},
		{"under a nested head", expression.Name("At.x").Equal(v("a")), []string{"a"}},
		{"indexed", expression.Name("At[0]").Equal(v("a")), []string{"a"}},
		{"size", at.Size().Equal(expression.Value(3)), nil},
		{"begins_with", at.BeginsWith("a"), []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b Builder
			if _, err := b.Conditions(resolve, c.cond); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, av := range b.Values() {
				if s, ok := av.(*types.AttributeValueMemberS); ok {
					got = append(got, s.Value)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("values %q, want %q", got, c.want)
			}
		})
	}
}
