package format

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Time layouts given in a placeholder ({At:2006-01-02T15:04:05},
// {At:15:04:05}) or a tag option (`dynamodbav:"at,layout=15:04:05"`): a
// Go layout of numeric elements, made into an entry of the table on first
// use and cached. Its fields follow from its elements: the precision is
// the finest element (.000000: microseconds), the width is fixed unless an
// element is not padded, and byte order is time order when every element
// is fixed width and they run from the year down (no day before the
// month, no 12-hour clock, no two-digit year). A layout with a zone
// offset writes the time in UTC (+00:00, or Z for Z07:00); without one the
// layout is zone-less: keys write and read the wall clock in the entity's
// Location (UTC by default), attributes write the time's wall clock and
// read it in the entity's Location.

// layouts caches the entries built from layouts, by layout.
var layouts sync.Map

// Layout returns the table entry of a Go time layout, building it on
// first use. Only numeric elements are accepted (no month or weekday
// names, no zone abbreviation), so that a value's bytes are known.
func Layout(layout string) (*Format, error) {
	if f, ok := layouts.Load(layout); ok {
		return f.(*Format), nil
	}
	f, err := newLayout(layout)
	if err != nil {
		return nil, err
	}
	got, _ := layouts.LoadOrStore(layout, f)
	return got.(*Format), nil
}

// element is one element of a layout: its text, what it holds (its rank,
// year first; 0 for a zone), its width (0: varies) and the bytes beyond
// digits it writes.
type element struct {
	text  string
	rank  int
	unit  time.Duration
	width int
	extra string
	why   string // why it breaks byte order, "" when it does not
}

// Ranks of the elements: a layout keeps order when ranks never go down.
const (
	rankZone = iota
	rankYear
	rankMonth
	rankDay
	rankHour
	rankMinute
	rankSecond
	rankFraction
)

// elements lists the layout elements taken, longest first where one is a
// prefix of another (as time's own parser matches them).
var elements = []element{
	{text: "2006", rank: rankYear, unit: 24 * time.Hour, width: 4},
	{text: "002", rank: rankDay, unit: 24 * time.Hour, width: 3},
	{text: "06", rank: rankYear, unit: 24 * time.Hour, width: 2, why: "a two-digit year (06) sorts 1999 after 2000"},
	{text: "01", rank: rankMonth, unit: 24 * time.Hour, width: 2},
	{text: "02", rank: rankDay, unit: 24 * time.Hour, width: 2},
	{text: "_2", rank: rankDay, unit: 24 * time.Hour, width: 2, extra: " "},
	{text: "15", rank: rankHour, unit: time.Hour, width: 2},
	{text: "03", rank: rankHour, unit: time.Hour, width: 2, why: "a 12-hour clock (03) sorts 01 PM before 11 AM"},
	{text: "04", rank: rankMinute, unit: time.Minute, width: 2},
	{text: "05", rank: rankSecond, unit: time.Second, width: 2},
	{text: "PM", rank: rankHour, width: 2, extra: "AMP", why: "a 12-hour clock (PM) sorts 01 PM before 11 AM"},
	{text: "pm", rank: rankHour, width: 2, extra: "amp", why: "a 12-hour clock (pm) sorts 01 pm before 11 am"},
	{text: "Z07:00", rank: rankZone, extra: "Z+-:"},
	{text: "Z0700", rank: rankZone, extra: "Z+-"},
	{text: "Z07", rank: rankZone, extra: "Z+-"},
	{text: "-07:00", rank: rankZone, width: 6, extra: "+-:"},
	{text: "-0700", rank: rankZone, width: 5, extra: "+-"},
	{text: "-07", rank: rankZone, width: 3, extra: "+-"},
	{text: "1", rank: rankMonth, unit: 24 * time.Hour, why: "a month without padding (1) sorts 10 before 9"},
	{text: "2", rank: rankDay, unit: 24 * time.Hour, why: "a day without padding (2) sorts 10 before 9"},
	{text: "3", rank: rankHour, unit: time.Hour, why: "an hour without padding (3) sorts 10 before 9"},
	{text: "4", rank: rankMinute, unit: time.Minute, why: "a minute without padding (4) sorts 10 before 9"},
	{text: "5", rank: rankSecond, unit: time.Second, why: "a second without padding (5) sorts 10 before 9"},
}

// nextElement returns the element layout starts with (a fraction: .000,
// .999, ,000 …, built here), or ok false for a literal byte.
func nextElement(layout string) (e element, ok bool) {
	if c := layout[0]; (c == '.' || c == ',') && len(layout) > 1 && (layout[1] == '0' || layout[1] == '9') {
		n := 1
		for n < len(layout) && layout[n] == layout[1] {
			n++
		}
		if n < len(layout) && layout[n] >= '0' && layout[n] <= '9' {
			return e, false
		}
		digits := n - 1
		if digits > 9 {
			return e, false
		}
		unit := time.Duration(1)
		for range 9 - digits {
			unit *= 10
		}
		e = element{text: layout[:n], rank: rankFraction, unit: unit, width: n, extra: string(c)}
		if layout[1] == '9' {
			e.width, e.why = 0, "a fraction without trailing zeros ("+layout[:n]+") sorts …05Z after …05.5Z"
		}
		return e, true
	}
	for _, e := range elements {
		if strings.HasPrefix(layout, e.text) {
			return e, true
		}
	}
	return e, false
}

// newLayout builds the entry of a layout.
func newLayout(layout string) (*Format, error) {
	if layout == "" {
		return nil, errors.New("empty time layout")
	}
	f := &Format{Name: layout, Kind: Time, Use: InKeys | InAttrs, Layout: layout, custom: true, Cut: 24 * time.Hour}
	var why []string
	rank, width, fixed, zone := 0, 0, true, false
	lit := ""
	for rest := layout; rest != ""; {
		e, ok := nextElement(rest)
		if !ok {
			c := rest[0]
			if c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' && c != 'T' || c >= 'a' && c <= 'z' || c >= 0x80 || c < ' ' {
				return nil, fmt.Errorf("time layout %q: %q at offset %d is not a numeric layout element (2006 01 02 15 04 05 .000 -07:00 …) or a separator; month and weekday names and zone abbreviations are not taken", layout, c, len(layout)-len(rest))
			}
			lit += string(c)
			width++
			rest = rest[1:]
			continue
		}
		rest = rest[len(e.text):]
		if e.rank == rankZone {
			zone = true
		}
		if e.unit != 0 && e.unit < f.Cut {
			f.Cut = e.unit
		}
		if e.width == 0 {
			fixed = false
		}
		width += e.width
		lit += e.extra
		switch {
		case e.why != "":
			why = append(why, e.why)
		case e.rank != rankZone && e.rank < rank:
			why = append(why, fmt.Sprintf("%s comes after a smaller unit, so keys sort by it last", e.text))
		}
		if e.rank != rankZone {
			rank = e.rank
		}
	}
	f.UTC = zone
	if fixed {
		f.Width = width
	}
	f.Holds = holds(f.Cut)
	if len(why) > 0 {
		f.Order = Unordered
		f.Caveat = "%[1]s does not keep byte order equal to time order (" + strings.ReplaceAll(strings.Join(why, "; "), "%", "%%") + "), so ranges and order over %[2]s follow the key's bytes, not the times"
	}
	// The alphabet: digits, the literal bytes and the elements' extras.
	f.Layout = layout
	for b := '0'; b <= '9'; b++ {
		f.alphabet[b] = true
	}
	for i := 0; i < len(lit); i++ {
		f.alphabet[lit[i]] = true
	}
	return f, nil
}

// holds words a precision for the lint.
func holds(cut time.Duration) string {
	switch cut {
	case 24 * time.Hour:
		return "whole days"
	case time.Hour:
		return "whole hours"
	case time.Minute:
		return "whole minutes"
	case time.Second:
		return "whole seconds"
	case time.Millisecond:
		return "whole milliseconds"
	case time.Microsecond:
		return "whole microseconds"
	case time.Nanosecond:
		return "nanoseconds"
	}
	return "multiples of " + cut.String()
}

// Custom reports whether f is a layout given in a placeholder or tag,
// which reads its own layout rather than RFC 3339.
func (f *Format) Custom() bool { return f != nil && f.custom }

// ParseIn reads s, a stored attribute in a custom layout f, in loc (nil:
// UTC) when the layout has no zone.
func (f *Format) ParseIn(s string, loc *time.Location) (time.Time, bool) {
	if loc == nil || f.UTC {
		loc = time.UTC
	}
	t, err := time.ParseInLocation(f.Layout, s, loc)
	return t, err == nil
}
