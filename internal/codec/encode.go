package codec

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// encFunc encodes v as attributevalue's encode(v, tag) does for the type
// and tag it was compiled for. A nil attribute value means "not stored".
type encFunc func(st *encState, v reflect.Value) (types.AttributeValue, error)

var (
	timeType          = reflect.TypeFor[time.Time]()
	byteSliceSliceTyp = reflect.TypeFor[[][]byte]()
	marshalerType     = reflect.TypeFor[attributevalue.Marshaler]()
	unmarshalerType   = reflect.TypeFor[attributevalue.Unmarshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numbererType      = reflect.TypeFor[interface {
		Float64() (float64, error)
		Int64() (int64, error)
		String() string
	}]()
)

// errEncode marks a failure of the compiled encoder; the caller then asks
// attributevalue, whose error is the one returned.
var errEncode = errors.New("codec: encode failed")

func newNull() types.AttributeValue { return &types.AttributeValueMemberNULL{Value: true} }

// isTimeType reports whether attributevalue encodes t as a time.
func isTimeType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.ConvertibleTo(timeType)
}

// timeOf reads a time.Time (or a type converted from it) without boxing
// when v is addressable.
func timeOf(v reflect.Value) time.Time {
	if v.CanAddr() {
		return *(*time.Time)(v.Addr().UnsafePointer())
	}
	return v.Convert(timeType).Interface().(time.Time)
}

// plainString reports whether values of t encode as a plain S through the
// scalar path: a string kind with no Marshaler and not a number type.
func plainString(t reflect.Type) bool {
	return t.Kind() == reflect.String && !hasMarshaler(t) && !t.Implements(numbererType)
}

// hasMarshaler reports whether attributevalue could call a Marshaler on a
// value of type t (addressable or not).
func hasMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType))
}

// full compiles attributevalue's encode(v, tg) for values of type t: the
// zero-value check (omitempty, nullempty, NULL for nil), then inner.
func (b *builder) full(t reflect.Type, tg tag, addr bool) encFunc {
	if tg.OmitEmpty && tg.NullEmpty {
		return fallbackEnc(t, tg, addr)
	}
	key := encKey{t, tg, addr}
	if cell, ok := b.encMemo[key]; ok {
		if *cell == nil {
			// A recursive type: its encoder is still being compiled and
			// will be in the cell before anything runs.
			return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
				return (*cell)(st, v)
			}
		}
		return *cell
	}
	cell := new(encFunc)
	b.encMemo[key] = cell
	*cell = b.fullUncached(t, tg, addr)
	return *cell
}

func (b *builder) fullUncached(t reflect.Type, tg tag, addr bool) encFunc {
	if tg.JSON {
		return jsonEnc(t, tg)
	}
	// Hot scalar kinds get one closure doing everything.
	if f := scalarFull(t, tg); f != nil {
		return f
	}
	inner, ok := b.inner(t, tg, addr)
	if !ok {
		return fallbackEnc(t, tg, addr)
	}
	omit, null := tg.OmitEmpty, tg.NullEmpty
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			if v.IsNil() {
				if omit {
					return nil, nil
				}
				return st.sizedNull(), nil
			}
			return inner(st, v)
		}
	case reflect.Array:
		if t.Len() == 0 {
			return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
				if omit {
					return nil, nil
				}
				if null {
					return st.sizedNull(), nil
				}
				return inner(st, v)
			}
		}
		return inner
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			if isZeroScalar(v) {
				if omit {
					return nil, nil
				}
				if null {
					return st.sizedNull(), nil
				}
			}
			return inner(st, v)
		}
	}
	// Structs, complex numbers, channels, funcs: never zero for attributevalue.
	return inner
}

// scalarFull returns a complete encoder for the common plain scalars, or nil.
func scalarFull(t reflect.Type, tg tag) encFunc {
	if hasMarshaler(t) {
		return nil
	}
	return scalarEnc(t, tg)
}

// scalarEnc is scalarFull without the Marshaler check. The encoding itself
// is done by the encState methods below, which encodeFast shares.
func scalarEnc(t reflect.Type, tg tag) encFunc {
	omit, null, asString := tg.OmitEmpty, tg.NullEmpty, tg.AsString
	switch t.Kind() {
	case reflect.String:
		if t.Implements(numbererType) {
			return nil
		}
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encString(v.String(), omit, null), nil
		}
	case reflect.Bool:
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encBool(v.Bool(), omit, null), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encInt(v.Int(), omit, null, asString), nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encUint(v.Uint(), omit, null, asString), nil
		}
	case reflect.Float32, reflect.Float64:
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encFloat(v.Float(), bits, omit, null, asString), nil
		}
	case reflect.Struct:
		if !isTimeType(t) {
			return nil
		}
		form, asString := tg.timeForm(), tg.AsString
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encTime(timeOf(v), form, asString), nil
		}
	}
	return nil
}

