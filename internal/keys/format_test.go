package keys

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/singletable-go/singletable/internal/format"
)

// formatPart parses a one-placeholder template and returns its placeholder.
func formatPart(t testing.TB, tmpl string) (Template, *Part) {
	t.Helper()
	tp, err := Parse(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tp.Parts {
		if tp.Parts[i].IsPlaceholder() {
			return tp, &tp.Parts[i]
		}
	}
	t.Fatalf("%q has no placeholder", tmpl)
	return tp, nil
}

func formatEncode(p *Part, v any) (string, error) {
	b, err := p.AppendValue(nil, reflect.ValueOf(v))
	return string(b), err
}

func TestParseFormats(t *testing.T) {
	cases := []struct {
		tmpl   string
		format *format.Format
		width  int
		delim  int
		spec   string
	}{
		{"ELECTION#{Name:raw}", format.Raw, 0, -1, "raw"},
		{"{Name:raw}#X", format.Raw, 0, '#', "raw"},
		{"{Name:raw}x", format.Raw, 0, 'x', "raw"},
		{"{At:rfc3339}", format.RFC3339, 20, -1, "rfc3339"},
		{"{At:rfc3339milli}#", format.RFC3339Milli, 24, '#', "rfc3339milli"},
		{"MEAL#{Day:date}", format.Date, 10, -1, "date"},
		{"{At:unix}#", format.Unix, 0, '#', "unix"},
		{"{At:unixmilli}", format.UnixMilli, 0, -1, "unixmilli"},
		{"{Seq:%08d}#{At:rfc3339}", format.Padded, 8, '#', "%08d"},
		{"{Seq:%01d}", format.Padded, 1, -1, "%01d"},
		{"{Seq:%020d}", format.Padded, 20, -1, "%020d"},
		{"{Seq:%08d}-", format.Padded, 8, '-', "%08d"},
		{"{Day:date}T", format.Date, 10, 'T', "date"},
	}
	for _, c := range cases {
		t.Run(c.tmpl, func(t *testing.T) {
			_, p := formatPart(t, c.tmpl)
			same := p.Format == c.format // a named format is its table entry; %0Nd a member of Padded's family
			if c.format == format.Padded {
				same = p.Format.Kind == format.Integer && p.Format.Holds == format.Padded.Holds
			}
			if !same || p.Format.Width != c.width || p.Delim != c.delim || p.Spec() != c.spec {
				t.Fatalf("part = %+v (spec %q), want format %v width %d delim %d spec %q", *p, p.Spec(), c.format, c.width, c.delim, c.spec)
			}
			if want := "{" + p.Field + ":" + c.spec + "}"; p.Placeholder() != want {
				t.Errorf("Placeholder() = %q, want %q", p.Placeholder(), want)
			}
		})
	}
}

func TestParseFormatErrors(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{"{A:}", "unknown key format"},
		{"{A:RFC3339}", "unknown key format"},
		{"{A:rfc3339nano}", "unknown key format"},
		{"{A:%8d}", "unknown key format"},
		{"{A:%00d}", "unknown key format"},
		{"{A:%021d}", "unknown key format"},
		{"{A:%0-8d}", "unknown key format"},
		{"{A:%0+8d}", "unknown key format"},
		{"{A:%08x}", "unknown key format"},
		{"{A:raw:raw}", "unknown key format"},
		{"{:raw}", "not a Go field name"},
		{"{A:rfc3339}-x", "cannot contain"},
		{"{A:rfc3339}:x", "cannot contain"},
		{"{A:rfc3339milli}.x", "cannot contain"},
		{"{A:rfc3339}Z", "cannot contain"},
		{"{A:date}-", "cannot contain"},
		{"{A:date}1", "cannot contain"},
		{"{A:unix}-", "cannot contain"},
		{"{A:%08d}5", "cannot contain"},
		{"{A:raw}é", "ASCII delimiter"},
		{"{A:raw}{B}", "adjacent"},
		{"{A}x", "below 0x25"},
	}
	for _, c := range cases {
		t.Run(c.tmpl, func(t *testing.T) {
			_, err := Parse(c.tmpl)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse(%q) = %v, want an error mentioning %q", c.tmpl, err, c.want)
			}
		})
	}
}

