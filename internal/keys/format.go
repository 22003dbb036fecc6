package keys

// Formats per placeholder: "{CreatedAt:rfc3339}", "{Seq:%08d}",
// "{Name:raw}". They write the exact strings another service already
// stores, instead of the escaped, fixed-width default. Each format has an
// alphabet (the bytes its values can contain); the literal after a
// formatted placeholder must start with a byte outside it, so a key still
// splits into its values in exactly one way. A raw value can contain
// anything, so it is the value that is checked instead: a raw value holding
// the byte that starts the literal after it is refused. Values a format
// cannot write exactly (a negative number or one wider than %08d, a time
// with a fraction of a second that rfc3339 would drop) are refused too:
// a key never loses data silently.

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrUnrepresentable is wrapped by the errors of a formatted placeholder
// whose value the format cannot write exactly.
var ErrUnrepresentable = errors.New("value cannot be written in the key format")

// Format is how a placeholder writes its field's value. The zero value,
// Escaped, is the library's own codec.
type Format uint8

// The formats. Their names in a template are those Spec returns.
const (
	// Escaped is the default: escaped strings, fixed-width numbers and
	// times (see AppendValue).
	Escaped Format = iota
	// Raw writes a string (or a TextMarshaler's text) verbatim.
	Raw
	// RFC3339 writes a time in UTC to the second: 2025-01-15T10:30:00Z.
	RFC3339
	// RFC3339Milli writes a time in UTC to the millisecond:
	// 2025-01-15T11:00:00.000Z.
	RFC3339Milli
	// Date writes the UTC date of a time at midnight UTC: 2024-03-01.
	Date
	// Unix writes a time as decimal epoch seconds: 1736937000.
	Unix
	// UnixMilli writes a time as decimal epoch milliseconds.
	UnixMilli
	// Padded writes a non-negative integer as exactly Width decimal
	// digits, zero-padded ("%08d": 00000042).
	Padded
)

var formatNames = [...]string{
	Raw:          "raw",
	RFC3339:      "rfc3339",
	RFC3339Milli: "rfc3339milli",
	Date:         "date",
	Unix:         "unix",
	UnixMilli:    "unixmilli",
}

// MaxPadWidth is the widest %0Nd: 20 digits hold every uint64.
const MaxPadWidth = 20

// FormatNames lists the format names a placeholder accepts.
const FormatNames = "raw, rfc3339, rfc3339milli, date, unix, unixmilli, %0Nd (N from 1 to 20)"

// parseFormat parses the text after ':' in a placeholder.
func parseFormat(spec string) (Format, int, error) {
	for f, name := range formatNames {
		if name != "" && spec == name {
			return Format(f), 0, nil
		}
	}
	if strings.HasPrefix(spec, "%0") && strings.HasSuffix(spec, "d") && len(spec) > 3 {
		digits := spec[2 : len(spec)-1]
		w, err := strconv.Atoi(digits)
		if err == nil && digits[0] != '0' && digits[0] != '+' && w >= 1 && w <= MaxPadWidth {
			return Padded, w, nil
		}
	}
	return Escaped, 0, fmt.Errorf("unknown key format %q (want %s)", spec, FormatNames)
}

// Spec returns the placeholder's format as written after ':' in the
// template ("rfc3339", "%08d"), or "" for the default.
func (p *Part) Spec() string {
	switch p.Format {
	case Escaped:
		return ""
	case Padded:
		return fmt.Sprintf("%%0%dd", p.Width)
	}
	return formatNames[p.Format]
}

// Placeholder returns the placeholder as written: "{Field}" or
// "{Field:format}".
func (p *Part) Placeholder() string {
	if s := p.Spec(); s != "" {
		return "{" + p.Field + ":" + s + "}"
	}
	return "{" + p.Field + "}"
}

// Produces reports whether a value written by the placeholder's format can
// contain byte b. For Escaped it is every byte from 0x25 up; for Raw,
// every byte (the delimiter after a raw value is refused in the value).
func (p *Part) Produces(b byte) bool {
	switch p.Format {
	case Escaped:
		return b >= DelimLimit
	case Raw:
		return true
	case RFC3339, RFC3339Milli:
		return isDigit(b) || b == '-' || b == ':' || b == 'T' || b == 'Z' || (p.Format == RFC3339Milli && b == '.')
	case Date, Unix, UnixMilli:
		return isDigit(b) || b == '-'
	case Padded:
		return isDigit(b)
	}
	return false
}