// zeroScalar is what a zero scalar becomes under the omitempty (omit) and
// nullempty (null) options: nothing (nil, true), a NULL, or, with neither,
// done false: the value is encoded as it is.
func (st *encState) zeroScalar(omit, null bool) (types.AttributeValue, bool) {
	if omit {
		return nil, true
	}
	if null {
		return st.sizedNull(), true
	}
	return nil, false
}

// encString encodes a plain string: an S, or what zeroScalar makes of "".
func (st *encState) encString(s string, omit, null bool) types.AttributeValue {
	if s == "" {
		if av, done := st.zeroScalar(omit, null); done {
			return av
		}
	}
	av := st.newS(s)
	if st.sizing {
		n, bad := itemsize.String(s)
		st.sized(av, n, bad)
	}
	return av
}

// encBool encodes a bool: a BOOL, or what zeroScalar makes of false.
func (st *encState) encBool(x, omit, null bool) types.AttributeValue {
	if !x {
		if av, done := st.zeroScalar(omit, null); done {
			return av
		}
	}
	av := &types.AttributeValueMemberBOOL{Value: x}
	if st.sizing {
		st.sized(av, 1, false)
	}
	return av
}

// encInt encodes a signed integer: an N (an S with the string option), or
// what zeroScalar makes of 0.
func (st *encState) encInt(x int64, omit, null, asString bool) types.AttributeValue {
	if x == 0 {
		if av, done := st.zeroScalar(omit, null); done {
			return av
		}
	}
	off := len(st.buf)
	st.buf = strconv.AppendInt(st.buf, x, 10)
	return st.number(off, asString)
}

// encUint is encInt for unsigned integers.
func (st *encState) encUint(x uint64, omit, null, asString bool) types.AttributeValue {
	if x == 0 {
		if av, done := st.zeroScalar(omit, null); done {
			return av
		}
	}
	off := len(st.buf)
	st.buf = strconv.AppendUint(st.buf, x, 10)
	return st.number(off, asString)
}

// encFloat encodes a float of the given bits (the value of a float32
// converted to float64): the shortest decimal text that reads back as the
// same float ("NaN", "+Inf" and "-Inf" included, as attributevalue writes
// them), or what zeroScalar makes of 0 and -0.
func (st *encState) encFloat(x float64, bits int, omit, null, asString bool) types.AttributeValue {
	if x == 0 {
		if av, done := st.zeroScalar(omit, null); done {
			return av
		}
	}
	off := len(st.buf)
	st.buf = strconv.AppendFloat(st.buf, x, 'f', -1, bits)
	av := st.number(off, asString)
	// NaN, the infinities and magnitudes outside 1E-130 to 1E126 (a
	// float64 under 1E126 prints under it, one at 1E-130 or over prints
	// at or over it) cannot be stored as an N.
	if a := math.Abs(x); !(a >= 1e-130 && a < 1e126) && x != 0 && !asString {
		st.suspect(av)
	}
	return av
}

// encTime encodes a time in format f: by default (nil) an S in RFC 3339
// with nanoseconds, format.StoredTime; with the unixtime option an N of
// its Unix seconds; in a tag option's format otherwise (an N for an epoch
// format, an S with the string option). Structs are never "zero" for
// attributevalue: a zero time is stored.
func (st *encState) encTime(t time.Time, f *format.Format, asString bool) types.AttributeValue {
	off := len(st.buf)
	if f.Number() {
		st.buf = f.AppendTime(st.buf, t)
		return st.number(off, asString)
	}
	if f == nil {
		f = format.StoredTime
	}
	st.buf = f.AppendTime(st.buf, t)
	av := st.newS("")
	st.deferText(&av.Value, off)
	if st.sizing {
		// The text is ASCII (digits, signs, 'T', ':', '.', 'Z'): its
		// size is its length, and it is valid UTF-8.
		st.sized(av, len(st.buf)-off, false)
	}
	return av
}

// number makes an N (or, with the string option, an S) whose text is what
// was appended to st.buf since off.
func (st *encState) number(off int, asString bool) types.AttributeValue {
	if asString {
		av := st.newS("")
		st.deferText(&av.Value, off)
		if st.sizing {
			n, bad := itemsize.String(st.text(off))
			st.sized(av, n, bad)
		}
		return av
	}
	av := st.newN()
	st.deferText(&av.Value, off)
	if st.sizing {
		st.sized(av, itemsize.Number(st.text(off)), false)
	}
	return av
}

