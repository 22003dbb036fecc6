package codec

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// JSON reads DynamoDB's JSON wire format (a response body) in one pass,
// for the direct wire path (docs/performance.md): values are decoded
// where they are read, straight into struct fields (Plan.DecodeJSON), or,
// for the few attributes the caller keeps and the fields the fast path
// does not cover, into attribute values exactly as the SDK's deserializer
// makes them. Malformed input is an error, never a panic.
//
// Strings are copied out of the body into blocks of at most 4 KiB (the
// SDK's own deserializer does the same, with its smithy-go StringArena),
// so a string kept by the caller pins at most its block, never the
// response buffer.
type JSON struct {
	b     []byte
	i     int
	depth int
	arena strings.Builder
	slabS []types.AttributeValueMemberS
	nS    int // the size of the next slabS
	sc    scalar
}

// maxDepth bounds nesting (DynamoDB allows 32 levels of attribute values,
// two JSON levels each).
const maxDepth = 128

// arenaBlock is the size of a string block; longer strings are allocated
// alone.
const arenaBlock = 4096

// errDepth is the error of a document nested deeper than maxDepth.
var errDepth = errors.New("codec: JSON nested too deeply")

// NewJSON returns a reader of b. b is read, never kept.
func NewJSON(b []byte) *JSON { return &JSON{b: b} }

// Reset makes d read b from its start.
func (d *JSON) Reset(b []byte) { d.b, d.i, d.depth = b, 0, 0 }

// Offset is how far d has read.
func (d *JSON) Offset() int { return d.i }

// Bytes is the document d reads.
func (d *JSON) Bytes() []byte { return d.b }

func (d *JSON) errorf(format string, args ...any) error {
	return fmt.Errorf("codec: JSON at offset %d: %s", d.i, fmt.Sprintf(format, args...))
}

