package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/wiretest"
)

// gen makes random values of any type, with the awkward cases (nil, empty,
// zero, negative zero, huge numbers, odd strings) over-represented.
type gen struct {
	r     *rand.Rand
	depth int

	// Values from the fuzzer, used now and then instead of random ones.
	fuzzStr   *string
	fuzzInt   int64
	fuzzFloat float64
}

var zones = []*time.Location{time.UTC, time.FixedZone("X", 3600*5+1800), time.FixedZone("", -7*3600), time.Local}

var oddStrings = []string{"", "a", "A", "0", "-1", "1e3", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123+02:00",
	"héllo", "\u212A", "x#y", "tk:", "tk:abc", "x=5", "NaN", "true", strings.Repeat("z", 40),
	// Invalid UTF-8 (each bad byte is sized as U+FFFD) next to valid
	// multi-byte runes.
	"\xff", "a\xc3", "\xed\xa0\x80", "\xf0\x9f\x98", "ok\x80ok", "😀", "日本\xe6\x97", strings.Repeat("\xfe", 9)}

// numberTexts are N texts of every shape: signs, leading and trailing
// zeros, decimal points, exponents, and texts that are not numbers.
var numberTexts = []string{"0", "-0", "+0", "0.000", "00012", "-1", "+7", "1", "99", "100", "101", "1.1", "0.012",
	"-12", "12.3400", ".5", "5.", "1e9", "1E-9", "-1.5e10", "1e400", "1e-130", "9.99e+125", "12345678901234567890123456789012345678",
	"-0.00120", "1000000000000000000000", "abc", "", "1e", "--1", "1.2.3", "0x10", "18446744073709551615", "-9223372036854775808"}

func (g *gen) str() string {
	if g.fuzzStr != nil && g.r.IntN(3) == 0 {
		return *g.fuzzStr
	}
	if g.r.IntN(3) == 0 {
		return oddStrings[g.r.IntN(len(oddStrings))]
	}
	b := make([]byte, g.r.IntN(12))
	for i := range b {
		b[i] = "abcXYZ019 #_-é\xff"[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) float(bits int) float64 {
	if g.fuzzStr != nil && g.r.IntN(3) == 0 {
		if bits == 32 {
			return float64(float32(g.fuzzFloat))
		}
		return g.fuzzFloat
	}
	switch g.r.IntN(8) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		if bits == 32 {
			return math.MaxFloat32
		}
		return math.MaxFloat64
	case 3:
		if g.r.IntN(3) == 0 {
			return math.NaN()
		}
		return math.Inf(1 - 2*g.r.IntN(2))
	case 4:
		return float64(g.r.IntN(100))
	case 5:
		// Powers of ten and short mantissas far from the decimal point.
		f := float64(g.r.IntN(2000)-1000) * math.Pow(10, float64(g.r.IntN(80)-40))
		if bits == 32 {
			f = float64(float32(f))
		}
		return f
	}
	f := g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(30)-15))
	if bits == 32 {
		f = float64(float32(f))
	}
	return f
}

func (g *gen) time() time.Time {
	switch g.r.IntN(6) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(g.r.Int64N(4e9)-1e9, 0).UTC()
	case 2:
		// Years of every width and sign, and the ends of years 0 to
		// 9999 (which encodeFast formats without AppendFormat).
		z := zones[g.r.IntN(len(zones))]
		switch g.r.IntN(3) {
		case 0:
			return time.Unix(g.r.Int64N(8e11)-4e11, g.r.Int64N(1e9)).In(z)
		case 1:
			return time.Date(0, 1, 1, 0, 0, 0, 0, z).Add(time.Duration(g.r.IntN(3)-1) * time.Nanosecond)
		}
		return time.Date(9999, 12, 31, 23, 59, 59, 999999999, z).Add(time.Duration(g.r.IntN(3)-1) * time.Nanosecond)
	}
	return time.Unix(g.r.Int64N(4e9)-1e9, g.r.Int64N(1e9)).In(zones[g.r.IntN(len(zones))])
}