// The documented key strings of the example designs, rendered by the formats.
func TestFormatsRenderDocumentedStrings(t *testing.T) {
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	cases := []struct {
		tmpl string
		vals []any
		want string
	}{
		{"{Seq:%08d}#{At:rfc3339}", []any{int64(42), at}, "00000042#2025-01-15T10:30:00Z"},
		{"{At:rfc3339}#{ID:raw}", []any{time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC), "456"}, "2024-01-07T10:00:00Z#456"},
		{"CREATED_AT#{At:rfc3339milli}", []any{time.Date(2025, 1, 15, 11, 0, 0, 0, time.FixedZone("", 3600)).Add(3600 * time.Second)}, "CREATED_AT#2025-01-15T11:00:00.000Z"},
		{"CREATED_AT#{At:rfc3339milli}", []any{time.Date(2025, 1, 15, 11, 0, 0, 123e6, time.UTC)}, "CREATED_AT#2025-01-15T11:00:00.123Z"},
		{"MEAL#{Day:date}", []any{time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}, "MEAL#2024-03-01"},
		{"ELECTION#{Name:raw}", []any{"Favorite Language"}, "ELECTION#Favorite Language"},
		{"SKILL#{Name:raw}", []any{"c#"}, "SKILL#c#"},
		{"T#{At:unix}", []any{at}, "T#1736937000"},
		{"T#{At:unixmilli}", []any{at.Add(5 * time.Millisecond)}, "T#1736937000005"},
		{"T#{At:unix}", []any{time.Unix(-5, 0)}, "T#-5"},
		{"N#{N:%03d}", []any{uint8(7)}, "N#007"},
		{"N#{N:%03d}", []any{ptrTo(999)}, "N#999"},
		{"N#{N:%020d}", []any{uint64(1<<64 - 1)}, "N#18446744073709551615"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			tp, err := Parse(c.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			key := mustRender(t, tp, -1, c.vals...)
			if key != c.want {
				t.Fatalf("rendered %q, want %q", key, c.want)
			}
			// And back: Split, then decode each value into its type.
			split, err := tp.Split(key)
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for j := range tp.Parts {
				p := &tp.Parts[j]
				if !p.IsPlaceholder() {
					continue
				}
				dst := reflect.New(reflect.TypeOf(c.vals[i])).Elem()
				if err := p.DecodeValue(split[i], dst); err != nil {
					t.Fatalf("decode %q: %v", split[i], err)
				}
				want := reflect.ValueOf(c.vals[i])
				if tm, ok := c.vals[i].(time.Time); ok {
					if got := dst.Interface().(time.Time); !got.Equal(tm) || got.Location() != time.UTC {
						t.Fatalf("decoded %v, want %v in UTC", got, tm)
					}
				} else if want.Kind() == reflect.Pointer {
					if dst.Elem().Interface() != want.Elem().Interface() {
						t.Fatalf("decoded %v, want %v", dst.Elem(), want.Elem())
					}
				} else if dst.Interface() != c.vals[i] {
					t.Fatalf("decoded %v, want %v", dst, c.vals[i])
				}
				i++
			}
		})
	}
}

