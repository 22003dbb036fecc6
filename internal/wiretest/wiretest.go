// Package wiretest makes what the direct wire path's equivalence tests
// feed both paths (internal/codec's and package wire's): random items of
// every attribute value type, DynamoDB's JSON of them as the SDK's own
// serializer writes it, other spellings of that JSON a server may send
// (\u escapes, surrogate pairs, lone surrogates, white space), response
// bodies made of it, canned and faulty HTTP transports (Faults: truncated
// bodies, CRC32 mismatches), and a count of which path decoded a client's
// responses (Paths).
package wiretest

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Entity has a field of every kind the codec decodes: the direct
// decoder's own (strings, numbers, booleans, times, lists and maps of
// strings, pointers) and those it hands to the attribute value decoders
// (sets, nested values, interfaces, the string option).
type Entity struct {
	ID     string            `dynamodbav:"ID"`
	Seq    int               `dynamodbav:"Seq"`
	S      string            `dynamodbav:"S"`
	P      *string           `dynamodbav:"P"`
	I      int               `dynamodbav:"I"`
	I64    int64             `dynamodbav:"I64"`
	U8     uint8             `dynamodbav:"U8"`
	F      float64           `dynamodbav:"F"`
	F32    float32           `dynamodbav:"F32"`
	B      bool              `dynamodbav:"B"`
	PB     *bool             `dynamodbav:"PB"`
	T      time.Time         `dynamodbav:"T"`
	Unix   time.Time         `dynamodbav:"Unix,unixtime"`
	Bin    []byte            `dynamodbav:"Bin"`
	SS     []string          `dynamodbav:"SS,stringset"`
	NS     []float64         `dynamodbav:"NS,numberset"`
	BS     [][]byte          `dynamodbav:"BS,binaryset"`
	Strs   []string          `dynamodbav:"Strs"`
	L      []any             `dynamodbav:"L"`
	M      map[string]any    `dynamodbav:"M"`
	MS     map[string]string `dynamodbav:"MS"`
	MI     map[string]int    `dynamodbav:"MI"`
	Any    any               `dynamodbav:"Any"`
	Sub    Sub               `dynamodbav:"Sub"`
	PSub   *Sub              `dynamodbav:"PSub"`
	AsStr  int               `dynamodbav:"AsStr,string"`
	Omit   string            `dynamodbav:"Omit,omitempty"`
	Folded string            // sent as "Folded", "folded" or "FOLDED"
}

// Sub is Entity's nested struct.
type Sub struct {
	A string
	N []int
	M map[string]any
	B []byte
}

// Gen draws random attribute values and items.
type Gen struct {
	R *rand.Rand
	// Mismatch is the chance that a field's attribute is of any type, not
	// one that decodes into the field.
	Mismatch float64
	// Strange is the chance that a number is text DynamoDB never sends
	// ("+1", "0x10", "Inf", "", ...).
	Strange float64
}

// New returns a Gen drawing from seed.
func New(seed uint64) *Gen {
	return &Gen{R: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Mismatch: 0.006, Strange: 0.01}
}

func (g *Gen) chance(p float64) bool { return g.R.Float64() < p }

// pieces are what strings are made of: plain text, characters JSON must
// escape, characters some encoders escape, and multi-byte and astral ones.
var pieces = []string{
	"a", "Z", "0", " ", "abc", "USER#", "#", "/", "\"", "\\", "\n", "\t", "\r", "\b", "\f",
	"\x00", "\x01", "\x1f", "\x7f", "<", ">", "&", "é", "Ñ", "ß", "ſ", "K", "\u2028", "\u2029",
	"\ufeff", "\ufffd", "😀", "𝄞", "中文", "\U0010ffff",
}

// String returns a random string, now and then long or empty, rarely
// with a byte that is not UTF-8.
func (g *Gen) String() string {
	n := g.R.IntN(12)
	switch {
	case g.chance(0.05):
		n = 0
	case g.chance(0.03):
		n = 200 + g.R.IntN(2000)
	}
	var b strings.Builder
	for range n {
		b.WriteString(pieces[g.R.IntN(len(pieces))])
	}
	if g.chance(0.01) {
		b.WriteByte(0xff)
	}
	return b.String()
}

// Name returns a random attribute name (never empty).
func (g *Gen) Name() string {
	for {
		if s := g.String(); s != "" && len(s) < 255 {
			return s
		}
	}
}

// numbers are number texts at the edges of the field types and of
// DynamoDB's range, and spellings DynamoDB normalizes away.
var numbers = []string{
	"0", "-0", "0.0", "-0.0", "1", "-1", "0.5", "-0.25", "0.0001", "1.5", "1.50", "007", "-007", "00.5",
	"1e2", "1E+2", "1E2", "1e-2", "-1.5E-3", "1E+130", "1E-130", "9.9999999999999999999999999999999999999E+125",
	"-9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999",
	"-99999999999999999999999999999999999999", "10000000000000000000000000000000000000",
	"12345678901234567890123456789012345678", "0.12345678901234567890123456789012345678",
	"127", "128", "-128", "-129", "255", "256", "65535", "65536", "2147483647", "2147483648", "-2147483649",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "3.4028235e38", "3.5e38", "1e308", "1e309",
	"4.9e-324", "1e-400", "1.7976931348623157e308", "123456789.123456789",
}