var (
	jsonNumTy = reflect.TypeFor[json.Number]()
	avNumTy   = reflect.TypeFor[attributevalue.Number]()
)

func (g *gen) value(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	g.fill(v)
	return v
}

func (g *gen) fill(v reflect.Value) {
	t := v.Type()
	g.depth++
	defer func() { g.depth-- }()
	deep := g.depth > 5
	switch {
	case t == timeType || t.ConvertibleTo(timeType) && t.Kind() == reflect.Struct:
		v.Set(reflect.ValueOf(g.time()).Convert(t))
		return
	case t == jsonNumTy || t == avNumTy:
		switch g.r.IntN(4) {
		case 0:
			v.SetString("")
		case 1:
			v.SetString(numberTexts[g.r.IntN(len(numberTexts))])
		default:
			v.SetString(strconv.Itoa(g.r.IntN(1000) - 500))
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(g.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch g.r.IntN(6) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(-1 << (t.Bits() - 1))
		case 2:
			if g.fuzzStr != nil && !v.OverflowInt(g.fuzzInt) {
				v.SetInt(g.fuzzInt)
			}
		case 3:
			// Trailing zeros, any sign and length.
			x := g.r.Int64N(1000) - 500
			for k := g.r.IntN(19); k > 0 && !v.OverflowInt(x*10); k-- {
				x *= 10
			}
			if !v.OverflowInt(x) {
				v.SetInt(x)
			}
		case 4:
			v.SetInt(1<<(t.Bits()-1) - 1)
		default:
			v.SetInt(g.r.Int64N(2000) - 1000)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch g.r.IntN(4) {
		case 0:
			v.SetUint(0)
		case 1:
			v.SetUint(math.MaxUint64 >> (64 - t.Bits()))
		default:
			v.SetUint(g.r.Uint64N(200))
		}
	case reflect.Float32, reflect.Float64:
		v.SetFloat(g.float(t.Bits()))
	case reflect.Complex64, reflect.Complex128:
		v.SetComplex(complex(g.float(64), 1))
	case reflect.String:
		v.SetString(g.str())
	case reflect.Pointer:
		if deep || g.r.IntN(3) == 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch {
		case deep || g.r.IntN(5) == 0:
			return
		case g.r.IntN(5) == 0:
			v.Set(reflect.MakeSlice(t, 0, 0))
			return
		}
		n := g.r.IntN(4) + 1
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n; i++ {
			g.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			g.fill(v.Index(i))
		}
	case reflect.Map:
		switch {
		case deep || g.r.IntN(5) == 0:
			return
		case g.r.IntN(5) == 0:
			v.Set(reflect.MakeMap(t))
			return
		}
		m := reflect.MakeMap(t)
		for i := g.r.IntN(4) + 1; i > 0; i-- {
			k := g.value(t.Key())
			if (k.Kind() == reflect.Float32 || k.Kind() == reflect.Float64) && math.IsNaN(k.Float()) {
				// Each NaN is a new key, and all of them name one
				// attribute: which value is kept is up to the order
				// the map is walked in.
				continue
			}
			m.SetMapIndex(k, g.value(t.Elem()))
		}
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() || t.Field(i).Anonymous {
				f := v.Field(i)
				if f.CanSet() {
					g.fill(f)
				} else if f.Kind() == reflect.Struct {
					// An unexported embedded struct: fill its exported fields.
					fill := reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
					g.fill(fill)
				}
			}
		}
	case reflect.Interface:
		if t.NumMethod() != 0 || g.r.IntN(4) == 0 {
			return
		}
		choices := []func() any{
			func() any { return g.str() },
			func() any { return g.float(64) },
			func() any { return g.r.IntN(2) == 0 },
			func() any { return g.r.IntN(100) },
			func() any { return []byte(g.str()) },
			func() any { return g.time() },
			func() any { x := g.r.IntN(5); return &x },
			func() any { var p *int; return p },
			func() any { return Marsh{X: g.r.IntN(5)} },
			func() any { return &PtrMarsh{Y: 3} },
			func() any { return PtrMarsh{Y: 4} },
			func() any { return g.value(reflect.TypeFor[Inner]()).Interface() },
			func() any { return [2]string{g.str(), g.str()} },
		}
		if !deep {
			choices = append(choices,
				func() any { return g.value(reflect.TypeFor[[]any]()).Interface() },
				func() any { return g.value(reflect.TypeFor[map[string]any]()).Interface() },
				func() any { return g.value(reflect.TypeFor[[]string]()).Interface() },
			)
		}
		if x := choices[g.r.IntN(len(choices))](); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	}
}

// av makes a random attribute value, biased towards what fields hold.
func (g *gen) av() types.AttributeValue {
	g.depth++
	defer func() { g.depth-- }()
	num := append([]string{"0", "-0", "1", "-17", "3.25", "1e400", "abc", "", "18446744073709551615", "-9223372036854775809", "1700000000", "255", "256", "1.5e10"}, numberTexts...)
	k := g.r.IntN(12)
	if g.depth > 3 && k >= 8 {
		k = g.r.IntN(8)
	}
	switch k {
	case 0, 1:
		return &types.AttributeValueMemberS{Value: g.str()}
	case 2, 3:
		if g.fuzzStr != nil && g.r.IntN(3) == 0 {
			return &types.AttributeValueMemberN{Value: *g.fuzzStr}
		}
		return &types.AttributeValueMemberN{Value: num[g.r.IntN(len(num))]}
	case 4:
		return &types.AttributeValueMemberBOOL{Value: g.r.IntN(2) == 0}
	case 5:
		return &types.AttributeValueMemberNULL{Value: true}
	case 6:
		return &types.AttributeValueMemberB{Value: []byte(g.str())}
	case 7:
		ss := &types.AttributeValueMemberSS{}
		for i := g.r.IntN(3); i >= 0; i-- {
			ss.Value = append(ss.Value, g.str())
		}
		return ss
	case 8:
		ns := &types.AttributeValueMemberNS{}
		for i := g.r.IntN(3); i >= 0; i-- {
			ns.Value = append(ns.Value, num[g.r.IntN(len(num))])
		}
		return ns
	case 9:
		bs := &types.AttributeValueMemberBS{}
		for i := g.r.IntN(3); i >= 0; i-- {
			bs.Value = append(bs.Value, []byte(g.str()))
		}
		return bs
	case 10:
		l := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		for i := g.r.IntN(4); i > 0; i-- {
			l.Value = append(l.Value, g.av())
		}
		return l
	}
	m := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
	names := []string{"A", "B", "C", "d", "X", "Y", "self", "a"}
	for i := g.r.IntN(4); i > 0; i-- {
		m.Value[names[g.r.IntN(len(names))]] = g.av()
	}
	return m
}

// mutate derives a decoding input from a valid item: some attributes get
// random values, some keys change case, some unknown keys appear.
func (g *gen) mutate(item map[string]types.AttributeValue, t reflect.Type) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range item {
		switch g.r.IntN(10) {
		case 0:
			out[k] = g.av()
		case 1:
			// A key differing only in case (unless it collides).
			l := strings.ToLower(k)
			if _, ok := item[l]; !ok {
				out[l] = v
				continue
			}
			out[k] = v
		case 2:
		default:
			out[k] = v
		}
	}
	if g.r.IntN(3) == 0 {
		out["PK"] = &types.AttributeValueMemberS{Value: "USER#x"}
		out["EntityType"] = &types.AttributeValueMemberS{Value: "Item"}
	}
	if g.r.IntN(4) == 0 && t.Kind() == reflect.Struct && t.NumField() > 0 {
		f := t.Field(g.r.IntN(t.NumField()))
		out[f.Name] = g.av()
	}
	return out
}

