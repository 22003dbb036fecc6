package keycond

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

type skill struct {
	Name  string
	Years int
}

// rendered is the sort key SKILL#{Name}#{Years} on attribute SK.
func rendered(t *testing.T) Key {
	t.Helper()
	tpl, err := keys.Parse("SKILL#{Name}#{Years}")
	if err != nil {
		t.Fatal(err)
	}
	k := Key{Attr: "SK", Tpl: &tpl, Fields: model.StructFields(reflect.TypeFor[skill]())}
	for j := range tpl.Parts {
		if tpl.Parts[j].IsPlaceholder() {
			k.Places = append(k.Places, &tpl.Parts[j])
		}
	}
	return k
}

// multi is the multi-attribute sort key Name (S), Years (N).
func multi() Key {
	return Key{Fields: model.StructFields(reflect.TypeFor[skill]()), Value: func(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
		fv, _ := f.Get(v)
		if fv.Kind() == reflect.String {
			return &types.AttributeValueMemberS{Value: fv.String()}, nil
		}
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(fv.Int(), 10)}, nil
	}}
}

// TestSortMatchesItsFields: on a rendered and on a multi-attribute key,
// each condition holds on exactly the keys whose fields satisfy it.
func TestSortMatchesItsFields(t *testing.T) {
	var universe []skill
	for _, name := range []string{"g", "go", "golang", "rust"} {
		for _, years := range []int{1, 2, 3, 10} {
			universe = append(universe, skill{name, years})
		}
	}
	go2, go3, rust := skill{"go", 2}, skill{"go", 3}, skill{"rust", 0}
	cases := []struct {
		name   string
		c      Cond
		kv, hv skill
		want   func(s skill) bool
	}{
		{"none", Cond{}, go2, go2, func(skill) bool { return true }},
		{"name eq", Cond{Kind: Cmp, Op: expr.OpEq, N: 1}, go2, go2, func(s skill) bool { return s.Name == "go" }},
		{"name gt", Cond{Kind: Cmp, Op: expr.OpGt, N: 1}, go2, go2, func(s skill) bool { return s.Name > "go" }},
		{"name ge", Cond{Kind: Cmp, Op: expr.OpGe, N: 1}, go2, go2, func(s skill) bool { return s.Name >= "go" }},
		{"name lt", Cond{Kind: Cmp, Op: expr.OpLt, N: 1}, go2, go2, func(s skill) bool { return s.Name < "go" }},
		{"name le", Cond{Kind: Cmp, Op: expr.OpLe, N: 1}, go2, go2, func(s skill) bool { return s.Name <= "go" }},
		{"whole key", Cond{Kind: Cmp, Op: expr.OpEq, N: 2}, go2, go2, func(s skill) bool { return s == go2 }},
		{"years lt", Cond{Kind: Cmp, Op: expr.OpLt, N: 2}, go2, go2, func(s skill) bool { return s.Name == "go" && s.Years < 2 }},
		{"years gt", Cond{Kind: Cmp, Op: expr.OpGt, N: 2}, go2, go2, func(s skill) bool { return s.Name == "go" && s.Years > 2 }},
		{"years between", Cond{Kind: Between, N: 2}, go2, go3, func(s skill) bool { return s.Name == "go" && s.Years >= 2 && s.Years <= 3 }},
		{"names between", Cond{Kind: Between, N: 1}, go2, rust, func(s skill) bool { return s.Name >= "go" && s.Name <= "rust" }},
		{"name prefix", Cond{Kind: BeginsWith, N: 1, Prefix: "go"}, go2, go2, func(s skill) bool { return strings.HasPrefix(s.Name, "go") }},
	}
	for _, tc := range cases {
		for kname, k := range map[string]Key{"rendered": rendered(t), "multi": multi()} {
			conds, empty, err := Sort(k, tc.c, reflect.ValueOf(tc.kv), reflect.ValueOf(tc.hv))
			if err != nil || empty {
				t.Fatalf("%s %s: %v (empty %v)", kname, tc.name, err, empty)
			}
			for _, s := range universe {
				item := map[string]types.AttributeValue{}
				if k.Tpl != nil {
					b, err := k.Tpl.Append(nil, k.Fields, reflect.ValueOf(s))
					if err != nil {
						t.Fatal(err)
					}
					item[k.Attr] = &types.AttributeValueMemberS{Value: string(b)}
				} else {
					for _, f := range k.Fields {
						item[f.Attr], _ = k.Value(f, reflect.ValueOf(s))
					}
				}
				holds := true
				for _, c := range conds {
					holds = holds && c.Holds(item[c.Attr])
				}
				if holds != tc.want(s) {
					t.Errorf("%s %s: %+v holds %v, want %v (conditions %+v)", kname, tc.name, s, holds, !holds, conds)
				}
			}
		}
	}
}