// inner compiles what attributevalue does after the zero check: take the
// element of a pointer or interface, then afterElem.
func (b *builder) inner(t reflect.Type, tg tag, addr bool) (encFunc, bool) {
	switch t.Kind() {
	case reflect.Pointer:
		if t.Name() != "" {
			return nil, false
		}
		after, ok := b.afterElem(t.Elem(), tg, true)
		if !ok {
			return nil, false
		}
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return after(st, v.Elem())
		}, true
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil, false
		}
		return b.ifaceEnc(t, tg), true
	}
	return b.afterElem(t, tg, addr)
}

// ifaceEnc encodes the dynamic value of a non-nil interface: attributevalue
// treats it as a non-addressable value of its dynamic type.
func (b *builder) ifaceEnc(t reflect.Type, tg tag) encFunc {
	var cache sync.Map // dynamic type → encFunc
	whole := fallbackEnc(t, tg, false)
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		c := v.Elem()
		ct := c.Type()
		f, ok := cache.Load(ct)
		if !ok {
			var enc encFunc
			buildLocked(func(b *builder) {
				if e, ok := b.afterElem(ct, tg, false); ok {
					enc = e
				}
			})
			// A nil enc means: hand attributevalue the interface itself.
			f, _ = cache.LoadOrStore(ct, enc)
		}
		enc := f.(encFunc)
		if enc == nil {
			return whole(st, v)
		}
		return enc(st, c)
	}
}

// afterElem compiles attributevalue's tryMarshaler and the switch on kind
// for a value of type t (already dereferenced).
func (b *builder) afterElem(t reflect.Type, tg tag, addr bool) (encFunc, bool) {
	kindEnc, ok := b.byKind(t, tg, addr)
	if !ok {
		return nil, false
	}
	viaAddr := t.Kind() != reflect.Pointer && t.Name() != "" && addr
	var callM bool
	if viaAddr {
		callM = reflect.PointerTo(t).Implements(marshalerType)
	} else {
		callM = t.Implements(marshalerType)
	}
	if !callM {
		return kindEnc, true
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return nil, false
	}
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		var m attributevalue.Marshaler
		if viaAddr {
			m = v.Addr().Interface().(attributevalue.Marshaler)
		} else {
			m = v.Interface().(attributevalue.Marshaler)
		}
		av, err := m.MarshalDynamoDBAttributeValue()
		if err != nil {
			return nil, err
		}
		if av != nil {
			st.suspect(av)
			return av, nil
		}
		return kindEnc(st, v)
	}, true
}

func skipEnc(*encState, reflect.Value) (types.AttributeValue, error) { return nil, nil }

// byKind compiles attributevalue's switch on the kind of a dereferenced value.
func (b *builder) byKind(t reflect.Type, tg tag, addr bool) (encFunc, bool) {
	switch t.Kind() {
	case reflect.Struct:
		if isTimeType(t) {
			return b.timeEnc(tg), true
		}
		p := b.plan(t, addr)
		if p.whole {
			return nil, false
		}
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			m, err := p.encode(st, v, 0)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberM{Value: m}, nil
		}, true
	case reflect.Map:
		return b.mapEnc(t, tg)
	case reflect.Slice, reflect.Array:
		return b.sliceEnc(t, tg, addr)
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return skipEnc, true
	case reflect.Pointer:
		if t.Name() != "" || hasMarshaler(t) {
			return nil, false
		}
		elem := b.full(t.Elem(), tg, true)
		omit := tg.OmitEmpty && tg.OmitEmptyElem
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			el := v.Elem()
			if !el.IsValid() {
				if omit {
					return nil, nil
				}
				return newNull(), nil
			}
			return elem(st, el)
		}, true
	case reflect.Interface:
		return nil, false
	case reflect.Complex64, reflect.Complex128, reflect.Uintptr:
		return skipEnc, true
	}
	return scalarInner(t, tg), true
}

// scalarInner encodes a non-zero-checked scalar (attributevalue's
// encodeScalar); the Marshaler check has been done by the caller.
func scalarInner(t reflect.Type, tg tag) encFunc {
	asString := tg.AsString
	if t.Kind() == reflect.String && t.Implements(numbererType) {
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			if asString {
				return st.newS(v.String()), nil
			}
			av := st.newN()
			av.Value = v.String()
			st.suspect(av)
			return av, nil
		}
	}
	// The plain scalar encoders without omit/null options do no zero check.
	return scalarEnc(t, tag{AsString: asString})
}

