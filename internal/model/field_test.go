package model

import (
	"reflect"
	"testing"
	"time"

	"github.com/singletable-go/singletable/internal/format"
)

type base struct {
	ID      string
	Shadow  string `dynamodbav:"deep"`
	Skipped int    `dynamodbav:"-"`
}

type named string

func (n named) MarshalText() ([]byte, error) { return []byte(n), nil }

type item struct {
	base
	*Ptr
	Name    string    `dynamodbav:"n,omitempty"`
	Shadow  string    `dynamodbav:"deep"` // shadows base.Shadow
	Count   int       `dynamodbav:",omitempty"`
	Expires time.Time `dynamodbav:",unixtime"`
	Named   named
	When    time.Time
	Hidden  string `dynamodbav:"-"`
	private string
}

type Ptr struct{ Via string }

// StructFields lists the fields as attributevalue encodes them: tag names
// and options, embedded structs flattened after the outer fields, the
// shallower of two fields with one name, "-" and unexported fields left
// out; a plain string with no pointer on its path can be read at its
// offset.
func TestStructFields(t *testing.T) {
	fs := StructFields(reflect.TypeOf(item{}))
	got := map[string]*Field{}
	var order []string
	for _, f := range fs {
		got[f.Attr] = f
		order = append(order, f.Attr)
	}
	want := []string{"n", "deep", "Count", "Expires", "Named", "When", "ID", "Via"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("attributes %v, want %v", order, want)
	}
	if f := got["n"]; f.Name != "Name" || !f.OmitEmpty || !f.KeyString {
		t.Errorf("n: %+v", f)
	}
	if f := got["deep"]; !reflect.DeepEqual(f.Index, []int{3}) {
		t.Errorf("deep is the outer field: index %v", f.Index)
	}
	if f := got["Expires"]; f.Form != format.Unix || f.KeyString {
		t.Errorf("Expires: %+v", f)
	}
	if got["Named"].KeyString {
		t.Error("a string type with MarshalText is not read at its offset")
	}
	if f := got["ID"]; !f.KeyString || !reflect.DeepEqual(f.Index, []int{0, 0}) {
		t.Errorf("ID: %+v", f)
	}
	if got["Via"].KeyString {
		t.Error("a field behind an embedded pointer is not read at its offset")
	}
	if ex := ExcludedFields(reflect.TypeOf(item{})); !ex["Hidden"] || !ex["Skipped"] || len(ex) != 2 {
		t.Errorf("excluded %v", ex)
	}

	v := item{Name: "a", Count: 0, Expires: time.Unix(100, 999), private: "not a field"}
	v.ID = "id"
	rv := reflect.ValueOf(&v).Elem()
	b := StructBase(rv)
	if s, ok := got["ID"].StringAt(b); !ok || s != "id" {
		t.Errorf("StringAt(ID) = %q, %v", s, ok)
	}
	if _, ok := got["ID"].StringAt(StructBase(reflect.ValueOf(v))); ok {
		t.Error("StringAt of a value that is not addressable")
	}
	if got["Count"].Present(rv) || !got["n"].PresentAt(b, rv) || got["Via"].Present(rv) {
		t.Error("Present: an omitempty zero, a string, a nil embedded pointer")
	}
	if k, _ := got["Expires"].KeyValue(rv); !k.Interface().(time.Time).Equal(time.Unix(100, 0)) {
		t.Errorf("KeyValue of a unixtime field: %v", k)
	}
}

// A layout= option the format table refuses is kept as the field's
// FormErr (Define reports it), a usable one as its Form.
func TestStructFieldsLayoutOption(t *testing.T) {
	type ev struct {
		Bad   time.Time `dynamodbav:"bad,layout=Jan 2 2006"`
		Good  time.Time `dynamodbav:"good,layout=15:04:05"`
		Plain time.Time
	}
	fs := StructFields(reflect.TypeOf(ev{}))
	if fs[0].FormErr == nil || fs[0].Form != nil {
		t.Errorf("bad layout: Form %v, FormErr %v", fs[0].Form, fs[0].FormErr)
	}
	if fs[1].FormErr != nil || fs[1].Form == nil || fs[1].Form.Layout != "15:04:05" {
		t.Errorf("good layout: Form %v, FormErr %v", fs[1].Form, fs[1].FormErr)
	}
	if fs[2].FormErr != nil || fs[2].Form != nil {
		t.Errorf("no option: Form %v, FormErr %v", fs[2].Form, fs[2].FormErr)
	}
}
