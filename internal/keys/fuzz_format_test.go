package keys

import (
	"bytes"
	"cmp"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
)

// One fuzz target per key format. Each checks, on arbitrary input, the
// three promises of a format: a value it accepts round-trips (and a key
// splits back into it), byte order is value order where the catalog lint
// says the format preserves it, and what the format cannot write exactly
// is refused rather than altered. Each also feeds the raw input to the
// decoder, which must accept only what the encoder writes.

// fuzzTimes maps two int64s onto times spread over years 0000–9999 (and a
// little beyond, to exercise refusals), with the given sub-second part.
func fuzzTime(sec, ns int64) time.Time {
	const lo, span = -62167219200 - 86400, 315537897600 + 2*86400
	return time.Unix(lo+int64(uint64(sec)%span), int64(uint64(ns)%1e9)).In(time.FixedZone("", int(sec%50400)))
}

// fuzzKey is a template bound to the fields of a struct, which a fuzz
// target fills and renders through the one key renderer, Template.Append.
type fuzzKey struct {
	tp     Template
	fields []*model.Field
	v      reflect.Value
}

// bindFuzzKey binds tmpl's placeholders to the fields of a struct with one
// field per placeholder, of zero's types in order.
func bindFuzzKey(t testing.TB, tmpl string, zero ...any) *fuzzKey {
	tp, err := Parse(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	fields, v := bindValues(t, tp, zero)
	return &fuzzKey{tp, fields, v}
}

// render sets the struct's fields to vals and renders the key.
func (k *fuzzKey) render(vals ...any) (string, error) {
	for i, x := range vals {
		k.v.FieldByIndex(k.fields[i].Index).Set(reflect.ValueOf(x))
	}
	b, err := k.tp.Append(nil, k.fields, k.v)
	return string(b), err
}

// fuzzTimeFormat is the body of the time format fuzz targets, for a
// template "{T:format}#". keep is the sub-second precision the format
// holds (1s, 1ms) or 24h for dates. Values are rendered through the one
// key renderer.
func fuzzTimeFormat(t *testing.T, k *fuzzKey, keep time.Duration, ordered bool, a, b int64, na, nb int64, s string) {
	tmpl, p := k.tp.Raw, &k.tp.Parts[0]
	var encs [2]string
	var times [2]time.Time
	for i, x := range [][2]int64{{a, na}, {b, nb}} {
		tm := fuzzTime(x[0], x[1])
		if i == 1 && x[1]%3 == 0 {
			tm = tm.Truncate(keep) // exercise acceptance as much as refusal
		}
		if keep == 24*time.Hour {
			if x[1]%2 == 0 {
				y, m, d := tm.UTC().Date()
				tm = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			}
		} else if x[1]%2 == 0 {
			tm = tm.Truncate(keep)
		}
		key, err := k.render(tm)
		enc := strings.TrimSuffix(key, "#")
		u := tm.UTC()
		representable := u.Year() >= 0 && u.Year() <= 9999
		if keep == 24*time.Hour {
			h, m, sec := u.Clock()
			representable = representable && h == 0 && m == 0 && sec == 0 && u.Nanosecond() == 0
		} else {
			representable = representable && u.Nanosecond()%int(keep) == 0
		}
		if (err == nil) != representable {
			t.Fatalf("%s: encode(%v) = %q, %v; representable %v", tmpl, tm, enc, err, representable)
		}
		if err != nil {
			continue
		}
		var back time.Time
		if err := p.DecodeValue(enc, reflect.ValueOf(&back).Elem()); err != nil || !back.Equal(tm) || back.Location() != time.UTC {
			t.Fatalf("%s: decode(%q) = %v, %v; want %v in UTC", tmpl, enc, back, err, tm)
		}
		if strings.IndexFunc(enc, func(r rune) bool { return r > 127 || !p.Produces(byte(r)) }) >= 0 {
			t.Fatalf("%s: %q holds a byte outside the format's alphabet", tmpl, enc)
		}
		encs[i], times[i] = enc, tm
	}
	if ordered && encs[0] != "" && encs[1] != "" {
		if got, want := strings.Compare(encs[0], encs[1]), times[0].Compare(times[1]); got != want {
			t.Fatalf("%s: compare(%q, %q) = %d for %v, %v; want %d", tmpl, encs[0], encs[1], got, times[0], times[1], want)
		}
	}
	if p.Format == format.ISOFormat {
		fuzzISOForms(t, p, times, s)
		return
	}
	fuzzCanonical[time.Time](t, p, s)
}

// fuzzISOForms checks isoformat's reading of the forms Python writes:
// decoding s succeeds only for the aware or naive isoformat() of the
// decoded time, and keys in either form, followed by '#', sort by time
// (the naive form first within an instant).
func fuzzISOForms(t *testing.T, p *Part, times [2]time.Time, s string) {
	var v time.Time
	if p.DecodeValue(s, reflect.ValueOf(&v).Elem()) == nil {
		if forms := format.ISOForms(v); s != forms[0] && s != forms[1] {
			t.Fatalf("decode(%q) = %v, whose isoformat() forms are %q", s, v, forms)
		}
	}
	if times[0].IsZero() || times[1].IsZero() {
		return
	}
	fa, fb := format.ISOForms(times[0]), format.ISOForms(times[1])
	for i, a := range fa {
		for j, b := range fb {
			got := strings.Compare(a+"#", b+"#")
			want := times[0].Compare(times[1])
			if want == 0 {
				want = cmp.Compare(j, i) // the naive form (1) first
			}
			if got != want {
				t.Fatalf("compare(%q, %q) = %d for %v, %v; want %d", a, b, got, times[0], times[1], want)
			}
		}
	}
}

// fuzzCanonical checks that decoding s succeeds only if s is what the
// format writes for the decoded value.
func fuzzCanonical[V any](t *testing.T, p *Part, s string) {
	var v V
	if p.DecodeValue(s, reflect.ValueOf(&v).Elem()) != nil {
		return
	}
	enc, err := formatEncode(p, v)
	if err != nil || enc != s {
		t.Fatalf("%s: decode(%q) = %v, which encodes to %q, %v", p.Placeholder(), s, v, enc, err)
	}
}

func timeSeeds(f *testing.F) {
	f.Add(int64(0), int64(1), int64(0), int64(0), "2025-01-15T10:30:00Z")
	f.Add(int64(1736937000), int64(1736937001), int64(5e8), int64(999e6), "2025-01-15T11:00:00.000Z")
	f.Add(int64(-1), int64(1<<62), int64(1), int64(3), "2024-03-01")
	f.Add(int64(62167219200), int64(315537897599), int64(2), int64(6), "1736937000")
	f.Add(int64(42), int64(43), int64(7), int64(9), "-0")
}

func FuzzFormatRFC3339(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:rfc3339}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Second, true, a, b, na, nb, s)
	})
}

