// Package keys is the key codec: key templates, value escaping and
// order-preserving value encodings. It knows nothing of entities or tables;
// the root package binds struct fields to the placeholders of a [Template]
// and wraps the errors returned here in its *KeyError and *ValidationError.
//
// Every other single-table library concatenates raw values into keys, so a
// value containing the delimiter corrupts the key and begins_with(SK,
// "SKILL#go") also matches "SKILL#golang". The codec here rests on one byte
// boundary, 0x25 ('%'):
//
//   - an encoded value never contains a byte below 0x25 (escaping writes such
//     bytes as %XX, and '%' itself is 0x25);
//   - in a template, every placeholder is followed by the end of the template
//     or by a literal whose first byte is below 0x25 (a delimiter such as '#').
//
// So the end of every value is unambiguous: rendering is injective, keys parse
// back into their values, and "SKILL#" + value + "#" is a prefix of exactly the
// keys holding that value. Numbers and times are written fixed-width so that
// byte order (DynamoDB's order for string keys) equals value order, and
// escaping preserves the byte order of valid UTF-8 strings.
//
// A placeholder may instead name a format ({At:rfc3339}, {Seq:%08d},
// {Name:raw}, …: the table of internal/format; format.go here) to write
// another service's key strings. The boundary then belongs to the format:
// the literal after it starts with a byte the format never writes, and a
// raw value holding that byte is refused, so rendering stays injective for
// the values it accepts.
//
// [Template.Append] is the one key renderer: every request renders its keys
// through it, from the struct fields (internal/model) bound to the
// placeholders, and the fuzz targets here exercise it.
package keys

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
)

var (
	// ErrEmptyValue: an empty string or text would render a key that
	// cannot be told apart from a missing part, so it is refused.
	ErrEmptyValue = errors.New("empty key value")
	// ErrMissingValue: a nil pointer has no value to encode.
	ErrMissingValue = errors.New("missing key value")
	// ErrMismatch is wrapped by Template.Split when a key was not
	// rendered from the template.
	ErrMismatch = errors.New("key does not match template")
	// ErrLonger is wrapped, with ErrMismatch, when the key holds a whole
	// key of the template and goes on after it.
	ErrLonger = errors.New("longer than the template")
)

// DelimLimit is the byte boundary of the codec: escaped values contain no
// byte below it and the literal after a placeholder must start with a byte
// below it.
const DelimLimit = 0x25

// MaxRune is escaped in values and forbidden in literals so that
// prefix + "\U0010FFFF" is a strict upper bound of every key with that prefix
// (useful for "between" and "less than" conditions on a prefix).
const MaxRune = '\U0010FFFF'

// Template is a parsed key template such as "LEVEL#{Level}#USER#{Username}".
type Template struct {
	Raw   string // the template as written
	Parts []Part // literals and placeholders in order; never two literals in a row
}

// Part is one literal or one placeholder of a Template. A placeholder names
// the Go field whose value fills it and, optionally, a format of the table
// ("{CreatedAt:rfc3339}"); it encodes the value with [Part.AppendValue]
// and decodes it with [Part.DecodeValue]. (The renderer's fast path for
// plain string fields inlines the default encoding, so it steps aside for
// a placeholder with a format.)
type Part struct {
	Literal string // the literal text, when Field == ""
	Field   string // the Go field name of a placeholder
	// Format is how the placeholder writes its value: nil for the
	// default (escaped strings, fixed-width numbers and times).
	Format *format.Format
	// Delim is, for a placeholder with a format, the first byte of the
	// literal that follows it, or -1 at the end of the template (0 and
	// unused for the default format).
	Delim int
	// Pattern constrains the values of a raw placeholder
	// ({UserID:raw=[0-9]+}; pattern.go), nil when none does.
	Pattern *Pattern
	// Loc is where a zone-less time format (a layout without a zone,
	// date, isoformat's naive form) writes and reads its wall clock: the
	// entity's Location ([Template.In]); nil for UTC.
	Loc *time.Location
}

