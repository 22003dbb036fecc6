package model

import (
	"fmt"
	"reflect"
)

// SetValue sets the field in the struct v (addressable) to x, converted
// to the field's type the way a Go constant would be: a value of the
// field's type (or, for a pointer field, of the type it points to), or a
// number or string of the same kind and in range (3 for an int64 field,
// "open" for a field of a named string type). Anything else is an error,
// so a wrong value is refused before it reaches a key. A pointer on the
// way to the field is copied first: the struct it points to is not
// changed.
func (f *Field) SetValue(v reflect.Value, x any) error {
	xv, err := f.convert(x)
	if err != nil {
		return err
	}
	for i, at := range f.Index {
		if i > 0 && v.Kind() == reflect.Pointer {
			c := reflect.New(v.Type().Elem())
			if !v.IsNil() {
				c.Elem().Set(v.Elem())
			}
			v.Set(c)
			v = c.Elem()
		}
		v = v.Field(at)
	}
	v.Set(xv)
	return nil
}

// convert returns x as a value of the field's type.
func (f *Field) convert(x any) (reflect.Value, error) {
	t := f.Type
	if x == nil {
		return reflect.Value{}, fmt.Errorf("field %s: no value (nil)", f.Name)
	}
	xv := reflect.ValueOf(x)
	if xv.Type().AssignableTo(t) {
		return xv, nil
	}
	et := t
	if t.Kind() == reflect.Pointer {
		et = t.Elem()
	}
	cv, ok := convertLike(xv, et)
	if !ok {
		return reflect.Value{}, fmt.Errorf("field %s is %s: a %s value does not fit it", f.Name, t, xv.Type())
	}
	if et == t {
		return cv, nil
	}
	p := reflect.New(et)
	p.Elem().Set(cv)
	return p, nil
}

// convertLike converts xv to t when both are strings, both booleans, or
// both numbers and xv's value fits t.
func convertLike(xv reflect.Value, t reflect.Type) (reflect.Value, bool) {
	if xv.Type().AssignableTo(t) {
		return xv, true
	}
	kx, kt := kindClass(xv.Kind()), kindClass(t.Kind())
	switch {
	case kx == 0 || kt == 0 || !xv.CanConvert(t):
		return reflect.Value{}, false
	case kx == 's' || kx == 'b':
		return xv.Convert(t), kx == kt
	case kt == 's' || kt == 'b':
		return reflect.Value{}, false
	}
	out := xv.Convert(t)
	if back := out.Convert(xv.Type()); !back.Equal(xv) || (kx == 'i' && kt == 'u' && xv.Int() < 0) {
		return reflect.Value{}, false // out of range, or a fraction dropped
	}
	return out, true
}

// kindClass groups kinds that convert into each other losslessly in range:
// 's'tring, 'b'ool, 'i'nt, 'u'int, 'f'loat; 0 for any other.
func kindClass(k reflect.Kind) byte {
	switch k {
	case reflect.String:
		return 's'
	case reflect.Bool:
		return 'b'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return 'i'
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return 'u'
	case reflect.Float32, reflect.Float64:
		return 'f'
	}
	return 0
}
