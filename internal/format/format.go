// Package format is the one table of the formats times and numbers are
// written in, in keys and in stored attributes:
//
//   - a key placeholder names one after ':' ({At:rfc3339}, {Seq:%08d},
//     {Name:raw}), to write the exact strings another service stores; a
//     placeholder without one uses the key codec's default, whose times are
//     [KeyTime];
//   - a dynamodbav tag option names a time's stored shape
//     (`dynamodbav:"at,rfc3339"`); a time without one is stored as
//     attributevalue stores it, [StoredTime].
//
// Each format is one entry of table, holding every property the key codec
// (internal/keys), the attribute codec (internal/codec) and the catalog's
// lint read: how a value is written and read back, whether byte order is
// value order, what a value loses (its precision), its width, what it
// refuses, and what the lint says about it. Nothing else lists format
// names. A new time layout is one new entry of table, e.g.
//
//	{Name: "rfc3339micro", Kind: Time, Use: InKeys | InAttrs, UTC: true,
//		Layout: "2006-01-02T15:04:05.000000Z", Cut: time.Microsecond,
//		Width: 27, Holds: "whole microseconds"},
//
// its alphabet, rendering, strict parsing, refusals, attribute cut and
// lint text all follow from its fields, and TestTableEntries checks them
// against what the layout writes. (A named variable is needed only where
// code refers to the entry; a family of names, as %0Nd, is parsed in Key.)
package format

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is what a format writes.
type Kind uint8

const (
	// Time formats write a time.Time.
	Time Kind = iota + 1
	// Integer formats write an integer.
	Integer
	// Text formats write a string (or a TextMarshaler's text) verbatim.
	Text
)

// Use says which names a format answers to.
type Use uint8

const (
	// InKeys: a key placeholder may name it ({At:rfc3339}).
	InKeys Use = 1 << iota
	// InAttrs: a dynamodbav tag option may name it (`dynamodbav:"at,rfc3339"`).
	InAttrs
)

// Order says whether byte order of the written values is value order.
type Order uint8

const (
	// Ordered: byte order is value order, for every value.
	Ordered Order = iota
	// OrderedAtEnd: byte order is value order at the end of a template;
	// before a delimiter, only among values without a byte below it (a
	// verbatim string).
	OrderedAtEnd
	// Unordered: values differ in width, so byte order is value order
	// only among values of one width (epoch numbers).
	Unordered
)

// Format is one entry of the table: a way to write times or integers (or
// strings, verbatim) as text.
type Format struct {
	// Name is the format as written after ':' in a placeholder or as a
	// tag option; "" for the two defaults.
	Name string
	Kind Kind
	Use  Use
	// Layout is the Go layout of a time written as text, of numeric
	// fields ("2006-01-02T15:04:05Z"); "" for an epoch number.
	Layout string
	// UTC: the time is written in UTC. Otherwise a zone-less layout is
	// written in the time's own location, and read in the one the reader
	// declares (UTC by default); keys write and read the wall clock in
	// the entity's Location (UTC by default; internal/keys, Part.Loc).
	UTC bool
	// Epoch is the unit of a time written as a decimal epoch number
	// (time.Second, time.Millisecond); an attribute stores it as an N.
	Epoch time.Duration
	// Cut is a time's precision: the values it writes are whole
	// multiples of it (24h: a date). A key refuses a time finer than
	// Cut; an attribute cuts it.
	Cut time.Duration
	// Width is the length of every value, or 0 when lengths differ.
	Width int
	Order Order
	// Holds says what a value holds ("whole seconds"), for the lint.
	Holds string
	// Caveat is the lint's warning for a format whose byte order is not
	// value order: a fmt template taking the placeholder, its field and
	// the delimiter after it, as %[1]s, %[2]s and %[3]s.
	Caveat string
	// Note is the lint's warning for an ordered format that reads forms
	// it does not write (isoformat), in Caveat's terms.
	Note string

	writer   writer    // a hand-written layout for a hot default
	custom   bool      // a layout given in a placeholder or tag (layout.go)
	alphabet [256]bool // the bytes a value can contain
}