func (d *JSON) ws() {
	if d.i < len(d.b) && d.b[d.i] > ' ' {
		return
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// Peek returns the next byte that is not white space, 0 at the end.
func (d *JSON) Peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// Begin reads open, '{' or '['.
func (d *JSON) Begin(open byte) error {
	if d.Peek() != open {
		return d.errorf("expected %q", open)
	}
	d.i++
	d.depth++
	if d.depth > maxDepth {
		return errDepth
	}
	return nil
}

// End reads what follows the document: nothing but white space.
func (d *JSON) End() error {
	if d.Peek() != 0 {
		return d.errorf("data after the document")
	}
	return nil
}

// NextKey reads the next member's key of an object Begin opened, and the
// colon; false at the object's end (read). The key is valid until the
// next read. first is true before the first member and cleared.
func (d *JSON) NextKey(first *bool) ([]byte, bool, error) {
	if more, err := d.nextMember(first); !more || err != nil {
		return nil, false, err
	}
	key, err := d.key()
	return key, err == nil, err
}

// nextMember reads what comes before the next member of an object Begin
// opened (a comma but for the first); false at the object's end (read).
func (d *JSON) nextMember(first *bool) (bool, error) { return d.next(first, '}') }

// next reads what comes before the next member or element of an object
// or array Begin opened, which end closes; false at its end (read).
func (d *JSON) next(first *bool, end byte) (bool, error) {
	c := d.Peek()
	if c == end {
		d.i++
		d.depth--
		return false, nil
	}
	if !*first {
		if c != ',' {
			return false, d.errorf("expected ',' or %q", end)
		}
		d.i++
	}
	*first = false
	return true, nil
}

// key reads a member's key and the colon; the key is valid until the next
// read.
func (d *JSON) key() ([]byte, error) {
	raw, esc, err := d.rawString()
	if err != nil {
		return nil, err
	}
	key := raw
	if esc {
		var ok bool
		if key, ok = unquote(raw); !ok {
			return nil, d.errorf("invalid string")
		}
	}
	if d.Peek() != ':' {
		return nil, d.errorf("expected ':'")
	}
	d.i++
	return key, nil
}

// NextElem reports whether an element of an array Begin opened follows;
// false at the array's end (read).
func (d *JSON) NextElem(first *bool) (bool, error) { return d.next(first, ']') }

// rawString reads a string at d.i: its bytes between the quotes, and
// whether they hold escapes or bytes that are not plain (quotes
// included in raw when esc, for unquote).
func (d *JSON) rawString() (raw []byte, esc bool, err error) {
	d.ws()
	b, i := d.b, d.i
	if i >= len(b) || b[i] != '"' {
		return nil, false, d.errorf("expected a string")
	}
	i++
	start := i
	for {
		if i = plainEnd(b, i); i >= len(b) {
			return nil, false, d.errorf("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			if esc {
				return b[start-1 : i+1], true, nil
			}
			return b[start:i], false, nil
		case c == '\\': // a valid escape, even in a string that is skipped
			esc = true
			switch {
			case i+1 < len(b) && validEscape[b[i+1]]:
				i += 2
			case i+1 < len(b) && b[i+1] == 'u' && getu4(b[i:]) >= 0:
				i += 6
			default:
				return nil, false, d.errorf("invalid escape in a string")
			}
		case c < ' ':
			return nil, false, d.errorf("control character in a string")
		default: // not ASCII: unquote checks the UTF-8
			esc = true
			i++
		}
	}
}

// plainEnd is the index of the first byte of b from i on that is not
// plain (see plain), len(b) if none: 8 bytes at a time, where the lowest
// mark of stops is the first such byte.
func plainEnd(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := stops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// stops marks (bit 7 set) the bytes of v that are not plain: controls,
// quotes, backslashes, not ASCII. A borrow only sets bits above a true
// mark.
func stops(v uint64) uint64 {
	q, bs := v^(loBits*'"'), v^(loBits*'\\')
	return ((v - loBits*' ') | v | (q-loBits)&^q | (bs-loBits)&^bs) & hiBits
}

// hasByte marks (bit 7 set) the bytes of v that are c.
func hasByte(v uint64, c byte) uint64 {
	x := v ^ (loBits * uint64(c))
	return (x - loBits) & ^x & hiBits
}

// validEscape marks the bytes that may follow a backslash but u.
var validEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// plain marks the bytes a string holds as they are: ASCII, not a control
// character, a quote or a backslash.
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	loBits = uint64(0x0101010101010101)
	hiBits = uint64(0x8080808080808080)
)

// String reads a string value, copied.
func (d *JSON) String() (string, error) {
	raw, esc, err := d.rawString()
	if err != nil {
		return "", err
	}
	if esc {
		var ok bool
		if raw, ok = unquote(raw); !ok {
			return "", d.errorf("invalid string")
		}
	}
	return d.copyString(raw), nil
}

// copyString copies b into the current block (see JSON).
func (d *JSON) copyString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if d.arena.Cap()-d.arena.Len() < len(b) {
		// A block no larger than what is left to read (a small response's
		// strings take a small block), and not zeroed (strings.Builder).
		d.arena = strings.Builder{}
		d.arena.Grow(min(arenaBlock, len(b)+len(d.b)-d.i))
	}
	off := d.arena.Len()
	d.arena.Write(b)
	return d.arena.String()[off:]
}

// literal reads one of true, false, null.
func (d *JSON) literal() (byte, error) {
	d.ws()
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return lit[0], nil
		}
	}
	return 0, d.errorf("expected true, false or null")
}

// Bool reads true or false.
func (d *JSON) Bool() (bool, error) {
	c, err := d.literal()
	if err != nil || c == 'n' {
		return false, errors.Join(err, d.errorf("expected a boolean"))
	}
	return c == 't', nil
}

// number reads a JSON number.
func (d *JSON) number() error {
	d.ws()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0': // no leading zeros
		if d.i++; d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			return d.errorf("invalid number")
		}
	case digits() == 0:
		return d.errorf("expected a value")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return d.errorf("invalid number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return d.errorf("invalid number")
		}
	}
	if d.i == start {
		return d.errorf("expected a value")
	}
	return nil
}