// IsPlaceholder reports whether p is a placeholder rather than a literal.
func (p *Part) IsPlaceholder() bool { return p.Field != "" }

// AppendValue appends the encoding of v, the value of the placeholder's
// field, to dst: [AppendValue] for the default format, the placeholder's
// format otherwise. A value the format cannot write exactly is an error
// wrapping ErrUnrepresentable.
func (p *Part) AppendValue(dst []byte, v reflect.Value) ([]byte, error) {
	if p.Format == nil {
		return AppendValue(dst, v)
	}
	return p.appendFormatted(dst, v)
}

// DecodeValue decodes s, the placeholder's encoded value as [Template.Split]
// returns it, into dst (see [DecodeValue]); it accepts only what
// AppendValue writes.
func (p *Part) DecodeValue(s string, dst reflect.Value) error {
	if p.Format == nil {
		return DecodeValue(s, dst)
	}
	if !dst.CanSet() {
		return fmt.Errorf("singletable: cannot decode key value into unsettable %v", dst.Type())
	}
	if dst.Kind() == reflect.Pointer {
		v := reflect.New(dst.Type().Elem())
		if err := p.DecodeValue(s, v.Elem()); err != nil {
			return err
		}
		dst.Set(v)
		return nil
	}
	return p.decodeFormatted(s, dst)
}

// Parse parses literal text with {Field}, {Field:format} and
// {Field:raw=pattern} placeholders (braces in a pattern must balance).
// It enforces the rules that make rendered keys injective and prefix-safe:
// no two adjacent placeholders, and a placeholder is followed by the end of
// the template or by a delimiter: for the default format a byte below 0x25
// ('#', '$', '!', ' ', …); for a format, a byte its values cannot contain
// (any ASCII byte after raw, whose values are refused when they contain it).
func Parse(s string) (Template, error) {
	t := Template{Raw: s}
	if s == "" {
		return t, errors.New("singletable: empty key template")
	}
	fail := func(format string, args ...any) (Template, error) {
		return Template{Raw: s}, fmt.Errorf("singletable: key template %q: "+format, append([]any{s}, args...)...)
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '}':
			return fail("unbalanced '}' at offset %d", i)
		case '{':
			end, err := placeholderEnd(s, i)
			if err != nil {
				return fail("%v", err)
			}
			p, err := parsePlaceholder(s[i+1 : end])
			if err != nil {
				return fail("placeholder {%s} at offset %d: %v", s[i+1:end], i, err)
			}
			if n := len(t.Parts); n > 0 && t.Parts[n-1].Field != "" {
				return fail("placeholders {%s} and {%s} are adjacent; put a delimiter such as '#' between them", t.Parts[n-1].Field, p.Field)
			}
			t.Parts = append(t.Parts, p)
			i = end + 1
		default:
			end := strings.IndexAny(s[i:], "{}")
			if end < 0 {
				end = len(s)
			} else {
				end += i
			}
			lit := s[i:end]
			if !utf8.ValidString(lit) {
				return fail("literal %q is not valid UTF-8", lit)
			}
			if strings.ContainsRune(lit, MaxRune) {
				return fail("literal %q contains U+10FFFF, which is reserved as the upper bound of keys", lit)
			}
			if n := len(t.Parts); n > 0 {
				prev := &t.Parts[n-1]
				if err := prev.checkFollower(lit); err != nil {
					return fail("%v", err)
				}
				if prev.Format != nil {
					prev.Delim = int(lit[0])
				}
			}
			t.Parts = append(t.Parts, Part{Literal: lit})
			i = end
		}
	}
	return t, nil
}

