package codec

import (
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/format"
)

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

// fastKind names a field shape that decodeFast decodes straight into the
// field's memory, without reflection and without calls through function
// values (so that the struct's address does not escape), and that
// encodeFast encodes straight from it.
type fastKind uint8

const (
	fkNone fastKind = iota
	fkString
	fkBool
	fkInt64 // int64, and int where it has 64 bits
	fkInt32
	fkInt16
	fkInt8
	fkUint64 // uint64, and uint where it has 64 bits
	fkUint32
	fkUint16
	fkUint8
	fkFloat64
	fkFloat32
	fkTime      // time.Time or a struct type converted from it
	fkStringPtr // *string (unnamed pointer to a plain string)
	fkStrings   // []string (of plain strings)
	fkStringMap // map[string]string (plain strings)
)

// fastKindOf returns the fast shape of a field of type t decoded under tag
// tg, or fkNone.
func fastKindOf(t reflect.Type, tg tag) fastKind {
	if !noUnmarshaler(t) || tg.JSON || tg.TimeForm.Number() || tg.TimeForm.Custom() { // the fast path reads an N time as seconds, an S as RFC 3339
		return fkNone
	}
	if k := scalarKind(t); k != fkNone {
		return k
	}
	switch t.Kind() {
	case reflect.String:
		return fkString
	case reflect.Struct:
		if isTimeType(t) && !tg.AsString {
			return fkTime
		}
	case reflect.Pointer:
		if t.Name() == "" && plainStringDec(t.Elem()) && !reflect.PointerTo(t.Elem()).Implements(unmarshalerType) &&
			!t.Implements(unmarshalerType) {
			return fkStringPtr
		}
	case reflect.Slice:
		if plainStringDec(t.Elem()) {
			return fkStrings
		}
	case reflect.Map:
		if plainStringDec(t.Key()) && t.Key().NumMethod() == 0 && plainStringDec(t.Elem()) {
			return fkStringMap
		}
	}
	return fkNone
}

// scalarKind returns the shape of a bool or number type t, or fkNone.
func scalarKind(t reflect.Type) fastKind {
	switch t.Kind() {
	case reflect.Bool:
		return fkBool
	case reflect.Int, reflect.Int64:
		if t.Size() == 8 {
			return fkInt64
		}
		return fkInt32
	case reflect.Int32:
		return fkInt32
	case reflect.Int16:
		return fkInt16
	case reflect.Int8:
		return fkInt8
	case reflect.Uint, reflect.Uint64:
		if t.Size() == 8 {
			return fkUint64
		}
		return fkUint32
	case reflect.Uint32:
		return fkUint32
	case reflect.Uint16:
		return fkUint16
	case reflect.Uint8:
		return fkUint8
	case reflect.Float64:
		return fkFloat64
	case reflect.Float32:
		return fkFloat32
	}
	return fkNone
}

// decodeFast decodes av into the field f of the struct at base when it is a
// common case, as the field's reflective decoder would, and reports false,
// having changed nothing, for whatever it does not handle (other attribute
// value types, numbers that do not parse or overflow): the reflective
// decoder then does exactly what attributevalue does, errors included.
//
// NULL (or a nil attribute value) sets every fast shape to its zero value,
// as attributevalue does for targets without an Unmarshaler.
func decodeFast(f *planField, av types.AttributeValue, base unsafe.Pointer) bool {
	p := unsafe.Add(base, f.off)
	switch f.fkind {
	case fkString:
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			*(*string)(p) = x.Value
		case *types.AttributeValueMemberN:
			*(*string)(p) = x.Value
		case *types.AttributeValueMemberNULL, nil:
			*(*string)(p) = ""
		default:
			return false
		}
		return true
	case fkBool:
		switch x := av.(type) {
		case *types.AttributeValueMemberBOOL:
			*(*bool)(p) = x.Value
		case *types.AttributeValueMemberNULL, nil:
			*(*bool)(p) = false
		default:
			return false
		}
		return true
	case fkInt64, fkInt32, fkInt16, fkInt8, fkUint64, fkUint32, fkUint16, fkUint8, fkFloat64, fkFloat32:
		s, ok := numberText(av, f.asString)
		if !ok {
			return setZeroIfNull(f.fkind, av, p)
		}
		return setNumberText(f.fkind, p, s)
	case fkTime:
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			tm, err := time.Parse(time.RFC3339, x.Value)
			if err != nil {
				return false
			}
			*(*time.Time)(p) = tm
		case *types.AttributeValueMemberNULL, nil:
			*(*time.Time)(p) = time.Time{}
		default:
			return false
		}
		return true
	case fkStringPtr:
		var s string
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			s = x.Value
		case *types.AttributeValueMemberN:
			s = x.Value
		case *types.AttributeValueMemberNULL, nil:
			*(**string)(p) = nil
			return true
		default:
			return false
		}
		sp := (**string)(p)
		if *sp == nil {
			*sp = new(string)
		}
		**sp = s
		return true
	case fkStrings:
		switch x := av.(type) {
		case *types.AttributeValueMemberL:
			return decodeStrings(x.Value, (*[]string)(p))
		case *types.AttributeValueMemberNULL, nil:
			*(*[]string)(p) = nil
			return true
		}
	case fkStringMap:
		switch x := av.(type) {
		case *types.AttributeValueMemberM:
			return decodeStringMap(x.Value, (*map[string]string)(p))
		case *types.AttributeValueMemberNULL, nil:
			*(*map[string]string)(p) = nil
			return true
		}
	}
	return false
}