// What a format cannot write exactly is refused, never altered.
func TestFormatsRefuse(t *testing.T) {
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	cases := []struct {
		tmpl string
		v    any
		want error
		text string
	}{
		{"{S:raw}#", "a#b", ErrUnrepresentable, "delimiter"},
		{"{S:raw}$x", "a$", ErrUnrepresentable, "delimiter"},
		{"{S:raw}#", "", ErrEmptyValue, ""},
		{"X#{S:raw}", "", ErrEmptyValue, ""},
		{"X#{S:raw}", "a\xffb", ErrUnrepresentable, "UTF-8"},
		{"X#{S:raw}", "a\U0010FFFF", ErrUnrepresentable, "U+10FFFF"},
		{"X#{S:raw}", (*string)(nil), ErrMissingValue, ""},
		{"{N:%08d}", -1, ErrUnrepresentable, "negative"},
		{"{N:%08d}", 123456789, ErrUnrepresentable, "wider than 8"},
		{"{N:%02d}", uint16(100), ErrUnrepresentable, "wider than 2"},
		{"{T:rfc3339}", at.Add(time.Millisecond), ErrUnrepresentable, "fraction of a second"},
		{"{T:rfc3339}", at.Add(1), ErrUnrepresentable, "fraction of a second"},
		{"{T:unix}", at.Add(time.Microsecond), ErrUnrepresentable, "fraction of a second"},
		{"{T:rfc3339milli}", at.Add(time.Microsecond), ErrUnrepresentable, "fraction of a millisecond"},
		{"{T:unixmilli}", at.Add(1), ErrUnrepresentable, "fraction of a millisecond"},
		{"{T:date}", at, ErrUnrepresentable, "not midnight UTC"},
		{"{T:date}", time.Date(2024, 3, 1, 0, 0, 0, 0, time.FixedZone("", 3600)), ErrUnrepresentable, "not midnight UTC"},
		{"{T:rfc3339}", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ErrUnrepresentable, "year"},
		{"{T:unix}", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), ErrUnrepresentable, "year"},
		{"{T:date}", (*time.Time)(nil), ErrMissingValue, ""},
	}
	for _, c := range cases {
		t.Run(c.tmpl+"/"+c.text, func(t *testing.T) {
			_, p := formatPart(t, c.tmpl)
			got, err := formatEncode(p, c.v)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("encode(%v) = %q, %v; want %v mentioning %q", c.v, got, err, c.want, c.text)
			}
		})
	}
}

// Issue 23, item 2: a refusal names the placeholder and the rule, never
// the value, for every format of internal/format's table (a new format is
// covered when listed; a new kind fails until its values are listed here)
// and for the default; BeginsWith prefixes likewise.
func TestFormatsRefuseWithoutQuoting(t *testing.T) {
	const secret = "S3CRET-7f1c"
	frac := time.Date(2031, 7, 19, 13, 37, 42, 123456789, time.UTC)
	late, early := time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC), time.Date(-4242, 6, 7, 8, 9, 10, 0, time.UTC)
	type refusal struct {
		v     any
		rule  string
		leaks []string
	}
	timeLeaks := func(tm time.Time) []string {
		return []string{tm.String(), tm.Format(time.RFC3339Nano), fmt.Sprint(tm.Unix()), fmt.Sprint(tm.UnixMilli()), fmt.Sprint(tm.Year())}
	}
	refusals := map[format.Kind][]refusal{
		format.Text: {
			{"m." + secret + "#x", "delimiter '#'", []string{secret, "m."}},
			{secret + "\xff", "not valid UTF-8", []string{secret}},
			{secret + "\U0010FFFF", "U+10FFFF", []string{secret}},
		},
		format.Time: {
			{late, "year outside 0000–9999", timeLeaks(late)},
			{early, "year outside 0000–9999", timeLeaks(early)},
			{frac, "", append(timeLeaks(frac), "13:37", "123456789", "2031")},
		},
		format.Integer: {
			{int64(-4242424242), "negative", []string{"4242424242"}},
			{uint64(987654321), "wider than 8 digits", []string{"987654321"}},
		},
	}
	check := func(where string, err error, rule string, leaks []string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", where)
			return
		}
		if !strings.Contains(err.Error(), rule) {
			t.Errorf("%s: %q does not name the rule %q", where, err, rule)
		}
		for _, leak := range leaks {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: %q quotes %q", where, err, leak)
			}
		}
	}
	for _, f := range format.Keyed() {
		spec := f.Name
		if f == format.Padded {
			spec = "%08d"
		}
		rs, ok := refusals[f.Kind]
		if !ok {
			t.Fatalf("format %s: no refusals listed for its kind", f.Name)
		}
		_, p := formatPart(t, "X#{V:"+spec+"}#Y")
		for _, r := range rs {
			_, err := formatEncode(p, r.v)
			rule := r.rule
			if rule == "" && f.Cut >= 24*time.Hour {
				rule = "not midnight UTC"
			} else if rule == "" {
				rule = "the format cannot show"
			}
			where := fmt.Sprintf("{V:%s} %v", spec, r.v)
			check(where, err, rule, r.leaks)
			if !errors.Is(err, ErrUnrepresentable) || !strings.Contains(err.Error(), p.Placeholder()) {
				t.Errorf("%s: %v does not wrap ErrUnrepresentable naming %s", where, err, p.Placeholder())
			}
		}
		prefix, rule := "2031-"+secret, "no value in format "+spec
		if f.Kind == format.Text {
			prefix, rule = "m."+secret+"#", "delimiter '#'"
		}
		_, err := p.AppendPrefix(nil, prefix)
		check(fmt.Sprintf("{V:%s} prefix %q", spec, prefix), err, rule, []string{secret, "2031", "m."})
	}
	for _, r := range refusals[format.Time][:2] {
		_, err := AppendValue(nil, reflect.ValueOf(r.v))
		check(fmt.Sprintf("default %v", r.v), err, r.rule, r.leaks)
	}
}

