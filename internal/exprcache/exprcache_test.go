package exprcache

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func queryBuilder(entity string, pk, prefix expression.ValueBuilder) expression.Builder {
	kc := expression.Key("PK").Equal(pk).And(expression.Key("SK").BeginsWith("SKILL#"))
	_ = prefix
	filter := expression.Name("EntityType").Equal(expression.Value(entity))
	return expression.NewBuilder().WithKeyCondition(kc).WithFilter(filter)
}

// A template filled with values gives exactly what building with those
// values gives.
func TestTemplateMatchesBuilder(t *testing.T) {
	tpl, err := Compile(1, func(v []expression.ValueBuilder) expression.Builder {
		return queryBuilder("Profile", v[0], expression.ValueBuilder{})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"USER#a", "USER#b#c", ""} {
		want, err := queryBuilder("Profile", expression.Value(user), expression.ValueBuilder{}).Build()
		if err != nil {
			t.Fatal(err)
		}
		if *tpl.KeyCondition != *want.KeyCondition() || *tpl.Filter != *want.Filter() {
			t.Fatalf("strings differ: %q %q vs %q %q", *tpl.KeyCondition, *tpl.Filter, *want.KeyCondition(), *want.Filter())
		}
		if !reflect.DeepEqual(tpl.Names(), want.Names()) {
			t.Fatalf("names %v, want %v", tpl.Names(), want.Names())
		}
		if got := tpl.Values(s(user)); !reflect.DeepEqual(got, want.Values()) {
			t.Fatalf("values %v, want %v", got, want.Values())
		}
	}
}

func TestUpdateTemplate(t *testing.T) {
	build := func(level, gsi expression.ValueBuilder) expression.Builder {
		cond := expression.AttributeExists(expression.Name("PK")).
			And(expression.Name("EntityType").Equal(expression.Value("Profile")))
		upd := expression.Set(expression.Name("EntityType"), expression.Value("Profile")).
			Set(expression.Name("ProficiencyLevel"), level).
			Set(expression.Name("GSI1SK"), gsi)
		return expression.NewBuilder().WithCondition(cond).WithUpdate(upd)
	}
	var c Cache
	tpl, err := c.Get("update:level", 2, func(v []expression.ValueBuilder) expression.Builder { return build(v[0], v[1]) })
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.Get("update:level", 2, nil)
	if again != tpl {
		t.Fatal("cache did not return the compiled template")
	}
	want, err := build(expression.Value("Senior"), expression.Value("LEVEL#Senior")).Build()
	if err != nil {
		t.Fatal(err)
	}
	if *tpl.Update != *want.Update() || *tpl.Condition != *want.Condition() ||
		!reflect.DeepEqual(tpl.Names(), want.Names()) ||
		!reflect.DeepEqual(tpl.Values(s("Senior"), s("LEVEL#Senior")), want.Values()) {
		t.Fatal("update template differs from the built expression")
	}
}

func TestUnusedSlot(t *testing.T) {
	_, err := Compile(2, func(v []expression.ValueBuilder) expression.Builder {
		return queryBuilder("Profile", v[0], v[1])
	})
	if err == nil {
		t.Fatal("an unused slot was not reported")
	}
}

func BenchmarkQueryExpression(b *testing.B) {
	b.Run("impl=builder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, err := queryBuilder("Profile", expression.Value("USER#x"), expression.ValueBuilder{}).Build()
			if err != nil {
				b.Fatal(err)
			}
			_, _, _, _ = e.KeyCondition(), e.Filter(), e.Names(), e.Values()
		}
	})
	var c Cache
	b.Run("impl=template", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tpl, err := c.Get("q", 1, func(v []expression.ValueBuilder) expression.Builder {
				return queryBuilder("Profile", v[0], expression.ValueBuilder{})
			})
			if err != nil {
				b.Fatal(err)
			}
			_, _, _, _ = tpl.KeyCondition, tpl.Filter, tpl.Names(), tpl.Values(s("USER#x"))
		}
	})
}
