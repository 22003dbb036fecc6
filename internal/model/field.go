// Package model is the field layer of the compiled entity model: the
// fields of an entity's struct as attributevalue encodes them, with the
// accessors that key rendering and writes use (reflection, and for a
// plain string field an unsafe read at its offset). It knows nothing of
// an entity's type parameter; the root package builds its entities on it.
package model

import (
	"encoding"
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/format"
)

// Field describes one Go struct field as attributevalue sees it: the
// attribute name it is stored under and its tag options.
type Field struct {
	Name      string       // Go field name, as used in key templates
	Attr      string       // DynamoDB attribute name
	Index     []int        // path for reflect.Value.FieldByIndex
	Type      reflect.Type // the field's type
	OmitEmpty bool
	// Form is the format a time field is stored in: a tag option
	// (unixtime, rfc3339, date, …; format.Unix for a TTL field), nil for
	// the default. Keys hold the time as a read of that shape gives it
	// back (cut to the second, the day, …), so that the key of the value
	// written is the key of the value read back.
	Form *format.Format
	// FormErr is why the tag's layout= option cannot be used (a layout
	// the format table refuses), or nil; Form is nil then, and the
	// entity's definition reports it.
	FormErr error
	// KeyString is set when the field is a string without methods (so a
	// key holds it escaped, as is) lying at offset Off from the start of
	// the struct, no pointer on the way: StringAt reads it without
	// reflection.
	KeyString bool
	Off       uintptr
	// KeyMax, when not 0, is the most bytes a value of the field may have
	// as a key attribute of a multi-attribute index: 2048 in a partition
	// key, 1024 in a sort key, the smaller when it is in several
	// (KeyIndex and KeySort say where that one is).
	KeyMax   int
	KeyIndex string
	KeySort  bool
	// KeyOnly is set for a field held only in key templates (the
	// schema's KeyOnly): writes never store it as an attribute, even
	// when its attribute name is a key attribute's, and every decode
	// fills it from the keys that hold it.
	KeyOnly bool
}

// TimeType is the type of time.Time, stored as a string or (Seconds)
// epoch seconds, never as a struct.
var TimeType = reflect.TypeOf(time.Time{})

// StructFields lists the fields of struct type t the way
// attributevalue.MarshalMap encodes them: exported fields, `dynamodbav` tag
// names and "-", untagged embedded structs flattened, shallower fields
// shadowing deeper ones.
func StructFields(t reflect.Type) []*Field {
	var out []*Field
	seen := map[string]bool{}
	var walk func(t reflect.Type, prefix []int, off uintptr, direct bool)
	type deferred struct {
		t      reflect.Type
		prefix []int
		off    uintptr
		direct bool // no pointer on the path from the outer struct
	}
	walk = func(t reflect.Type, prefix []int, off uintptr, direct bool) {
		var embedded []deferred
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("dynamodbav")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), prefix...), i)
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && et != TimeType {
					embedded = append(embedded, deferred{et, idx, off + sf.Offset, direct && ft == et})
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			fi := &Field{Name: sf.Name, Attr: name, Index: idx, Type: ft,
				KeyString: direct && ft.Kind() == reflect.String && !UsesText(ft), Off: off + sf.Offset}
			for _, o := range strings.Split(opts, ",") {
				if o == "omitempty" {
					fi.OmitEmpty = true
				}
			}
			fi.Form, fi.FormErr = codec.FormOf(sf.Tag), codec.TagError(sf.Tag)
			out = append(out, fi)
		}
		for _, d := range embedded {
			walk(d.t, d.prefix, d.off, d.direct)
		}
	}
	walk(t, nil, 0, true)
	return out
}

// ExcludedFields returns the names of the exported fields of struct type t
// (embedded structs included) that a `dynamodbav:"-"` tag keeps out of
// the item, so that a schema naming one can say why it is not a field.
func ExcludedFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		if depth > 8 {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("dynamodbav")
			if tag == "-" {
				if sf.IsExported() {
					out[sf.Name] = true
				}
				continue
			}
			if name, _, _ := strings.Cut(tag, ","); sf.Anonymous && name == "" {
				et := sf.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && et != TimeType {
					walk(et, depth+1)
				}
			}
		}
	}
	walk(t, 0)
	return out
}

// Get returns the field's value in v (a struct value), and false when an
// embedded pointer on the path is nil.
func (f *Field) Get(v reflect.Value) (reflect.Value, bool) {
	fv, err := v.FieldByIndexErr(f.Index)
	if err != nil {
		return reflect.Value{}, false
	}
	return fv, true
}