// setZeroIfNull zeroes the number at p when av is NULL (or nil).
func setZeroIfNull(k fastKind, av types.AttributeValue, p unsafe.Pointer) bool {
	if !isNull(av) {
		return false
	}
	switch k {
	case fkInt64, fkUint64, fkFloat64:
		*(*uint64)(p) = 0
	case fkInt32, fkUint32, fkFloat32:
		*(*uint32)(p) = 0
	case fkInt16, fkUint16:
		*(*uint16)(p) = 0
	case fkInt8, fkUint8:
		*(*uint8)(p) = 0
	default:
		return false
	}
	return true
}

// decodeStrings decodes a list into a []string as attributevalue does, or
// reports false, having changed nothing, when an element is not a string.
func decodeStrings(l []types.AttributeValue, sp *[]string) bool {
	n := len(l)
	s := *sp
	if s == nil || cap(s) < n {
		// A new slice: fill it, and store it only if every element was
		// a string.
		s = make([]string, n)
		for i, e := range l {
			var ok bool
			if s[i], ok = stringish(e); !ok {
				return false
			}
		}
		*sp = s
		return true
	}
	if !allStrings(l) {
		return false
	}
	if n > 0 {
		// attributevalue leaves the length of a reused slice when the
		// list is empty.
		s = s[:n]
		for i, e := range l {
			s[i], _ = stringish(e)
		}
		*sp = s
	}
	return true
}

// decodeStringMap decodes a map into a map[string]string as attributevalue
// does, or reports false, having changed nothing, when a value is not a
// string.
func decodeStringMap(x map[string]types.AttributeValue, mp *map[string]string) bool {
	if *mp == nil {
		m := make(map[string]string, len(x))
		for k, e := range x {
			s, ok := stringish(e)
			if !ok {
				return false
			}
			m[k] = s
		}
		*mp = m
		return true
	}
	for _, e := range x {
		if _, ok := stringish(e); !ok {
			return false
		}
	}
	m := *mp
	for k, e := range x {
		m[k], _ = stringish(e)
	}
	return true
}