func (b *builder) timeEnc(tg tag) encFunc {
	return scalarEnc(timeType, tag{AsUnixTime: tg.AsUnixTime, TimeForm: tg.TimeForm})
}

func (b *builder) mapEnc(t reflect.Type, tg tag) (encFunc, bool) {
	kt, et := t.Key(), t.Elem()
	keyStr, ok := mapKeyFunc(kt)
	if !ok {
		return nil, false
	}
	etg := tg.elemTag()
	if plainString(kt) && kt.NumMethod() == 0 && plainString(et) && !(etg.OmitEmpty && etg.NullEmpty) {
		// (With both options an empty value is an error: see full.)
		omit, null := etg.OmitEmpty, etg.NullEmpty
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			mp := v.UnsafePointer()
			return st.encStringMap(*(*map[string]string)(unsafe.Pointer(&mp)), omit, null)
		}, true
	}
	elem := b.full(et, etg, false)
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		out := make(map[string]types.AttributeValue, v.Len())
		k := reflect.New(kt).Elem()
		e := reflect.New(et).Elem()
		it := v.MapRange()
		for it.Next() {
			k.SetIterKey(it)
			name, err := keyStr(k)
			if err != nil {
				return nil, err
			}
			e.SetIterValue(it)
			av, err := elem(st, e)
			if err != nil {
				return nil, err
			}
			if av != nil {
				out[name] = av
			}
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}, true
}

// encStringMap encodes a non-nil map of plain strings: an M of S, its
// empty values dropped under omitempty (omit) or made NULL under nullempty
// (null), the options of the field's omitemptyelem and nullemptyelem. An
// empty key is an error, as for attributevalue.
func (st *encState) encStringMap(src map[string]string, omit, null bool) (types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(src))
	size, bad := docOverhead, false
	for k, s := range src {
		if k == "" {
			return nil, errEncode
		}
		if s == "" {
			if omit {
				continue
			}
			if null {
				out[k] = newNull()
				if st.sizing {
					kn, kb := itemsize.String(k)
					size += elemOverhead + kn + 1
					bad = bad || kb
				}
				continue
			}
		}
		out[k] = st.newS(s)
		if st.sizing {
			kn, kb := itemsize.String(k)
			sn, sb := itemsize.String(s)
			size += elemOverhead + kn + sn
			bad = bad || kb || sb
		}
	}
	av := &types.AttributeValueMemberM{Value: out}
	if st.sizing {
		st.sized(av, size, bad)
	}
	return av, nil
}

