package keys

// Formats per placeholder: "{CreatedAt:rfc3339}", "{Seq:%08d}",
// "{Name:raw}", the entries of internal/format's table. They write the
// exact strings another service already stores, instead of the escaped,
// fixed-width default. Each format has an
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
	"strings"
	"time"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
)

// ErrUnrepresentable is wrapped by the errors of a formatted placeholder
// whose value the format cannot write exactly.
var ErrUnrepresentable = errors.New("value cannot be written in the key format")

// Spec returns the placeholder's format as written after ':' in the
// template ("rfc3339", "%08d", "raw=[0-9]+"), or "" for the default.
func (p *Part) Spec() string {
	if p.Pattern != nil {
		return RawConstraint + p.Pattern.Source
	}
	return p.Format.String()
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
// contain byte b. For the default it is every byte from 0x25 up; for raw,
// every byte (the delimiter after a raw value is refused in the value).
func (p *Part) Produces(b byte) bool {
	if p.Format == nil {
		return b >= DelimLimit
	}
	return p.Format.Produces(b)
}

// checkFollower checks the literal lit that follows placeholder p in a
// template: its first byte must end p's values.
func (p *Part) checkFollower(lit string) error {
	b := lit[0]
	switch {
	case p.Format == nil:
		if b >= DelimLimit {
			return fmt.Errorf("placeholder {%s} must be followed by the end of the template or a delimiter byte below 0x25 such as '#', not %q", p.Field, b)
		}
	case p.Format.Kind == format.Text:
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
	if p.Format == nil {
		return TypeSupported(t)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	ok := false
	want := ""
	switch p.Format.Kind {
	case format.Text:
		ok, want = t.Kind() == reflect.String || model.UsesText(t), "a string (or string-kinded or encoding.TextMarshaler) field"
	case format.Time:
		ok, want = t == keyTimeType, "a time.Time field"
	case format.Integer:
		_, w := keyIntWidth(t.Kind())
		ok, want = w > 0 && !model.UsesText(t), "an integer field"
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
	switch p.Format.Kind {
	case format.Text:
		var s string
		if model.UsesText(v.Type()) {
			text, err := keyTextMarshaler(v).MarshalText()
			if err != nil {
				return dst, fmt.Errorf("singletable: %v: %w", v.Type(), err)
			}
			s = string(text)
		} else {
			s = v.String()
		}
		if err := p.checkRaw(s, true); err != nil {
			return dst, err
		}
		return append(dst, s...), nil
	case format.Integer:
		var err error
		if k := v.Kind(); k >= reflect.Int && k <= reflect.Int64 {
			dst, err = p.Format.AppendInt(dst, v.Int())
		} else {
			dst, err = p.Format.AppendUint(dst, v.Uint())
		}
		if err != nil {
			return dst, p.unrepresentable("%v", err)
		}
		return dst, nil
	}
	t := keyTimeOf(v).UTC() // a key's time is UTC, or a zone-less one the wall clock in Loc
	if p.Loc != nil && !p.Format.UTC {
		w := wallClock(t.In(p.Loc))
		if back, _ := p.inLoc(w); !back.Equal(t) {
			return dst, p.unrepresentable("time's wall clock in %s is also another instant's (a clock change repeats it)", p.Loc)
		}
		t = w
	}
	if err := p.Format.Check(t); err != nil {
		return dst, p.unrepresentable("%v", err)
	}
	return p.Format.AppendTime(dst, t), nil
}

// wallClock is t's wall clock as a UTC time, which a format writes as t's.
func wallClock(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// inLoc reads w, a wall clock as a UTC time, in Loc; ok is false for a
// wall clock Loc skips (a clock change jumps over it).
func (p *Part) inLoc(w time.Time) (t time.Time, ok bool) {
	t = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), p.Loc)
	return t, wallClock(t).Equal(w)
}

// checkRaw refuses a raw value that would make two keys alike or break
// the key's bounds: empty, invalid UTF-8, U+10FFFF, holding the
// delimiter that follows the placeholder, or (whole: the value, not a
// BeginsWith prefix of one) not matching its constraint.
func (p *Part) checkRaw(s string, whole bool) error {
	switch {
	case s == "":
		return ErrEmptyValue
	case !utf8.ValidString(s):
		return p.unrepresentable("value is not valid UTF-8")
	case strings.ContainsRune(s, MaxRune):
		return p.unrepresentable("value contains U+10FFFF, reserved as the upper bound of keys")
	case p.Delim >= 0 && strings.IndexByte(s, byte(p.Delim)) >= 0:
		return p.unrepresentable("value contains the delimiter %q that follows it", byte(p.Delim))
	case p.Pattern == nil:
	case whole && !p.Pattern.Match(s):
		return p.unrepresentable("value does not match its constraint")
	case !whole && !p.Pattern.MatchPrefix(s):
		return p.unrepresentable("BeginsWith prefix: no value its constraint matches starts with it")
	}
	return nil
}

// decodeFormatted decodes s, written in the placeholder's format, into the
// settable non-pointer dst. It accepts only what appendFormatted writes.
func (p *Part) decodeFormatted(s string, dst reflect.Value) error {
	t := dst.Type()
	bad := func(want string) error {
		return fmt.Errorf("singletable: key value %q is not a %v in format %s: %s", s, t, p.Spec(), want)
	}
	switch p.Format.Kind {
	case format.Text:
		if err := p.checkRaw(s, true); err != nil {
			return err
		}
		if model.UsesText(t) {
			return decodeText(s, dst)
		}
		dst.SetString(s)
		return nil
	case format.Integer:
		x, ok := p.Format.ParseUint(s)
		if !ok {
			return bad(fmt.Sprintf("want %d digits", p.Format.Width))
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
	tm, ok := p.Format.ParseTime(s)
	if !ok {
		return bad("not the canonical form")
	}
	if p.Loc != nil && (!p.Format.UTC || !strings.HasSuffix(s, "+00:00")) { // zone-less: a wall clock in Loc
		if tm, ok = p.inLoc(tm); !ok {
			return bad(fmt.Sprintf("a wall clock %s skips", p.Loc))
		}
	}
	*dst.Addr().Interface().(*time.Time) = tm
	return nil
}

// AppendPrefix appends prefix, the start of a value of the placeholder
// (BeginsWith), in the placeholder's format: escaped by default, verbatim
// otherwise. A prefix no value of the format can start with is an error
// wrapping ErrUnrepresentable.
func (p *Part) AppendPrefix(dst []byte, prefix string) ([]byte, error) {
	switch {
	case p.Format == nil:
		return AppendEscaped(dst, prefix), nil
	case p.Format.Kind == format.Text:
		if prefix == "" {
			return dst, nil
		}
		if err := p.checkRaw(prefix, false); err != nil {
			return dst, err
		}
		return append(dst, prefix...), nil
	}
	for i := 0; i < len(prefix); i++ {
		if !p.Produces(prefix[i]) {
			return dst, p.unrepresentable("BeginsWith prefix: no value in format %s contains its byte %d", p.Spec(), i+1)
		}
	}
	return append(dst, prefix...), nil
}
