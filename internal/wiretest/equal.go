package wiretest

import (
	"fmt"
	"math"
	"reflect"
	"time"
)

// Equal is reflect.DeepEqual but for NaN, which equals NaN here (a
// number text "NaN" decodes to it on both paths).
func Equal(a, b any) bool { return EqualValues(reflect.ValueOf(a), reflect.ValueOf(b), nil) }

// EqualValues is [Equal] on reflect values, which may be unexported fields.
// Funcs, channels and unsafe pointers are compared by nil-ness (DeepEqual
// never finds two non-nil funcs equal). Times (time.Time and struct types
// convertible to it) are compared by sameTime, reflect.DeepEqual when nil.
func EqualValues(a, b reflect.Value, sameTime func(x, y time.Time) bool) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y && math.Signbit(x) == math.Signbit(y) || x != x && y != y
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() == b.IsNil()
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return EqualValues(a.Elem(), b.Elem(), sameTime)
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !EqualValues(a.Index(i), b.Index(i), sameTime) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !EqualValues(a.MapIndex(k), v, sameTime) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if timeType := reflect.TypeFor[time.Time](); a.Type().ConvertibleTo(timeType) {
			x, y := a.Convert(timeType).Interface().(time.Time), b.Convert(timeType).Interface().(time.Time)
			if sameTime != nil {
				return sameTime(x, y)
			}
			return reflect.DeepEqual(x, y)
		}
		for i := range a.NumField() {
			if !EqualValues(a.Field(i), b.Field(i), sameTime) {
				return false
			}
		}
		return true
	}
	if a.CanInterface() {
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
