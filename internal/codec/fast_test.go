package codec

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/benchfix"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// Common shapes must be handled by the plans themselves, never delegated.
type common struct {
	Item
	S    string
	I    int
	U    uint16
	F    float32
	B    bool
	T    time.Time
	TU   time.Time `dynamodbav:",unixtime"`
	TP   *time.Time
	Bs   []byte
	SL   []string `dynamodbav:",omitempty"`
	SS   []string `dynamodbav:",stringset"`
	NS   []int    `dynamodbav:",numberset"`
	BS   [][]byte
	M    map[string]string
	MI   map[string]int
	MK   map[int64]string
	MA   map[string]any
	A    any
	AL   []any
	P    *int
	PP   **string
	In   Inner
	InL  []Inner
	InP  []*Inner
	Lv   Level
	Mar  Marsh
	MarP *Marsh
	UT   attributevalue.UnixTime
	N    attributevalue.Number
	MT   MyTime
	Tr   *Tree
}

func TestCommonShapesAreCompiled(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(7, 7))}
	typ := reflect.TypeFor[common]()
	for i := 0; i < 500; i++ {
		v := g.value(typ)
		// Interfaces holding values attributevalue would treat specially
		// (pointer marshalers seen unaddressable) may be delegated: clear.
		c := v.Addr().Interface().(*common)
		c.A, c.AL, c.MA = "x", []any{1.5, "y", nil, map[string]any{"k": true}}, map[string]any{"a": []any{"b"}}
		before := fallbacks.Load()
		item, err := For(typ).Encode(v, 0)
		if err != nil {
			continue
		}
		if n := fallbacks.Load() - before; n != 0 {
			t.Fatalf("encoding %#v delegated %d values to attributevalue", c, n)
		}
		before = fallbacks.Load()
		out := reflect.New(typ).Elem()
		if err := For(typ).Decode(item, out); err != nil {
			// Some values do not survive attributevalue's own round trip
			// (float32 extremes); the differential tests cover that.
			if attributevalue.UnmarshalMap(item, reflect.New(typ).Interface()) == nil {
				t.Fatal(err)
			}
			continue
		}
		if n := fallbacks.Load() - before; n != 0 {
			t.Fatalf("decoding %s delegated %d values to attributevalue", dump(item), n)
		}
	}
}

func TestRecursiveTypesAreCompiled(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(8, 8))}
	for _, typ := range []reflect.Type{reflect.TypeFor[Recs](), reflect.TypeFor[Tree]()} {
		for i := 0; i < 200; i++ {
			v := g.value(typ)
			before := fallbacks.Load()
			item, err := For(typ).Encode(v, 0)
			if err != nil {
				continue // an empty map key: attributevalue's error
			}
			if err := For(typ).Decode(item, reflect.New(typ).Elem()); err != nil {
				t.Fatal(err)
			}
			if n := fallbacks.Load() - before; n != 0 {
				t.Fatalf("%s: %d values delegated", typ, n)
			}
		}
	}
}

// Plans of structs made of fast shapes only are flat: Unmarshal decodes them
// without reflection and without its target escaping.
func TestFlatPlans(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Flat](), reflect.TypeFor[Item](), reflect.TypeFor[benchfix.Profile]()} {
		if !For(typ).flat {
			t.Errorf("the plan of %s is not flat", typ)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Inner](), reflect.TypeFor[Big](), reflect.TypeFor[SelfMarsh](), reflect.TypeFor[UnexpPtrEmbed]()} {
		if For(typ).flat {
			t.Errorf("the plan of %s is flat", typ)
		}
	}
	p := benchfix.Sample(3)
	item := benchfix.HandEncode(&p)
	// Only the decoded values allocate (Tags, Attrs, Manager), not out.
	n := testing.AllocsPerRun(100, func() {
		var out benchfix.Profile
		if err := Unmarshal(item, &out); err != nil {
			t.Fatal(err)
		}
	})
	if n > 4 {
		t.Errorf("Unmarshal of a flat struct: %v allocations, want at most 4", n)
	}
}

