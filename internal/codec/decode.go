package codec

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/format"
)

// decFunc decodes av into v (settable) as attributevalue's decode(av, v,
// tag) does for the type and tag it was compiled for.
type decFunc func(av types.AttributeValue, v reflect.Value) error

func isNull(av types.AttributeValue) bool {
	if av == nil {
		return true
	}
	_, ok := av.(*types.AttributeValueMemberNULL)
	return ok
}

func typeErr(what string, t reflect.Type) error {
	return &attributevalue.UnmarshalTypeError{Value: what, Type: t}
}

// avKindName is how attributevalue names each attribute value type in an
// UnmarshalTypeError when the target cannot hold it.
func avKindName(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberB:
		return "binary"
	case *types.AttributeValueMemberBOOL:
		return "bool"
	case *types.AttributeValueMemberBS:
		return "binary set"
	case *types.AttributeValueMemberL:
		return "list"
	case *types.AttributeValueMemberM:
		return "map"
	case *types.AttributeValueMemberN:
		return "number"
	case *types.AttributeValueMemberNS:
		return "number set"
	case *types.AttributeValueMemberS:
		return "string"
	case *types.AttributeValueMemberSS:
		return "string set"
	}
	return ""
}

func unsupportedAV(av types.AttributeValue) error {
	return fmt.Errorf("unsupported AttributeValue type, %T", av)
}

// dec compiles attributevalue's decode(av, v, tg) for targets of type t.
func (b *builder) dec(t reflect.Type, tg tag) decFunc {
	key := decKey{t, tg}
	if cell, ok := b.decMemo[key]; ok {
		if *cell == nil {
			// A recursive type (see full).
			return func(av types.AttributeValue, v reflect.Value) error {
				return (*cell)(av, v)
			}
		}
		return *cell
	}
	cell := new(decFunc)
	b.decMemo[key] = cell
	*cell = b.decUncached(t, tg)
	return *cell
}

func (b *builder) decUncached(t reflect.Type, tg tag) decFunc {
	if tg.JSON {
		return b.jsonDec(t, tg)
	}
	switch t.Kind() {
	case reflect.Pointer:
		if t.Name() != "" {
			return fallbackDec(t, tg)
		}
		after, ok := b.decAfterPtr(t, tg)
		if !ok {
			return fallbackDec(t, tg)
		}
		return func(av types.AttributeValue, v reflect.Value) error {
			if isNull(av) {
				v.SetZero()
				return nil
			}
			return after(av, v)
		}
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return fallbackDec(t, tg)
		}
		slow := fallbackDec(t, tg)
		asString := tg.AsString
		return func(av types.AttributeValue, v reflect.Value) error {
			if !v.IsNil() {
				return slow(av, v)
			}
			if isNull(av) {
				v.SetZero()
				return nil
			}
			x, err := decodeAny(av, asString)
			if err != nil {
				return err
			}
			v.Set(reflect.ValueOf(x))
			return nil
		}
	}
	if t.Name() != "" && reflect.PointerTo(t).Implements(unmarshalerType) {
		return func(av types.AttributeValue, v reflect.Value) error {
			return v.Addr().Interface().(attributevalue.Unmarshaler).UnmarshalDynamoDBAttributeValue(av)
		}
	}
	base, ok := b.base(t, tg)
	if !ok {
		return fallbackDec(t, tg)
	}
	return func(av types.AttributeValue, v reflect.Value) error {
		if isNull(av) {
			v.SetZero()
			return nil
		}
		return base(av, v)
	}
}

// decAfterPtr compiles the pointer-following loop of attributevalue's
// indirect for a non-NULL value: allocate, call an Unmarshaler on the
// pointer if there is one, else go on with the element.
func (b *builder) decAfterPtr(t reflect.Type, tg tag) (decFunc, bool) {
	if t.Kind() != reflect.Pointer {
		return b.base(t, tg)
	}
	if t.Name() != "" {
		return nil, false
	}
	e := t.Elem()
	if e.Kind() == reflect.Interface {
		return nil, false
	}
	if t.Implements(unmarshalerType) {
		return func(av types.AttributeValue, v reflect.Value) error {
			if v.IsNil() {
				v.Set(reflect.New(e))
			}
			return v.Interface().(attributevalue.Unmarshaler).UnmarshalDynamoDBAttributeValue(av)
		}, true
	}
	next, ok := b.decAfterPtr(e, tg)
	if !ok {
		return nil, false
	}
	return func(av types.AttributeValue, v reflect.Value) error {
		if v.IsNil() {
			v.Set(reflect.New(e))
		}
		return next(av, v.Elem())
	}, true
}