func TestFormatsCheckType(t *testing.T) {
	type name string
	ok := []struct {
		tmpl string
		v    any
	}{
		{"{A:raw}", ""}, {"{A:raw}", name("")}, {"{A:raw}", (*string)(nil)}, {"{A:raw}", keyTestLevel(0)},
		{"{A:rfc3339}", time.Time{}}, {"{A:date}", (*time.Time)(nil)}, {"{A:unix}", time.Time{}},
		{"{A:%08d}", 0}, {"{A:%08d}", uint8(0)}, {"{A:%08d}", (*int64)(nil)},
	}
	for _, c := range ok {
		_, p := formatPart(t, c.tmpl)
		if err := p.CheckType(reflect.TypeOf(c.v)); err != nil {
			t.Errorf("%s on %T: %v", c.tmpl, c.v, err)
		}
	}
	bad := []struct {
		tmpl string
		v    any
	}{
		{"{A:raw}", 1}, {"{A:raw}", time.Time{}}, {"{A:rfc3339}", ""}, {"{A:rfc3339}", 1},
		{"{A:unix}", int64(0)}, {"{A:%08d}", ""}, {"{A:%08d}", 1.5}, {"{A:%08d}", time.Time{}}, {"{A:%08d}", keyTestLevel(0)},
	}
	for _, c := range bad {
		_, p := formatPart(t, c.tmpl)
		if err := p.CheckType(reflect.TypeOf(c.v)); err == nil || !strings.Contains(err.Error(), p.Spec()) {
			t.Errorf("%s on %T: %v, want an error naming the format", c.tmpl, c.v, err)
		}
	}
}

// Decoders accept only what the format writes, so a key has one parse.
func TestFormatsDecodeRejectsNonCanonical(t *testing.T) {
	cases := []struct {
		tmpl string
		s    string
		dst  any
	}{
		{"{T:rfc3339}", "2025-01-15T10:30:00.000Z", new(time.Time)},
		{"{T:rfc3339}", "2025-01-15T10:30:00+00:00", new(time.Time)},
		{"{T:rfc3339}", "2025-01-15 10:30:00Z", new(time.Time)},
		{"{T:rfc3339}", "2025-02-30T10:30:00Z", new(time.Time)},
		{"{T:rfc3339}", "2025-01-15T24:00:00Z", new(time.Time)},
		{"{T:rfc3339milli}", "2025-01-15T10:30:00Z", new(time.Time)},
		{"{T:rfc3339milli}", "2025-01-15T10:30:00.1Z", new(time.Time)},
		{"{T:date}", "2024-3-1", new(time.Time)},
		{"{T:date}", "2024-13-01", new(time.Time)},
		{"{T:unix}", "0123", new(time.Time)},
		{"{T:unix}", "-0", new(time.Time)},
		{"{T:unix}", "+5", new(time.Time)},
		{"{T:unix}", "", new(time.Time)},
		{"{T:unix}", "99999999999999", new(time.Time)},
		{"{T:unixmilli}", "1.5", new(time.Time)},
		{"{N:%04d}", "123", new(int)},
		{"{N:%04d}", "12345", new(int)},
		{"{N:%04d}", "-123", new(int)},
		{"{N:%03d}", "300", new(uint8)},
		{"{N:%03d}", "200", new(int8)},
		{"{S:raw}#", "", new(string)},
		{"{S:raw}#", "a#", new(string)},
		{"{S:raw}", "\xff", new(string)},
	}
	for _, c := range cases {
		t.Run(c.tmpl+"/"+c.s, func(t *testing.T) {
			_, p := formatPart(t, c.tmpl)
			v := reflect.ValueOf(c.dst).Elem()
			if err := p.DecodeValue(c.s, v); err == nil {
				t.Fatalf("decoded %q into %v", c.s, v)
			}
		})
	}
}

