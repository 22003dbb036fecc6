package keys

import (
	"bytes"
	"cmp"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzKeyCodec checks the codec's promises on arbitrary input: values round
// trip, rendering is injective, prefixes are safe, and encodings keep order.
// It also feeds raw input to every decoder, which must accept only canonical
// encodings.
func FuzzKeyCodec(f *testing.F) {
	seeds := []struct {
		a, b string
		n, m int64
	}{
		{"go", "golang", -1, 0},
		{"go", "go#x", math.MinInt64, math.MaxInt64},
		{"a#b", "a", 1, -1},
		{"a", "#b", 127, -128},
		{"%", "%25", 32767, -32768},
		{"a b", "a\x00b", math.MinInt32, math.MaxInt32},
		{"日本", "🙂", 1 << 62, -(1 << 62)},
		{"\U0010FFFF", "\xff", 0, 0},
		{"\xc3", "\xc3\xa9", 1700000000_000000000, -1700000000_000000000},
		{"", "x", 42, 42},
		{"0000000000000000042", "-9223372036854775807", 0x7ff0000000000000, -0x10000000000000},
		{"2024-01-02T03:04:05.000000000Z", "bff0000000000000", 9, 10},
		{"%C3%A9", "true", 255, 256},
	}
	for _, s := range seeds {
		f.Add(s.a, s.b, s.n, s.m)
	}
	k := bindFuzzKey(f, "A#{A}#B#{B}", "", "")
	tmpl := k.tp
	f.Fuzz(func(t *testing.T, a, b string, n, m int64) {
		esc := func(s string) string { return string(AppendEscaped(nil, s)) }

		// Escaping: round trip, no byte below 0x25, valid UTF-8, no U+10FFFF.
		for _, s := range []string{a, b} {
			e := esc(s)
			if back, err := Unescape(e); err != nil || back != s {
				t.Fatalf("unescape(escape(%q)) = %q, %v", s, back, err)
			}
			if i := strings.IndexFunc(e, func(r rune) bool { return r < DelimLimit }); i >= 0 {
				t.Fatalf("escape(%q) = %q has a byte below 0x25", s, e)
			}
			if !utf8.ValidString(e) || strings.ContainsRune(e, MaxRune) {
				t.Fatalf("escape(%q) = %q is not valid UTF-8 or holds U+10FFFF", s, e)
			}
		}
		if (a == b) != (esc(a) == esc(b)) {
			t.Fatalf("escape is not injective on %q, %q", a, b)
		}
		if sortable(a) && sortable(b) {
			if got, want := strings.Compare(esc(a), esc(b)), strings.Compare(a, b); got != want {
				t.Fatalf("compare(escape(%q), escape(%q)) = %d, want %d", a, b, got, want)
			}
		}

		// Decoders accept only canonical input: decode(s) ok ⇒ encode == s.
		for _, s := range []string{a, b} {
			if raw, err := Unescape(s); err == nil && esc(raw) != s {
				t.Fatalf("Unescape(%q) = %q, which escapes to %q", s, raw, esc(raw))
			}
			for _, dst := range []any{new(string), new(int8), new(int16), new(int32), new(int64), new(uint8), new(uint16),
				new(uint32), new(uint64), new(float32), new(float64), new(bool), new(time.Time), new(keyTestLevel), new(*int)} {
				v := reflect.ValueOf(dst).Elem()
				if DecodeValue(s, v) != nil {
					continue
				}
				enc, err := AppendValue(nil, v)
				if err != nil || string(enc) != s {
					t.Fatalf("decode(%q) into %v gave %v, which encodes to %q, %v", s, v.Type(), v, enc, err)
				}
			}
		}

		// Numbers and times: round trip, and byte order = value order.
		checkOrder(t, n, m, cmp.Compare(n, m))
		checkOrder(t, int32(n), int32(m), cmp.Compare(int32(n), int32(m)))
		checkOrder(t, int16(n), int16(m), cmp.Compare(int16(n), int16(m)))
		checkOrder(t, int8(n), int8(m), cmp.Compare(int8(n), int8(m)))
		checkOrder(t, int(n), int(m), cmp.Compare(n, m))
		checkOrder(t, uint64(n), uint64(m), cmp.Compare(uint64(n), uint64(m)))
		checkOrder(t, uint32(n), uint32(m), cmp.Compare(uint32(n), uint32(m)))
		checkOrder(t, uint16(n), uint16(m), cmp.Compare(uint16(n), uint16(m)))
		checkOrder(t, uint8(n), uint8(m), cmp.Compare(uint8(n), uint8(m)))
		if fn, fm := math.Float64frombits(uint64(n)), math.Float64frombits(uint64(m)); !math.IsNaN(fn) && !math.IsNaN(fm) {
			checkOrder(t, fn, fm, cmp.Compare(fn, fm))
		}
		if fn, fm := math.Float32frombits(uint32(n)), math.Float32frombits(uint32(m)); fn == fn && fm == fm {
			checkOrder(t, fn, fm, cmp.Compare(fn, fm))
		}
		checkTimeOrder(t, time.Unix(0, n), time.Unix(0, m))
		// Spread over the whole 0000–9999 range, one of them in another zone.
		const lo, span = -62167219200, 315537897600 // 0000-01-01 and the seconds to 10000-01-01
		zone := time.FixedZone("", int(n%50400))
		checkTimeOrder(t, time.Unix(lo+int64(uint64(n)%span), int64(uint64(m)%1e9)).In(zone), time.Unix(lo+int64(uint64(m)%span), int64(uint64(n)%1e9)))

		// Templates, rendered by the one key renderer: injective, parse
		// back, prefix-safe.
		if a == "" || b == "" {
			return
		}
		key := func(x, y string) string {
			key, err := k.render(x, y)
			if err != nil || key != "A#"+esc(x)+"#B#"+esc(y) {
				t.Fatalf("render(%q, %q) = %q, %v", x, y, key, err)
			}
			return key
		}
		kab := key(a, b)
		vals, err := tmpl.Split(kab)
		if err != nil || len(vals) != 2 {
			t.Fatalf("Split(%q) = %q, %v", kab, vals, err)
		}
		for i, want := range []string{a, b} {
			var got string
			if err := DecodeValue(vals[i], reflect.ValueOf(&got).Elem()); err != nil || got != want {
				t.Fatalf("decode of split value %q = %q, %v; want %q", vals[i], got, err, want)
			}
		}
		if (key(b, a) == kab) != (a == b) {
			t.Fatalf("key(%q, %q) and key(%q, %q) collide", a, b, b, a)
		}
		c := a + b
		for _, i := range []int{1, len(a) / 2, len(a) - 1, len(a) + 1, len(c) - 1, len(c) / 2} {
			if i <= 0 || i >= len(c) {
				continue
			}
			if (key(c[:i], c[i:]) == kab) != (c[:i] == a) {
				t.Fatalf("key(%q, %q) and key(%q, %q) collide", c[:i], c[i:], a, b)
			}
		}
		key(a, b) // the struct holds a and b again
		pb, err := tmpl.AppendPrefix(nil, k.fields, k.v, 1)
		prefix := string(pb)
		if err != nil || prefix != "A#"+esc(a)+"#B#" {
			t.Fatalf("AppendPrefix for %q = %q, %v", a, prefix, err)
		}
		if !strings.HasPrefix(kab, prefix) || kab >= prefix+"\U0010FFFF" {
			t.Fatalf("key %q outside [%q, prefix+U+10FFFF)", kab, prefix)
		}
		if strings.HasPrefix(key(a+b, b), prefix) {
			t.Fatalf("key for %q matches the prefix %q of %q", a+b, prefix, a)
		}
		if strings.HasPrefix(key(b, a), prefix) != (a == b) {
			t.Fatalf("key for %q and prefix %q of %q disagree", b, prefix, a)
		}
	})
}

// sortable reports whether escaping keeps s's order: valid UTF-8 without
// U+10FFFF.
func sortable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, MaxRune) }

