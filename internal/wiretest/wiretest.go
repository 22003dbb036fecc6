// Package wiretest makes what the direct wire path's equivalence tests
// feed both paths (internal/codec's and package wire's): random items of
// every attribute value type, DynamoDB's JSON of them as the SDK's own
// serializer writes it, other spellings of that JSON a server may send
// (\u escapes, surrogate pairs, lone surrogates, white space), response
// bodies made of it, and a canned HTTP transport that answers with them.
package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
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

// SDKJSON returns each item as the SDK's own JSON serializer writes it
// (each item's object, from a BatchWriteItem request body).
func SDKJSON(items []map[string]types.AttributeValue) ([][]byte, error) {
	var body []byte
	c := Client(RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		return Respond(200, []byte(`{}`)), nil
	}))
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	_, err := c.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": reqs}})
	if err != nil {
		return nil, err
	}
	var in struct {
		RequestItems map[string][]struct {
			PutRequest struct{ Item json.RawMessage }
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("%w: %s", err, body)
	}
	out := make([][]byte, len(items))
	for i, r := range in.RequestItems["t"] {
		out[i] = r.PutRequest.Item
	}
	return out, nil
}

// Spelling says how Respell spells a document: the chance of each
// character of a string being written as a \u escape (a surrogate pair
// past U+FFFF), and of each short escape (\n, \") as its \u form; the
// chance of a lone surrogate (or a reversed pair) put into a string
// value of an S or SS (never a member name or a binary's base64, nor
// with Anywhere false a number's or a Count's text); the chance of white space
// after each structural character.
type Spelling struct {
	Escape, Lone, Space float64
	Anywhere            bool
}

// Respell returns the JSON document b spelled as sp says, standing for
// the same values except where a lone surrogate was put in a string.
func (g *Gen) Respell(b []byte, sp Spelling) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	var stack []byte
	key := false
	var member []byte // the last member name, raw
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '"':
			j := stringEnd(b, i)
			lone := 0.0
			if !key && (sp.Anywhere && string(member) != "B" && string(member) != "BS" || string(member) == "S" || string(member) == "SS") {
				lone = sp.Lone
			}
			out = g.respellString(out, b[i+1:j], sp.Escape, lone)
			if key {
				member = b[i+1 : j]
			}
			i = j + 1
			continue
		case '{', '[':
			stack = append(stack, c)
			key = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
			key = false
		}
		out = append(out, c)
		i++
		if strings.IndexByte("{}[],:", c) >= 0 && g.chance(sp.Space) {
			out = append(out, " \n\t\r"[g.R.IntN(4)])
		}
	}
	return out
}

// stringEnd returns the index of the quote that ends the string starting
// at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b) - 1
}

// shortEscapes are JSON's two-character escapes and what they stand for.
var shortEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (g *Gen) respellString(out, raw []byte, escape, lone float64) []byte {
	out = append(out, '"')
	for i := 0; i < len(raw); {
		if g.chance(lone) {
			out = g.lone(out)
		}
		if raw[i] == '\\' {
			if r, ok := shortEscapes[raw[i+1]]; ok && g.chance(escape) {
				out = fmt.Appendf(out, `\u%04x`, r)
				i += 2
				continue
			}
			n := 2
			if raw[i+1] == 'u' {
				n = 6
			}
			out = append(out, raw[i:i+n]...)
			i += n
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		switch {
		case r == utf8.RuneError && size == 1, !g.chance(escape):
			out = append(out, raw[i:i+size]...)
		case r > 0xffff:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case r == '/' && g.chance(0.5):
			out = append(out, `\/`...)
		default:
			out = fmt.Appendf(out, `\u%04X`, r)
		}
		i += size
	}
	if g.chance(lone) {
		out = g.lone(out)
	}
	return append(out, '"')
}

// lone appends a surrogate escape that is not a pair: alone, reversed, or
// a high one followed by an escape of a letter.
func (g *Gen) lone(out []byte) []byte {
	switch g.R.IntN(4) {
	case 0:
		return fmt.Appendf(out, `\u%04x`, 0xd800+g.R.IntN(0x400))
	case 1:
		return fmt.Appendf(out, `\u%04x`, 0xdc00+g.R.IntN(0x400))
	case 2:
		return fmt.Appendf(out, `\udc00\ud800`)
	}
	return fmt.Appendf(out, `\ud83d\u0041`)
}

// Member is a member of a response body: its name and its JSON.
type Member struct {
	Name string
	JSON []byte
}

// Body returns a response body of members in a random order, items (each
// an item's JSON) being the array member named items (none when items is
// "").
func (g *Gen) Body(items string, its [][]byte, more ...Member) []byte {
	if items != "" {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, it := range its {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it)
		}
		b.WriteByte(']')
		more = append(more, Member{items, b.Bytes()})
	}
	g.R.Shuffle(len(more), func(i, j int) { more[i], more[j] = more[j], more[i] })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range more {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", m.Name)
		b.Write(m.JSON)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Counts are a Query or Scan body's Count and ScannedCount members for n
// items.
func Counts(n int) []Member {
	return []Member{{"Count", []byte(strconv.Itoa(n))}, {"ScannedCount", []byte(strconv.Itoa(n + 3))}}
}

// RoundTripFunc is an http.RoundTripper.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Respond returns a response of status with body and body's CRC32 header,
// as DynamoDB sends it.
func Respond(status int, body []byte) *http.Response {
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"},
		"X-Amz-Crc32": {strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10)}}
	return &http.Response{StatusCode: status, Header: h, ContentLength: int64(len(body)),
		Body: io.NopCloser(bytes.NewReader(body))}
}