// writer names the hand-written writers of the defaults' layouts (a
// switch, not a func field: a time passed to a func value escapes, and
// would cost an allocation per time written).
type writer uint8

const (
	byLayout    writer = iota // time.AppendFormat, or an epoch number
	keyNano                   // appendKeyTime
	rfc3339Nano               // appendRFC3339Nano
	pyISO                     // appendISOFormat
)

// The named formats and the two defaults: the table. Each is written once
// here; the rest of the package derives from these fields.
var (
	// Raw writes a string (or a TextMarshaler's text) verbatim; a key
	// refuses a value holding the delimiter that follows it.
	Raw = &Format{Name: "raw", Kind: Text, Use: InKeys, Order: OrderedAtEnd,
		Caveat: `a %[1]s value holding a byte that sorts before the %[3]q after it (a space, say) sorts before shorter values ("a b%[3]s" < "a%[3]s"), so ranges and order over %[2]s follow the key's bytes, not the values'; values holding %[3]q are refused`}
	// RFC3339 is a UTC time to the second: 2025-01-15T10:30:00Z.
	RFC3339 = &Format{Name: "rfc3339", Kind: Time, Use: InKeys | InAttrs, Layout: "2006-01-02T15:04:05Z", UTC: true,
		Cut: time.Second, Width: 20, Holds: "whole seconds"}
	// RFC3339Milli is a UTC time to the millisecond: 2025-01-15T11:00:00.000Z.
	RFC3339Milli = &Format{Name: "rfc3339milli", Kind: Time, Use: InKeys | InAttrs, Layout: "2006-01-02T15:04:05.000Z", UTC: true,
		Cut: time.Millisecond, Width: 24, Holds: "whole milliseconds"}
	// Date is a calendar date: 2024-03-01 (a key holds midnight UTC; an
	// attribute, the date of the time in its own location).
	Date = &Format{Name: "date", Kind: Time, Use: InKeys | InAttrs, Layout: time.DateOnly,
		Cut: 24 * time.Hour, Width: 10, Holds: "midnight UTC"}
	// Unix is a time as decimal epoch seconds: 1736937000 (an attribute's
	// N; the tag option is attributevalue's unixtime, or unix).
	Unix = &Format{Name: "unix", Kind: Time, Use: InKeys | InAttrs, Epoch: time.Second,
		Cut: time.Second, Order: Unordered, Holds: "whole seconds", Caveat: epochCaveat}
	// UnixMilli is a time as decimal epoch milliseconds: 1736937000000.
	UnixMilli = &Format{Name: "unixmilli", Kind: Time, Use: InKeys | InAttrs, Epoch: time.Millisecond,
		Cut: time.Millisecond, Order: Unordered, Holds: "whole milliseconds", Caveat: epochCaveat}
	// ISOFormat is Python's datetime.isoformat() of a UTC time, to the
	// microsecond: 2024-01-10T10:00:00+00:00, and
	// 2024-01-10T10:00:00.500000+00:00 when the microseconds are not zero
	// (the canonical form it writes). It also reads what isoformat()
	// writes for a naive time, the same without "+00:00", as UTC.
	ISOFormat = &Format{Name: "isoformat", Kind: Time, Use: InKeys | InAttrs, Layout: "2006-01-02T15:04:05.000000-07:00", UTC: true,
		Cut: time.Microsecond, Holds: "whole microseconds", writer: pyISO, Note: isoNote}
	// Padded writes a non-negative integer as exactly Width decimal
	// digits ("%08d": 00000042); it stands for the family %01d to %020d.
	Padded = &Format{Name: "%0Nd", Kind: Integer, Use: InKeys, Holds: "0 up to the largest number of its width"}

	// KeyTime is the key codec's default for a time: fixed width, so that
	// byte order is time order (RFC3339Nano trims zeros and mis-sorts
	// "…05Z" after "…05.5Z").
	KeyTime = &Format{Kind: Time, Use: InKeys, Layout: "2006-01-02T15:04:05.000000000Z", UTC: true,
		Cut: time.Nanosecond, Width: 30, Holds: "nine fraction digits", writer: keyNano}
	// StoredTime is a stored time's default, as attributevalue stores it:
	// RFC 3339 with nanoseconds, trailing zeros trimmed, in the time's
	// own zone.
	StoredTime = &Format{Kind: Time, Use: InAttrs, Layout: time.RFC3339Nano,
		Cut: time.Nanosecond, Order: Unordered, Holds: "nanoseconds", writer: rfc3339Nano}
)