// base compiles the switch on the attribute value's type for a target of
// type t that is neither a pointer nor an interface and has no Unmarshaler.
func (b *builder) base(t reflect.Type, tg tag) (decFunc, bool) {
	switch t.Kind() {
	case reflect.Array, reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func,
		reflect.UnsafePointer, reflect.Uintptr, reflect.Interface, reflect.Pointer:
		return nil, false
	case reflect.String:
		// The commonest target: S and N both set the string.
		return func(av types.AttributeValue, v reflect.Value) error {
			switch x := av.(type) {
			case *types.AttributeValueMemberS:
				v.SetString(x.Value)
			case *types.AttributeValueMemberN:
				v.SetString(x.Value)
			default:
				return otherDecode(av, v, tg)
			}
			return nil
		}, true
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return func(av types.AttributeValue, v reflect.Value) error {
			return otherDecode(av, v, tg)
		}, true
	case reflect.Struct:
		if isTimeType(t) {
			return func(av types.AttributeValue, v reflect.Value) error {
				if m, ok := av.(*types.AttributeValueMemberM); ok {
					_ = m // a time has no fields to set
					return nil
				}
				return otherDecode(av, v, tg)
			}, true
		}
		p := b.plan(t, true)
		if p.whole {
			return nil, false
		}
		return func(av types.AttributeValue, v reflect.Value) error {
			if m, ok := av.(*types.AttributeValueMemberM); ok {
				return p.decode(m.Value, v)
			}
			return otherDecode(av, v, tg)
		}, true
	case reflect.Slice:
		return b.sliceDec(t, tg)
	case reflect.Map:
		return b.mapDec(t, tg)
	}
	return nil, false
}

// otherDecode handles the scalar attribute values (S, N, BOOL, B) for any
// target and reports the rest as type errors, as attributevalue does.
func otherDecode(av types.AttributeValue, v reflect.Value, tg tag) error {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return decodeString(x.Value, v, tg)
	case *types.AttributeValueMemberN:
		return decodeNumber(x.Value, v, tg)
	case *types.AttributeValueMemberBOOL:
		if v.Kind() == reflect.Bool {
			v.SetBool(x.Value)
			return nil
		}
		return typeErr("bool", v.Type())
	case *types.AttributeValueMemberB:
		return decodeBinary(x.Value, v)
	case *types.AttributeValueMemberBS, *types.AttributeValueMemberL, *types.AttributeValueMemberM,
		*types.AttributeValueMemberNS, *types.AttributeValueMemberSS:
		return typeErr(avKindName(av), v.Type())
	}
	return unsupportedAV(av)
}

// setTime stores tm into v, a time.Time or a type converted from it.
func setTime(v reflect.Value, tm time.Time) {
	if v.CanAddr() {
		*(*time.Time)(v.Addr().UnsafePointer()) = tm
		return
	}
	v.Set(reflect.ValueOf(tm).Convert(v.Type()))
}

// decodeString is attributevalue's decodeString for non-interface targets.
func decodeString(s string, v reflect.Value, tg tag) error {
	if tg.AsString {
		return decodeNumber(s, v, tg)
	}
	if v.Kind() == reflect.Struct && v.Type().ConvertibleTo(timeType) {
		if f := tg.timeForm(); f.Number() && isEpochText(s) {
			// An epoch number another service stored as an S.
			tm, err := decodeEpoch(s, f)
			if err != nil {
				return err
			}
			setTime(v, tm)
			return nil
		} else if f.Custom() {
			tm, ok := f.ParseIn(s, nil)
			if !ok {
				return &attributevalue.UnmarshalError{Err: fmt.Errorf("not a time in layout %s", f.Layout), Value: s, Type: timeType}
			}
			setTime(v, tm)
			return nil
		}
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			// Beyond attributevalue: the zone-less and date-only texts
			// other services write, read as UTC.
			var ok bool
			if tm, ok = format.ParseStored(s, nil); !ok {
				return &attributevalue.UnmarshalError{Err: err, Value: s, Type: timeType}
			}
		}
		setTime(v, tm)
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Interface:
		v.Set(reflect.ValueOf(s).Convert(v.Type()))
	default:
		return typeErr("string", v.Type())
	}
	return nil
}

// isEpochText reports whether s is a decimal integer, as an epoch number
// stored as an S is.
func isEpochText(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// decodeEpoch reads an epoch number of format f (nil: seconds, as
// attributevalue reads any N into a time) in local time.
func decodeEpoch(n string, f *format.Format) (time.Time, error) {
	x, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return time.Time{}, &attributevalue.UnmarshalError{Err: err, Value: n, Type: timeType}
	}
	if !f.Number() {
		f = format.Unix
	}
	return f.FromEpoch(x), nil
}

