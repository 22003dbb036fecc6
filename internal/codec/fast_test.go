package codec

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
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