// parsePlaceholder parses the text between '{' and '}': a Go field name,
// then optionally ':' and a format. A formatted placeholder starts as the
// last of the template (Delim -1); Parse sets Delim when a literal follows.
func parsePlaceholder(body string) (Part, error) {
	name, spec, formatted := strings.Cut(body, ":")
	if !isFieldName(name) {
		return Part{}, fmt.Errorf("%q is not a Go field name", name)
	}
	if !formatted {
		return Part{Field: name}, nil
	}
	f, pat, err := ParseSpec(spec)
	if err != nil {
		return Part{}, err
	}
	return Part{Field: name, Format: f, Pattern: pat, Delim: -1}, nil
}

// isFieldName reports whether name is a Go identifier (keywords are not
// field names either, but no struct field can be called one, so the entity
// check reports them as unknown fields).
func isFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// In makes loc (nil: UTC) where t's zone-less time placeholders write and
// read their wall clock (Part.Loc); isoformat writes UTC and reads its
// naive form there.
func (t *Template) In(loc *time.Location) {
	if loc == time.UTC {
		loc = nil
	}
	for i := range t.Parts {
		if f := t.Parts[i].Format; f != nil && f.Kind == format.Time && f.Epoch == 0 && (!f.UTC || f == format.ISOFormat) {
			t.Parts[i].Loc = loc
		}
	}
}

// Fields returns the placeholder field names in order.
func (t Template) Fields() []string {
	var out []string
	for _, p := range t.Parts {
		if p.Field != "" {
			out = append(out, p.Field)
		}
	}
	return out
}

// ConstantPrefix returns the literal text before the first placeholder: ""
// if the template starts with one, the whole template if it has none. Every
// key of the template begins with it.
func (t Template) ConstantPrefix() string {
	if len(t.Parts) == 0 || t.Parts[0].Field != "" {
		return ""
	}
	return t.Parts[0].Literal
}

// RenderError reports why a key could not be rendered: the fields that
// hold no value (Missing), or else the field whose value its placeholder
// refused (Field, Err: wrapping ErrEmptyValue, ErrMissingValue or
// ErrUnrepresentable, or naming an unsupported value).
type RenderError struct {
	Missing []string
	Field   string
	Err     error
}

func (e *RenderError) Error() string {
	if len(e.Missing) > 0 {
		return "singletable: missing key fields " + strings.Join(e.Missing, ", ")
	}
	return "singletable: field " + e.Field + ": " + e.Err.Error()
}

func (e *RenderError) Unwrap() error { return e.Err }

// Append appends to dst the key rendered from the struct value v, whose
// fields fill the placeholders in order (fields[i] the i-th): the literals,
// and each value encoded in its placeholder's format, straight into one
// buffer. A missing field (see model.Field.Present) or a value the format
// refuses is a *RenderError. A field stored in a shape that cuts a time
// (model.Field.KeyValue) is rendered as it is stored.
//
// It is the one key renderer: writes, reads and query planning all render
// through it. It allocates nothing when dst has room, and reads a plain
// string field at its offset, with internal/model's accessors inlined.
// fields must bind every placeholder.
func (t *Template) Append(dst []byte, fields []*model.Field, v reflect.Value) ([]byte, error) {
	return t.AppendPrefix(dst, fields, v, -1)
}

// AppendPrefix is Append for the first n placeholders (every one when n is
// negative): it renders the
// template up to and including the literal that follows the n-th value.
// When n is less than the number of placeholders the result ends with the
// delimiter after the last value, so begins_with on it matches exactly the
// keys holding those values: the prefix for "go" is "SKILL#go#", which
// "SKILL#golang#…" does not start with. With every value given it is the
// full key, to be compared with equality (begins_with on a full key ending
// in a value is not prefix-safe).
func (t *Template) AppendPrefix(dst []byte, fields []*model.Field, v reflect.Value, n int) ([]byte, error) {
	var missing []string
	base := model.StructBase(v)
	i := 0
	for j := range t.Parts {
		p := &t.Parts[j]
		if !p.IsPlaceholder() {
			dst = append(dst, p.Literal...)
			continue
		}
		if i == n {
			break
		}
		f := fields[i]
		i++
		if s, ok := f.StringAt(base); ok && p.Format == nil { // a plain string field: no reflection, the default encoding inlined
			if s == "" {
				missing = append(missing, f.Name)
			} else {
				dst = AppendEscaped(dst, s)
			}
			continue
		}
		if !f.Present(v) {
			missing = append(missing, f.Name)
			continue
		}
		fv, _ := f.KeyValueIn(v, p.Loc)
		var err error
		if dst, err = p.AppendValue(dst, fv); err != nil {
			return dst, &RenderError{Field: f.Name, Err: err}
		}
	}
	if len(missing) > 0 {
		return dst, &RenderError{Missing: missing}
	}
	return dst, nil
}

