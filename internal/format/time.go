package format

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Writing, reading and checking the values of the table's formats.

// AppendTime appends t written in time format f.
func (f *Format) AppendTime(dst []byte, t time.Time) []byte {
	switch {
	case f.writer == keyNano:
		return appendKeyTime(dst, t)
	case f.writer == rfc3339Nano:
		return appendRFC3339Nano(dst, t)
	case f.writer == pyISO:
		return appendISOFormat(dst, t)
	case f.Epoch != 0:
		return strconv.AppendInt(dst, f.epochOf(t), 10)
	case f.UTC:
		t = t.UTC()
	}
	return t.AppendFormat(dst, f.Layout)
}

// epochOf returns t in f's epoch unit, rounded down.
func (f *Format) epochOf(t time.Time) int64 {
	return t.Unix()*int64(time.Second/f.Epoch) + int64(t.Nanosecond())/int64(f.Epoch)
}

// FromEpoch returns the time n units of f's epoch after 1970, in UTC as
// every time a read decodes (attributevalue reads one in local time).
func (f *Format) FromEpoch(n int64) time.Time {
	per := int64(time.Second / f.Epoch)
	return time.Unix(n/per, n%per*int64(f.Epoch)).UTC()
}

// Check returns why t cannot be written exactly in f in a key (where every
// time is UTC, or a zone-less one the wall clock in a Location as UTC): a year outside 0000–9999, or a part finer than f.Cut. A
// key refuses such a time rather than altering it.
func (f *Format) Check(t time.Time) error {
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return errors.New("time with a year outside 0000–9999")
	}
	h, m, s := u.Clock()
	day := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second + time.Duration(u.Nanosecond())
	switch {
	case day%f.Cut == 0:
		if f.custom {
			return f.checkLayout(u)
		}
		return nil
	case f.Cut >= 24*time.Hour:
		return errors.New("time is not midnight UTC (or in the entity's Location, if it has one); a date key holds the day only (use time.Date(y, m, d, 0, 0, 0, 0, time.UTC))")
	}
	unit := map[time.Duration]string{time.Microsecond: "Microsecond", time.Millisecond: "Millisecond", time.Second: "Second", time.Minute: "Minute", time.Hour: "Hour"}[f.Cut]
	if unit == "" {
		return fmt.Errorf("time has a fraction of a second finer than the format's %s (truncate it: t.Truncate(%d))", f.Cut, f.Cut)
	}
	return fmt.Errorf("time has a fraction of a %s the format cannot show (truncate it: t.Truncate(time.%s))", strings.ToLower(unit), unit)
}

// checkLayout refuses a UTC time that a custom layout does not write
// whole: one with a date a time-of-day layout leaves out (it reads back
// as 0000-01-01), an afternoon a 12-hour clock without PM drops, a year a
// two-digit year cannot tell.
func (f *Format) checkLayout(u time.Time) error {
	var buf [64]byte
	if back, ok := f.ParseIn(string(f.AppendTime(buf[:0], u)), time.UTC); !ok || !back.Equal(u) {
		return fmt.Errorf("time holds a part the layout %s does not write (a layout without a date holds times on 0000-01-01)", f.Layout)
	}
	return nil
}

// ParseTime reads s, a time written in f in a key, accepting only what
// AppendTime writes for a time Check accepts: a key has one parse. The
// time is in UTC.
func (f *Format) ParseTime(s string) (time.Time, bool) {
	var t time.Time
	if f.Epoch != 0 {
		n, ok := parseCanonicalInt(s)
		if !ok || n < -62167219200*int64(time.Second/f.Epoch) || n > (253402300800*int64(time.Second/f.Epoch)-1) { // 0000-01-01 … 9999-12-31T23:59:59.999…
			return t, false
		}
		t = f.FromEpoch(n).UTC()
	} else {
		layout := f.Layout
		if f.writer == pyISO {
			s, layout = strings.TrimSuffix(s, "+00:00"), "2006-01-02T15:04:05.999999"
		}
		var err error
		if t, err = time.ParseInLocation(layout, s, time.UTC); err != nil {
			return t, false
		}
	}
	// Writing the result back refuses every other spelling of the time
	// (a fraction time.Parse accepts after the seconds, a sign, …);
	// isoformat reads its form without "+00:00" too (a naive time).
	var buf [64]byte
	w := f.AppendTime(buf[:0], t)
	if f.writer == pyISO {
		w = w[:len(w)-len("+00:00")]
	}
	return t, f.Check(t) == nil && string(w) == s
}