// mapKeyFunc compiles attributevalue's mapKeyAsString for key type kt.
func mapKeyFunc(kt reflect.Type) (func(reflect.Value) (string, error), bool) {
	nonEmpty := func(s string) (string, error) {
		if s == "" {
			return "", errEncode
		}
		return s, nil
	}
	if kt.Implements(textMarshalerType) {
		if kt.Kind() == reflect.Pointer || kt.Kind() == reflect.Interface {
			return nil, false
		}
		return func(k reflect.Value) (string, error) {
			b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return "", errEncode
			}
			return nonEmpty(string(b))
		}, true
	}
	plain := kt.NumMethod() == 0
	switch kt.Kind() {
	case reflect.String:
		if plain {
			return func(k reflect.Value) (string, error) { return nonEmpty(k.String()) }, true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if plain {
			return func(k reflect.Value) (string, error) { return strconv.FormatInt(k.Int(), 10), nil }, true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if plain {
			return func(k reflect.Value) (string, error) { return strconv.FormatUint(k.Uint(), 10), nil }, true
		}
	case reflect.Bool, reflect.Float32, reflect.Float64:
	default:
		return nil, false
	}
	return func(k reflect.Value) (string, error) { return nonEmpty(fmt.Sprint(k.Interface())) }, true
}

func (b *builder) sliceEnc(t reflect.Type, tg tag, addr bool) (encFunc, bool) {
	et := t.Elem()
	if et.Kind() == reflect.Uint8 {
		if t.Kind() == reflect.Array {
			return nil, false
		}
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return &types.AttributeValueMemberB{Value: append([]byte{}, v.Bytes()...)}, nil
		}, true
	}
	elemAddr := addr || t.Kind() == reflect.Slice
	etg := tg.elemTag()
	set := 0
	switch {
	case tg.AsBinSet || t == byteSliceSliceTyp:
		set = 'B'
	case tg.AsNumSet:
		set = 'N'
	case tg.AsStrSet:
		set = 'S'
	}
	if set == 0 && plainString(et) && !(etg.OmitEmpty && etg.NullEmpty) {
		// []string as a list: the common case, without a call per element.
		// (With both options an empty element is an error: see full.)
		omit, null := etg.OmitEmpty, etg.NullEmpty
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			return st.encStrings(stringsOf(v), omit, null), nil
		}, true
	}
	elem := b.full(et, etg, elemAddr)
	switch set {
	case 'B':
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			n := v.Len()
			if n == 0 {
				return newNull(), nil
			}
			out := make([][]byte, 0, n)
			verified := len(st.verify)
			for i := 0; i < n; i++ {
				av, err := elem(st, v.Index(i))
				if err != nil {
					return nil, err
				}
				if av == nil {
					continue
				}
				bv, ok := av.(*types.AttributeValueMemberB)
				if !ok || bv == nil || bv.Value == nil {
					return nil, errEncode
				}
				out = append(out, bv.Value)
			}
			return st.suspectSet(&types.AttributeValueMemberBS{Value: out}, verified), nil
		}, true
	case 'N', 'S':
		return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
			n := v.Len()
			if n == 0 {
				return newNull(), nil
			}
			// out never grows past n, so pointers into it stay valid.
			out := make([]string, 0, n)
			verified := len(st.verify)
			for i := 0; i < n; i++ {
				before := len(st.fix)
				av, err := elem(st, v.Index(i))
				if err != nil {
					return nil, err
				}
				if av == nil {
					continue
				}
				var s *string
				switch x := av.(type) {
				case *types.AttributeValueMemberN:
					if set != 'N' || x == nil {
						return nil, errEncode
					}
					s = &x.Value
				case *types.AttributeValueMemberS:
					if set != 'S' || x == nil {
						return nil, errEncode
					}
					s = &x.Value
				default:
					return nil, errEncode
				}
				out = append(out, *s)
				// A number's text is still pending: send it to the set.
				if len(st.fix) > before && st.fix[len(st.fix)-1].dst == s {
					st.fix[len(st.fix)-1].dst = &out[len(out)-1]
				}
			}
			if set == 'N' {
				return st.suspectSet(&types.AttributeValueMemberNS{Value: out}, verified), nil
			}
			return st.suspectSet(&types.AttributeValueMemberSS{Value: out}, verified), nil
		}, true
	}
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		n := v.Len()
		l := make([]types.AttributeValue, 0, n)
		for i := 0; i < n; i++ {
			av, err := elem(st, v.Index(i))
			if err != nil {
				return nil, err
			}
			if av != nil {
				l = append(l, av)
			}
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	}, true
}

// suspectSet makes set, just encoded, a suspect (its members may repeat),
// in place of the suspects its members' encoding noted from position
// verified on: those values were only carriers of the members' texts, and
// the set holds the texts now.
func (st *encState) suspectSet(set types.AttributeValue, verified int) types.AttributeValue {
	clear(st.verify[verified:])
	st.verify = append(st.verify[:verified], set)
	return set
}

// stringsOf returns the elements of v, a slice or an array of plain
// strings, as a []string (sharing v's memory unless v is an array that is
// not addressable).
func stringsOf(v reflect.Value) []string {
	n := v.Len()
	switch {
	case v.Kind() == reflect.Slice:
		return unsafe.Slice((*string)(v.UnsafePointer()), n)
	case v.CanAddr():
		return unsafe.Slice((*string)(v.Addr().UnsafePointer()), n)
	}
	s := make([]string, n)
	for i := range s {
		s[i] = v.Index(i).String()
	}
	return s
}

// encStrings encodes a non-nil slice of plain strings: an L of S, its empty
// elements dropped under omitempty (omit) or made NULL under nullempty
// (null), the options of the field's omitemptyelem and nullemptyelem.
func (st *encState) encStrings(src []string, omit, null bool) types.AttributeValue {
	l := make([]types.AttributeValue, 0, len(src))
	size, bad := docOverhead, false
	for _, s := range src {
		if s == "" {
			if omit {
				continue
			}
			if null {
				l = append(l, newNull())
				size += elemOverhead + 1
				continue
			}
		}
		l = append(l, st.newS(s))
		if st.sizing {
			sn, sb := itemsize.String(s)
			size += elemOverhead + sn
			bad = bad || sb
		}
	}
	av := &types.AttributeValueMemberL{Value: l}
	if st.sizing {
		st.sized(av, size, bad)
	}
	return av
}

// isZeroScalar is attributevalue's isZeroValue for scalar kinds (note that
// -0.0 counts as zero, unlike reflect.Value.IsZero).
func isZeroScalar(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}