func TestFormatsSplit(t *testing.T) {
	cases := []struct {
		tmpl, key string
		want      []string
	}{
		{"ELECTION#{Name:raw}", "ELECTION#Favorite Language", []string{"Favorite Language"}},
		{"ELECTION#{Name:raw}", "ELECTION#a#b%c", []string{"a#b%c"}},
		{"{Name:raw}#{X}", "a b#c", []string{"a b", "c"}},
		{"{Name:raw}#{X:raw}", "a b#c#d", []string{"a b", "c#d"}},
		{"{Seq:%08d}#{At:rfc3339}", "00000042#2025-01-15T10:30:00Z", []string{"00000042", "2025-01-15T10:30:00Z"}},
		{"{At:rfc3339}#{ID:raw}", "2024-01-07T10:00:00Z#456", []string{"2024-01-07T10:00:00Z", "456"}},
		{"{Day:date}T{H}", "2024-03-01T10", []string{"2024-03-01", "10"}},
	}
	for _, c := range cases {
		tp, _ := formatPart(t, c.tmpl)
		got, err := tp.Split(c.key)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: Split(%q) = %q, %v; want %q", c.tmpl, c.key, got, err, c.want)
		}
	}
	mismatches := []struct{ tmpl, key string }{
		{"{Seq:%08d}#{At:rfc3339}", "0000004a#2025-01-15T10:30:00Z"},
		{"{Seq:%08d}#{At:rfc3339}", "00000042"},
		{"ELECTION#{Name:raw}", "ELECTION#"},
		{"{Name:raw}#{X}", "a b"},
		{"{At:date}", "2024-03-01x"},
	}
	for _, c := range mismatches {
		tp, _ := formatPart(t, c.tmpl)
		if got, err := tp.Split(c.key); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: Split(%q) = %q, %v; want ErrMismatch", c.tmpl, c.key, got, err)
		}
	}
}

func TestFormatsAppendPrefix(t *testing.T) {
	cases := []struct {
		tmpl, prefix, want string
		err                bool
	}{
		{"{S}", "a b", "a%20b", false},
		{"{S:raw}", "a b", "a b", false},
		{"{S:raw}#", "a#", "", true},
		{"{S:raw}#", "", "", false},
		{"{D:date}", "2024-01", "2024-01", false},
		{"{D:date}", "2024/01", "", true},
		{"{T:rfc3339}", "2024-01-07T10", "2024-01-07T10", false},
		{"{N:%08d}", "0000", "0000", false},
		{"{N:%08d}", "-1", "", true},
	}
	for _, c := range cases {
		_, p := formatPart(t, c.tmpl)
		got, err := p.AppendPrefix(nil, c.prefix)
		if (err != nil) != c.err || (err == nil && string(got) != c.want) {
			t.Errorf("%s: AppendPrefix(%q) = %q, %v; want %q (error %v)", c.tmpl, c.prefix, got, err, c.want, c.err)
		}
	}
}

// The default fast path is untouched: a default placeholder still
// allocates nothing for an int (and formats allocate nothing either).
func TestFormatsAllocs(t *testing.T) {
	_, p := formatPart(t, "{N:%08d}#")
	_, q := formatPart(t, "{T:rfc3339}#")
	n, at := 42, time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	nv, tv := reflect.ValueOf(&n).Elem(), reflect.ValueOf(&at).Elem()
	buf := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() {
		buf, _ = p.AppendValue(buf[:0], nv)
		buf, _ = q.AppendValue(buf[:0], tv)
	}); a != 0 {
		t.Errorf("formatted AppendValue allocates %v times", a)
	}
}
