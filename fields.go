package singletable

import (
	"reflect"
	"strings"
	"time"
)

// fieldInfo describes one Go struct field as attributevalue sees it: the
// attribute name it is stored under and its tag options.
type fieldInfo struct {
	name      string       // Go field name, as used in key templates
	attr      string       // DynamoDB attribute name
	index     []int        // path for reflect.Value.FieldByIndex
	typ       reflect.Type // the field's type
	omitEmpty bool
}

var timeType = reflect.TypeOf(time.Time{})

// structFields lists the fields of struct type t the way
// attributevalue.MarshalMap encodes them: exported fields, `dynamodbav` tag
// names and "-", untagged embedded structs flattened, shallower fields
// shadowing deeper ones.
func structFields(t reflect.Type) []*fieldInfo {
	var out []*fieldInfo
	seen := map[string]bool{}
	var walk func(t reflect.Type, prefix []int, depth int)
	type deferred struct {
		t      reflect.Type
		prefix []int
	}
	walk = func(t reflect.Type, prefix []int, depth int) {
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
					embedded = append(embedded, deferred{et, idx})
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
			fi := &fieldInfo{name: sf.Name, attr: name, index: idx, typ: ft}
			for _, o := range strings.Split(opts, ",") {
				if o == "omitempty" {
					fi.omitEmpty = true
				}
			}
			out = append(out, fi)
		}
		for _, d := range embedded {
			walk(d.t, d.prefix, depth+1)
		}
	}
	walk(t, nil, 0)
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