// appendISOFormat writes t in UTC as Python's datetime.isoformat() does:
// the microseconds only when they are not zero, and "+00:00".
func appendISOFormat(dst []byte, t time.Time) []byte {
	t = t.UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		dst = AppendDigits(append(dst, '.'), uint64(us), 6)
	}
	return append(dst, "+00:00"...)
}

// ISOForms returns the texts isoformat reads for t (a UTC time of whole
// microseconds): what isoformat() writes for it aware (+00:00, the form
// AppendTime writes) and naive, for tests and backfill checks.
func ISOForms(t time.Time) [2]string {
	aware := string(appendISOFormat(nil, t))
	return [2]string{aware, strings.TrimSuffix(aware, "+00:00")}
}

// parseCanonicalInt parses a decimal int64 as strconv.AppendInt writes it:
// no sign but '-', no leading zeros, no "-0".
func parseCanonicalInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || (digits[0] == '0' && (len(digits) > 1 || len(s) > 1)) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// Stored returns t as reading back an attribute written in f gives it:
// cut to f's precision; in UTC for a UTC layout and an epoch number
// (attributevalue reads one in local time), and for a zone-less layout
// the wall clock of t read in loc (nil: UTC). A nil f, the default,
// keeps t.
func (f *Format) Stored(t time.Time, loc *time.Location) time.Time {
	switch {
	case f == nil:
		return t
	case f.custom: // the wall clock (UTC for a zone) written, read in loc
		back, _ := f.ParseIn(string(f.AppendTime(nil, t)), loc)
		return back
	case f.Epoch != 0:
		return f.FromEpoch(f.epochOf(t))
	case f.UTC:
		return t.UTC().Truncate(f.Cut)
	}
	if loc == nil {
		loc = time.UTC
	}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	w := time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC).Truncate(f.Cut)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
}

// ParseStored reads a stored time text in the shapes other services write,
// for the texts time.Parse(time.RFC3339, s) refuses: RFC 3339 without a
// zone ("2025-01-15T10:30:00.123456", Python's utcnow().isoformat()) and a
// bare date ("2024-03-01"), both read in loc (nil: UTC). A date and time
// separated by a space instead of 'T' is accepted as well.
func ParseStored(s string, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	if len(s) == len(time.DateOnly) {
		t, err := time.ParseInLocation(time.DateOnly, s, loc)
		return t, err == nil
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, loc)
	return t, err == nil
}

// Zoneless reports whether s is a time text that [ParseStored] reads in a
// location: one without a zone.
func Zoneless(s string) bool {
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return false
	}
	_, ok := ParseStored(s, nil)
	return ok
}

// ---- integers ----

// AppendUint appends x in integer format f (Padded: exactly f.Width
// digits), refusing a value wider than f.Width.
func (f *Format) AppendUint(dst []byte, x uint64) ([]byte, error) {
	if digits := decimalLen(x); digits > f.Width {
		return dst, fmt.Errorf("value is wider than %d digits", f.Width)
	}
	return AppendDigits(dst, x, f.Width), nil
}

// AppendInt is AppendUint for a signed value, refusing a negative one.
func (f *Format) AppendInt(dst []byte, n int64) ([]byte, error) {
	if n < 0 {
		return dst, errors.New("negative value")
	}
	return f.AppendUint(dst, uint64(n))
}

// ParseUint reads a value of integer format f, accepting only what
// AppendUint writes.
func (f *Format) ParseUint(s string) (uint64, bool) { return ParseDigits(s, f.Width) }

func decimalLen(x uint64) int {
	n := 1
	for x >= 10 {
		x /= 10
		n++
	}
	return n
}

// AppendDigits appends x as exactly width decimal digits, zero-padded
// (x must fit).
func AppendDigits(dst []byte, x uint64, width int) []byte {
	const zeros = "00000000000000000000"
	dst = append(dst, zeros[:width]...)
	for i := len(dst) - 1; x > 0; i-- {
		dst[i] = byte('0' + x%10)
		x /= 10
	}
	return dst
}