// FixedWidth reports whether every value of the format has the same
// length, so that no value is a prefix of another.
func (p *Part) FixedWidth() bool {
	switch p.Format {
	case RFC3339, RFC3339Milli, Date, Padded:
		return true
	}
	return false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// checkFollower checks the literal lit that follows placeholder p in a
// template: its first byte must end p's values.
func (p *Part) checkFollower(lit string) error {
	b := lit[0]
	switch p.Format {
	case Escaped:
		if b >= DelimLimit {
			return fmt.Errorf("placeholder {%s} must be followed by the end of the template or a delimiter byte below 0x25 such as '#', not %q", p.Field, b)
		}
	case Raw:
		if b >= utf8.RuneSelf {
			return fmt.Errorf("placeholder %s must be followed by the end of the template or an ASCII delimiter such as '#', not %q", p.Placeholder(), b)
		}
	default:
		if p.Produces(b) {
			return fmt.Errorf("placeholder %s must be followed by the end of the template or a delimiter its values cannot contain, such as '#', not %q", p.Placeholder(), b)
		}
	}
	return nil
}

// CheckType returns nil if the placeholder's format can write values of
// type t (or a pointer to it), and otherwise an error naming both.
func (p *Part) CheckType(t reflect.Type) error {
	if p.Format == Escaped {
		return TypeSupported(t)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	ok := false
	want := ""
	switch p.Format {
	case Raw:
		ok, want = t.Kind() == reflect.String || UsesText(t), "a string (or string-kinded or encoding.TextMarshaler) field"
	case RFC3339, RFC3339Milli, Date, Unix, UnixMilli:
		ok, want = t == keyTimeType, "a time.Time field"
	case Padded:
		_, w := keyIntWidth(t.Kind())
		ok, want = w > 0 && !UsesText(t), "an integer field"
	}
	if !ok {
		return fmt.Errorf("singletable: key format %q needs %s, not %v", p.Spec(), want, t)
	}
	return nil
}

// unrepresentable reports a value the placeholder's format cannot write.
func (p *Part) unrepresentable(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrUnrepresentable, p.Placeholder(), fmt.Sprintf(format, args...))
}

// appendFormatted writes v in the placeholder's (non-default) format.
func (p *Part) appendFormatted(dst []byte, v reflect.Value) ([]byte, error) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return dst, ErrMissingValue
		}
		v = v.Elem()
	}
	switch p.Format {
	case Raw:
		var s string
		if UsesText(v.Type()) {
			text, err := keyTextMarshaler(v).MarshalText()
			if err != nil {
				return dst, fmt.Errorf("singletable: %v: %w", v.Type(), err)
			}
			s = string(text)
		} else {
			s = v.String()
		}
		if err := p.checkRaw(s); err != nil {
			return dst, err
		}
		return append(dst, s...), nil
	case Padded:
		var x uint64
		if k := v.Kind(); k >= reflect.Int && k <= reflect.Int64 {
			n := v.Int()
			if n < 0 {
				return dst, p.unrepresentable("negative value %d", n)
			}
			x = uint64(n)
		} else {
			x = v.Uint()
		}
		if digits := decimalLen(x); digits > p.Width {
			return dst, p.unrepresentable("%d has %d digits, wider than %d", x, digits, p.Width)
		}
		return appendKeyDigits(dst, x, p.Width), nil
	}
	return p.appendTime(dst, keyTimeOf(v))
}

// checkRaw refuses a raw value that would make two keys alike or break
// the key's bounds: empty, invalid UTF-8, U+10FFFF, or holding the
// delimiter that follows the placeholder.
func (p *Part) checkRaw(s string) error {
	switch {
	case s == "":
		return ErrEmptyValue
	case !utf8.ValidString(s):
		return p.unrepresentable("%q is not valid UTF-8", s)
	case strings.ContainsRune(s, MaxRune):
		return p.unrepresentable("%q contains U+10FFFF, reserved as the upper bound of keys", s)
	case p.Delim >= 0 && strings.IndexByte(s, byte(p.Delim)) >= 0:
		return p.unrepresentable("%q contains %q, the delimiter that follows it", s, byte(p.Delim))
	}
	return nil
}

func decimalLen(x uint64) int {
	n := 1
	for x >= 10 {
		x /= 10
		n++
	}
	return n
}

// appendTime writes t in a time format, refusing what it would lose.
func (p *Part) appendTime(dst []byte, t time.Time) ([]byte, error) {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, p.unrepresentable("time %v: year outside 0000–9999", t)
	}
	ns := t.Nanosecond()
	switch p.Format {
	case RFC3339, Unix:
		if ns != 0 {
			return dst, p.unrepresentable("time %v has a fraction of a second the format cannot show (truncate it: t.Truncate(time.Second))", t)
		}
	case RFC3339Milli, UnixMilli:
		if ns%1e6 != 0 {
			return dst, p.unrepresentable("time %v has a fraction of a millisecond the format cannot show (truncate it: t.Truncate(time.Millisecond))", t)
		}
	case Date:
		if h, m, s := t.Clock(); h != 0 || m != 0 || s != 0 || ns != 0 {
			return dst, p.unrepresentable("time %v is not midnight UTC; a date key holds the day only (use time.Date(y, m, d, 0, 0, 0, 0, time.UTC))", t)
		}
	}
	switch p.Format {
	case Unix:
		return strconv.AppendInt(dst, t.Unix(), 10), nil
	case UnixMilli:
		return strconv.AppendInt(dst, t.UnixMilli(), 10), nil
	}
	year, month, day := t.Date()
	dst = appendKeyDigits(dst, uint64(year), 4)
	dst = appendKeyDigits(append(dst, '-'), uint64(month), 2)
	dst = appendKeyDigits(append(dst, '-'), uint64(day), 2)
	if p.Format == Date {
		return dst, nil
	}
	hour, minute, sec := t.Clock()
	dst = appendKeyDigits(append(dst, 'T'), uint64(hour), 2)
	dst = appendKeyDigits(append(dst, ':'), uint64(minute), 2)
	dst = appendKeyDigits(append(dst, ':'), uint64(sec), 2)
	if p.Format == RFC3339Milli {
		dst = appendKeyDigits(append(dst, '.'), uint64(ns/1e6), 3)
	}
	return append(dst, 'Z'), nil
}