// strange are number texts DynamoDB never sends.
var strange = []string{"", "+1", "0x10", "0x1p4", "Inf", "-Inf", "NaN", "1_000", " 1", "1 ", "abc", "1e", ".5", "5.", "--1", "1e+"}

// Number returns a random number text.
func (g *Gen) Number() string {
	switch r := g.R.IntN(10); {
	case g.chance(g.Strange):
		return strange[g.R.IntN(len(strange))]
	case r < 4:
		return numbers[g.R.IntN(len(numbers))]
	case r < 7:
		return strconv.FormatInt(g.R.Int64N(2000)-1000, 10)
	case r < 9:
		return strconv.FormatInt(g.R.Int64(), 10)
	default:
		return strconv.FormatFloat(g.R.NormFloat64()*1e6, 'g', -1, 64)
	}
}

// some returns odd's text one time in ten, usual's otherwise.
func (g *Gen) some(odd, usual func() string) string {
	if g.chance(0.1) {
		return odd()
	}
	return usual()
}

func (g *Gen) int64() string { return strconv.FormatInt(g.R.Int64()-g.R.Int64(), 10) }

func (g *Gen) float() string {
	return strconv.FormatFloat(g.R.NormFloat64()*math.Pow(10, float64(g.R.IntN(20)-10)), "eEfg"[g.R.IntN(4)], -1, 64)
}

// Int returns a small integer text.
func (g *Gen) Int() string { return strconv.Itoa(g.R.IntN(200) - 100) }

// Bytes returns random bytes, now and then none.
func (g *Gen) Bytes() []byte {
	b := make([]byte, g.R.IntN(40))
	for i := range b {
		b[i] = byte(g.R.UintN(256))
	}
	return b
}

// AV returns a random attribute value of any of the ten types, nested
// at most depth deep.
func (g *Gen) AV(depth int) types.AttributeValue {
	k := g.R.IntN(10)
	if depth <= 0 && k >= 5 && k <= 6 {
		k = 0
	}
	switch k {
	case 0:
		return &types.AttributeValueMemberS{Value: g.String()}
	case 1:
		return &types.AttributeValueMemberN{Value: g.Number()}
	case 2:
		return &types.AttributeValueMemberB{Value: g.Bytes()}
	case 3:
		return &types.AttributeValueMemberBOOL{Value: g.chance(0.5)}
	case 4:
		return &types.AttributeValueMemberNULL{Value: !g.chance(0.05)}
	case 5:
		return g.List(depth-1, nil)
	case 6:
		return g.Map(depth-1, nil)
	case 7:
		return &types.AttributeValueMemberSS{Value: g.set(g.String)}
	case 8:
		return &types.AttributeValueMemberNS{Value: g.set(g.Number)}
	}
	n := 1 + g.R.IntN(4)
	if g.chance(0.02) {
		n = 0
	}
	bs := make([][]byte, n)
	for i := range bs {
		bs[i] = g.Bytes()
	}
	return &types.AttributeValueMemberBS{Value: bs}
}

// set returns one to five of one's values, rarely none (DynamoDB sends no
// empty set, but the SDK serializes one).
func (g *Gen) set(one func() string) []string {
	n := 1 + g.R.IntN(5)
	if g.chance(0.02) {
		n = 0
	}
	s := make([]string, n)
	for i := range s {
		s[i] = one()
	}
	return s
}

// List returns an L of elem's values (random ones when elem is nil).
func (g *Gen) List(depth int, elem func() types.AttributeValue) *types.AttributeValueMemberL {
	if elem == nil {
		elem = func() types.AttributeValue { return g.AV(depth) }
	}
	l := make([]types.AttributeValue, g.R.IntN(5))
	for i := range l {
		l[i] = elem()
	}
	return &types.AttributeValueMemberL{Value: l}
}