// Skip reads a value of any kind.
func (d *JSON) Skip() error {
	switch d.Peek() {
	case '{':
		if d.skipScalar() {
			return nil
		}
		return d.Object(func([]byte) error { return d.Skip() })
	case '[':
		return d.Array(func(int) error { return d.Skip() })
	case '"':
		_, _, err := d.rawString()
		return err
	case 't', 'f', 'n':
		_, err := d.literal()
		return err
	}
	return d.number()
}

// Object reads an object, each member with one, given its key (valid
// until the next read).
func (d *JSON) Object(one func(key []byte) error) error {
	if err := d.Begin('{'); err != nil {
		return err
	}
	for first := true; ; {
		k, ok, err := d.NextKey(&first)
		if err != nil || !ok {
			return err
		}
		if err := one(k); err != nil {
			return err
		}
	}
}

// skipAV reads an attribute value as AV does, failing where AV fails,
// without making it.
func (d *JSON) skipAV() error {
	kind, err := d.avKind()
	if err != nil {
		return err
	}
	switch kind {
	case "S", "N":
		err = d.checkString()
	case "B":
		_, err = d.binary()
	case "BOOL", "NULL":
		_, err = d.Bool()
	case "SS", "NS":
		err = d.Array(func(int) error { return d.checkString() })
	case "BS":
		err = d.Array(func(int) error { _, err := d.binary(); return err })
	case "L":
		err = d.Array(func(int) error { return d.skipAV() })
	default: // M
		err = d.Object(func([]byte) error { return d.skipAV() })
	}
	if err != nil {
		return err
	}
	return d.avEnd()
}

// checkString reads a string as String does, without copying it.
func (d *JSON) checkString() error {
	raw, esc, err := d.rawString()
	if err == nil && esc {
		if _, ok := unquote(raw); !ok {
			return d.errorf("invalid string")
		}
	}
	return err
}

// skipScalar skips an attribute value {"S":"..."} or {"N":"..."}, as Skip
// would; false (d unchanged) for anything else.
func (d *JSON) skipScalar() bool {
	i, depth := d.i, d.depth
	if kind, err := d.avKind(); err == nil && (kind == "S" || kind == "N") {
		if _, _, err := d.rawString(); err == nil && d.avEnd() == nil {
			return true
		}
	}
	d.i, d.depth = i, depth
	return false
}

// Raw reads a value of any kind and returns its text.
func (d *JSON) Raw() ([]byte, error) {
	d.ws()
	start := d.i
	if err := d.Skip(); err != nil {
		return nil, err
	}
	return d.b[start:d.i], nil
}

