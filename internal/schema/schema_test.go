package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
)

type item struct {
	ID     string
	Owner  string `dynamodbav:"owner"`
	N      int
	Hidden string `dynamodbav:"-"`
}

func fields(t *testing.T, keyOnly ...string) *Fields {
	t.Helper()
	fs, err := NewFields("Item", reflect.TypeFor[item](), keyOnly)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// wantProblem fails unless err is a *Problem with field and a reason
// containing reason.
func wantProblem(t *testing.T, err error, field, reason string) {
	t.Helper()
	var p *Problem
	if !errors.As(err, &p) {
		t.Fatalf("got %v, want a *Problem", err)
	}
	if p.Entity != "Item" || p.Field != field || !strings.Contains(p.Reason, reason) {
		t.Errorf("got %q %q %q, want Item %q and a reason with %q", p.Entity, p.Field, p.Reason, field, reason)
	}
}

func TestNewFields(t *testing.T) {
	if _, err := NewFields("Item", reflect.TypeFor[int](), nil); err == nil {
		t.Error("a non-struct type is accepted")
	}
	fs := fields(t, "Hidden", "ID")
	if f := fs.ByName["Hidden"]; f == nil || f.Attr != "" || !f.KeyOnly {
		t.Errorf("a KeyOnly field tagged \"-\" is %+v, want one with no attribute", f)
	}
	if !fs.ByName["ID"].KeyOnly || fs.ByAttr["owner"].Name != "Owner" {
		t.Error("fields not resolved by name and attribute")
	}
	wantProblem(t, fs.Unknown("", "Version", "Nope"), "Nope", `Version: unknown field "Nope"`)
	wantProblem(t, fs.NotStored("Owner", "the sort key"), "Owner", "differs from the sort key \"Owner\" only in case")
}

func TestKey(t *testing.T) {
	fs := fields(t)
	k, err := fs.Key("ITEM#{ID}#{N}", "", "PK", false, nil)
	if err != nil || len(k.Fields) != 2 || k.Fields[1] != fs.ByName["N"] || k.Places[0].Field != "ID" {
		t.Fatalf("got %+v, %v", k, err)
	}
	_, err = fs.Key("ITEM#{Zed}", "G", "GPK", false, nil)
	wantProblem(t, err, "index G GPK", `unknown field "Zed"`)
	_, err = fs.Key("ITEM#{ID", "", "PK", false, nil)
	wantProblem(t, err, "PK", "bad key template")
}

func TestIndex(t *testing.T) {
	fs := fields(t)
	p, err := fs.Index(IndexDecl{Name: "G", PK: "{Owner:raw}", PKAttr: "owner", SK: "ID#{ID}", Shards: 0}, nil)
	if err != nil || p.PKOwn != fs.ByName["Owner"] || p.SKAttr != "GSK" || len(p.KeyFields) != 1 {
		t.Fatalf("got %+v, %v", p, err)
	}
	if f := fs.ByName["Owner"]; f.KeyMax != 2048 || f.KeyIndex != "G" {
		t.Errorf("the own key field's limit is %d in %q", f.KeyMax, f.KeyIndex)
	}
	p, err = fs.Index(IndexDecl{Name: "S", PK: "X#{ID}", Shards: 4}, nil)
	if err != nil || p.PK.Reserve != len("#shard_3") {
		t.Errorf("a sharded key reserves %d bytes, %v", p.PK.Reserve, err)
	}
	for _, c := range []struct {
		d             IndexDecl
		field, reason string
	}{
		{IndexDecl{Name: "G", PK: "{ID}", PartitionAttrs: []string{"ID"}}, "index G", "PartitionAttrs given to a templated index"},
		{IndexDecl{Name: "G", Multi: true, PartitionAttrs: []string{"ID"}, Shards: 2}, "index G", "Shards given to a multi-attribute index"},
		{IndexDecl{Name: "G", Multi: true, PartitionAttrs: []string{"Nope"}}, "index G", `unknown field "Nope"`},
		{IndexDecl{Name: "G", PK: "N#{N}", PKAttr: "N"}, "N", "declare a multi-attribute index (IndexSchema.MultiAttribute)"},
		{IndexDecl{Name: "G", PK: "X#{Owner}", PKAttr: "owner"}, "Owner", "the template must be {Owner:raw}"},
		{IndexDecl{Name: "G", PK: "X#{ID}", WhenFields: []string{"ID"}}, "index G", "WhenFields given without When"},
		{IndexDecl{Name: "G", PK: "X#{ID}", Shards: 1}, "index G", "Shards must be 0"},
		{IndexDecl{Name: "G", PK: "X#{ID}", Include: []string{"Hidden"}}, "Hidden", "Include names field Hidden, which is excluded"},
	} {
		_, err := fields(t).Index(c.d, nil)
		wantProblem(t, err, c.field, c.reason)
	}
}

func TestTableAttrsAndKeyOnly(t *testing.T) {
	fs := fields(t)
	a, _ := fs.Index(IndexDecl{Name: "A", PK: "X#{ID}", PKAttr: "Shared"}, nil)
	b, _ := fs.Index(IndexDecl{Name: "B", PK: "Y#{ID}", PKAttr: "Shared"}, nil)
	inv, _ := fs.Index(IndexDecl{Name: "Inv", PK: "Z", PKAttr: "SK"}, nil)
	held := func(attr string) (string, bool) { return "META", attr == "SK" }
	wantProblem(t, fs.TableAttrs("T", []*Index{a, b}, held), "index B Shared", "one attribute holds one value")
	wantProblem(t, fs.TableAttrs("T", []*Index{inv}, held), "index Inv SK", `must be "META", not "Z"`)
	if err := fs.TableAttrs("T", []*Index{a}, held); err != nil {
		t.Error(err)
	}
	pk, _ := fs.Key("ITEM#{ID}", "", "PK", false, nil)
	got, err := fs.KeyOnly([]string{"ID", "ID"}, pk, Key{}, nil)
	if err != nil || len(got) != 1 {
		t.Errorf("got %v, %v", got, err)
	}
	_, err = fs.KeyOnly([]string{"N"}, pk, Key{}, nil)
	wantProblem(t, err, "N", "in no key template")
	_, err = fs.KeyOnly([]string{"ID"}, pk, Key{}, nil, fs.ByName["ID"])
	wantProblem(t, err, "ID", "managed by the library")
}

func TestCollectionNames(t *testing.T) {
	target := func(entity, attr string) Target {
		return Target{Entity: entity, Excludes: func(string) bool { return false },
			Resolve: func(name string) (expr.Resolution, bool) { return expr.Resolution{Attr: attr}, name == "Name" },
			Unknown: func(name string) error { return errors.New(entity + " does not know " + name) }}
	}
	r, err := CollectionNames([]Target{target("A", "n"), target("B", "n")})("Name")
	if err != nil || r.Attr != "n" {
		t.Errorf("agreeing targets: %+v, %v", r, err)
	}
	_, err = CollectionNames([]Target{target("A", "n"), target("B", "name")})("Name")
	var p *Problem
	if !errors.As(err, &p) || p.Entity != "A, B" || !strings.Contains(p.Reason, "ambiguous") {
		t.Errorf("two attributes for one name: %v", err)
	}
	if _, err = CollectionNames([]Target{target("A", "n")})("Other"); err == nil || err.Error() != "A does not know Other" {
		t.Errorf("one target: %v", err)
	}
	_, err = CollectionNames([]Target{target("B", "n"), target("A", "n")})("Other")
	if !errors.As(err, &p) || p.Entity != "A, B" {
		t.Errorf("no target knows it: %v", err)
	}
}

func TestScalar(t *testing.T) {
	fs := fields(t)
	for name, want := range map[string]string{"ID": "S", "N": "N"} {
		if st, err := fs.ByName[name].Scalar(); err != nil || string(st) != want {
			t.Errorf("%s: %s, %v", name, st, err)
		}
	}
	if _, err := (&model.Field{Type: reflect.TypeFor[[]string]()}).Scalar(); err == nil {
		t.Error("a []string is a key type")
	}
}