// LiteralAfter returns the literal that follows placeholder i (counting
// from 0): the delimiter that ends its values, or "" at the end of the
// template.
func (t *Template) LiteralAfter(i int) string {
	for j := range t.Parts {
		if t.Parts[j].Field == "" {
			continue
		}
		if i == 0 {
			if j+1 < len(t.Parts) {
				return t.Parts[j+1].Literal
			}
			return ""
		}
		i--
	}
	return ""
}

// NumFields counts the placeholders without allocating.
func (t Template) NumFields() int {
	n := 0
	for _, p := range t.Parts {
		if p.Field != "" {
			n++
		}
	}
	return n
}

// Split is the inverse of Append: it returns the encoded values of key, one
// per placeholder. A value runs to the next byte its format cannot write
// (below 0x25 by default; the delimiter after a raw value), which is where
// its following delimiter literal must start; a raw value at the end of the
// template runs to the end of the key. It
// fails, wrapping ErrMismatch, when key was not rendered from t.
func (t Template) Split(key string) ([]string, error) {
	vals := make([]string, 0, t.NumFields())
	rest := key
	for i, p := range t.Parts {
		if p.Field == "" {
			if !strings.HasPrefix(rest, p.Literal) {
				if i > 0 { // name the value that did not end where the literal starts
					return nil, fmt.Errorf("singletable: key %q: %w %q: {%s} ends at %q, where literal %q should follow", key, ErrMismatch, t.Raw, t.Parts[i-1].Field, rest, p.Literal)
				}
				return nil, fmt.Errorf("singletable: key %q: %w %q: literal %q not found", key, ErrMismatch, t.Raw, p.Literal)
			}
			rest = rest[len(p.Literal):]
			continue
		}
		end := 0
		switch {
		case p.Format == nil:
			for end < len(rest) && rest[end] >= DelimLimit {
				end++
			}
		case p.Delim < 0 && p.Format.Kind == format.Text:
			end = len(rest) // a raw value at the end runs to the end
		case p.Format.Kind == format.Text:
			if end = strings.IndexByte(rest, byte(p.Delim)); end < 0 {
				end = len(rest)
			}
		default:
			for end < len(rest) && p.Produces(rest[end]) {
				end++
			}
		}
		if end == 0 {
			return nil, fmt.Errorf("singletable: key %q: %w %q: empty value for {%s}", key, ErrMismatch, t.Raw, p.Field)
		}
		if err := p.checkSplit(key, t.Raw, rest[:end]); err != nil {
			return nil, err
		}
		vals = append(vals, rest[:end])
		rest = rest[end:]
	}
	if n := len(t.Parts); rest != "" && n > 0 && t.Parts[n-1].Field != "" {
		return nil, fmt.Errorf("singletable: key %q: %w %q: {%s} ends at %q: %w", key, ErrMismatch, t.Raw, t.Parts[n-1].Field, rest, ErrLonger)
	}
	if rest != "" {
		return nil, fmt.Errorf("singletable: key %q: %w %q: unexpected %q at the end: %w", key, ErrMismatch, t.Raw, rest, ErrLonger)
	}
	return vals, nil
}

// ---- string escaping ----

const keyUpperHex = "0123456789ABCDEF"

// keyCopiedASCII marks the single bytes that escaping copies: 0x26–0x7F.
var keyCopiedASCII = func() (m [256]bool) {
	for b := '%' + 1; b < utf8.RuneSelf; b++ {
		m[b] = true
	}
	return m
}()