// Canned answers each operation (by X-Amz-Target) with a fixed body, and
// records the request bodies.
type Canned struct {
	mu     sync.Mutex
	bodies map[string][]byte
	sent   []Request
}

// Request is a request Canned answered.
type Request struct {
	Op   string // GetItem, Query, ...
	Body []byte
}

// NewCanned returns a Canned answering with bodies (operation → body).
func NewCanned(bodies map[string][]byte) *Canned { return &Canned{bodies: bodies} }

// Set makes c answer op with body.
func (c *Canned) Set(op string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies[op] = body
}

// Take returns the requests sent since the last Take.
func (c *Canned) Take() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sent
	c.sent = nil
	return s
}

// RoundTrip answers r.
func (c *Canned) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		r.Body.Close()
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, Request{op, body})
	b, ok := c.bodies[op]
	if !ok {
		return nil, fmt.Errorf("canned: no response for %q", op)
	}
	return Respond(200, b), nil
}

// Client returns a *dynamodb.Client sending through rt, unsigned, with
// optFns applied last (wire.Enable).
func Client(rt http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
		Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: rt}}, optFns...)
}

// Equal is reflect.DeepEqual but for NaN, which equals NaN here (a
// number text "NaN" decodes to it on both paths).
func Equal(a, b any) bool { return equal(reflect.ValueOf(a), reflect.ValueOf(b)) }

func equal(a, b reflect.Value) bool {
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
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !equal(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == reflect.TypeFor[time.Time]() {
			return reflect.DeepEqual(a.Interface(), b.Interface())
		}
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// Paths counts which path a client's responses with items took: Direct,
// decoded by the direct wire path (the output the caller's middleware and
// the caller get has no items), or SDK, through the SDK's deserializer
// (the output has them). Add it to a client with Option.
type Paths struct {
	Direct, SDK atomic.Int64
}

// Reset sets both counts to 0.
func (p *Paths) Reset() { p.Direct.Store(0); p.SDK.Store(0) }

// Counts returns the direct and SDK counts.
func (p *Paths) Counts() (direct, sdk int64) { return p.Direct.Load(), p.SDK.Load() }

type pathKey struct{}

// Option is a dynamodb.Options option that makes the client count into p:
// its HTTP client notes whether each response body holds an item, a
// middleware whether the call's output does.
func (p *Paths) Option(o *dynamodb.Options) {
	o.HTTPClient = peeking{o.HTTPClient}
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("wiretest.Paths", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			var body atomic.Bool
			out, md, err := next.HandleInitialize(context.WithValue(ctx, pathKey{}, &body), in)
			switch {
			case err != nil || !body.Load():
			case OutputItems(out.Result) > 0:
				p.SDK.Add(1)
			default:
				p.Direct.Add(1)
			}
			return out, md, err
		}), middleware.Before)
	})
}

// peeking is an HTTP client that notes, in its request's context, whether
// a response body holds an item.
type peeking struct{ next dynamodb.HTTPClient }

func (c peeking) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(r)
	mark, _ := r.Context().Value(pathKey{}).(*atomic.Bool)
	if err != nil || mark == nil || resp.Body == nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil { // the same bytes, then the same error
		resp.Body = io.NopCloser(io.MultiReader(resp.Body, failing{err}))
	}
	mark.Store(BodyItems(b))
	return resp, nil
}

// failing is a reader that fails with err.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }

// BodyItems reports whether a response body holds an item (Items, Item,
// or Responses of BatchGetItem or TransactGetItems).
func BodyItems(b []byte) bool {
	var r struct {
		Items     []json.RawMessage
		Item      map[string]json.RawMessage
		Responses json.RawMessage
	}
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	if len(r.Items) > 0 || len(r.Item) > 0 {
		return true
	}
	var batch map[string][]json.RawMessage
	if json.Unmarshal(r.Responses, &batch) == nil {
		for _, its := range batch {
			if len(its) > 0 {
				return true
			}
		}
	}
	var tx []struct{ Item map[string]json.RawMessage }
	if json.Unmarshal(r.Responses, &tx) == nil {
		for _, it := range tx {
			if len(it.Item) > 0 {
				return true
			}
		}
	}
	return false
}

// OutputItems is the number of items an operation's output holds.
func OutputItems(out any) int {
	n := 0
	switch o := out.(type) {
	case *dynamodb.QueryOutput:
		n = len(o.Items)
	case *dynamodb.ScanOutput:
		n = len(o.Items)
	case *dynamodb.GetItemOutput:
		n = len(o.Item)
	case *dynamodb.BatchGetItemOutput:
		for _, its := range o.Responses {
			n += len(its)
		}
	case *dynamodb.TransactGetItemsOutput:
		for _, r := range o.Responses {
			n += len(r.Item)
		}
	}
	return n
}