// Item reads an item (an object of attribute values) in full.
func (d *JSON) Item() (map[string]types.AttributeValue, error) {
	m := make(map[string]types.AttributeValue)
	err := d.Object(func(k []byte) error {
		name := d.copyString(k)
		av, err := d.AV()
		m[name] = av
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// avKind reads the opening of an attribute value, {"<kind>":, and
// returns the kind.
func (d *JSON) avKind() (string, error) {
	if err := d.Begin('{'); err != nil {
		return "", err
	}
	// The common case: {"S": without white space or escapes.
	if b := d.b[d.i:]; len(b) >= 4 && b[0] == '"' {
		var k string
		switch {
		case b[2] == '"' && b[3] == ':':
			switch b[1] {
			case 'S':
				k = "S"
			case 'N':
				k = "N"
			case 'L':
				k = "L"
			case 'M':
				k = "M"
			case 'B':
				k = "B"
			}
		case len(b) >= 5 && b[3] == '"' && b[4] == ':':
			switch string(b[1:3]) {
			case "SS":
				k = "SS"
			case "NS":
				k = "NS"
			case "BS":
				k = "BS"
			}
		}
		if k != "" {
			d.i += len(k) + 3
			return k, nil
		}
	}
	first := true
	k, ok, err := d.NextKey(&first)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", d.errorf("empty attribute value")
	}
	switch string(k) {
	case "S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M":
		return string(k), nil // constant strings: no allocation
	}
	return "", d.errorf("unknown attribute value type %q", k)
}

// avEnd reads the closing brace of an attribute value.
func (d *JSON) avEnd() error {
	if d.Peek() != '}' {
		return d.errorf("attribute value with more than one member")
	}
	d.i++
	d.depth--
	return nil
}

// AV reads one attribute value, as the SDK's deserializer makes it.
func (d *JSON) AV() (types.AttributeValue, error) {
	kind, err := d.avKind()
	if err != nil {
		return nil, err
	}
	av, err := d.avBody(kind)
	if err != nil {
		return nil, err
	}
	return av, d.avEnd()
}

func (d *JSON) avBody(kind string) (types.AttributeValue, error) {
	switch kind {
	case "S":
		s, err := d.String()
		return d.newS(s), err
	case "N":
		s, err := d.String()
		return &types.AttributeValueMemberN{Value: s}, err
	case "B":
		b, err := d.binary()
		return &types.AttributeValueMemberB{Value: b}, err
	case "BOOL":
		b, err := d.Bool()
		return &types.AttributeValueMemberBOOL{Value: b}, err
	case "NULL":
		b, err := d.Bool()
		return &types.AttributeValueMemberNULL{Value: b}, err
	case "SS", "NS":
		ss, err := d.strings()
		if kind == "SS" {
			return &types.AttributeValueMemberSS{Value: ss}, err
		}
		return &types.AttributeValueMemberNS{Value: ss}, err
	case "BS":
		var bs [][]byte
		err := d.Array(func(int) error {
			b, err := d.binary()
			bs = append(bs, b)
			return err
		})
		if bs == nil && err == nil {
			bs = [][]byte{}
		}
		return &types.AttributeValueMemberBS{Value: bs}, err
	case "L":
		l := []types.AttributeValue{}
		err := d.Array(func(int) error {
			av, err := d.AV()
			l = append(l, av)
			return err
		})
		return &types.AttributeValueMemberL{Value: l}, err
	}
	m, err := d.Item()
	return &types.AttributeValueMemberM{Value: m}, err
}

// newS returns an S from a block of them (one allocation for up to 32:
// 4, then twice as many each time).
func (d *JSON) newS(v string) *types.AttributeValueMemberS {
	if len(d.slabS) == 0 {
		d.nS = min(32, max(4, 2*d.nS))
		d.slabS = make([]types.AttributeValueMemberS, d.nS)
	}
	s := &d.slabS[0]
	d.slabS = d.slabS[1:]
	s.Value = v
	return s
}

// Array reads an array, each element with one (given its index).
func (d *JSON) Array(one func(i int) error) error {
	if err := d.Begin('['); err != nil {
		return err
	}
	for i, first := 0, true; ; i++ {
		ok, err := d.NextElem(&first)
		if err != nil || !ok {
			return err
		}
		if err := one(i); err != nil {
			return err
		}
	}
}

func (d *JSON) strings() ([]string, error) {
	ss := []string{}
	err := d.Array(func(int) error {
		s, err := d.String()
		ss = append(ss, s)
		return err
	})
	return ss, err
}

// binary reads a base64 string.
func (d *JSON) binary() ([]byte, error) {
	raw, esc, err := d.rawString()
	if err != nil {
		return nil, err
	}
	if esc {
		var ok bool
		if raw, ok = unquote(raw); !ok {
			return nil, d.errorf("invalid string")
		}
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(b, raw)
	if err != nil {
		return nil, d.errorf("invalid base64: %v", err)
	}
	return b[:n], nil
}

// scalar is where DecodeJSON reads a scalar attribute value without
// allocating it: the fast decoders never keep the value itself.
type scalar struct {
	s    types.AttributeValueMemberS
	n    types.AttributeValueMemberN
	b    types.AttributeValueMemberBOOL
	null types.AttributeValueMemberNULL
}

// scalarAV reads an attribute value: S, N, BOOL and NULL into sc (their
// strings copied), any other fresh; fresh reports which.
func (d *JSON) scalarAV(sc *scalar) (av types.AttributeValue, fresh bool, err error) {
	kind, err := d.avKind()
	if err != nil {
		return nil, false, err
	}
	switch kind {
	case "S":
		sc.s.Value, err = d.String()
		av = &sc.s
	case "N":
		sc.n.Value, err = d.String()
		av = &sc.n
	case "BOOL":
		sc.b.Value, err = d.Bool()
		av = &sc.b
	case "NULL":
		sc.null.Value, err = d.Bool()
		av = &sc.null
	default:
		av, err = d.avBody(kind)
		fresh = true
	}
	if err != nil {
		return nil, false, err
	}
	return av, fresh, d.avEnd()
}

// own returns av, read by scalarAV into sc, as a value of its own.
func own(av types.AttributeValue, fresh bool) types.AttributeValue {
	if fresh {
		return av
	}
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}
	}
	return av
}

// unquote is encoding/json's unquoteBytes (as the SDK's deserializer
// copies it): s with its quotes, escapes resolved, invalid UTF-8 and lone
// surrogates as U+FFFD.
func unquote(s []byte) (t []byte, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return
	}
	s = s[1 : len(s)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}
	b := make([]byte, len(s)+2*utf8.UTFMax)
	w := copy(b, s[0:r])
	for r < len(s) {
		if w >= len(b)-2*utf8.UTFMax {
			nb := make([]byte, (len(b)+utf8.UTFMax)*2)
			copy(nb, b[0:w])
			b = nb
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return
			}
			switch s[r] {
			default:
				return
			case '"', '\\', '/', '\'', 'b', 'f', 'n', 'r', 't':
				b[w] = unescaped[s[r]]
				r++
				w++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						w += utf8.EncodeRune(b[w:], dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				w += utf8.EncodeRune(b[w:], rr)
			}
		case c == '"', c < ' ':
			return
		case c < utf8.RuneSelf:
			b[w] = c
			r++
			w++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			w += utf8.EncodeRune(b[w:], rr)
		}
	}
	return b[0:w], true
}