// keyEscapeUnit classifies the unit of s starting at i: n bytes that are
// either copied or escaped. Escaped are bytes 0x00–0x25, each byte of an
// invalid UTF-8 sequence, and U+10FFFF; everything else is copied.
func keyEscapeUnit(s string, i int) (n int, escape bool) {
	if b := s[i]; b < utf8.RuneSelf {
		return 1, b <= '%'
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return n, (r == utf8.RuneError && n == 1) || r == MaxRune
}

// AppendEscaped appends s to dst with bytes 0x00–0x25, invalid UTF-8 and
// U+10FFFF written as %XX (uppercase hex). The output is valid UTF-8 and has
// no byte below 0x25, so it cannot contain a delimiter. Escapes start with
// 0x25 and copied bytes are all >= 0x26, hence for valid UTF-8 without
// U+10FFFF the byte order of escaped strings equals that of the originals.
func AppendEscaped(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s))
	start := 0 // beginning of the pending run of copied bytes
	for i := 0; i < len(s); {
		if keyCopiedASCII[s[i]] { // the common case, kept inline
			i++
			continue
		}
		n, esc := keyEscapeUnit(s, i)
		if !esc {
			i += n
			continue
		}
		dst = append(dst, s[start:i]...)
		for _, b := range []byte(s[i : i+n]) {
			dst = append(dst, '%', keyUpperHex[b>>4], keyUpperHex[b&15])
		}
		i += n
		start = i
	}
	return append(dst, s[start:]...)
}

// Unescape is the inverse of AppendEscaped. It accepts only
// canonical input (s == AppendEscaped(nil, result)): malformed or lowercase
// %XX, escapes of bytes that are copied and raw bytes that must be escaped
// are errors, so each value has exactly one encoding in keys.
func Unescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		for i := 0; i < len(s); {
			n, esc := keyEscapeUnit(s, i)
			if esc {
				return "", fmt.Errorf("singletable: escaped key string %q: byte 0x%02X at offset %d must be escaped", s, s[i], i)
			}
			i += n
		}
		return s, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			out = append(out, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("singletable: escaped key string %q: truncated escape at offset %d", s, i)
		}
		hi, lo := keyUnhex(s[i+1]), keyUnhex(s[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("singletable: escaped key string %q: bad escape %q at offset %d (want %%XX, uppercase hex)", s, s[i:i+3], i)
		}
		out = append(out, byte(hi<<4|lo))
		i += 2
	}
	raw := string(out)
	if !keyIsEscapeOf(s, raw) {
		return "", fmt.Errorf("singletable: escaped key string %q is not in canonical form", s)
	}
	return raw, nil
}

// keyUnhex decodes one uppercase hex digit, or returns -1.
func keyUnhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// keyIsEscapeOf reports whether s == AppendEscaped(nil, raw), without
// allocating.
func keyIsEscapeOf(s, raw string) bool {
	for i := 0; i < len(raw); {
		n, esc := keyEscapeUnit(raw, i)
		if esc {
			for _, b := range []byte(raw[i : i+n]) {
				if len(s) < 3 || s[0] != '%' || s[1] != keyUpperHex[b>>4] || s[2] != keyUpperHex[b&15] {
					return false
				}
				s = s[3:]
			}
		} else {
			if !strings.HasPrefix(s, raw[i:i+n]) {
				return false
			}
			s = s[n:]
		}
		i += n
	}
	return s == ""
}

// ---- value encodings ----