// Map returns an M of elem's values (random ones when elem is nil).
func (g *Gen) Map(depth int, elem func() types.AttributeValue) *types.AttributeValueMemberM {
	if elem == nil {
		elem = func() types.AttributeValue { return g.AV(depth) }
	}
	m := make(map[string]types.AttributeValue)
	for range g.R.IntN(5) {
		m[g.String()] = elem()
	}
	return &types.AttributeValueMemberM{Value: m}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// fieldAVs are, per attribute of Entity, a value that decodes into its
// field (most of the time).
func (g *Gen) fieldAVs() map[string]func() types.AttributeValue {
	ints := func() types.AttributeValue { return n(g.Int()) }
	str := func() types.AttributeValue { return s(g.String()) }
	sub := func() types.AttributeValue {
		m := map[string]types.AttributeValue{"A": str(), "N": g.List(0, ints), "M": g.Map(2, nil),
			"B": &types.AttributeValueMemberB{Value: g.Bytes()}}
		g.drop(m)
		return &types.AttributeValueMemberM{Value: m}
	}
	return map[string]func() types.AttributeValue{
		"ID": str, "Seq": ints, "S": str, "P": str,
		"I":   func() types.AttributeValue { return n(g.some(g.Number, g.Int)) },
		"I64": func() types.AttributeValue { return n(g.some(g.Number, g.int64)) },
		"U8":  func() types.AttributeValue { return n(strconv.Itoa(g.R.IntN(260))) },
		"F":   func() types.AttributeValue { return n(g.some(g.Number, g.float)) },
		"F32": func() types.AttributeValue { return n(g.some(g.Number, g.float)) },
		"B":   func() types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: g.chance(0.5)} },
		"PB":  func() types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: g.chance(0.5)} },
		"T":   func() types.AttributeValue { return s(g.time().Format(g.layout())) },
		"Unix": func() types.AttributeValue {
			return n(strconv.FormatInt(g.time().Unix(), 10))
		},
		"Bin":  func() types.AttributeValue { return &types.AttributeValueMemberB{Value: g.Bytes()} },
		"SS":   func() types.AttributeValue { return &types.AttributeValueMemberSS{Value: g.set(g.String)} },
		"NS":   func() types.AttributeValue { return &types.AttributeValueMemberNS{Value: g.set(g.Number)} },
		"BS":   func() types.AttributeValue { return g.AVOf(9) },
		"Strs": func() types.AttributeValue { return g.List(0, str) },
		"L":    func() types.AttributeValue { return g.List(2, nil) },
		"M":    func() types.AttributeValue { return g.Map(2, nil) },
		"MS":   func() types.AttributeValue { return g.Map(0, str) },
		"MI":   func() types.AttributeValue { return g.Map(0, ints) },
		"Any":  func() types.AttributeValue { return g.AV(3) },
		"Sub":  sub, "PSub": sub,
		"AsStr": func() types.AttributeValue { return s(g.Int()) },
		"Omit":  str, "Folded": str,
	}
}

// AVOf returns a random attribute value of type k (0 S, 1 N, 2 B, 3 BOOL,
// 4 NULL, 5 L, 6 M, 7 SS, 8 NS, 9 BS).
func (g *Gen) AVOf(k int) types.AttributeValue {
	for {
		av := g.AV(2)
		if kindOf(av) == k {
			return av
		}
	}
}

func kindOf(av types.AttributeValue) int {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return 0
	case *types.AttributeValueMemberN:
		return 1
	case *types.AttributeValueMemberB:
		return 2
	case *types.AttributeValueMemberBOOL:
		return 3
	case *types.AttributeValueMemberNULL:
		return 4
	case *types.AttributeValueMemberL:
		return 5
	case *types.AttributeValueMemberM:
		return 6
	case *types.AttributeValueMemberSS:
		return 7
	case *types.AttributeValueMemberNS:
		return 8
	}
	return 9
}

// drop removes some of m's attributes, or makes them NULL.
func (g *Gen) drop(m map[string]types.AttributeValue) {
	for k := range m {
		switch {
		case g.chance(0.15):
			delete(m, k)
		case g.chance(0.08):
			m[k] = &types.AttributeValueMemberNULL{Value: true}
		}
	}
}

func (g *Gen) time() time.Time {
	return time.Unix(g.R.Int64N(4e9)-1e9, g.R.Int64N(1e9)).In(time.FixedZone("", (g.R.IntN(48)-24)*1800))
}

// layout returns a time layout the codec reads (RFC 3339 with and
// without fractions), or now and then one it does not.
func (g *Gen) layout() string {
	switch g.R.IntN(50) {
	case 0:
		return time.RFC1123
	case 1, 2, 3, 4, 5:
		return time.RFC3339
	}
	return time.RFC3339Nano
}

// Item returns an item whose attributes are Entity's (some absent, some
// NULL, a few of another type, "Folded" now and then spelled in another
// case) and a few others, plus the attributes of keys.
func (g *Gen) Item(keys map[string]types.AttributeValue) map[string]types.AttributeValue {
	m := make(map[string]types.AttributeValue)
	for name, av := range g.fieldAVs() {
		if g.chance(g.Mismatch) {
			m[name] = g.AV(2)
			continue
		}
		m[name] = av()
	}
	g.drop(m)
	if v, ok := m["Folded"]; ok && g.chance(0.3) {
		delete(m, "Folded")
		m[[]string{"folded", "FOLDED"}[g.R.IntN(2)]] = v
	}
	for range g.R.IntN(4) {
		if k := g.Name(); !strings.EqualFold(k, "folded") {
			if _, taken := m[k]; !taken {
				m[k] = g.AV(2)
			}
		}
	}
	for k, v := range keys {
		m[k] = v
	}
	return m
}
