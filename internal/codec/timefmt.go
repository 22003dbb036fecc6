package codec

import (
	"reflect"
	"slices"
	"time"
)

// Times are stored as attributevalue stores them: formatted with
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

// TimeForm is the shape a time field is stored in, chosen by a dynamodbav
// tag option. Other services store times in their own shapes: Python's
// isoformat, JavaScript's toISOString, epoch numbers, bare dates.
type TimeForm uint8

const (
	// TimeDefault: an S in RFC 3339 with nanoseconds, as attributevalue
	// stores a time.
	TimeDefault TimeForm = iota
	// TimeUnix (unixtime or unix): an N of the Unix seconds.
	TimeUnix
	// TimeRFC3339 (rfc3339): an S in UTC to the second, "2025-01-15T10:30:00Z".
	TimeRFC3339
	// TimeRFC3339Milli (rfc3339milli): an S in UTC to the millisecond,
	// "2025-01-15T11:00:00.000Z".
	TimeRFC3339Milli
	// TimeDate (date): an S holding the calendar date of the time in its own
	// location, "2024-03-01".
	TimeDate
	// TimeUnixMilli (unixmilli): an N of the Unix milliseconds.
	TimeUnixMilli
)

// String returns the tag option naming f ("" for TimeDefault).
func (f TimeForm) String() string {
	switch f {
	case TimeUnix:
		return "unix"
	case TimeRFC3339:
		return "rfc3339"
	case TimeRFC3339Milli:
		return "rfc3339milli"
	case TimeDate:
		return "date"
	case TimeUnixMilli:
		return "unixmilli"
	}
	return ""
}

// FormOf returns the TimeForm a dynamodbav tag's options give a field
// ("rfc3339", "unixtime", …), TimeDefault when none.
func FormOf(st reflect.StructTag) TimeForm { return parseTag(st).timeForm() }

// Number reports whether times of form f are stored as an N.
func (f TimeForm) Number() bool { return f == TimeUnix || f == TimeUnixMilli }

// Stored returns t as a read of the attribute form f stores gives it back:
// cut to the second or millisecond, to the day, in UTC or (epoch numbers)
// in local time, as decoding makes it. The zone-less forms are read in loc
// (nil: UTC), as [ParseTime] reads them; only TimeDate is zone-less.
func (f TimeForm) Stored(t time.Time, loc *time.Location) time.Time {
	switch f {
	case TimeUnix:
		return time.Unix(t.Unix(), 0)
	case TimeUnixMilli:
		return time.UnixMilli(t.UnixMilli())
	case TimeRFC3339:
		return t.UTC().Truncate(time.Second)
	case TimeRFC3339Milli:
		return t.UTC().Truncate(time.Millisecond)
	case TimeDate:
		if loc == nil {
			loc = time.UTC
		}
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	return t
}

// appendTime appends the text of t in form f (not a number form).
func appendTime(b []byte, t time.Time, f TimeForm) []byte {
	switch f {
	case TimeRFC3339:
		return t.UTC().AppendFormat(b, "2006-01-02T15:04:05Z")
	case TimeRFC3339Milli:
		return t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	case TimeDate:
		return t.AppendFormat(b, time.DateOnly)
	}
	return appendRFC3339Nano(b, t)
}

// ParseTime parses a stored time text in the shapes other services write,
// for the texts time.Parse(time.RFC3339, s) refuses: RFC 3339 without a
// zone ("2025-01-15T10:30:00.123456", Python's utcnow().isoformat()) and a
// bare date ("2024-03-01"), both read in loc (nil: UTC). A date and time
// separated by a space instead of 'T' is accepted as well.
func ParseTime(s string, loc *time.Location) (time.Time, bool) {
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

// Zoneless reports whether s is a time text that [ParseTime] reads in a
// location: one without a zone.
func Zoneless(s string) bool {
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return false
	}
	_, ok := ParseTime(s, nil)
	return ok
}