// Settable returns the field in v (an addressable struct value), the
// embedded pointers on the way allocated when nil.
func (f *Field) Settable(v reflect.Value) reflect.Value { return FieldAlloc(v, f.Index) }

// FieldAlloc returns the field of v (an addressable struct value) at
// index, the embedded pointers on the way allocated when nil.
func FieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// KeyValue is Get, with a time stored in a Form holding less than the
// whole time (epoch seconds, a date, …) as a read of it gives it back.
func (f *Field) KeyValue(v reflect.Value) (reflect.Value, bool) { return f.KeyValueIn(v, nil) }

// KeyValueIn is KeyValue for an entity reading zone-less times in loc
// (nil: UTC).
func (f *Field) KeyValueIn(v reflect.Value, loc *time.Location) (reflect.Value, bool) {
	fv, ok := f.Get(v)
	if !ok || f.Form == nil {
		return fv, ok
	}
	switch {
	case fv.Type() == TimeType:
		return reflect.ValueOf(f.Form.Stored(fv.Interface().(time.Time), loc)), true
	case fv.Kind() == reflect.Pointer && fv.Type().Elem() == TimeType && !fv.IsNil():
		t := f.Form.Stored(fv.Elem().Interface().(time.Time), loc)
		return reflect.ValueOf(&t), true
	}
	return fv, true
}

// StructBase returns the address of the struct v when v is addressable,
// for StringAt, and nil otherwise.
func StructBase(v reflect.Value) unsafe.Pointer {
	if v.CanAddr() {
		return unsafe.Pointer(v.UnsafeAddr())
	}
	return nil
}

// StringAt returns the value of a KeyString field of the struct at base
// (from StructBase); ok is false when the field is not a KeyString or
// base is nil, and the caller goes through reflection instead.
func (f *Field) StringAt(base unsafe.Pointer) (s string, ok bool) {
	if !f.KeyString || base == nil {
		return "", false
	}
	return *(*string)(unsafe.Add(base, f.Off)), true
}

// PresentAt is Present, reading a KeyString field through base.
func (f *Field) PresentAt(base unsafe.Pointer, v reflect.Value) bool {
	if s, ok := f.StringAt(base); ok {
		return s != ""
	}
	return f.Present(v)
}

// Present reports whether the field holds a value that can take part in a
// key: not a nil pointer, not an empty string, and not the zero value of an
// omitempty field (which attributevalue would not store either).
func (f *Field) Present(v reflect.Value) bool {
	fv, ok := f.Get(v)
	if !ok {
		return false
	}
	switch fv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if fv.IsNil() {
			return false
		}
		fv = fv.Elem()
		if fv.Kind() == reflect.String && fv.Len() == 0 {
			return false
		}
		return true
	case reflect.String:
		return fv.Len() > 0
	}
	if f.OmitEmpty && fv.IsZero() {
		return false
	}
	return true
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// predeclared maps a kind to its predeclared type (string, int, …).
var predeclared = [...]reflect.Type{
	reflect.Bool:    reflect.TypeFor[bool](),
	reflect.Int:     reflect.TypeFor[int](),
	reflect.Int8:    reflect.TypeFor[int8](),
	reflect.Int16:   reflect.TypeFor[int16](),
	reflect.Int32:   reflect.TypeFor[int32](),
	reflect.Int64:   reflect.TypeFor[int64](),
	reflect.Uint:    reflect.TypeFor[uint](),
	reflect.Uint8:   reflect.TypeFor[uint8](),
	reflect.Uint16:  reflect.TypeFor[uint16](),
	reflect.Uint32:  reflect.TypeFor[uint32](),
	reflect.Uint64:  reflect.TypeFor[uint64](),
	reflect.Float32: reflect.TypeFor[float32](),
	reflect.Float64: reflect.TypeFor[float64](),
	reflect.String:  reflect.TypeFor[string](),
}

// UsesText reports whether a key holds values of t through
// encoding.TextMarshaler (value or pointer receiver). The types the user
// gave a text form take precedence over their kind (an enum of kind int
// that marshals to "EXPERT" is keyed by its name), except time.Time, whose
// text form is not fixed-width. It is the key codec's rule (internal/keys),
// kept here because a field's KeyString follows from it.
func UsesText(t reflect.Type) bool {
	if t == TimeType || t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return false
	}
	if k := t.Kind(); int(k) < len(predeclared) && predeclared[k] == t {
		return false // predeclared types have no methods: the fast path for string, int, …
	}
	return t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}