// TestSortRefuses: what cannot be sent is an *Error naming the attribute
// and the renderer's error, or the field and why; an empty range is empty.
func TestSortRefuses(t *testing.T) {
	k := rendered(t)
	v := func(s skill) reflect.Value { return reflect.ValueOf(s) }
	if _, empty, err := Sort(k, Cond{Kind: Between, N: 2}, v(skill{"go", 3}), v(skill{"go", 2})); err != nil || !empty {
		t.Errorf("lo > hi: empty %v, err %v; want an empty range", empty, err)
	}
	var e *Error
	_, _, err := Sort(k, Cond{Kind: BeginsWith, N: 2, Prefix: "1"}, v(skill{"go", 2}), v(skill{}))
	if !errors.As(err, &e) || e.Field != "Years" || e.Reason == "" {
		t.Errorf("BeginsWith on an int: %v, want a reason on Years", err)
	}
	_, _, err = Sort(multi(), Cond{Kind: BeginsWith, N: 2, Prefix: "1"}, v(skill{"go", 2}), v(skill{}))
	if !errors.As(err, &e) || e.Field != "Years" || e.Reason != "BeginsWith needs a string attribute" {
		t.Errorf("BeginsWith on a number attribute: %v", err)
	}
	var re *keys.RenderError
	_, _, err = Sort(k, Cond{Kind: Cmp, Op: expr.OpGe, N: 2}, v(skill{Years: 2}), v(skill{}))
	if !errors.As(err, &e) || e.Attr != "SK" || !errors.As(err, &re) || len(re.Missing) != 1 || re.Missing[0] != "Name" {
		t.Errorf("a missing earlier field: %v, want SK's RenderError missing Name", err)
	}
	long := strings.Repeat("x", 1100)
	if _, _, err = Sort(k, Cond{Kind: Cmp, Op: expr.OpEq, N: 1}, v(skill{Name: long}), v(skill{})); !errors.As(err, &e) || e.Attr != "SK" || e.Reason != "" {
		t.Errorf("a value over the limit: %v, want an *Error on SK", err)
	}
	conds, _, err := Sort(k, Cond{Kind: Cmp, Op: expr.OpLt, N: 1}, v(skill{Name: long}), v(skill{}))
	if err != nil || conds[0].Op != expr.OpBetween || len(conds[0].V2.(*types.AttributeValueMemberS).Value) > Limit {
		t.Errorf("an upper bound over the limit: %+v, %v; want it clamped to <= %d bytes", conds, err, Limit)
	}
	conds, _, err = Sort(multi(), Cond{Kind: Cmp, Op: expr.OpLt, N: 1}, v(skill{Name: long}), v(skill{}))
	if err != nil || conds[0].Op != expr.OpLe || len(conds[0].V1.(*types.AttributeValueMemberS).Value) > Limit {
		t.Errorf("an upper bound over the limit: %+v, %v; want Lt made Le on a bound of <= %d bytes", conds, err, Limit)
	}
}