var (
	keyTimeType            = reflect.TypeFor[time.Time]()
	keyTextMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	keyTextUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// keyIntWidth returns the bit size and decimal width of an integer kind: the
// width holds the largest value and, for signed kinds, v − min of any
// negative v.
func keyIntWidth(k reflect.Kind) (bits, width int) {
	switch k {
	case reflect.Int8:
		return 8, 3
	case reflect.Int16:
		return 16, 5
	case reflect.Int32:
		return 32, 10
	case reflect.Int, reflect.Int64:
		return 64, 19
	case reflect.Uint8:
		return 8, 3
	case reflect.Uint16:
		return 16, 5
	case reflect.Uint32:
		return 32, 10
	case reflect.Uint, reflect.Uint64:
		return 64, 20
	}
	return 0, 0
}

// TypeSupported returns nil if AppendValue can encode values of type t,
// and otherwise an error naming the type.
func TypeSupported(t reflect.Type) error {
	if t == nil {
		return errors.New("singletable: a nil interface cannot be used in a key")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == keyTimeType || model.UsesText(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64:
		return nil
	}
	if _, w := keyIntWidth(t.Kind()); w > 0 {
		return nil
	}
	return fmt.Errorf("singletable: type %v cannot be used in a key (want a string, integer, float, bool, time.Time, encoding.TextMarshaler, or a pointer to one)", t)
}

// AppendValue appends the key encoding of v to dst. Strings are escaped;
// numbers, bools and times are fixed-width so that byte order equals value
// order. Empty strings fail with ErrEmptyValue and nil pointers with
// ErrMissingValue: a key part is never silently blank.
func AppendValue(dst []byte, v reflect.Value) ([]byte, error) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return dst, ErrMissingValue
		}
		v = v.Elem()
	}
	t := v.Type()
	if t == keyTimeType {
		return appendKeyTime(dst, keyTimeOf(v))
	}
	if model.UsesText(t) {
		return appendKeyText(dst, v)
	}
	switch k := v.Kind(); k {
	case reflect.String:
		s := v.String()
		if s == "" {
			return dst, ErrEmptyValue
		}
		return AppendEscaped(dst, s), nil
	case reflect.Bool:
		if v.Bool() {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case reflect.Float32, reflect.Float64:
		return appendKeyFloat(dst, v.Float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits, width := keyIntWidth(k)
		x := v.Int()
		if x >= 0 {
			return format.AppendDigits(dst, uint64(x), width), nil
		}
		// '-' (0x2D) sorts before '0', and x − min grows with x: negatives
		// come first, in order. Unsigned wrap-around computes x − min
		// exactly even for int64.
		minimum := int64(-1) << (bits - 1)
		return format.AppendDigits(append(dst, '-'), uint64(x)-uint64(minimum), width), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, width := keyIntWidth(k)
		return format.AppendDigits(dst, v.Uint(), width), nil
	}
	return dst, TypeSupported(t)
}

// keyTimeOf reads a time.Time without boxing it when v is addressable.
func keyTimeOf(v reflect.Value) time.Time {
	if v.CanAddr() {
		return *v.Addr().Interface().(*time.Time)
	}
	return v.Interface().(time.Time)
}

// appendKeyTime writes t in the default's fixed-width UTC form,
// format.KeyTime, refusing a year it cannot hold.
func appendKeyTime(dst []byte, t time.Time) ([]byte, error) {
	if err := format.KeyTime.Check(t); err != nil {
		return dst, errors.New("singletable: time cannot be used in a key: year outside 0000–9999")
	}
	return format.KeyTime.AppendTime(dst, t), nil
}

// appendKeyFloat appends the IEEE 754 bits of f, made monotonic: positive
// numbers get the sign bit set, negative ones are inverted, so unsigned order
// of the bits is numeric order; 16 lowercase hex digits keep that order.
func appendKeyFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) {
		return dst, errors.New("singletable: NaN cannot be used in a key")
	}
	if f == 0 {
		f = 0 // −0 == +0, so they must share one encoding
	}
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		b = ^b
	} else {
		b |= 1 << 63
	}
	const hex = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, hex[b>>uint(shift)&15])
	}
	return dst, nil
}