type outcome struct {
	item     map[string]types.AttributeValue
	err      error
	panicked any
}

func encodeAV(v reflect.Value, addr bool) (o outcome) {
	defer func() { o.panicked = recover() }()
	if addr {
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		o.item, o.err = attributevalue.MarshalMap(p.Interface())
	} else {
		o.item, o.err = attributevalue.MarshalMap(v.Interface())
	}
	return o
}

func encodeCodec(v reflect.Value, addr bool) (o outcome) {
	defer func() { o.panicked = recover() }()
	plan := For(v.Type())
	if addr {
		plan = ForAddressable(v.Type())
	}
	o.item, o.err = plan.Encode(encodeInput(v, addr), 3)
	return o
}

// encodeTurn alternates encodeInput between its two kinds of values.
var encodeTurn atomic.Uint64

// encodeInput returns a copy of v to encode: addressable, as Marshal passes
// it (its fields of fast shapes are read by encodeFast), or, now and then
// for a plan from For, not addressable (every field is read by reflection).
func encodeInput(v reflect.Value, addr bool) reflect.Value {
	if !addr && encodeTurn.Add(1)%2 == 0 {
		return reflect.ValueOf(v.Interface())
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return p.Elem()
}

func sameOutcome(t *testing.T, what string, in any, want, got outcome) bool {
	t.Helper()
	switch {
	case (want.panicked != nil) != (got.panicked != nil):
		t.Errorf("%s of %#v: attributevalue panicked %v, codec panicked %v", what, in, want.panicked, got.panicked)
	case (want.err != nil) != (got.err != nil):
		t.Errorf("%s of %#v: attributevalue error %v, codec error %v", what, in, want.err, got.err)
	case want.err != nil && want.err.Error() != got.err.Error():
		t.Errorf("%s of %#v: errors differ:\n attributevalue: %v\n codec:          %v", what, in, want.err, got.err)
	case want.err == nil && want.panicked == nil && !reflect.DeepEqual(want.item, got.item):
		t.Errorf("%s of %#v: items differ:\n attributevalue: %s\n codec:          %s", what, in, dump(want.item), dump(got.item))
	default:
		return true
	}
	return false
}

func dump(x any) string {
	var b strings.Builder
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if v.Kind() == reflect.Pointer {
				b.WriteString(strings.TrimPrefix(v.Type().Elem().Name(), "AttributeValueMember"))
			}
			walk(v.Elem())
		case reflect.Map:
			keys := v.MapKeys()
			b.WriteString("{")
			for _, k := range keys {
				fmt.Fprintf(&b, "%v:", k)
				walk(v.MapIndex(k))
				b.WriteString(" ")
			}
			b.WriteString("}")
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				fmt.Fprintf(&b, "%q", v.Bytes())
				return
			}
			b.WriteString("[")
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
				b.WriteString(" ")
			}
			b.WriteString("]")
		case reflect.Struct:
			if v.NumField() > 0 {
				walk(v.Field(0))
			}
		default:
			fmt.Fprintf(&b, "%q", fmt.Sprint(v.Interface()))
		}
	}
	walk(reflect.ValueOf(x))
	return b.String()
}

