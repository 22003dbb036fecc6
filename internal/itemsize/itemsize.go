package itemsize

import (
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's maximum item size: 400 KB, where a KB is 1024
// bytes. An item whose [Of] is MaxItemBytes is accepted; one byte more is
// rejected.
const MaxItemBytes = 400 * 1024

// TooLargeError reports an item whose computed size is over the limit.
type TooLargeError struct {
	Size int // the item's size in bytes, as computed by Of
	Max  int // the limit it was checked against
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("singletable: item is %d bytes, over DynamoDB's %d KB limit", e.Size, e.Max/1024)
}

// Check returns a *TooLargeError if item is larger than MaxItemBytes, and
// nil otherwise.
func Check(item map[string]types.AttributeValue) error {
	if n := Of(item); n > MaxItemBytes {
		return &TooLargeError{Size: n, Max: MaxItemBytes}
	}
	return nil
}

// Of returns the size in bytes that DynamoDB assigns to item: the sum, over
// its attributes, of the attribute name's UTF-8 length and the value's size.
// It does not allocate.
func Of(item map[string]types.AttributeValue) int {
	n, _ := Scan(item)
	return n
}

// Scan returns Of(item) and, in the same pass, the name of an attribute
// whose name or string contents (at any depth) are not valid UTF-8, or ""
// when every string is valid. Callers that must refuse invalid UTF-8 and
// check the size walk the item once.
//
// When several attributes hold invalid UTF-8, the one reported is the one
// whose name is smallest in byte order ([Less]): the result does not depend
// on the map's iteration order, and an encoder that sizes attributes one at
// a time (internal/codec) can report the same one.
func Scan(item map[string]types.AttributeValue) (size int, invalidAttr string) {
	var w walker
	bad := false
	for name, v := range item {
		w.invalid = false
		size += w.str(name) + w.value(v)
		if w.invalid && (!bad || Less(name, invalidAttr)) {
			invalidAttr, bad = name, true
		}
	}
	return size, invalidAttr
}

// Less is the order in which Scan picks the invalid attribute it reports
// among several: byte-wise comparison of the names.
func Less(a, b string) bool { return a < b }

// Value returns the size of one attribute value, without a name: what
// Of counts for an attribute named "" holding v.
func Value(v types.AttributeValue) int {
	var w walker
	return w.value(v)
}

// Attr returns what Scan counts for one attribute: the size of name and v,
// and whether the name or any string in v (at any depth) is not valid
// UTF-8. Summing Attr over an item's attributes gives Scan's size.
func Attr(name string, v types.AttributeValue) (size int, invalid bool) {
	var w walker
	size = w.str(name) + w.value(v)
	return size, w.invalid
}

// ValueChecked is Value(v) and whether any string in v (at any depth) is
// not valid UTF-8.
func ValueChecked(v types.AttributeValue) (size int, invalid bool) {
	var w walker
	size = w.value(v)
	return size, w.invalid
}

// String returns the size of s as an attribute name, an S or a map key,
// and whether s is not valid UTF-8.
func String(s string) (size int, invalid bool) {
	var w walker
	size = w.str(s)
	return size, w.invalid
}

// Number returns the size of an N whose text is s.
func Number(s string) int { return numberSize(s) }

// walker sizes values and notes invalid UTF-8 on the way.
type walker struct{ invalid bool }

// value is the size of one attribute value, without its name.
func (w *walker) value(v types.AttributeValue) int {
	// Strings and numbers, most of any item, cost one comparison each.
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return w.str(s.Value)
	}
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		return numberSize(n.Value)
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return w.str(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += w.str(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := docOverhead + len(v.Value)*elemOverhead
		for _, e := range v.Value {
			n += w.value(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := docOverhead + len(v.Value)*elemOverhead
		for k, e := range v.Value {
			n += w.str(k) + w.value(e)
		}
		return n
	}
	// nil, *types.UnknownUnionMember or a type this package does not know:
	// the SDK cannot send such a value, so it adds nothing.
	return 0
}

const (
	docOverhead  = 3 // every L or M, empty or not
	elemOverhead = 1 // every element of an L or M
)

// str is the number of bytes s occupies once sent: its UTF-8 length.
// The SDK's JSON encoder replaces each byte of invalid UTF-8 with U+FFFD,
// which is 3 bytes on the server, so such bytes count as 3.
func (w *walker) str(s string) int {
	if isASCII(s) || utf8.ValidString(s) {
		return len(s)
	}
	w.invalid = true
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3
		} else {
			n += size
		}
		i += size
	}
	return n
}

// isASCII reports whether s is all ASCII, eight bytes at a time (the
// shifts compile to one load). Item strings are mostly short and ASCII,
// where this is cheaper than utf8.ValidString.
func isASCII(s string) bool {
	load64 := func(b string) uint64 {
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	load32 := func(b string) uint64 {
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
	}
	var acc uint64
	switch n := len(s); {
	case n >= 8:
		for i := 0; i+8 <= n; i += 8 {
			acc |= load64(s[i : i+8])
		}
		acc |= load64(s[n-8:]) // the tail, overlapping
	case n >= 4:
		acc = load32(s[:4]) | load32(s[n-4:])
	default:
		for i := 0; i < n; i++ {
			acc |= uint64(s[i])
		}
	}
	return acc&0x8080808080808080 == 0
}

// numberSize is the stored size of the number whose decimal text is s (see
// the package documentation): one byte of sign and exponent, one byte per
// base-100 digit between the most and the least significant non-zero
// base-100 digits, with base-100 digits aligned on the decimal point, and one
// more byte if the number is negative. Zero is 1 byte.
//
// s that is not a number (DynamoDB rejects those) counts as len(s)+1.
func numberSize(s string) int {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	// Mantissa: digits with at most one '.'. Digit k (0-based, skipping the
	// '.') has weight 10^(point-1-k+exp).
	var (
		k, point         = 0, -1
		first, last      = -1, -1 // k of the first and last non-zero digit
		sawDigit, sawExp = false, false
		exp              = 0
	)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if c != '0' {
				if first < 0 {
					first = k
				}
				last = k
			}
			k++
			sawDigit = true
			continue
		case c == '.' && point < 0:
			point = k
			continue
		case (c == 'e' || c == 'E') && sawDigit:
			sawExp = true
		default:
			return len(s) + 1
		}
		break // at the 'e': the exponent follows
	}
	if !sawDigit {
		return len(s) + 1
	}
	if point < 0 {
		point = k
	}
	if sawExp {
		i++ // the 'e'
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return len(s) + 1
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return len(s) + 1
			}
			// Only the parity of an absurd exponent matters (and DynamoDB
			// rejects it anyway): keep it bounded.
			exp = exp*10 + int(c-'0')
			if exp > 1<<20 {
				exp = 1<<20 | exp&1
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if first < 0 {
		return 1 // zero, including -0 and 0.000e5
	}
	hi := floorHalf(point - 1 - first + exp) // base-100 position of the first digit
	lo := floorHalf(point - 1 - last + exp)
	n := hi - lo + 1 + 1
	if neg {
		n++
	}
	return n
}

// floorHalf is ⌊w/2⌋ for any sign of w.
func floorHalf(w int) int {
	return w >> 1 // arithmetic shift floors
}
