package codec

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// InvalidError reports an attribute value DynamoDB would refuse, or for
// invalid UTF-8 silently alter (the SDK sends U+FFFD for each bad byte).
// It names the attribute and the reason, never the value: error texts end
// up in logs.
type InvalidError struct {
	// Attr is the item's top-level attribute holding the value, "" when
	// the value was checked on its own (see [Check]).
	Attr   string
	Reason string
}

// Error names the attribute and the reason.
func (e *InvalidError) Error() string {
	if e.Attr == "" {
		return "codec: " + e.Reason
	}
	return "codec: attribute " + e.Attr + ": " + e.Reason
}

// Why a value is refused. DynamoDB Local 3.3.1 answers these with a
// ValidationException (and the duplicate string set's message quotes the
// members).
const (
	reasonUTF8      = "string is not valid UTF-8 (DynamoDB would store U+FFFD instead)"
	reasonNotNumber = "number is not a decimal number (NaN and infinities cannot be stored)"
	reasonDigits    = "number has more than 38 significant digits"
	reasonHuge      = "number's magnitude is over 9.9999999999999999999999999999999999999E+125"
	reasonTiny      = "number's magnitude is under 1E-130 (and not 0)"
	reasonDupSS     = "string set has duplicate members"
	reasonDupNS     = "number set has duplicate members (numerically equal)"
	reasonDupBS     = "binary set has duplicate members"
	reasonEmptySet  = "set is empty (store NULL or leave the attribute out)"
)

// Check reports whether DynamoDB would store av as it is: every string and
// map key valid UTF-8, every number within DynamoDB's range and precision,
// no set empty or with duplicate members (a number set's members compared
// as numbers: "1" and "1.0" are duplicates). It returns an *InvalidError
// with no Attr, or nil.
func Check(av types.AttributeValue) error {
	if r := reason(av, true); r != "" {
		return &InvalidError{Reason: r}
	}
	return nil
}

// CheckItem is [Check] for every attribute of item. When several are
// invalid, the one reported is the smallest name, so the error does not
// depend on the map's order.
func CheckItem(item map[string]types.AttributeValue) error {
	return checkItem(item, true)
}

// checkItem is CheckItem, leaving out UTF-8 unless utf8 is set.
func checkItem(item map[string]types.AttributeValue, utf8 bool) error {
	var bad *InvalidError
	for name, av := range item {
		if bad != nil && name > bad.Attr {
			continue
		}
		r := reason(av, utf8)
		if r == "" && utf8 && !validString(name) {
			r = "attribute name " + reasonUTF8
		}
		if r != "" {
			bad = &InvalidError{Attr: name, Reason: r}
		}
	}
	if bad == nil {
		return nil
	}
	return bad
}

// reason is why av cannot be stored, or "". UTF-8 is checked when utf8 is
// set.
func reason(av types.AttributeValue, utf8 bool) string {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		if utf8 && !validString(x.Value) {
			return reasonUTF8
		}
	case *types.AttributeValueMemberN:
		_, r := number(x.Value)
		return r
	case *types.AttributeValueMemberSS:
		if len(x.Value) == 0 {
			return reasonEmptySet
		}
		if utf8 {
			for _, s := range x.Value {
				if !validString(s) {
					return reasonUTF8
				}
			}
		}
		if hasDupStrings(x.Value) {
			return reasonDupSS
		}
	case *types.AttributeValueMemberNS:
		if len(x.Value) == 0 {
			return reasonEmptySet
		}
		canon := make([]string, len(x.Value))
		for i, s := range x.Value {
			c, r := number(s)
			if r != "" {
				return r
			}
			canon[i] = c
		}
		if hasDupStrings(canon) {
			return reasonDupNS
		}
	case *types.AttributeValueMemberBS:
		if len(x.Value) == 0 {
			return reasonEmptySet
		}
		if len(x.Value) > 1 {
			s := slices.Clone(x.Value)
			slices.SortFunc(s, bytes.Compare)
			for i := 1; i < len(s); i++ {
				if bytes.Equal(s[i-1], s[i]) {
					return reasonDupBS
				}
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range x.Value {
			if r := reason(e, utf8); r != "" {
				return r
			}
		}
	case *types.AttributeValueMemberM:
		// The reason at the smallest key, so that it does not depend on
		// the map's order.
		why, at := "", ""
		for k, e := range x.Value {
			if why != "" && k > at {
				continue
			}
			r := reason(e, utf8)
			if r == "" && utf8 && !validString(k) {
				r = "map key " + reasonUTF8
			}
			if r != "" {
				why, at = r, k
			}
		}
		return why
	}
	return ""
}

func validString(s string) bool {
	return isASCII(s) || utf8.ValidString(s)
}

// hasDupStrings reports whether s has two equal members (s is not changed).
func hasDupStrings(s []string) bool {
	switch len(s) {
	case 0, 1:
		return false
	case 2:
		return s[0] == s[1]
	}
	if len(s) <= 8 {
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				if s[i] == s[j] {
					return true
				}
			}
		}
		return false
	}
	c := slices.Clone(s)
	slices.Sort(c)
	for i := 1; i < len(c); i++ {
		if c[i-1] == c[i] {
			return true
		}
	}
	return false
}

// DynamoDB's number limits: 38 significant digits, and a magnitude from
// 1E-130 to 9.9999999999999999999999999999999999999E+125 (or zero).
const (
	maxDigits = 38
	maxExp    = 125  // the largest exponent of the leading digit
	minExp    = -130 // the smallest
)

// number parses s as DynamoDB reads a number ([+-] digits [. digits]
// [(e|E) [+-] digits], with at least one digit before the exponent) and
// returns a canonical form, equal for numerically equal texts ("1",
// "1.0", "10e-1" and "+1" give "1e0"), and "" for a valid number; or the
// reason it cannot be stored.
func number(s string) (canon, why string) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var (
		k, point    = 0, -1 // digits seen; digits before the '.'
		first, last = -1, -1
		digits      = false
	)
	start := i
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if c != '0' {
				if first < 0 {
					first = k
				}
				last = k
			}
			k++
			digits = true
			continue
		}
		if c == '.' && point < 0 {
			point = k
			continue
		}
		break
	}
	if !digits {
		return "", reasonNotNumber
	}
	mant := s[start:i]
	if point < 0 {
		point = k
	}
	exp := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return "", reasonNotNumber
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return "", reasonNotNumber
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return "", reasonNotNumber
			}
			exp = exp*10 + int(c-'0')
			if exp > 1<<31-1 {
				// Java's BigDecimal, behind DynamoDB Local, cannot read it.
				return "", reasonNotNumber
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if first < 0 {
		return "0", ""
	}
	if last-first+1 > maxDigits {
		return "", reasonDigits
	}
	lead := point - 1 - first + exp // the exponent of the leading digit
	switch {
	case lead > maxExp:
		return "", reasonHuge
	case lead < minExp:
		return "", reasonTiny
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	// The significant digits, first to last, skipping the '.'.
	n := 0
	for j := 0; j < len(mant) && n <= last; j++ {
		c := mant[j]
		if c == '.' {
			continue
		}
		if n >= first {
			b.WriteByte(c)
		}
		n++
	}
	b.WriteByte('e')
	b.WriteString(strconv.Itoa(lead))
	return b.String(), ""
}