type decOutcome struct {
	v        reflect.Value
	err      error
	panicked any
}

func decodeAV(item map[string]types.AttributeValue, t reflect.Type) (o decOutcome) {
	defer func() { o.panicked = recover() }()
	p := reflect.New(t)
	o.v = p.Elem()
	o.err = attributevalue.UnmarshalMap(item, p.Interface())
	return o
}

// flatTurn alternates decodeCodec between Plan.Decode and, for flat plans,
// the path of Unmarshal (the struct reached by its address alone).
var flatTurn atomic.Uint64

func decodeCodec(item map[string]types.AttributeValue, t reflect.Type) (o decOutcome) {
	defer func() { o.panicked = recover() }()
	p := reflect.New(t)
	o.v = p.Elem()
	if plan := For(t); plan.flat && flatTurn.Add(1)%2 == 0 {
		o.err = plan.decodeAt(item, reflect.Value{}, p.UnsafePointer())
		return o
	}
	o.err = For(t).Decode(item, p.Elem())
	return o
}

// sameDecode compares decodings. attributevalue walks the item's maps in
// Go's random order, so when several attributes fail (or name one field in
// different cases) it has several possible outcomes: it is run up to 200
// times (small Go maps favour one order) and the codec's outcome must be
// one of them.
//
// Items with several attributes are compared only on whether decoding
// fails (by error or panic: which of its failing attributes
// attributevalue meets first is random, and there can be dozens) and, when
// it does not, on the value.
func sameDecode(t *testing.T, item map[string]types.AttributeValue, typ reflect.Type, got decOutcome) bool {
	t.Helper()
	if foreignTimeText(item) {
		// Beyond attributevalue on purpose: zone-less and date-only time
		// texts decode, and epoch numbers stored as an S (foreign_test.go
		// checks them).
		return true
	}
	var want decOutcome
	for i := 0; i < 200; i++ {
		want = decodeAV(item, typ)
		if sameDecOutcome(want, got) {
			return true
		}
		if len(item) > 1 && failed(want) && failed(got) {
			return true
		}
	}
	switch {
	case (want.panicked != nil) != (got.panicked != nil):
		t.Errorf("decode %s into %s: attributevalue panicked %v, codec panicked %v", dump(item), typ, want.panicked, got.panicked)
	case (want.err != nil) != (got.err != nil):
		t.Errorf("decode %s into %s: attributevalue error %v, codec error %v", dump(item), typ, want.err, got.err)
	case want.err != nil:
		t.Errorf("decode %s into %s: errors differ:\n attributevalue: %v\n codec:          %v", dump(item), typ, want.err, got.err)
	default:
		t.Errorf("decode %s into %s: values differ:\n attributevalue: %#v\n codec:          %#v", dump(item), typ, want.v.Interface(), got.v.Interface())
	}
	return false
}