// appendKeyText writes the escaped MarshalText form of v.
func appendKeyText(dst []byte, v reflect.Value) ([]byte, error) {
	text, err := keyTextMarshaler(v).MarshalText()
	if err != nil {
		return dst, fmt.Errorf("singletable: %v: %w", v.Type(), err)
	}
	if len(text) == 0 {
		return dst, ErrEmptyValue
	}
	return AppendEscaped(dst, string(text)), nil
}

// keyTextMarshaler returns v's TextMarshaler, using v's address when only the
// pointer type implements it (struct fields reached through a pointer are
// addressable; other values are copied first).
func keyTextMarshaler(v reflect.Value) encoding.TextMarshaler {
	if v.Type().Implements(keyTextMarshalerType) {
		return v.Interface().(encoding.TextMarshaler)
	}
	if !v.CanAddr() {
		c := reflect.New(v.Type())
		c.Elem().Set(v)
		v = c.Elem()
	}
	return v.Addr().Interface().(encoding.TextMarshaler)
}

// ---- decoding ----

// Fills fills the fields of a struct value from the keys that hold them,
// one key after another: a field is decoded from the first key that
// holds it, and every later key holding it must hold the same value (the
// same instant for a time). The zero value is ready to use.
type Fills struct {
	arr    [8]*model.Field
	filled []*model.Field
	from   []string // the key each filled field was decoded from
}

// Fill decodes key, rendered from t (whose placeholders fields fill, in
// order), into the fields of dst that need reports, and checks the ones
// filled before; name names the key in the errors. A key not rendered
// from t, a value that does not decode, and a field holding another value
// than an earlier key's are errors naming the field, never its value.
func (fs *Fills) Fill(t *Template, fields []*model.Field, key, name string, dst reflect.Value, need func(*model.Field) bool) error {
	vals, err := t.Split(key)
	if err != nil {
		return err
	}
	if fs.filled == nil {
		fs.filled = fs.arr[:0]
	}
	i := 0
	for j := range t.Parts {
		p := &t.Parts[j]
		if !p.IsPlaceholder() {
			continue
		}
		f, s := fields[i], vals[i]
		i++
		if !need(f) {
			continue
		}
		fv := f.Settable(dst)
		if k := slices.Index(fs.filled, f); k >= 0 {
			w := reflect.New(fv.Type()).Elem()
			if err := p.DecodeValue(s, w); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			if !sameValue(fv, w) {
				return fmt.Errorf("field %s: the key holds another value than %s", f.Name, fs.from[k])
			}
			continue
		}
		if err := p.DecodeValue(s, fv); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		fs.filled, fs.from = append(fs.filled, f), append(fs.from, name)
	}
	return nil
}

// sameValue reports whether v and w, two values of one type, are the same
// key value: the same instant for times.
func sameValue(v, w reflect.Value) bool {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() || w.IsNil() {
			return v.IsNil() == w.IsNil()
		}
		v, w = v.Elem(), w.Elem()
	}
	if v.Type() == keyTimeType {
		return v.Interface().(time.Time).Equal(w.Interface().(time.Time))
	}
	return reflect.DeepEqual(v.Interface(), w.Interface())
}