func FuzzFormatRFC3339Milli(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:rfc3339milli}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Millisecond, true, a, b, na, nb, s)
	})
}

func FuzzFormatISO(f *testing.F) {
	timeSeeds(f)
	f.Add(int64(1704880800), int64(1704880800), int64(0), int64(460000), "2024-01-10T10:00:00.000460")
	k := bindFuzzKey(f, "{T:isoformat}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Microsecond, true, a, b, na, nb, s)
	})
}

// Layouts given in the placeholder: zone-less to the second and to the
// microsecond (ordered, as the lint says), refusing a finer fraction.
func FuzzFormatLayout(f *testing.F) {
	timeSeeds(f)
	f.Add(int64(1704880800), int64(1704880801), int64(0), int64(0), "2024-01-10T10:00:00")
	sec := bindFuzzKey(f, "{T:2006-01-02T15:04:05}#", time.Time{})
	micro := bindFuzzKey(f, "{T:2006-01-02T15:04:05.000000}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, sec, time.Second, sec.tp.Parts[0].Format.Order == format.Ordered, a, b, na, nb, s)
		fuzzTimeFormat(t, micro, time.Microsecond, micro.tp.Parts[0].Format.Order == format.Ordered, a, b, na, nb, s)
	})
}

// A layout the lint calls unordered (day before month) still round-trips
// and refuses what it cannot write.
func FuzzFormatLayoutUnordered(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:02/01/2006 15:04}#", time.Time{})
	if k.tp.Parts[0].Format.Order == format.Ordered {
		f.Fatal("the lint calls 02/01/2006 ordered")
	}
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Minute, false, a, b, na, nb, s)
	})
}