// foreignTimeText reports whether item holds, at any depth, an S that
// attributevalue refuses as a time but format.ParseStored reads, or an
// epoch number stored as an S, which a unixtime field reads.
func foreignTimeText(item map[string]types.AttributeValue) bool {
	var walk func(av types.AttributeValue) bool
	walk = func(av types.AttributeValue) bool {
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			return format.Zoneless(x.Value) || isEpochText(x.Value)
		case *types.AttributeValueMemberL:
			for _, e := range x.Value {
				if walk(e) {
					return true
				}
			}
		case *types.AttributeValueMemberM:
			for _, e := range x.Value {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, av := range item {
		if walk(av) {
			return true
		}
	}
	return false
}

func failed(o decOutcome) bool { return o.err != nil || o.panicked != nil }

func sameDecOutcome(want, got decOutcome) bool {
	switch {
	case (want.panicked != nil) != (got.panicked != nil):
		return false
	case want.panicked != nil:
		return fmt.Sprint(want.panicked) == fmt.Sprint(got.panicked)
	case (want.err != nil) != (got.err != nil):
		return false
	case want.err != nil:
		return want.err.Error() == got.err.Error()
	}
	return equalValues(want.v, got.v)
}

// equalValues is wiretest.EqualValues with the one deliberate difference:
// an epoch number decodes in UTC, where attributevalue gives local time.
func equalValues(a, b reflect.Value) bool {
	return wiretest.EqualValues(a, b, func(x, y time.Time) bool {
		if x.Location() == time.Local && y.Location() == time.UTC {
			x = x.UTC()
		}
		return reflect.DeepEqual(x, y)
	})
}

var diffTypes = []reflect.Type{
	reflect.TypeFor[Item](),
	reflect.TypeFor[Small](),
	reflect.TypeFor[Flat](),
	reflect.TypeFor[Inner](),
	reflect.TypeFor[Big](),
	reflect.TypeFor[Conflict](),
	reflect.TypeFor[Tree](),
	reflect.TypeFor[Recs](),
	reflect.TypeFor[SelfMarsh](),
	reflect.TypeFor[UnexpPtrEmbed](),
	reflect.TypeFor[CaseFold](),
	reflect.TypeFor[struct{}](),
	reflect.TypeFor[Names](),
	reflect.TypeFor[FastEnc](),
	reflect.TypeFor[struct {
		X any
		Y *any
		Z []Level `dynamodbav:",stringset"`
		W map[TextKey][]byte
	}](),
}

// checkOne runs the differential checks for one random value of typ.
func checkOne(t *testing.T, g *gen, typ reflect.Type) {
	t.Helper()
	v := g.value(typ)
	for _, addr := range []bool{false, true} {
		want := encodeAV(v, addr)
		got := encodeCodec(v, addr)
		if !sameOutcome(t, fmt.Sprintf("encode (addressable %v)", addr), v.Interface(), want, got) {
			return
		}
	}
	for _, addr := range []bool{false, true} {
		if !sameSized(t, v, addr) {
			return
		}
	}
	want := encodeAV(v, false)
	if want.err != nil || want.panicked != nil {
		return
	}
	// Decoding a valid item exactly.
	if !sameDecode(t, want.item, typ, decodeCodec(want.item, typ)) {
		return
	}
	// And a damaged one.
	item := g.mutate(want.item, typ)
	sameDecode(t, item, typ, decodeCodec(item, typ))
	// Single attributes one at a time give exact errors.
	for k, av := range item {
		one := map[string]types.AttributeValue{k: av}
		if !sameDecode(t, one, typ, decodeCodec(one, typ)) {
			return
		}
	}
}

// sameSized checks EncodeSized on v: the item Encode makes, the size
// itemsize.Of gives it and the invalid UTF-8 verdict of itemsize.Scan,
// which must name the smallest of the attributes holding invalid UTF-8.
func sameSized(t *testing.T, v reflect.Value, addr bool) bool {
	t.Helper()
	want := encodeCodec(v, addr)
	var got sizedOutcome
	var trace []attrSized
	func() {
		defer func() { got.panicked = recover() }()
		plan := For(v.Type())
		if addr {
			plan = ForAddressable(v.Type())
		}
		got.item, got.size, got.invalid, got.err = plan.encodeSized(encodeInput(v, addr), 3, &trace, false)
	}()
	if !sameOutcome(t, fmt.Sprintf("EncodeSized (addressable %v)", addr), v.Interface(), want, got.outcome) {
		return false
	}
	if want.err != nil || want.panicked != nil {
		return true
	}
	wantSize, wantBad := itemsize.Scan(want.item)
	// The smallest invalid attribute, found independently of Scan.
	oracle, found := "", false
	for name, av := range want.item {
		if _, bad := itemsize.Attr(name, av); bad && (!found || name < oracle) {
			oracle, found = name, true
		}
	}
	if found {
		sizedInvalid.Add(1)
		n := 0
		for name, av := range want.item {
			if _, bad := itemsize.Attr(name, av); bad {
				n++
			}
		}
		if n > 1 {
			sizedSeveral.Add(1)
		}
	}
	// Attribute by attribute, where the codec sized them one by one.
	for _, a := range trace {
		n, bad := itemsize.Attr(a.name, want.item[a.name])
		if a.inline {
			sizedInline.Add(1)
		}
		if n != a.size || bad != a.invalid {
			t.Errorf("EncodeSized (addressable %v) of %#v: attribute %q (sized by its encoder: %v) is %d bytes, invalid %v; itemsize.Attr says %d, %v",
				addr, v.Interface(), a.name, a.inline, a.size, a.invalid, n, bad)
			return false
		}
	}
	switch {
	case got.size != itemsize.Of(want.item) || got.size != wantSize:
		t.Errorf("EncodeSized (addressable %v) of %#v: size %d, itemsize.Of %d", addr, v.Interface(), got.size, itemsize.Of(want.item))
	case wantBad != oracle:
		t.Errorf("itemsize.Scan of %s names %q, want the smallest invalid attribute %q", dump(want.item), wantBad, oracle)
	case got.invalid != wantBad:
		t.Errorf("EncodeSized (addressable %v) of %#v: invalid attribute %q, itemsize.Scan says %q", addr, v.Interface(), got.invalid, wantBad)
	default:
		return true
	}
	return false
}

// Items sameSized saw with one attribute holding invalid UTF-8, and with
// several.
var sizedInvalid, sizedSeveral atomic.Int64

// Attributes sized by their encoders, as EncodeSized's trace shows.
var sizedInline atomic.Int64

type sizedOutcome struct {
	outcome
	size    int
	invalid string
}

func TestDifferential(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	inv, sev := sizedInvalid.Load(), sizedSeveral.Load()
	for _, typ := range diffTypes {
		t.Run(typ.String(), func(t *testing.T) {
			g := &gen{r: rand.New(rand.NewPCG(1, uint64(len(typ.String()))))}
			for i := 0; i < n && !t.Failed(); i++ {
				checkOne(t, g, typ)
			}
		})
	}
	inv, sev = sizedInvalid.Load()-inv, sizedSeveral.Load()-sev
	t.Logf("items with invalid UTF-8: %d, with several invalid attributes: %d", inv, sev)
	if !t.Failed() && (inv < int64(n) || sev < int64(n)/10) {
		t.Errorf("the generators made too few items with invalid UTF-8 (%d) or with several invalid attributes (%d)", inv, sev)
	}
}

// TestDecodeRandomItems decodes items made of random attribute values under
// the field names of each type.
func TestDecodeRandomItems(t *testing.T) {
	for _, typ := range diffTypes {
		t.Run(typ.String(), func(t *testing.T) {
			g := &gen{r: rand.New(rand.NewPCG(2, 3))}
			fs := visibleFields(typ)
			for i := 0; i < 3000 && !t.Failed(); i++ {
				item := map[string]types.AttributeValue{}
				for _, f := range fs {
					if g.r.IntN(2) == 0 {
						name := f.Name
						if g.r.IntN(6) == 0 {
							name = strings.ToUpper(name)
						}
						item[name] = g.av()
					}
				}
				for k, av := range item {
					one := map[string]types.AttributeValue{k: av}
					sameDecode(t, one, typ, decodeCodec(one, typ))
				}
				sameDecode(t, item, typ, decodeCodec(item, typ))
			}
		})
	}
}

// FuzzCodec compares the codec with attributevalue on values and items
// grown from the fuzzer's seed, string and numbers: encoding (both
// addressable modes) and decoding of valid, damaged and random items.
//
//	go test -run '^$' -fuzz FuzzCodec ./internal/codec
func FuzzCodec(f *testing.F) {
	f.Add(uint64(1), uint8(0), "", int64(0), 0.0)
	f.Add(uint64(2), uint8(3), "2024-01-02T03:04:05Z", int64(-1), -0.5)
	f.Add(uint64(3), uint8(1), "1e400", int64(1<<62), 1e300)
	f.Add(uint64(4), uint8(8), "\u212Aelvin", int64(7), math.Inf(1))
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, s string, n int64, x float64) {
		g := &gen{r: rand.New(rand.NewPCG(seed, uint64(which))), fuzzStr: &s, fuzzInt: n, fuzzFloat: x}
		typ := diffTypes[int(which)%len(diffTypes)]
		checkOne(t, g, typ)
		// A random item under the type's attribute names.
		item := map[string]types.AttributeValue{}
		for _, f := range visibleFields(typ) {
			if g.r.IntN(3) == 0 {
				item[f.Name] = g.av()
			}
		}
		sameDecode(t, item, typ, decodeCodec(item, typ))
	})
}
