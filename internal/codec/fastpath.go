package codec

import (
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fastDec decodes the commonest attribute values straight into a field's
// memory. It returns false, having changed nothing, for whatever it does not
// handle (NULL, other types, values that do not parse); the field's
// reflective decoder then does exactly what attributevalue does.
type fastDec func(av types.AttributeValue, p unsafe.Pointer) bool

// fieldOffset returns the offset of the field at index in struct type t
// when no pointer lies on the way.
func fieldOffset(t reflect.Type, index []int) (uintptr, bool) {
	var off uintptr
	for i, x := range index {
		if i > 0 {
			if t.Kind() != reflect.Struct {
				return 0, false
			}
		}
		sf := t.Field(x)
		off += sf.Offset
		t = sf.Type
	}
	return off, true
}

func noUnmarshaler(t reflect.Type) bool {
	return t.Name() == "" || !reflect.PointerTo(t).Implements(unmarshalerType)
}

func overflowFloat32(x float64) bool {
	if x < 0 {
		x = -x
	}
	return math.MaxFloat32 < x && x <= math.MaxFloat64
}

// numberText returns the text of an N, or of an S with the string option.
func numberText(av types.AttributeValue, asString bool) (string, bool) {
	switch x := av.(type) {
	case *types.AttributeValueMemberN:
		return x.Value, true
	case *types.AttributeValueMemberS:
		if asString {
			return x.Value, true
		}
	}
	return "", false
}

func newFastDec(t reflect.Type, tg tag) fastDec {
	if !noUnmarshaler(t) {
		return nil
	}
	asString := tg.AsString
	switch t.Kind() {
	case reflect.String:
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			switch x := av.(type) {
			case *types.AttributeValueMemberS:
				*(*string)(p) = x.Value
			case *types.AttributeValueMemberN:
				*(*string)(p) = x.Value
			default:
				return false
			}
			return true
		}
	case reflect.Bool:
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			x, ok := av.(*types.AttributeValueMemberBOOL)
			if ok {
				*(*bool)(p) = x.Value
			}
			return ok
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			s, ok := numberText(av, asString)
			if !ok {
				return false
			}
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return false
			}
			if bits < 64 && (i < -1<<(bits-1) || i > 1<<(bits-1)-1) {
				return false
			}
			switch bits {
			case 8:
				*(*int8)(p) = int8(i)
			case 16:
				*(*int16)(p) = int16(i)
			case 32:
				*(*int32)(p) = int32(i)
			default:
				*(*int64)(p) = i
			}
			return true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := t.Bits()
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			s, ok := numberText(av, asString)
			if !ok {
				return false
			}
			u, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return false
			}
			if bits < 64 && u > 1<<bits-1 {
				return false
			}
			switch bits {
			case 8:
				*(*uint8)(p) = uint8(u)
			case 16:
				*(*uint16)(p) = uint16(u)
			case 32:
				*(*uint32)(p) = uint32(u)
			default:
				*(*uint64)(p) = u
			}
			return true
		}
	case reflect.Float32, reflect.Float64:
		f32 := t.Kind() == reflect.Float32
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			s, ok := numberText(av, asString)
			if !ok {
				return false
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return false
			}
			if f32 {
				if overflowFloat32(f) {
					return false
				}
				*(*float32)(p) = float32(f)
			} else {
				*(*float64)(p) = f
			}
			return true
		}
	case reflect.Struct:
		if !isTimeType(t) || asString {
			return nil
		}
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			x, ok := av.(*types.AttributeValueMemberS)
			if !ok {
				return false
			}
			tm, err := time.Parse(time.RFC3339, x.Value)
			if err != nil {
				return false
			}
			*(*time.Time)(p) = tm
			return true
		}
	case reflect.Pointer:
		if t.Name() != "" || !plainStringDec(t.Elem()) || reflect.PointerTo(t.Elem()).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
			return nil
		}
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			var s string
			switch x := av.(type) {
			case *types.AttributeValueMemberS:
				s = x.Value
			case *types.AttributeValueMemberN:
				s = x.Value
			default:
				return false
			}
			sp := (*unsafe.Pointer)(p)
			if *sp == nil {
				*sp = unsafe.Pointer(new(string))
			}
			*(*string)(*sp) = s
			return true
		}
	case reflect.Slice:
		if !plainStringDec(t.Elem()) {
			return nil
		}
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			l, ok := av.(*types.AttributeValueMemberL)
			if !ok {
				return false
			}
			n := len(l.Value)
			sp := (*[]string)(p)
			s := *sp
			if s == nil || cap(s) < n {
				// A new slice: fill it, and store it only if every
				// element was a string.
				s = make([]string, n)
				for i, e := range l.Value {
					if s[i], ok = stringish(e); !ok {
						return false
					}
				}
				*sp = s
				return true
			}
			if !allStrings(l.Value) {
				return false
			}
			if n > 0 {
				s = s[:n]
				for i, e := range l.Value {
					s[i], _ = stringish(e)
				}
				*sp = s
			}
			return true
		}
	case reflect.Map:
		if !plainStringDec(t.Key()) || t.Key().NumMethod() != 0 || !plainStringDec(t.Elem()) {
			return nil
		}
		return func(av types.AttributeValue, p unsafe.Pointer) bool {
			x, ok := av.(*types.AttributeValueMemberM)
			if !ok {
				return false
			}
			mp := (*map[string]string)(p)
			if *mp == nil {
				m := make(map[string]string, len(x.Value))
				for k, e := range x.Value {
					s, ok := stringish(e)
					if !ok {
						return false
					}
					m[k] = s
				}
				*mp = m
				return true
			}
			for _, e := range x.Value {
				if _, ok := stringish(e); !ok {
					return false
				}
			}
			m := *mp
			for k, e := range x.Value {
				m[k], _ = stringish(e)
			}
			return true
		}
	}
	return nil
}

// stringish returns what a plain string target gets from av, and false
// when decoding av into it is an error.
func stringish(av types.AttributeValue) (string, bool) {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return x.Value, true
	case *types.AttributeValueMemberN:
		return x.Value, true
	case *types.AttributeValueMemberNULL, nil:
		return "", true
	}
	return "", false
}

func allStrings(l []types.AttributeValue) bool {
	for _, e := range l {
		if _, ok := stringish(e); !ok {
			return false
		}
	}
	return true
}