// decodeNumber is attributevalue's decodeNumber for non-interface targets.
func decodeNumber(n string, v reflect.Value, tg tag) error {
	switch v.Kind() {
	case reflect.Interface:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(f))
	case reflect.String:
		v.SetString(n)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return err
		}
		if v.OverflowInt(i) {
			return typeErr(fmt.Sprintf("number overflow, %s", n), v.Type())
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return err
		}
		if v.OverflowUint(i) {
			return typeErr(fmt.Sprintf("number overflow, %s", n), v.Type())
		}
		v.SetUint(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return err
		}
		if v.OverflowFloat(f) {
			return typeErr(fmt.Sprintf("number overflow, %s", n), v.Type())
		}
		v.SetFloat(f)
	default:
		if v.Type().ConvertibleTo(timeType) {
			tm, err := decodeEpoch(n, tg.TimeForm)
			if err != nil {
				return err
			}
			setTime(v, tm)
			return nil
		}
		return typeErr("number", v.Type())
	}
	return nil
}

// decodeBinary is attributevalue's decodeBinary for slice and scalar
// targets (arrays are delegated before getting here).
func decodeBinary(b []byte, v reflect.Value) error {
	if v.Kind() != reflect.Slice {
		return typeErr("binary", v.Type())
	}
	if v.Type().Elem().Kind() != reflect.Uint8 {
		return typeErr("binary", v.Type())
	}
	if v.IsNil() || v.Cap() < len(b) {
		v.Set(reflect.MakeSlice(v.Type(), len(b), len(b)))
	} else if v.Len() != len(b) {
		v.SetLen(len(b))
	}
	copy(v.Bytes(), b)
	return nil
}

// decodeAny is what attributevalue stores in a nil interface{} target.
func decodeAny(av types.AttributeValue, asString bool) (any, error) {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		if asString {
			return strconv.ParseFloat(x.Value, 64)
		}
		return x.Value, nil
	case *types.AttributeValueMemberN:
		return strconv.ParseFloat(x.Value, 64)
	case *types.AttributeValueMemberBOOL:
		return x.Value, nil
	case *types.AttributeValueMemberB:
		return append(make([]byte, 0, len(x.Value)), x.Value...), nil
	case *types.AttributeValueMemberBS:
		set := make([][]byte, len(x.Value))
		for i, b := range x.Value {
			set[i] = append(make([]byte, 0, len(b)), b...)
		}
		return set, nil
	case *types.AttributeValueMemberNS:
		set := make([]float64, len(x.Value))
		for i, n := range x.Value {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil {
				return nil, err
			}
			set[i] = f
		}
		return set, nil
	case *types.AttributeValueMemberSS:
		set := make([]string, len(x.Value))
		copy(set, x.Value)
		return set, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(x.Value))
		for i, e := range x.Value {
			if isNull(e) {
				continue
			}
			d, err := decodeAny(e, false)
			if err != nil {
				return nil, err
			}
			l[i] = d
		}
		return l, nil
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(x.Value))
		for k, e := range x.Value {
			if isNull(e) {
				m[k] = nil
				continue
			}
			d, err := decodeAny(e, false)
			if err != nil {
				return nil, err
			}
			m[k] = d
		}
		return m, nil
	}
	return nil, unsupportedAV(av)
}

// plainStringDec reports whether a target of type t decodes as a plain
// string: a string kind without an Unmarshaler.
func plainStringDec(t reflect.Type) bool {
	return t.Kind() == reflect.String && !reflect.PointerTo(t).Implements(unmarshalerType)
}

// stringElem decodes one list or map element into a plain string target.
func stringElem(av types.AttributeValue, t reflect.Type) (string, error) {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return x.Value, nil
	case *types.AttributeValueMemberN:
		return x.Value, nil
	case nil, *types.AttributeValueMemberNULL:
		return "", nil
	case *types.AttributeValueMemberBOOL:
		return "", typeErr("bool", t)
	case *types.AttributeValueMemberB:
		return "", typeErr("binary", t)
	case *types.AttributeValueMemberBS, *types.AttributeValueMemberL, *types.AttributeValueMemberM,
		*types.AttributeValueMemberNS, *types.AttributeValueMemberSS:
		return "", typeErr(avKindName(av), t)
	}
	return "", unsupportedAV(av)
}

// setElem prepares element decoding for sets: attributevalue runs indirect
// on each element (allocating pointers) and then decodes the scalar.
// Element types with an Unmarshaler or interfaces are delegated.
func setElemOK(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		if t.Name() != "" || t.Implements(unmarshalerType) {
			return false
		}
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Array {
		return false
	}
	return t.Name() == "" || !reflect.PointerTo(t).Implements(unmarshalerType)
}

func derefAlloc(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}