// table lists the named formats in the order errors name them.
var table = []*Format{
	Raw,
	RFC3339,
	RFC3339Milli,
	Date,
	Unix,
	UnixMilli,
	ISOFormat,
	Padded,
}

// isoNote is what the lint says of isoformat: which keys a bound misses.
const isoNote = `%[1]s writes Python's isoformat() of a UTC time (2024-01-10T10:00:00+00:00, or …T10:00:00.500000+00:00 with microseconds) and also reads the naive forms another service may write (…T10:00:00, …T10:00:00.500000). Keys in every form sort by time, but a naive key sorts just before the canonical key of its own instant (the '+00:00' suffix sorts after the delimiter %[3]q), so a range bound at exactly that instant misplaces it: Ge and Between's lower bound miss it, Lt includes it; Gt, Le and every other instant are exact. A backfill (migrate.Backfill) rewrites such keys in the canonical form`

const epochCaveat = "%[1]s is not fixed width, so keys sort by time only among times with as many digits (epoch seconds have 10 digits from 2001 to 2286) and never across negative ones; prefer rfc3339 or rfc3339milli where you choose the format"

// MaxPadWidth is the widest %0Nd: 20 digits hold every uint64.
const MaxPadWidth = 20

// padded holds the members of Padded's family, %01d to %020d.
var padded [MaxPadWidth + 1]Format

func init() {
	for _, f := range append(table, KeyTime, StoredTime) {
		f.setAlphabet()
	}
	for w := 1; w <= MaxPadWidth; w++ {
		padded[w] = *Padded
		padded[w].Name, padded[w].Width = "%0"+strconv.Itoa(w)+"d", w
	}
}

// setAlphabet derives the bytes a value can contain: every byte for text,
// digits (and '-' for a negative epoch) for numbers, and for a layout its
// digits and its literal bytes.
func (f *Format) setAlphabet() {
	for b := '0'; b <= '9'; b++ {
		f.alphabet[b] = true
	}
	switch {
	case f.Kind == Text:
		for b := range f.alphabet {
			f.alphabet[b] = true
		}
	case f.Epoch != 0:
		f.alphabet['-'] = true
	default:
		for i := 0; i < len(f.Layout); i++ {
			f.alphabet[f.Layout[i]] = true
		}
		if strings.Contains(f.Layout, "07") { // a zone offset: +hh or -hh
			f.alphabet['+'], f.alphabet['-'] = true, true
		}
	}
}

// Key returns the format a placeholder names after ':': a table entry
// taken in keys, or a %0Nd width. It never returns a default.
func Key(spec string) (*Format, error) {
	if f := named(spec, InKeys); f != nil && f != Padded {
		return f, nil
	}
	if strings.HasPrefix(spec, "%0") && strings.HasSuffix(spec, "d") && len(spec) > 3 {
		digits := spec[2 : len(spec)-1]
		w, err := strconv.Atoi(digits)
		if err == nil && digits[0] != '0' && digits[0] != '+' && w >= 1 && w <= MaxPadWidth {
			return &padded[w], nil
		}
	}
	if spec != "" && (spec[0] >= '0' && spec[0] <= '9' || spec[0] == '_') { // a Go layout starts with an element: 2006, 15, 02, _2, …
		return Layout(spec)
	}
	return nil, fmt.Errorf("unknown key format %q (want %s, or a Go time layout such as 2006-01-02T15:04:05)", spec, names(InKeys))
}

