package codec

import (
	"strconv"
	"time"
	"unsafe"
)

// direct decodes a scalar attribute value in DynamoDB's compact form
// ({"S":"..."}, {"N":"..."}, {"BOOL":true}, no white space) straight from
// the text into field f of the struct at base, as decodeFast decodes the
// attribute value the SDK makes of it, with neither a scratch attribute
// value nor decodeFast's type switch. It reports false, d unchanged, for
// anything else: another form, kind or shape, escapes where a number or
// time is read, a number that is not plain decimal digits or does not fit
// (the general path then does what decodeFast and the field's decoder
// do, errors included).
func (d *JSON) direct(f *planField, base unsafe.Pointer) bool {
	if f.fkind == fkNone || f.fkind >= fkStrings || base == nil {
		return false
	}
	b, i := d.b, d.i
	if len(b)-i < 8 || b[i] != '{' || b[i+1] != '"' {
		return false
	}
	p := unsafe.Add(base, f.off)
	ok := false
	switch {
	case b[i+3] == '"' && b[i+4] == ':' && (b[i+2] == 'S' || b[i+2] == 'N'):
		d.i = i + 5
		ok = d.directText(f, p, b[i+2] == 'N')
	case f.fkind == fkBool && string(b[i+2:i+8]) == `BOOL":`:
		ok = d.directBool(p, i+8)
	}
	if ok && d.i < len(b) && b[d.i] == '}' {
		d.i++
		return true
	}
	d.i = i
	return false
}

// directText reads the string of an S (an N when num) at d.i into p, a
// field of f's shape.
func (d *JSON) directText(f *planField, p unsafe.Pointer, num bool) bool {
	raw, esc, err := d.rawString()
	if err != nil {
		return false
	}
	switch f.fkind {
	case fkString, fkStringPtr:
		if esc {
			if num { // as scalarInto: an N with escapes takes the general path
				return false
			}
			var ok bool
			if raw, ok = unquote(raw); !ok {
				return false
			}
		}
		s := d.copyString(raw)
		if f.fkind == fkString {
			*(*string)(p) = s
			return true
		}
		sp := (**string)(p)
		if *sp == nil {
			*sp = new(string)
		}
		**sp = s
		return true
	case fkTime:
		if num || esc {
			return false
		}
		tm, ok := timeUTC(raw)
		if !ok { // parsed where it is: a time keeps nothing of its text
			var err error
			if tm, err = time.Parse(time.RFC3339, unsafe.String(unsafe.SliceData(raw), len(raw))); err != nil {
				return false
			}
		}
		*(*time.Time)(p) = tm
		return true
	case fkBool:
		return false
	}
	if esc || !num && !f.asString {
		return false
	}
	return setNumber(f.fkind, p, raw)
}

// directBool reads true or false at i into the bool at p.
func (d *JSON) directBool(p unsafe.Pointer, i int) bool {
	b := d.b[i:]
	switch {
	case len(b) >= 4 && string(b[:4]) == "true":
		*(*bool)(p), d.i = true, i+4
	case len(b) >= 5 && string(b[:5]) == "false":
		*(*bool)(p), d.i = false, i+5
	default:
		return false
	}
	return true
}

// setNumber sets the number of kind k at p to the value of s, the text of
// a number, as setNumberText does; plain decimal integers without strconv.
func setNumber(k fastKind, p unsafe.Pointer, s []byte) bool {
	switch k {
	case fkInt64, fkInt32, fkInt16, fkInt8:
		t, neg := s, len(s) > 0 && s[0] == '-'
		if len(t) > 0 && (neg || t[0] == '+') {
			t = t[1:]
		}
		if u, ok := decimal(t, 18); ok {
			i := int64(u)
			if neg {
				i = -i
			}
			return setInt(k, p, i)
		}
	case fkUint64, fkUint32, fkUint16, fkUint8:
		if u, ok := decimal(s, 19); ok {
			return setUint(k, p, u)
		}
	}
	return setNumberText(k, p, unsafe.String(unsafe.SliceData(s), len(s)))
}