func (b *builder) sliceDec(t reflect.Type, tg tag) (decFunc, bool) {
	et := t.Elem()
	// Sets into elements with an Unmarshaler (which attributevalue hands
	// the whole set) or interfaces are delegated.
	var setSlow decFunc
	if !setElemOK(et) {
		setSlow = fallbackDec(t, tg)
	}
	elem := b.dec(et, tag{})
	strElems := plainStringDec(et)
	return func(av types.AttributeValue, v reflect.Value) error {
		switch x := av.(type) {
		case *types.AttributeValueMemberL:
			n := len(x.Value)
			if strElems && v.CanAddr() {
				sp := (*[]string)(v.Addr().UnsafePointer())
				s := *sp
				if s == nil || cap(s) < n {
					s = make([]string, 0, n)
				}
				if n == 0 {
					// attributevalue leaves the length of a reused slice.
					*sp = s
					return nil
				}
				s = s[:n]
				*sp = s
				for i, e := range x.Value {
					str, err := stringElem(e, et)
					if err != nil {
						*sp = s[:i+1]
						return err
					}
					s[i] = str
				}
				return nil
			}
			if v.IsNil() || v.Cap() < n {
				v.Set(reflect.MakeSlice(t, 0, n))
			}
			for i := 0; i < n; i++ {
				v.SetLen(i + 1)
				if err := elem(x.Value[i], v.Index(i)); err != nil {
					return err
				}
			}
			return nil
		case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
			if setSlow != nil {
				return setSlow(av, v)
			}
		}
		switch x := av.(type) {
		case *types.AttributeValueMemberSS:
			return decodeSet(v, t, len(x.Value), func(i int, e reflect.Value) error {
				return decodeString(x.Value[i], e, tag{})
			})
		case *types.AttributeValueMemberNS:
			return decodeSet(v, t, len(x.Value), func(i int, e reflect.Value) error {
				return decodeNumber(x.Value[i], e, tag{})
			})
		case *types.AttributeValueMemberBS:
			return decodeSet(v, t, len(x.Value), func(i int, e reflect.Value) error {
				return decodeBinary(x.Value[i], e)
			})
		case *types.AttributeValueMemberM:
			return typeErr("map", t)
		}
		return otherDecode(av, v, tg)
	}, true
}

func decodeSet(v reflect.Value, t reflect.Type, n int, one func(int, reflect.Value) error) error {
	if v.IsNil() || v.Cap() < n {
		v.Set(reflect.MakeSlice(t, 0, n))
	}
	for i := 0; i < n; i++ {
		v.SetLen(i + 1)
		if err := one(i, derefAlloc(v.Index(i))); err != nil {
			return err
		}
	}
	return nil
}

// mapKeyDec compiles attributevalue's getMapKeyDecoder for key type kt.
func mapKeyDec(kt reflect.Type) (func(string, reflect.Value) error, bool) {
	if reflect.PointerTo(kt).Implements(textUnmarshalType) || kt.Implements(textUnmarshalType) {
		if kt.Kind() == reflect.Pointer || kt.Kind() == reflect.Interface {
			return nil, false
		}
		return func(s string, k reflect.Value) error {
			return k.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
		}, true
	}
	switch kt.Kind() {
	case reflect.Bool:
		return func(s string, k reflect.Value) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return err
			}
			k.SetBool(b)
			return nil
		}, true
	case reflect.String:
		return func(s string, k reflect.Value) error { return decodeString(s, k, tag{}) }, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return func(s string, k reflect.Value) error { return decodeNumber(s, k, tag{}) }, true
	}
	// Unsupported key types are an error attributevalue reports itself.
	return nil, false
}

func (b *builder) mapDec(t reflect.Type, tg tag) (decFunc, bool) {
	kt, et := t.Key(), t.Elem()
	keyDec, ok := mapKeyDec(kt)
	if !ok {
		return nil, false
	}
	elem := b.dec(et, tag{})
	fast := plainStringDec(kt) && !reflect.PointerTo(kt).Implements(textUnmarshalType) &&
		!kt.Implements(textUnmarshalType) && plainStringDec(et)
	return func(av types.AttributeValue, v reflect.Value) error {
		x, ok := av.(*types.AttributeValueMemberM)
		if !ok {
			return otherDecode(av, v, tg)
		}
		if fast && v.CanAddr() {
			mp := (*map[string]string)(v.Addr().UnsafePointer())
			if *mp == nil {
				*mp = make(map[string]string, len(x.Value))
			}
			m := *mp
			for k, e := range x.Value {
				s, err := stringElem(e, et)
				if err != nil {
					return err
				}
				m[k] = s
			}
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(t, len(x.Value)))
		}
		key := reflect.New(kt).Elem()
		val := reflect.New(et).Elem()
		for k, e := range x.Value {
			key.SetZero()
			if err := keyDec(k, key); err != nil {
				return &attributevalue.UnmarshalTypeError{Value: fmt.Sprintf("map key %q", k), Type: kt, Err: err}
			}
			val.SetZero()
			if err := elem(e, val); err != nil {
				return err
			}
			v.SetMapIndex(key, val)
		}
		return nil
	}, true
}

var _ = unsafe.Pointer(nil)
