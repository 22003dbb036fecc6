package singletable

import (
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/singletable-go/singletable/internal/keys"
)

// fieldInfo describes one Go struct field as attributevalue sees it: the
// attribute name it is stored under and its tag options.
type fieldInfo struct {
	name      string       // Go field name, as used in key templates
	attr      string       // DynamoDB attribute name
	index     []int        // path for reflect.Value.FieldByIndex
	typ       reflect.Type // the field's type
	omitEmpty bool
	// seconds is set for a time stored as epoch seconds (the unixtime tag
	// option, a TTL field): keys hold it truncated to the second too, so
	// that the key of the value written is the key of the value read back.
	seconds bool
	// keyString is set when the field is a string without methods (so a
	// key holds it escaped, as is) lying at offset off from the start of
	// the struct, no pointer on the way: stringAt reads it without
	// reflection.
	keyString bool
	off       uintptr
	// keyMax, when not 0, is the most bytes a value of the field may have
	// as a key attribute of a multi-attribute index: 2048 in a partition
	// key, 1024 in a sort key, the smaller when it is in several
	// (keyIndex and keySort say where that one is).
	keyMax   int
	keyIndex string
	keySort  bool
}

var timeType = reflect.TypeOf(time.Time{})

// structFields lists the fields of struct type t the way
// attributevalue.MarshalMap encodes them: exported fields, `dynamodbav` tag
// names and "-", untagged embedded structs flattened, shallower fields
// shadowing deeper ones.
func structFields(t reflect.Type) []*fieldInfo {
	var out []*fieldInfo
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
				if et.Kind() == reflect.Struct && et != timeType {
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
			fi := &fieldInfo{name: sf.Name, attr: name, index: idx, typ: ft,
				keyString: direct && ft.Kind() == reflect.String && !keys.UsesText(ft), off: off + sf.Offset}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					fi.omitEmpty = true
				case "unixtime":
					fi.seconds = true
				}
			}
			out = append(out, fi)
		}
		for _, d := range embedded {
			walk(d.t, d.prefix, d.off, d.direct)
		}
	}
	walk(t, nil, 0, true)
	return out
}

// excludedFields returns the names of the exported fields of struct type t
// (embedded structs included) that a `dynamodbav:"-"` tag keeps out of
// the item, so that a schema naming one can say why it is not a field.
func excludedFields(t reflect.Type) map[string]bool {
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
				if et.Kind() == reflect.Struct && et != timeType {
					walk(et, depth+1)
				}
			}
		}
	}
	walk(t, 0)
	return out
}

// get returns the field's value in v (a struct value), and false when an
// embedded pointer on the path is nil.
func (f *fieldInfo) get(v reflect.Value) (reflect.Value, bool) {
	fv, err := v.FieldByIndexErr(f.index)
	if err != nil {
		return reflect.Value{}, false
	}
	return fv, true
}

// keyValue is get, with a time stored as epoch seconds (see seconds)
// truncated to the second.
func (f *fieldInfo) keyValue(v reflect.Value) (reflect.Value, bool) {
	fv, ok := f.get(v)
	if !ok || !f.seconds {
		return fv, ok
	}
	switch {
	case fv.Type() == timeType:
		return reflect.ValueOf(fv.Interface().(time.Time).Truncate(time.Second)), true
	case fv.Kind() == reflect.Pointer && fv.Type().Elem() == timeType && !fv.IsNil():
		t := fv.Elem().Interface().(time.Time).Truncate(time.Second)
		return reflect.ValueOf(&t), true
	}
	return fv, true
}

// structBase returns the address of the struct v when v is addressable,
// for stringAt, and nil otherwise.
func structBase(v reflect.Value) unsafe.Pointer {
	if v.CanAddr() {
		return unsafe.Pointer(v.UnsafeAddr())
	}
	return nil
}

// stringAt returns the value of a keyString field of the struct at base
// (from structBase); ok is false when the field is not a keyString or
// base is nil, and the caller goes through reflection instead.
func (f *fieldInfo) stringAt(base unsafe.Pointer) (s string, ok bool) {
	if !f.keyString || base == nil {
		return "", false
	}
	return *(*string)(unsafe.Add(base, f.off)), true
}

// presentAt is present, reading a keyString field through base.
func (f *fieldInfo) presentAt(base unsafe.Pointer, v reflect.Value) bool {
	if s, ok := f.stringAt(base); ok {
		return s != ""
	}
	return f.present(v)
}

// present reports whether the field holds a value that can take part in a
// key: not a nil pointer, not an empty string, and not the zero value of an
// omitempty field (which attributevalue would not store either).
func (f *fieldInfo) present(v reflect.Value) bool {
	fv, ok := f.get(v)
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
	if f.omitEmpty && fv.IsZero() {
		return false
	}
	return true
}