// setNumberText sets the number of kind k at p to s parsed by strconv as
// attributevalue parses it, when it parses and fits; false, p unchanged,
// otherwise.
func setNumberText(k fastKind, p unsafe.Pointer, s string) bool {
	switch k {
	case fkFloat64, fkFloat32:
		x, err := strconv.ParseFloat(s, 64)
		return err == nil && setFloat(k, p, x)
	case fkUint64, fkUint32, fkUint16, fkUint8:
		u, err := strconv.ParseUint(s, 10, 64)
		return err == nil && setUint(k, p, u)
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return err == nil && setInt(k, p, i)
}

// decimal is the value of s, 1 to max decimal digits.
func decimal(s []byte, max int) (uint64, bool) {
	if len(s) == 0 || len(s) > max {
		return 0, false
	}
	var n uint64
	for _, c := range s {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + uint64(c)
	}
	return n, true
}

// setInt sets the signed integer of kind k at p to i if it fits.
func setInt(k fastKind, p unsafe.Pointer, i int64) bool {
	switch k {
	case fkInt64:
		*(*int64)(p) = i
		return true
	case fkInt32:
		return fits[int32](p, i)
	case fkInt16:
		return fits[int16](p, i)
	case fkInt8:
		return fits[int8](p, i)
	}
	return false
}

// setUint sets the unsigned integer of kind k at p to u if it fits.
func setUint(k fastKind, p unsafe.Pointer, u uint64) bool {
	switch k {
	case fkUint64:
		*(*uint64)(p) = u
		return true
	case fkUint32:
		return fits[uint32](p, u)
	case fkUint16:
		return fits[uint16](p, u)
	case fkUint8:
		return fits[uint8](p, u)
	}
	return false
}

// fits sets the N at p to v if N holds v.
func fits[N int8 | int16 | int32 | uint8 | uint16 | uint32, V int64 | uint64](p unsafe.Pointer, v V) bool {
	if V(N(v)) != v {
		return false
	}
	*(*N)(p) = N(v)
	return true
}

// setFloat sets the float of kind k at p to x if it fits.
func setFloat(k fastKind, p unsafe.Pointer, x float64) bool {
	if k == fkFloat64 {
		*(*float64)(p) = x
		return true
	}
	if overflowFloat32(x) {
		return false
	}
	*(*float32)(p) = float32(x)
	return true
}

// timeUTC is time.Parse(time.RFC3339, s) for s in UTC, as DynamoDB items
// hold times (2006-01-02T15:04:05.999999999Z); false for any other s,
// which time.Parse reads.
func timeUTC(s []byte) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[len(s)-1] != 'Z' ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := decimal(s[0:4], 4)
	month, ok2 := decimal(s[5:7], 2)
	day, ok3 := decimal(s[8:10], 2)
	hour, ok4 := decimal(s[11:13], 2)
	minute, ok5 := decimal(s[14:16], 2)
	sec, ok6 := decimal(s[17:19], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > uint64(daysIn(int(month), int(year))) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	var nsec uint64
	if f := s[19 : len(s)-1]; len(f) > 0 { // .digits, the first 9 read
		if len(f) < 2 || f[0] != '.' {
			return time.Time{}, false
		}
		for i, c := range f[1:] {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			if i < 9 {
				nsec = nsec*10 + uint64(c-'0')
			}
		}
		for n := len(f) - 1; n < 9; n++ {
			nsec *= 10
		}
	}
	days := daysFromCivil(int64(year), int64(month), int64(day))
	return time.Unix(days*86400+int64(hour*3600+minute*60+sec), int64(nsec)).UTC(), true
}

// daysIn is the number of days of month m of year y.
func daysIn(m, y int) int {
	if m == 2 {
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (m+m/8)%2
}

// daysFromCivil is the day of y-m-d (proleptic Gregorian) counted from
// 1970-01-01 (H. Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	doy := (153*((m+9)%12)+2)/5 + d - 1
	return era*146097 + yoe*365 + yoe/4 - yoe/100 + doy - 719468
}