// unescaped is the byte each one-letter escape stands for.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value,
// or it returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringsFast reads a list whose elements are all S, N or NULL values as
// decodeStrings decodes it into a nil []string; false (d unchanged) for
// any other value.
func (d *JSON) stringsFast(sp *[]string) bool {
	i, depth := d.i, d.depth
	var buf [16]string
	ss := buf[:0]
	err := d.Array(func(int) error {
		s, ok := d.stringish()
		if !ok {
			return errNotFast
		}
		ss = append(ss, s)
		return nil
	})
	if err != nil {
		d.i, d.depth = i, depth
		return false
	}
	*sp = append(make([]string, 0, len(ss)), ss...)
	return true
}

// stringMapFast is stringsFast for an M into a nil map[string]string.
func (d *JSON) stringMapFast(mp *map[string]string) bool {
	i, depth := d.i, d.depth
	m := make(map[string]string)
	err := d.Object(func(k []byte) error {
		key := d.copyString(k)
		s, ok := d.stringish()
		if !ok {
			return errNotFast
		}
		m[key] = s
		return nil
	})
	if err != nil {
		d.i, d.depth = i, depth
		return false
	}
	*mp = m
	return true
}

// errNotFast ends a fast read that met a value it does not handle.
var errNotFast = errors.New("codec: not a fast value")

// stringish reads an attribute value that stringish accepts.
func (d *JSON) stringish() (string, bool) {
	if b := d.b[d.i:]; len(b) >= 8 && b[0] == '{' && b[1] == '"' && (b[2] == 'S' || b[2] == 'N') && b[3] == '"' && b[4] == ':' { // compact
		i := d.i
		d.i += 5
		if raw, esc, err := d.rawString(); err == nil && !esc && d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return d.copyString(raw), true
		}
		d.i = i
	}
	kind, err := d.avKind()
	if err != nil {
		return "", false
	}
	var s string
	switch kind {
	case "S", "N":
		s, err = d.String()
	case "NULL":
		_, err = d.Bool()
	default:
		return "", false
	}
	return s, err == nil && d.avEnd() == nil
}