// Unmarshal decodes non-flat targets (and non-struct ones) into a copy of
// *out: the outcome must still be attributevalue's, also into a target that
// already holds values.
func TestUnmarshalIntoValues(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(9, 9))}
	// same runs attributevalue on fresh starting values until its outcome
	// is the one Unmarshal had: with keys equal but for case, it depends
	// on the order it meets them in (see sameDecode).
	same := func(name string, got any, errC error, fresh func() any, item map[string]types.AttributeValue) {
		t.Helper()
		var want any
		var errA error
		for i := 0; i < 200; i++ {
			want = fresh()
			errA = attributevalue.UnmarshalMap(item, want)
			if (errA != nil) == (errC != nil) && (errA != nil || reflect.DeepEqual(want, got)) {
				return
			}
		}
		t.Fatalf("%s: decoding %s: attributevalue %#v (error %v), Unmarshal %#v (error %v)", name, dump(item), want, errA, got, errC)
	}
	for i := 0; i < 500; i++ {
		seed := g.r.Uint64()
		inner := func() any {
			return (&gen{r: rand.New(rand.NewPCG(seed, 1))}).value(reflect.TypeFor[Inner]()).Addr().Interface()
		}
		item, err := attributevalue.MarshalMap(g.value(reflect.TypeFor[Inner]()).Interface())
		if err != nil {
			continue
		}
		if i%3 == 0 {
			item = g.mutate(item, reflect.TypeFor[Inner]())
		}
		c := inner().(*Inner)
		same("Inner", c, Unmarshal(item, c), inner, item)

		flat := func() any { return &Flat{S: "s", I8: 3, L: []string{"x", "y", "z"}} }
		f := flat().(*Flat)
		same("Flat", f, Unmarshal(item, f), flat, item)
		f = flat().(*Flat)
		same("Flat in place", f, UnmarshalInPlace(item, f), flat, item)

		mp := func() any { return &map[string]any{"old": 1.0} }
		m := mp().(*map[string]any)
		same("map", m, Unmarshal(item, m), mp, item)
	}
}

// TestEncodeSizedInline: the attributes of a typical item (benchfix.Profile:
// strings, integers, a float, a bool, times, []string, map[string]string,
// *string), also nil or empty, are sized by their encoders, none by walking
// the value afterwards; and the result is itemsize's.
func TestEncodeSizedInline(t *testing.T) {
	p := benchfix.Sample(3)
	empty := benchfix.Profile{}
	bad := benchfix.Sample(4)
	bad.Bio, bad.Attrs = "x\xff", map[string]string{"k\xfe": "v"}
	for _, v := range []benchfix.Profile{p, empty, bad} {
		var trace []attrSized
		item, size, invalid, err := For(reflect.TypeFor[benchfix.Profile]()).encodeSized(reflect.ValueOf(&v).Elem(), 0, &trace, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(trace) != len(item) {
			t.Fatalf("trace has %d attributes, the item %d", len(trace), len(item))
		}
		for _, a := range trace {
			if !a.inline {
				t.Errorf("attribute %s was sized after encoding", a.name)
			}
		}
		if wantSize, wantBad := itemsize.Scan(item); size != wantSize || invalid != wantBad {
			t.Errorf("EncodeSized: %d, %q; itemsize.Scan: %d, %q", size, invalid, wantSize, wantBad)
		}
	}
}

// TestEncodeFastShapes: the fields of typical items are all encoded by
// encodeFast, and the fields it must leave to the compiled encoders (for
// tag options it does not handle, Marshalers, number strings, sets, fields
// behind embedded pointers) are.
func TestEncodeFastShapes(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[benchfix.Profile](), reflect.TypeFor[Flat](), reflect.TypeFor[Item]()} {
		for _, addr := range []bool{false, true} {
			for _, f := range planFor(typ, addr).fields {
				if f.ekind == fkNone {
					t.Errorf("%s.%s (addressable %v) is not encoded by encodeFast", typ, f.name, addr)
				}
			}
		}
	}
	slow := map[string]bool{
		"SON": true, "JN": true, "PMS": true, "UON": true, "TON": true, "LE": true, "LS": true, "LNS": true,
		"MTK": true, "A": true, "AN": true, "A0": true, "AA": true,
		"Pad": true, "In": true, "P1": true, "Shadow": true, "Deep2": true,
	}
	for _, addr := range []bool{false, true} {
		for _, f := range planFor(reflect.TypeFor[FastEnc](), addr).fields {
			if got := f.ekind == fkNone; got != slow[f.name] {
				t.Errorf("FastEnc.%s (addressable %v): left to the compiled encoder %v, want %v", f.name, addr, got, slow[f.name])
			}
		}
	}
}

// encodeFast takes its values from the same allocation blocks as the
// compiled encoders: encoding an addressable value allocates as much as
// encoding one that is not. (The state is made afresh, outside the pool,
// which the race detector empties at random.)
func TestEncodeFastAllocs(t *testing.T) {
	p := benchfix.Sample(2)
	plan := For(reflect.TypeFor[benchfix.Profile]())
	for _, sized := range []bool{false, true} {
		allocs := func(v reflect.Value) float64 {
			return testing.AllocsPerRun(100, func() {
				st := &encState{sHint: plan.sHint, nHint: plan.nHint, sizing: sized}
				if _, err := plan.encodeFields(st, v, 3, sized); err != nil {
					t.Fatal(err)
				}
				st.resolve()
			})
		}
		fast, slow := allocs(reflect.ValueOf(&p).Elem()), allocs(reflect.ValueOf(p))
		if fast != slow {
			t.Errorf("encodeFields (sizing %v): %v allocations with encodeFast, %v without", sized, fast, slow)
		}
	}
}
