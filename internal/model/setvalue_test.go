package model

import (
	"reflect"
	"testing"
)

type setKey struct {
	Name  string
	State state
	N     int64
	U     uint8
	P     *string
	F     float64
	*SetInner
}

type state string

type SetInner struct{ Day string }

func TestSetValue(t *testing.T) {
	fields := map[string]*Field{}
	for _, f := range StructFields(reflect.TypeOf(setKey{})) {
		fields[f.Name] = f
	}
	cases := []struct {
		field string
		x     any
		ok    bool
	}{
		{"Name", "a", true},
		{"Name", 3, false},
		{"State", "open", true}, // a string for a named string type
		{"State", state("open"), true},
		{"N", 3, true},
		{"N", "3", false},
		{"N", 2.5, false}, // a fraction would be dropped
		{"N", 2.0, true},
		{"U", 300, false}, // out of range
		{"U", -1, false},
		{"U", 7, true},
		{"P", "x", true}, // a pointer field takes the value it points to
		{"F", 1, true},
		{"Day", "2024-01-01", true},
	}
	for _, c := range cases {
		in := &SetInner{Day: "old"}
		k := setKey{SetInner: in}
		err := fields[c.field].SetValue(reflect.ValueOf(&k).Elem(), c.x)
		if (err == nil) != c.ok {
			t.Errorf("SetValue(%s, %#v): err %v, want ok %v", c.field, c.x, err, c.ok)
		}
		if in.Day != "old" {
			t.Errorf("SetValue(%s) changed the struct an embedded pointer points to", c.field)
		}
		if c.ok && c.field == "P" && (k.P == nil || *k.P != "x") {
			t.Errorf("pointer field: got %v", k.P)
		}
	}
}