// Keyed returns the formats a key placeholder can name, in table order
// (Padded standing for its family %01d to %020d), for tests that must
// cover every format.
func Keyed() []*Format {
	var out []*Format
	for _, f := range table {
		if f.Use&InKeys != 0 {
			out = append(out, f)
		}
	}
	return out
}

// LayoutOption is the dynamodbav tag option that gives a time layout:
// `dynamodbav:"at,layout=2006-01-02T15:04:05"` (attributevalue ignores
// options it does not know; a layout in a tag cannot hold a comma).
const LayoutOption = "layout="

// Attr returns the time format a dynamodbav tag option names (a named
// format, or layout=<Go layout>), or nil; a layout it cannot use is an
// error.
func Attr(option string) (*Format, error) {
	if l, ok := strings.CutPrefix(option, LayoutOption); ok {
		return Layout(l)
	}
	if f := named(option, InAttrs); f != nil && f.Kind == Time {
		return f, nil
	}
	return nil, nil
}

func named(name string, use Use) *Format {
	for _, f := range table {
		if f.Name == name && f.Use&use != 0 {
			return f
		}
	}
	return nil
}

// names lists the names of the formats of one use, for errors.
func names(use Use) string {
	var out []string
	for _, f := range table {
		if f.Use&use == 0 {
			continue
		}
		if f == Padded {
			out = append(out, fmt.Sprintf("%s (N from 1 to %d)", f.Name, MaxPadWidth))
		} else {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ", ")
}

// String returns the format's name ("" for a nil format, the default).
func (f *Format) String() string {
	if f == nil {
		return ""
	}
	return f.Name
}

// Number reports whether an attribute stores f's values as an N (false
// for nil, the default).
func (f *Format) Number() bool { return f != nil && f.Epoch != 0 }

// Produces reports whether a value written in f can contain byte b.
func (f *Format) Produces(b byte) bool { return f.alphabet[b] }

// Lint returns the catalog's finding about placeholder ph (of field, in f,
// followed by the literal next, "" at the end of its template) when field
// is stored in the shape stored (nil: the default): warn when byte order
// is not value order, information otherwise; "" when there is nothing to
// say.
func (f *Format) Lint(ph, field, next string, stored *Format) (text string, warn bool) {
	switch {
	case f.Order == Unordered || f.Order == OrderedAtEnd && next != "":
		return fmt.Sprintf(f.Caveat, ph, field, delimOf(next)), true
	case f.Note != "":
		text := fmt.Sprintf(f.Note, ph, field, delimOf(next))
		if next != "" && next[0] > '+' {
			text += fmt.Sprintf("; and as %q sorts after '+' and '.', a naive whole-second key sorts after the keys of its second that hold microseconds: follow %s with a delimiter below '+', such as '#'", next[:1], ph)
		}
		return text, true
	case f.Kind == Integer:
		return fmt.Sprintf("%s holds %s; a negative or wider value is refused (*KeyError) rather than written out of order", ph, f.Holds), false
	case f.Kind != Time:
		return "", false
	case stored != nil && stored.Cut >= f.Cut:
		return fmt.Sprintf("%s holds %s; %s is stored with the %s option, which cuts times to what it holds before the key is rendered", ph, f.Holds, field, stored.Name), false
	}
	return fmt.Sprintf("%s holds %s; a time with more precision is refused (*KeyError), not cut, so truncate times before writing (or store the field with a time option that cuts them, such as %s)", ph, f.Holds, f.Name), false
}

func delimOf(next string) string {
	if next == "" {
		return ""
	}
	return next[:1]
}

// Title names f in a finding: its name, or for the key default what it
// holds.
func (f *Format) Title() string {
	if f.Name == "" {
		return "the default (" + f.Holds + ")"
	}
	return f.Name
}