func FuzzFormatDate(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:date}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, 24*time.Hour, true, a, b, na, nb, s)
	})
}

// Unix times are not fixed width, so the lint does not call them
// order-preserving; among times from 2001-09-09 to 2286-11-20 (ten
// digits) they are, which the target checks.
func FuzzFormatUnix(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:unix}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Second, false, a, b, na, nb, s)
		x, y := time.Unix(1e9+int64(uint64(a)%9e9), 0), time.Unix(1e9+int64(uint64(b)%9e9), 0)
		ex, _ := k.render(x)
		ey, _ := k.render(y)
		if strings.Compare(ex, ey) != x.Compare(y) {
			t.Fatalf("ten-digit unix times %q, %q out of order", ex, ey)
		}
	})
}

func FuzzFormatUnixMilli(f *testing.F) {
	timeSeeds(f)
	k := bindFuzzKey(f, "{T:unixmilli}#", time.Time{})
	f.Fuzz(func(t *testing.T, a, b, na, nb int64, s string) {
		fuzzTimeFormat(t, k, time.Millisecond, false, a, b, na, nb, s)
	})
}

func FuzzFormatPadded(f *testing.F) {
	f.Add(int64(42), int64(-1), uint8(8), "00000042")
	f.Add(int64(99999999), int64(100000000), uint8(8), "123456789")
	f.Add(int64(0), int64(1<<62), uint8(20), "00000000000000000000")
	f.Add(int64(7), int64(70), uint8(1), "7")
	base := bindFuzzKey(f, "{N:%08d}#{M}", int64(0), "m")
	f.Fuzz(func(t *testing.T, a, b int64, w uint8, s string) {
		width := 1 + int(w)%format.MaxPadWidth
		tp, err := Parse("{N:%0" + itoa(width) + "d}#{M}")
		if err != nil {
			t.Fatal(err)
		}
		k := &fuzzKey{tp, base.fields, base.v}
		p := &tp.Parts[0]
		var encs [2]string
		for i, x := range []int64{a, b} {
			key, err := k.render(x)
			enc := strings.TrimSuffix(key, "#m")
			representable := x >= 0 && len(itoa(int(x))) <= width
			if (err == nil) != representable {
				t.Fatalf("%%0%dd: encode(%d) = %q, %v; representable %v", width, x, enc, err, representable)
			}
			if err != nil {
				continue
			}
			if len(enc) != width {
				t.Fatalf("%%0%dd: encode(%d) = %q", width, x, enc)
			}
			var back int64
			if err := p.DecodeValue(enc, reflect.ValueOf(&back).Elem()); err != nil || back != x {
				t.Fatalf("%%0%dd: decode(%q) = %d, %v", width, enc, back, err)
			}
			encs[i] = enc
		}
		if encs[0] != "" && encs[1] != "" && strings.Compare(encs[0], encs[1]) != cmp.Compare(a, b) {
			t.Fatalf("%%0%dd: %q, %q out of order for %d, %d", width, encs[0], encs[1], a, b)
		}
		fuzzCanonical[int64](t, p, s)
		fuzzCanonical[uint8](t, p, s)
		fuzzCanonical[uint64](t, p, s)
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// mustKey renders a key from values the template accepts.
func mustKey(t *testing.T, k *fuzzKey, vals ...any) string {
	t.Helper()
	key, err := k.render(vals...)
	if err != nil {
		t.Fatalf("render %q: %v", vals, err)
	}
	return key
}

// FuzzFormatRaw: a raw value is verbatim, refused when it holds the
// delimiter after it (or is empty, invalid UTF-8, or holds U+10FFFF);
// what it accepts renders injectively and splits back; at the end of a
// template byte order is the values' order, and before a delimiter it is
// for values without a byte below the delimiter (what the lint says).
func FuzzFormatRaw(f *testing.F) {
	f.Add("Favorite Language", "Favorite", "x")
	f.Add("c#", "c", "#")
	f.Add("a b", "a", "a\x00")
	f.Add("\U0010FFFF", "\xff", "")
	f.Add("machine learning", "machine", "machine#learning")
	k := bindFuzzKey(f, "E#{A:raw}#{B:raw}", "", "")
	f.Fuzz(func(t *testing.T, a, b, s string) {
		tp, mid, end := k.tp, &k.tp.Parts[1], &k.tp.Parts[3]
		ok := func(x string, delim bool) bool {
			return x != "" && utf8.ValidString(x) && !strings.ContainsRune(x, MaxRune) && !(delim && strings.Contains(x, "#"))
		}
		ea, erra := formatEncode(mid, a)
		eb, errb := formatEncode(end, b)
		if (erra == nil) != ok(a, true) || (errb == nil) != ok(b, false) {
			t.Fatalf("raw: encode(%q) %v, encode(%q) %v", a, erra, b, errb)
		}
		if erra == nil && ea != a || errb == nil && eb != b {
			t.Fatalf("raw is not verbatim: %q → %q, %q → %q", a, ea, b, eb)
		}
		if erra == nil && errb == nil {
			key, err := k.render(a, b)
			if err != nil || key != "E#"+ea+"#"+eb {
				t.Fatalf("render(%q, %q) = %q, %v", a, b, key, err)
			}
			vals, err := tp.Split(key)
			if err != nil || vals[0] != a || vals[1] != b {
				t.Fatalf("Split(%q) = %q, %v; want %q, %q", key, vals, err, a, b)
			}
			// Injective: another accepted pair gives another key.
			for _, alt := range [][2]string{{b, a}, {a + "x", b}, {a, b + "x"}} {
				if ok(alt[0], true) && ok(alt[1], false) && alt != [2]string{a, b} && mustKey(t, k, alt[0], alt[1]) == key {
					t.Fatalf("keys of %q and %q collide", alt, [2]string{a, b})
				}
			}
			// Order: at the end, byte order of values; before '#', also
			// when neither holds a byte below '#'.
			if ok(a, false) && ok(b, false) {
				if got, want := strings.Compare("E#x#"+a, "E#x#"+b), strings.Compare(a, b); got != want {
					t.Fatalf("raw at the end out of order: %q, %q", a, b)
				}
			}
			above := func(x string) bool { return strings.IndexFunc(x, func(r rune) bool { return r < '#' }) < 0 }
			if ok(b, true) && above(a) && above(b) {
				ka, kb := mustKey(t, k, a, "z"), mustKey(t, k, b, "z")
				if got, want := strings.Compare(ka, kb), strings.Compare(a, b); got != want {
					t.Fatalf("raw before '#' out of order: %q, %q", ka, kb)
				}
			}
		}
		for _, p := range []*Part{mid, end} {
			var v string
			if p.DecodeValue(s, reflect.ValueOf(&v).Elem()) == nil {
				if enc, err := formatEncode(p, v); err != nil || enc != s || !bytes.Equal([]byte(v), []byte(s)) {
					t.Fatalf("raw decode(%q) = %q, re-encoded %q, %v", s, v, enc, err)
				}
			}
		}
	})
}
