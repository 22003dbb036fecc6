package keys

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/singletable-go/singletable/internal/model"
)

// TestFills: a field is decoded from the first key holding it; a later key
// must hold the same value (the same instant in another format), or Fill
// names the field and the earlier key, never the value.
func TestFills(t *testing.T) {
	type Order struct {
		Customer string
		At       time.Time
		N        int
	}
	fields := model.StructFields(reflect.TypeFor[Order]())
	byName := map[string]*model.Field{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	bind := func(tpl string) (*Template, []*model.Field) {
		t.Helper()
		kt, err := Parse(tpl)
		if err != nil {
			t.Fatal(err)
		}
		var fs []*model.Field
		for _, n := range kt.Fields() {
			fs = append(fs, byName[n])
		}
		return &kt, fs
	}
	all := func(*model.Field) bool { return true }
	gsi1, f1 := bind("c#{Customer:raw}")
	gsi2, f2 := bind("{At:2006-01-02T15:04:05}#{N:%03d}")
	sk, f3 := bind("AT#{At:rfc3339}")

	var o Order
	var fs Fills
	dst := reflect.ValueOf(&o).Elem()
	for _, k := range []struct {
		t      *Template
		fields []*model.Field
		key    string
	}{{gsi1, f1, "c#12345"}, {gsi2, f2, "2020-06-21T19:18:00#007"}, {sk, f3, "AT#2020-06-21T19:18:00Z"}} {
		if err := fs.Fill(k.t, k.fields, k.key, k.t.Raw, dst, all); err != nil {
			t.Fatalf("%s: %v", k.key, err)
		}
	}
	want := Order{Customer: "12345", At: time.Date(2020, 6, 21, 19, 18, 0, 0, time.UTC), N: 7}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("filled %+v, want %+v", o, want)
	}
	err := fs.Fill(sk, f3, "AT#2020-06-21T19:19:00Z", "SK", dst, all)
	if err == nil || !strings.Contains(err.Error(), "field At") || !strings.Contains(err.Error(), gsi2.Raw) || strings.Contains(err.Error(), "19:19") {
		t.Errorf("disagreeing key: %v", err)
	}
	if err := fs.Fill(gsi1, f1, "x#12345", "GSI1PK", dst, all); err == nil {
		t.Error("a key not rendered from the template filled fields")
	}
	var none Fills
	skip := func(f *model.Field) bool { return f.Name != "Customer" }
	o = Order{Customer: "kept"}
	if err := none.Fill(gsi1, f1, "c#12345", "GSI1PK", dst, skip); err != nil || o.Customer != "kept" {
		t.Errorf("a field need does not report was filled: %+v %v", o, err)
	}
}