// copyFast copies the field value of shape k at src to dst.
func copyFast(k fastKind, dst, src unsafe.Pointer) {
	switch k {
	case fkString:
		*(*string)(dst) = *(*string)(src)
	case fkBool, fkInt8, fkUint8:
		*(*uint8)(dst) = *(*uint8)(src)
	case fkInt16, fkUint16:
		*(*uint16)(dst) = *(*uint16)(src)
	case fkInt32, fkUint32, fkFloat32:
		*(*uint32)(dst) = *(*uint32)(src)
	case fkInt64, fkUint64, fkFloat64:
		*(*uint64)(dst) = *(*uint64)(src)
	case fkTime:
		*(*time.Time)(dst) = *(*time.Time)(src)
	case fkStringPtr:
		*(**string)(dst) = *(**string)(src)
	case fkStrings:
		*(*[]string)(dst) = *(*[]string)(src)
	case fkStringMap:
		*(*map[string]string)(dst) = *(*map[string]string)(src)
	}
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

// encOpts are the tag options encodeFast honours for a field.
type encOpts struct {
	omit, null bool           // omitempty, nullempty
	asString   bool           // string: numbers as S
	form       *format.Format // the shape of a time (unixtime: an N, …)

	// omitemptyelem and nullemptyelem: the options of the elements of
	// a []string or map[string]string.
	elemOmit, elemNull bool
}

// encFastKindOf returns the shape of a field of type t encoded under tag tg
// that encodeFast encodes as the field's compiled encoder (see
// builder.full) does, and the options it needs; fkNone for any other field.
// These are the shapes whose encoders never call a Marshaler, never reach
// attributevalue and depend on no tag options but those of encOpts.
func encFastKindOf(t reflect.Type, tg tag) (fastKind, encOpts) {
	o := encOpts{
		omit: tg.OmitEmpty, null: tg.NullEmpty, asString: tg.AsString, form: tg.timeForm(),
		elemOmit: tg.OmitEmptyElem, elemNull: tg.NullEmptyElem,
	}
	if tg.OmitEmpty && tg.NullEmpty || hasMarshaler(t) || tg.JSON {
		// omitempty with nullempty is handed to attributevalue; JSON
		// text has its own encoder.
		return fkNone, o
	}
	if k := scalarKind(t); k != fkNone {
		return k, o
	}
	// omitemptyelem with nullemptyelem: an empty element is an error,
	// left to attributevalue.
	bothElem := tg.OmitEmptyElem && tg.NullEmptyElem
	var k fastKind
	switch t.Kind() {
	case reflect.String:
		if plainString(t) {
			k = fkString
		}
	case reflect.Struct:
		if isTimeType(t) {
			k = fkTime
		}
	case reflect.Pointer:
		if t.Name() == "" && plainString(t.Elem()) {
			k = fkStringPtr
		}
	case reflect.Slice:
		if plainString(t.Elem()) && !tg.AsBinSet && !tg.AsNumSet && !tg.AsStrSet && !bothElem {
			k = fkStrings
		}
	case reflect.Map:
		if plainString(t.Key()) && t.Key().NumMethod() == 0 && plainString(t.Elem()) && !bothElem {
			k = fkStringMap
		}
	}
	return k, o
}

// encodeFast encodes the field f of the struct at base, whose shape is
// f.ekind (not fkNone), reading it at its offset: the attribute value its
// compiled encoder f.enc would make, through the same encState methods (and
// so the same allocation blocks and size reports), or nil when the field is
// not stored. The only error is that of a map with an empty key.
func encodeFast(st *encState, f *planField, base unsafe.Pointer) (types.AttributeValue, error) {
	p := unsafe.Add(base, f.off)
	o := &f.eopts
	switch f.ekind {
	case fkString:
		return st.encString(*(*string)(p), o.omit, o.null), nil
	case fkBool:
		return st.encBool(*(*bool)(p), o.omit, o.null), nil
	case fkInt64:
		return st.encInt(*(*int64)(p), o.omit, o.null, o.asString), nil
	case fkInt32:
		return st.encInt(int64(*(*int32)(p)), o.omit, o.null, o.asString), nil
	case fkInt16:
		return st.encInt(int64(*(*int16)(p)), o.omit, o.null, o.asString), nil
	case fkInt8:
		return st.encInt(int64(*(*int8)(p)), o.omit, o.null, o.asString), nil
	case fkUint64:
		return st.encUint(*(*uint64)(p), o.omit, o.null, o.asString), nil
	case fkUint32:
		return st.encUint(uint64(*(*uint32)(p)), o.omit, o.null, o.asString), nil
	case fkUint16:
		return st.encUint(uint64(*(*uint16)(p)), o.omit, o.null, o.asString), nil
	case fkUint8:
		return st.encUint(uint64(*(*uint8)(p)), o.omit, o.null, o.asString), nil
	case fkFloat64:
		return st.encFloat(*(*float64)(p), 64, o.omit, o.null, o.asString), nil
	case fkFloat32:
		return st.encFloat(float64(*(*float32)(p)), 32, o.omit, o.null, o.asString), nil
	case fkTime:
		return st.encTime(*(*time.Time)(p), o.form, o.asString), nil
	}
	// Pointers, slices and maps: nil is left out under omitempty and is
	// a NULL otherwise (nullempty or not); the value pointed to is not
	// zero-checked, and the elements get the options of the elements.
	switch f.ekind {
	case fkStringPtr:
		if sp := *(**string)(p); sp != nil {
			return st.encString(*sp, false, false), nil
		}
	case fkStrings:
		if s := *(*[]string)(p); s != nil {
			return st.encStrings(s, o.elemOmit, o.elemNull), nil
		}
	case fkStringMap:
		if m := *(*map[string]string)(p); m != nil {
			return st.encStringMap(m, o.elemOmit, o.elemNull)
		}
	}
	if o.omit {
		return nil, nil
	}
	return st.sizedNull(), nil
}