// DecodeValue decodes s, one encoded value (as Split returns it), into
// the settable dst; it allocates for pointers. It is the inverse of
// AppendValue and accepts only canonical encodings, so it succeeds only if
// s == AppendValue(decoded value): a key has exactly one parse.
func DecodeValue(s string, dst reflect.Value) error {
	if !dst.CanSet() {
		return fmt.Errorf("singletable: cannot decode key value into unsettable %v", dst.Type())
	}
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		if err := DecodeValue(s, p.Elem()); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	t := dst.Type()
	if t == keyTimeType {
		tm, ok := format.KeyTime.ParseTime(s)
		if !ok {
			return keyDecodeError(s, t, "want the fixed-width UTC form "+format.KeyTime.Layout)
		}
		*dst.Addr().Interface().(*time.Time) = tm
		return nil
	}
	if model.UsesText(t) {
		return decodeKeyText(s, dst)
	}
	switch k := t.Kind(); k {
	case reflect.String:
		if s == "" {
			return ErrEmptyValue
		}
		raw, err := Unescape(s)
		if err != nil {
			return err
		}
		dst.SetString(raw)
		return nil
	case reflect.Bool:
		switch s {
		case "true":
			dst.SetBool(true)
			return nil
		case "false":
			dst.SetBool(false)
			return nil
		}
		return keyDecodeError(s, t, `want "true" or "false"`)
	case reflect.Float32, reflect.Float64:
		f, ok := parseKeyFloat(s)
		if !ok || (k == reflect.Float32 && float64(float32(f)) != f) {
			return keyDecodeError(s, t, "want 16 lowercase hex digits of an order-preserving float")
		}
		dst.SetFloat(f)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits, width := keyIntWidth(k)
		neg := s != "" && s[0] == '-'
		digits := s
		if neg {
			digits = s[1:]
		}
		x, ok := format.ParseDigits(digits, width)
		limit := uint64(1)<<(bits-1) - 1 // the largest positive value, and the largest x − min of a negative
		if !ok || x > limit {
			return keyDecodeError(s, t, fmt.Sprintf("want %d digits, '-' first for negative numbers", width))
		}
		if neg {
			minimum := int64(-1) << (bits - 1)
			dst.SetInt(int64(uint64(minimum) + x))
		} else {
			dst.SetInt(int64(x))
		}
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits, width := keyIntWidth(k)
		x, ok := format.ParseDigits(s, width)
		if !ok || (bits < 64 && x >= 1<<bits) {
			return keyDecodeError(s, t, fmt.Sprintf("want %d digits", width))
		}
		dst.SetUint(x)
		return nil
	}
	return TypeSupported(t)
}

// keyDecodeError reports a value that is not the canonical encoding of t.
func keyDecodeError(s string, t reflect.Type, want string) error {
	return fmt.Errorf("singletable: key value %q is not a %v: %s", s, t, want)
}

// parseKeyFloat inverts appendKeyFloat, rejecting the encodings it never
// produces (NaN, −0, uppercase hex).
func parseKeyFloat(s string) (float64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	var b uint64
	for i := 0; i < 16; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			b = b<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			b = b<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	if b&(1<<63) != 0 {
		b &^= 1 << 63
	} else {
		b = ^b
	}
	f := math.Float64frombits(b)
	if math.IsNaN(f) || (f == 0 && math.Signbit(f)) {
		return 0, false
	}
	return f, true
}

// decodeKeyText unescapes s and hands it to UnmarshalText, then checks that
// the value marshals back to the same text, so lenient UnmarshalText
// implementations (case-insensitive enums, say) cannot give one value two
// keys.
func decodeKeyText(s string, dst reflect.Value) error {
	if s == "" {
		return ErrEmptyValue
	}
	t := dst.Type()
	if !reflect.PointerTo(t).Implements(keyTextUnmarshalerType) {
		return fmt.Errorf("singletable: %v implements encoding.TextMarshaler but not encoding.TextUnmarshaler; keys cannot be decoded into it", t)
	}
	text, err := Unescape(s)
	if err != nil {
		return err
	}
	return decodeText(text, dst)
}

// decodeText hands text to dst's UnmarshalText and checks that the value
// marshals back to the same text.
func decodeText(text string, dst reflect.Value) error {
	t := dst.Type()
	s := text
	if !reflect.PointerTo(t).Implements(keyTextUnmarshalerType) {
		return fmt.Errorf("singletable: %v implements encoding.TextMarshaler but not encoding.TextUnmarshaler; keys cannot be decoded into it", t)
	}
	p := reflect.New(t)
	if err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
		return fmt.Errorf("singletable: key value %q: %v: %w", s, t, err)
	}
	again, err := keyTextMarshaler(p.Elem()).MarshalText()
	if err != nil || string(again) != text {
		return keyDecodeError(s, t, "its text does not marshal back to itself")
	}
	dst.Set(p.Elem())
	return nil
}