// ParseDigits parses exactly width decimal digits, rejecting overflow of
// uint64.
func ParseDigits(s string, width int) (uint64, bool) {
	if len(s) != width {
		return 0, false
	}
	var x uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if x > (math.MaxUint64-d)/10 {
			return 0, false
		}
		x = x*10 + d
	}
	return x, true
}

// ---- the defaults' hand-written layouts ----

// appendKeyTime writes t in UTC in KeyTime's layout. It is hand-written
// because time.AppendFormat interprets the layout on every call, which
// costs several times more. The year must be 0000–9999.
func appendKeyTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	dst = AppendDigits(dst, uint64(year), 4)
	dst = AppendDigits(append(dst, '-'), uint64(month), 2)
	dst = AppendDigits(append(dst, '-'), uint64(day), 2)
	dst = AppendDigits(append(dst, 'T'), uint64(hour), 2)
	dst = AppendDigits(append(dst, ':'), uint64(minute), 2)
	dst = AppendDigits(append(dst, ':'), uint64(sec), 2)
	dst = AppendDigits(append(dst, '.'), uint64(t.Nanosecond()), 9)
	return append(dst, 'Z')
}

// Stored times are written as attributevalue writes them: formatted with
// time.RFC3339Nano. appendRFC3339Nano computes that text directly for the
// common times (years 0 to 9999, zone offsets under 100 hours), where the
// general layout engine of time.Time.AppendFormat spends most of its work
// on nine separate integer conversions.

// The Unix seconds (in the time's own zone) of the first and last second
// appendRFC3339Nano formats itself: 0000-01-01T00:00:00 and
// 9999-12-31T23:59:59.
const (
	rfcMinSec = -62167219200
	rfcMaxSec = 253402300799
)

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// put2 writes x (0 to 99) as two digits at p[0:2].
func put2(p []byte, x uint) {
	p[0], p[1] = digitPairs[2*x], digitPairs[2*x+1]
}

// appendRFC3339Nano appends to b exactly what
// t.AppendFormat(b, time.RFC3339Nano) appends.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	_, offset := t.Zone()
	sec := t.Unix() + int64(offset)
	if sec < rfcMinSec || sec > rfcMaxSec || offset <= -100*3600 || offset >= 100*3600 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	s := uint64(sec - rfcMinSec) // seconds since 0000-01-01T00:00:00
	days, rem := uint(s/86400), uint(s%86400)

	// The civil date of a day count (H. Hinnant's civil_from_days),
	// counting from 0000-03-01 (year 0 is a leap year: 60 days
	// earlier) moved one 400-year era back, so that all is positive.
	z := days - 60 + 146097
	era := z / 146097
	doe := z - era*146097                                  // day of the era, [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era, [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the year from March 1, [0, 365]
	mp := (5*doy + 2) / 153                                // month from March, [0, 11]
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	year := yoe + era*400 - 400
	if mp >= 10 {
		month -= 12
		year++
	}

	// "YYYY-MM-DDTHH:MM:SS" ".nnnnnnnnn" "+hh:mm", written in place.
	const most = 35
	b = slices.Grow(b, most)
	start := len(b)
	p := b[start : start+most]
	put2(p[0:], year/100)
	put2(p[2:], year%100)
	p[4] = '-'
	put2(p[5:], month)
	p[7] = '-'
	put2(p[8:], day)
	p[10] = 'T'
	put2(p[11:], rem/3600)
	p[13] = ':'
	put2(p[14:], rem/60%60)
	p[16] = ':'
	put2(p[17:], rem%60)
	n := 19
	if ns := uint(t.Nanosecond()); ns != 0 {
		// Nine digits, trailing zeros dropped (never all of them).
		p[19] = '.'
		put2(p[20:], ns/10000000)
		put2(p[22:], ns/100000%100)
		put2(p[24:], ns/1000%100)
		put2(p[26:], ns/10%100)
		p[28] = byte('0' + ns%10)
		n = 29
		for p[n-1] == '0' {
			n--
		}
	}
	if offset == 0 {
		p[n] = 'Z'
		return b[:start+n+1]
	}
	zone := offset / 60 // minutes, truncated as AppendFormat does
	p[n] = '+'
	if zone < 0 {
		p[n] = '-'
		zone = -zone
	}
	put2(p[n+1:], uint(zone/60))
	p[n+3] = ':'
	put2(p[n+4:], uint(zone%60))
	return b[:start+n+6]
}
