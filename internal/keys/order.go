package keys

import "unicode/utf8"

// The bounds of sort key ranges on rendered keys: escaped values contain
// no byte below '%' and every placeholder is followed by a delimiter below
// '%' (or ends the key), so comparing rendered keys compares field tuples.

// AboveAll is MaxRune as text: prefix+AboveAll is above every key that
// starts with prefix.
const AboveAll = string(MaxRune)

// ClampBound is the greatest string of at most limit bytes of UTF-8 that
// is at or below u on the strings of at most limit bytes (len(u) > limit).
func ClampBound(u string, limit int) string {
	j := limit
	for j > 0 && !utf8.RuneStart(u[j]) {
		j--
	}
	// The rune at j does not fit; the greatest rune of the bytes left does.
	switch limit - j {
	case 0:
		return u[:j]
	case 1:
		return u[:j] + "\x7f"
	case 2:
		return u[:j] + "\u07ff"
	}
	return u[:j] + "\uffff"
}

// FormattedAbove returns the lowest string, after the prefix, of the keys
// whose value for a formatted placeholder is above E (L is the literal
// after it): every key holding E is prefix+E+L+… (below prefix+E+L+AboveAll,
// which no key equals) or, at the end of the template, prefix+E itself,
// whose successor is E+"\x00". A raw value continuing E is above both
// when it holds no byte below the delimiter (the catalog lint warns where
// it may).
func FormattedAbove(E, L string) string {
	if L == "" {
		return E + "\x00"
	}
	return E + L + AboveAll
}

// FormattedBelow returns the highest string of the keys whose value for a
// formatted placeholder is below E (an inclusive bound): the strings below
// E are those at or below E without its last byte when that byte is NUL,
// and otherwise those below E with its last rune decremented, followed by
// anything (MaxRune).
func FormattedBelow(E string) string {
	if E[len(E)-1] == 0 {
		return E[:len(E)-1]
	}
	return Predecessor(E) + AboveAll
}

// Predecessor returns E with its last rune decremented: every encoded value
// below E, followed by anything, sorts at or below Predecessor(E)+AboveAll.
// Encoded values end in a rune >= '&', so the result stays valid UTF-8.
func Predecessor(E string) string {
	r, size := utf8.DecodeLastRuneInString(E)
	r--
	if r >= 0xD800 && r <= 0xDFFF {
		r = 0xD7FF
	}
	return E[:len(E)-size] + string(r)
}
