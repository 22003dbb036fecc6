package codec

import (
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
