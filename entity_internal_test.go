package singletable

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type untypedItem struct {
	ID     string
	Active bool
}

// fill sets every settable field of v (a struct) to a non-zero value of its
// type, so that a conversion leaving a field behind shows.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(int64(i + 2))
		case reflect.Slice:
			switch f.Type().Elem().Kind() {
			case reflect.String:
				f.Set(reflect.ValueOf([]string{v.Type().Field(i).Name}))
			case reflect.Struct:
				s := reflect.MakeSlice(f.Type(), 1, 1)
				fill(t, s.Index(0))
				f.Set(s)
			default:
				t.Fatalf("fill: slice of %s", f.Type().Elem())
			}
		case reflect.Pointer:
			if f.Type() != reflect.TypeFor[*time.Location]() {
				t.Fatalf("fill: %s", f.Type())
			}
			f.Set(reflect.ValueOf(time.FixedZone("X", 3600)))
		case reflect.Func:
			f.Set(reflect.ValueOf(func(it untypedItem) bool { return it.Active }))
		default:
			t.Fatalf("fill: field %s of kind %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// Schema.untyped, what Define compiles, carries every field of the schema
// and of its indexes (a field added to Schema or IndexSchema and not to
// untyped fails here), and each index's When, given the item as a
// reflect.Value, answers as the declared predicate, addressable or not.
func TestSchemaUntypedKeepsEveryField(t *testing.T) {
	var s Schema[untypedItem]
	fill(t, reflect.ValueOf(&s).Elem())
	u := s.untyped()
	sv, uv := reflect.ValueOf(s), reflect.ValueOf(u)
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		if name == "Indexes" {
			continue
		}
		assert.Equal(t, sv.Field(i).Interface(), uv.FieldByName(name).Interface(), name)
	}
	require.Len(t, u.Indexes, 1)
	iv, uiv := reflect.ValueOf(s.Indexes[0]), reflect.ValueOf(u.Indexes[0])
	for i := range iv.NumField() {
		name := iv.Type().Field(i).Name
		if name == "When" {
			continue
		}
		assert.Equal(t, iv.Field(i).Interface(), uiv.FieldByName(name).Interface(), name)
	}
	when := u.Indexes[0].When
	require.NotNil(t, when)
	active := untypedItem{ID: "a", Active: true}
	assert.True(t, when(reflect.ValueOf(&active).Elem()), "addressable")
	assert.True(t, when(reflect.ValueOf(active)), "not addressable")
	assert.False(t, when(reflect.ValueOf(untypedItem{ID: "b"})))

	s.Indexes[0].When = nil
	assert.Nil(t, s.untyped().Indexes[0].When, "no When stays none")
}