// checkOrder round-trips x and y and checks their encodings compare as want.
func checkOrder[T comparable](t *testing.T, x, y T, want int) {
	t.Helper()
	ex, ey := roundTrip(t, x), roundTrip(t, y)
	if got := strings.Compare(ex, ey); got != want {
		t.Fatalf("%T: compare(%q, %q) = %d for %v, %v; want %d", x, ex, ey, got, x, y, want)
	}
}

func checkTimeOrder(t *testing.T, x, y time.Time) {
	t.Helper()
	var ex, ey []byte
	for _, p := range []struct {
		v   time.Time
		enc *[]byte
	}{{x, &ex}, {y, &ey}} {
		enc, err := AppendValue(nil, reflect.ValueOf(p.v))
		if err != nil {
			t.Fatalf("encode(%v): %v", p.v, err)
		}
		back, err := decodeKeyAs[time.Time](string(enc))
		if err != nil || !back.Equal(p.v) {
			t.Fatalf("decode(%q) = %v, %v; want %v", enc, back, err, p.v)
		}
		*p.enc = enc
	}
	if got, want := bytes.Compare(ex, ey), x.Compare(y); got != want {
		t.Fatalf("compare(%q, %q) = %d for %v, %v; want %d", ex, ey, got, x, y, want)
	}
}