// decodeFormatted decodes s, written in the placeholder's format, into the
// settable non-pointer dst. It accepts only what appendFormatted writes.
func (p *Part) decodeFormatted(s string, dst reflect.Value) error {
	t := dst.Type()
	bad := func(want string) error {
		return fmt.Errorf("singletable: key value %q is not a %v in format %s: %s", s, t, p.Spec(), want)
	}
	switch p.Format {
	case Raw:
		if err := p.checkRaw(s); err != nil {
			return err
		}
		if UsesText(t) {
			return decodeText(s, dst)
		}
		dst.SetString(s)
		return nil
	case Padded:
		x, ok := parseKeyDigits(s, p.Width)
		if !ok {
			return bad(fmt.Sprintf("want %d digits", p.Width))
		}
		if k := t.Kind(); k >= reflect.Int && k <= reflect.Int64 {
			bits, _ := keyIntWidth(k)
			if x > uint64(1)<<(bits-1)-1 {
				return bad("out of range")
			}
			dst.SetInt(int64(x))
			return nil
		}
		if bits, _ := keyIntWidth(t.Kind()); bits < 64 && x >= 1<<bits {
			return bad("out of range")
		}
		dst.SetUint(x)
		return nil
	}
	tm, ok := p.parseTime(s)
	if !ok {
		return bad("not the canonical form")
	}
	*dst.Addr().Interface().(*time.Time) = tm
	return nil
}

// parseTime inverts appendTime, accepting only what it writes.
func (p *Part) parseTime(s string) (time.Time, bool) {
	var tm time.Time
	switch p.Format {
	case Unix, UnixMilli:
		n, ok := parseCanonicalInt(s)
		if !ok {
			return tm, false
		}
		if p.Format == Unix {
			if n < -62167219200 || n > 253402300799 { // 0000-01-01 … 9999-12-31T23:59:59
				return tm, false
			}
			tm = time.Unix(n, 0).UTC()
		} else {
			if n < -62167219200000 || n > 253402300799999 {
				return tm, false
			}
			tm = time.UnixMilli(n).UTC()
		}
	default:
		layout := map[Format]string{RFC3339: "2006-01-02T15:04:05Z", RFC3339Milli: "2006-01-02T15:04:05.000Z", Date: "2006-01-02"}[p.Format]
		if len(s) != len(layout) {
			return tm, false
		}
		for i := 0; i < len(s); i++ {
			if c := layout[i]; isDigit(c) != isDigit(s[i]) || (!isDigit(c) && c != s[i]) {
				return tm, false
			}
		}
		num := func(i, j int) int {
			n := 0
			for _, c := range []byte(s[i:j]) {
				n = n*10 + int(c-'0')
			}
			return n
		}
		h, mi, sec, ns := 0, 0, 0, 0
		if p.Format != Date {
			h, mi, sec = num(11, 13), num(14, 16), num(17, 19)
		}
		if p.Format == RFC3339Milli {
			ns = num(20, 23) * 1e6
		}
		tm = time.Date(num(0, 4), time.Month(num(5, 7)), num(8, 10), h, mi, sec, ns, time.UTC)
	}
	// Writing the result back catches out-of-range fields (February 30,
	// 24:00) that time.Date normalises.
	var buf [32]byte
	b, err := p.appendTime(buf[:0], tm)
	return tm, err == nil && string(b) == s
}

// parseCanonicalInt parses a decimal int64 as strconv.AppendInt writes it:
// no sign but '-', no leading zeros, no "-0".
func parseCanonicalInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || (digits[0] == '0' && (len(digits) > 1 || len(s) > 1)) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// AppendPrefix appends prefix, the start of a value of the placeholder
// (BeginsWith), in the placeholder's format: escaped by default, verbatim
// otherwise. A prefix no value of the format can start with is an error
// wrapping ErrUnrepresentable.
func (p *Part) AppendPrefix(dst []byte, prefix string) ([]byte, error) {
	switch p.Format {
	case Escaped:
		return AppendEscaped(dst, prefix), nil
	case Raw:
		if prefix == "" {
			return dst, nil
		}
		if err := p.checkRaw(prefix); err != nil {
			return dst, err
		}
		return append(dst, prefix...), nil
	}
	for i := 0; i < len(prefix); i++ {
		if !p.Produces(prefix[i]) {
			return dst, p.unrepresentable("prefix %q: no value in this format contains %q", prefix, prefix[i])
		}
	}
	return append(dst, prefix...), nil
}
