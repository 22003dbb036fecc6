package keys

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/model"
)

// encodeKey encodes v through an addressable copy, as the entity code does
// with struct fields.
func encodeKey(v any) (string, error) {
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	b, err := AppendValue(nil, p.Elem())
	return string(b), err
}

func mustEncodeKey(t testing.TB, v any) string {
	t.Helper()
	s, err := encodeKey(v)
	if err != nil {
		t.Fatalf("AppendValue(%#v): %v", v, err)
	}
	return s
}

// bindValues binds tp's placeholders to the fields of a struct made for
// the test, one field per placeholder name, typed as the value vals gives
// it (string for a placeholder past vals), and returns the fields in
// placeholder order and the struct holding vals.
func bindValues(t testing.TB, tp Template, vals []any) ([]*model.Field, reflect.Value) {
	t.Helper()
	names := tp.Fields()
	var sfs []reflect.StructField
	pos := map[string]int{}
	for i, name := range names {
		if _, ok := pos[name]; ok {
			continue
		}
		typ := reflect.TypeFor[string]()
		if i < len(vals) {
			typ = reflect.TypeOf(vals[i])
		}
		pos[name] = len(sfs)
		sfs = append(sfs, reflect.StructField{Name: name, Type: typ})
	}
	st := reflect.StructOf(sfs)
	v := reflect.New(st).Elem()
	for i, name := range names[:min(len(vals), len(names))] {
		v.Field(pos[name]).Set(reflect.ValueOf(vals[i]))
	}
	all := model.StructFields(st)
	fields := make([]*model.Field, len(names))
	for i, name := range names {
		fields[i] = all[pos[name]]
	}
	return fields, v
}

// renderValues renders tp through the one renderer, Template.AppendPrefix,
// from vals, the values of its first n placeholders (n < 0: all).
func renderValues(t testing.TB, tp Template, n int, vals ...any) (string, error) {
	t.Helper()
	fields, v := bindValues(t, tp, vals)
	if n < 0 {
		b, err := tp.Append(nil, fields, v)
		return string(b), err
	}
	b, err := tp.AppendPrefix(nil, fields, v, n)
	return string(b), err
}

// mustRender is renderValues for values the template accepts.
func mustRender(t testing.TB, tp Template, n int, vals ...any) string {
	t.Helper()
	key, err := renderValues(t, tp, n, vals...)
	if err != nil {
		t.Fatalf("render %q from %q: %v", tp.Raw, vals, err)
	}
	return key
}

func decodeKeyAs[T any](s string) (T, error) {
	var v T
	err := DecodeValue(s, reflect.ValueOf(&v).Elem())
	return v, err
}

// roundTrip encodes v, decodes it into a fresh T and checks the result and
// that decoding accepted exactly the encoding.
func roundTrip[T comparable](t testing.TB, v T) string {
	t.Helper()
	s := mustEncodeKey(t, v)
	got, err := decodeKeyAs[T](s)
	if err != nil {
		t.Fatalf("DecodeValue(%q) for %#v: %v", s, v, err)
	}
	if got != v {
		t.Fatalf("round trip of %#v through %q gave %#v", v, s, got)
	}
	return s
}

func TestParseKeyTemplate(t *testing.T) {
	cases := []struct {
		tmpl   string
		parts  []Part
		fields []string
		prefix string
	}{
		{"PROFILE", []Part{{Literal: "PROFILE"}}, nil, "PROFILE"},
		{"USER#{Username}", []Part{{Literal: "USER#"}, {Field: "Username"}}, []string{"Username"}, "USER#"},
		{"{Username}", []Part{{Field: "Username"}}, []string{"Username"}, ""},
		{"{A}#{B}", []Part{{Field: "A"}, {Literal: "#"}, {Field: "B"}}, []string{"A", "B"}, ""},
		{"LEVEL#{Level}#USER#{Username}", []Part{{Literal: "LEVEL#"}, {Field: "Level"}, {Literal: "#USER#"}, {Field: "Username"}}, []string{"Level", "Username"}, "LEVEL#"},
		{"ORDER#{ID}#", []Part{{Literal: "ORDER#"}, {Field: "ID"}, {Literal: "#"}}, []string{"ID"}, "ORDER#"},
		{"A{B}$C{D}!E{F} G", []Part{{Literal: "A"}, {Field: "B"}, {Literal: "$C"}, {Field: "D"}, {Literal: "!E"}, {Field: "F"}, {Literal: " G"}}, []string{"B", "D", "F"}, "A"},
		{"X{Y}\x00Z", []Part{{Literal: "X"}, {Field: "Y"}, {Literal: "\x00Z"}}, []string{"Y"}, "X"},
		{"{_x9}", []Part{{Field: "_x9"}}, []string{"_x9"}, ""},
		{"ÜBER#{Größe}", []Part{{Literal: "ÜBER#"}, {Field: "Größe"}}, []string{"Größe"}, "ÜBER#"},
		{"A%B#{C}", []Part{{Literal: "A%B#"}, {Field: "C"}}, []string{"C"}, "A%B#"},
	}
	for _, c := range cases {
		t.Run(c.tmpl, func(t *testing.T) {
			tmpl, err := Parse(c.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.Raw != c.tmpl {
				t.Errorf("raw = %q", tmpl.Raw)
			}
			if !slices.Equal(tmpl.Parts, c.parts) {
				t.Errorf("parts = %#v, want %#v", tmpl.Parts, c.parts)
			}
			if got := tmpl.Fields(); !slices.Equal(got, c.fields) {
				t.Errorf("Fields() = %q, want %q", got, c.fields)
			}
			if got := tmpl.ConstantPrefix(); got != c.prefix {
				t.Errorf("ConstantPrefix() = %q, want %q", got, c.prefix)
			}
		})
	}
}

func TestParseKeyTemplateErrors(t *testing.T) {
	cases := []struct {
		name, tmpl, want string
	}{
		{"empty", "", "empty key template"},
		{"unclosed", "USER#{Username", "unclosed"},
		{"lone open", "USER#{", "unclosed"},
		{"unbalanced close", "USER#Username}", "unbalanced"},
		{"close first", "}{A}", "unbalanced"},
		{"nested", "USER#{User{Name}}", "nested"},
		{"empty name", "USER#{}", "not a Go field name"},
		{"digit first", "USER#{1A}", "not a Go field name"},
		{"dotted name", "USER#{A.B}", "not a Go field name"},
		{"space in name", "USER#{A B}", "not a Go field name"},
		{"dash in name", "USER#{A-B}", "not a Go field name"},
		{"adjacent", "{A}{B}", "adjacent"},
		{"adjacent after literal", "X#{A}{B}#", "adjacent"},
		{"letter after placeholder", "USER#{Username}X", "delimiter"},
		{"percent after placeholder", "USER#{Username}%", "delimiter"},
		{"dash after placeholder", "A#{A}-{B}", "delimiter"},
		{"digit after placeholder", "A#{A}1", "delimiter"},
		{"unicode after placeholder", "A#{A}é", "delimiter"},
		{"max rune in literal", "A\U0010FFFF#{A}", "U+10FFFF"},
		{"max rune after delimiter", "{A}#\U0010FFFF", "U+10FFFF"},
		{"invalid utf8 literal", "A\xff#{A}", "UTF-8"},
		{"invalid utf8 trailing literal", "{A}#\xc3", "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.tmpl)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", c.tmpl)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not mention %q", msg, c.want)
			}
			if c.tmpl != "" && !strings.Contains(msg, fmt.Sprintf("%q", c.tmpl)) {
				t.Errorf("error %q does not quote the template", msg)
			}
			if !strings.HasPrefix(msg, "singletable: ") {
				t.Errorf("error %q lacks the package prefix", msg)
			}
		})
	}
}

// keyTestStrings are values that break naive concatenation.
var keyTestStrings = []string{
	"a", "go", "golang", "go#", "#go", "go#x", "%", "%%", "%23", "%2", "a$b", "a b", " ", "\x00", "a\x00b",
	"\t\n\r", "!\"#$%&'", "ünïcödé", "日本語", "🙂👍🏽", "\U0010FFFF", "a\U0010FFFFb", "\U0010FFFE",
	"\xff", "a\xc3", "\xc3\x28", "\xed\xa0\x80", "\xef\xbf\xbd", "~\x7f", strings.Repeat("x#%", 334)[:1000],
	strings.Repeat("€", 400),
}

func TestKeyTemplateRenderSplit(t *testing.T) {
	templates := []string{"PROFILE", "USER#{A}", "{A}", "{A}#{B}", "A#{A}#B#{B}", "A#{A}#B#{B}#", "X{A}\x00Y{B}$Z", "%{A}!%{B} end"}
	for _, raw := range templates {
		tmpl, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		n := len(tmpl.Fields())
		for i, a := range keyTestStrings {
			b := keyTestStrings[(i*7+3)%len(keyTestStrings)]
			t.Run(fmt.Sprintf("%s/%d", raw, i), func(t *testing.T) {
				raws := []string{a, b}[:n]
				vals := make([]string, n)
				anys := make([]any, n)
				for j, v := range raws {
					vals[j], anys[j] = string(AppendEscaped(nil, v)), v
				}
				key := mustRender(t, tmpl, -1, anys...)
				if !utf8.ValidString(key) {
					t.Errorf("key %q is not valid UTF-8", key)
				}
				if !strings.HasPrefix(key, tmpl.ConstantPrefix()) {
					t.Errorf("key %q lacks the constant prefix", key)
				}
				got, err := tmpl.Split(key)
				if err != nil {
					t.Fatalf("Split(%q): %v", key, err)
				}
				if !slices.Equal(got, vals) {
					t.Fatalf("Split(%q) = %q, want %q", key, got, vals)
				}
				for j, v := range got {
					u, err := Unescape(v)
					if err != nil || u != raws[j] {
						t.Errorf("unescape(%q) = %q, %v; want %q", v, u, err, raws[j])
					}
				}
			})
		}
	}
}

func TestKeyTemplateSplitErrors(t *testing.T) {
	cases := []struct {
		tmpl, key string
	}{
		{"PROFILE", "PROFILES"},
		{"PROFILE", "PROFIL"},
		{"USER#{A}", "USER#"},
		{"USER#{A}", "ORDER#x"},
		{"USER#{A}", "USER#a#b"},
		{"USER#{A}", "USER#a b"},
		{"{A}#{B}", "a"},
		{"{A}#{B}", "a#"},
		{"{A}#{B}", "#b"},
		{"{A}#{B}", "a$b"},
		{"{A}#{B}", "a#b#c"},
		{"A#{A}#B#{B}", "A#x#C#y"},
		{"A#{A}#B#{B}", "A#x#B#"},
		{"A#{A}#", "A#x"},
		{"A#{A}#", "A#x#y"},
	}
	for _, c := range cases {
		t.Run(c.tmpl+"/"+c.key, func(t *testing.T) {
			tmpl, err := Parse(c.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.Split(c.key)
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("Split(%q) = %q, %v; want ErrMismatch", c.key, got, err)
			}
			if !strings.Contains(err.Error(), c.tmpl) {
				t.Errorf("error %q does not name the template", err)
			}
		})
	}
}

func TestKeyTemplateRenderCountMismatchPanics(t *testing.T) {
	tmpl, err := Parse("A#{A}#B#{B}")
	if err != nil {
		t.Fatal(err)
	}
	fields, v := bindValues(t, tmpl, []any{"x", "y"})
	defer func() {
		if recover() == nil {
			t.Error("render with one field for two placeholders did not panic")
		}
	}()
	_, _ = tmpl.Append(nil, fields[:1], v)
}

func TestKeyTemplateRenderPrefix(t *testing.T) {
	tmpl, err := Parse("LEVEL#{Level}#USER#{Username}")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		vals []any
		want string
	}{
		{nil, "LEVEL#"},
		{[]any{"Expert"}, "LEVEL#Expert#USER#"},
		{[]any{"Expert", "john"}, "LEVEL#Expert#USER#john"},
	}
	for _, c := range cases {
		if got := mustRender(t, tmpl, len(c.vals), c.vals...); got != c.want {
			t.Errorf("AppendPrefix(%q) = %q, want %q", c.vals, got, c.want)
		}
	}
}

// TestKeyTemplateAppend: the renderer writes every field it is given,
// reports every missing field at once (a nil pointer, an empty string,
// the zero value of an omitempty field), and names the field whose value
// the format refuses.
func TestKeyTemplateAppend(t *testing.T) {
	type item struct {
		User  string
		Level *int
		Seq   int    `dynamodbav:",omitempty"`
		Name  string `dynamodbav:"n"`
		At    time.Time
	}
	tmpl, err := Parse("U#{User}#L#{Level}#S#{Seq:%03d}#{Name:raw}#{At:rfc3339}")
	if err != nil {
		t.Fatal(err)
	}
	all := model.StructFields(reflect.TypeFor[item]())
	fields := []*model.Field{all[0], all[1], all[2], all[3], all[4]}
	three, at := 3, time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	render := func(it item) (string, error) {
		b, err := tmpl.Append([]byte("x"), fields, reflect.ValueOf(&it).Elem())
		return string(b), err
	}
	if got, err := render(item{User: "a b", Level: &three, Seq: 7, Name: "c+", At: at}); err != nil || got != "xU#a%20b#L#0000000000000000003#S#007#c+#2025-01-15T10:30:00Z" {
		t.Errorf("rendered %q, %v", got, err)
	}
	_, err = render(item{At: at})
	var re *RenderError
	if !errors.As(err, &re) || !slices.Equal(re.Missing, []string{"User", "Level", "Seq", "Name"}) {
		t.Errorf("missing fields: %v", err)
	}
	_, err = render(item{User: "a", Level: &three, Seq: 1000, Name: "n", At: at})
	if !errors.As(err, &re) || re.Field != "Seq" || !errors.Is(err, ErrUnrepresentable) {
		t.Errorf("refused value: %v", err)
	}
	// A plain string field is read at its offset, without allocating.
	buf := make([]byte, 0, 64)
	it := item{User: "john", Level: &three, Seq: 1, Name: "n", At: at}
	rv := reflect.ValueOf(&it).Elem()
	if a := testing.AllocsPerRun(100, func() { buf, _ = tmpl.AppendPrefix(buf[:0], fields, rv, 1) }); a != 0 {
		t.Errorf("rendering a string field allocates %v times", a)
	}
}

// TestKeyPrefixSafety is the begins_with bug of every other library:
// "SKILL#go" must not match "golang".
func TestKeyPrefixSafety(t *testing.T) {
	for _, raw := range []string{"SKILL#{Skill}#USER#{User}", "USER#{User}#SKILL#{Skill}#LEVEL#{Level}", "{Skill} {User}"} {
		tmpl, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		n := len(tmpl.Fields())
		render := func(first string) string {
			vals := []any{first}
			for range n - 1 {
				vals = append(vals, "x")
			}
			return mustRender(t, tmpl, -1, vals...)
		}
		prefix := mustRender(t, tmpl, 1, "go")
		if !strings.HasPrefix(render("go"), prefix) {
			t.Fatalf("%s: key for go %q does not start with its prefix %q", raw, render("go"), prefix)
		}
		for _, other := range []string{"golang", "go lang", "go#", "go%", "go\x00", "go$", "go!", "g", "Go", "go\U0010FFFF", "go\xff"} {
			t.Run(raw+"/"+other, func(t *testing.T) {
				if key := render(other); strings.HasPrefix(key, prefix) {
					t.Errorf("key %q for %q starts with the prefix %q of go", key, other, prefix)
				}
			})
		}
	}
}

// TestKeyPrefixUpperBound checks prefix + U+10FFFF bounds every key with the
// prefix, which range conditions on a prefix rely on.
func TestKeyPrefixUpperBound(t *testing.T) {
	tmpl, err := Parse("USER#{User}#SKILL#{Skill}")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	prefix := mustRender(t, tmpl, 1, "john")
	upper := prefix + "\U0010FFFF"
	fields, v := bindValues(t, tmpl, []any{"john", ""})
	var buf []byte
	for range 2000 {
		v.Field(1).SetString("s" + randomKeyString(rng, true))
		if buf, err = tmpl.Append(buf[:0], fields, v); err != nil {
			t.Fatal(err)
		}
		key := string(buf)
		if !(prefix < key && key < upper) {
			t.Fatalf("key %q outside (%q, %q)", key, prefix, upper)
		}
	}
}

func TestEscapeKeyString(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", ""},
		{"golang", "golang"},
		{"a#b", "a%23b"},
		{"%", "%25"},
		{"100%", "100%25"},
		{"a b", "a%20b"},
		{"\x00\x01\x1f", "%00%01%1F"},
		{"!\"#$%&'", "%21%22%23%24%25&'"},
		{"~\x7f", "~\x7f"},
		{"é€🙂", "é€🙂"},
		{"\U0010FFFF", "%F4%8F%BF%BF"},
		{"\U0010FFFE", "\U0010FFFE"},
		{"\xff", "%FF"},
		{"a\xc3", "a%C3"},
		{"\xc3\x28", "%C3("},
		{"\xed\xa0\x80", "%ED%A0%80"}, // a surrogate is invalid UTF-8
		{"\xef\xbf\xbd", "\ufffd"},
		{"\xf4\x90\x80\x80", "%F4%90%80%80"}, // beyond U+10FFFF
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got := string(AppendEscaped([]byte("pre"), c.in))
			if got != "pre"+c.want {
				t.Fatalf("AppendEscaped(%q) = %q, want %q", c.in, got[3:], c.want)
			}
			back, err := Unescape(c.want)
			if err != nil || back != c.in {
				t.Errorf("Unescape(%q) = %q, %v; want %q", c.want, back, err, c.in)
			}
		})
	}
}

func TestEscapeKeyStringProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]string{}
	for i := range 20000 {
		s := randomKeyString(rng, i%2 == 0)
		e := string(AppendEscaped(nil, s))
		if !utf8.ValidString(e) || strings.ContainsRune(e, '\U0010FFFF') {
			t.Fatalf("escape(%q) = %q: invalid UTF-8 or U+10FFFF", s, e)
		}
		if j := strings.IndexFunc(e, func(r rune) bool { return r < DelimLimit }); j >= 0 {
			t.Fatalf("escape(%q) = %q has a byte below 0x25 at %d", s, e, j)
		}
		if prev, ok := seen[e]; ok && prev != s {
			t.Fatalf("escape(%q) == escape(%q) == %q", s, prev, e)
		}
		seen[e] = s
		if back, err := Unescape(e); err != nil || back != s {
			t.Fatalf("unescape(escape(%q)) = %q, %v", s, back, err)
		}
	}
}

// TestEscapeKeyStringOrder: for valid UTF-8 without U+10FFFF escaping keeps
// byte order, so sort keys on a string value sort by the value.
func TestEscapeKeyStringOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	raws := make([]string, 5000)
	for i := range raws {
		raws[i] = randomKeyString(rng, true)
	}
	raws = append(raws, keyTestStrings[:22]...) // the valid ones
	for _, s := range raws {
		if !utf8.ValidString(s) || strings.ContainsRune(s, '\U0010FFFF') {
			continue
		}
		for _, u := range raws[:50] {
			if !utf8.ValidString(u) || strings.ContainsRune(u, '\U0010FFFF') {
				continue
			}
			es, eu := AppendEscaped(nil, s), AppendEscaped(nil, u)
			if got, want := bytes.Compare(es, eu), strings.Compare(s, u); got != want {
				t.Fatalf("compare(escape(%q), escape(%q)) = %d, want %d", s, u, got, want)
			}
		}
	}
}

func TestUnescapeKeyStringRejects(t *testing.T) {
	for _, s := range []string{
		"%", "a%", "%2", "a%2", "%2f", "%2G", "%g0", "%%", "%-1", "%+1",
		"%41",                           // 'A' is copied, never escaped
		"%26",                           // '&' is the first copied byte
		"%C3%A9",                        // é is valid UTF-8, copied
		"%E2%82%AC",                     // €
		"%F4%8F%BF%BE",                  // U+10FFFE is copied
		"a#b", "a b", "\x00", "a$", "!", // bytes below 0x26 must be escaped
		"\xff", "a\xc3", "\xed\xa0\x80", // invalid UTF-8 must be escaped
		"\U0010FFFF",
		"%C3\xa9", "\xc3%A9", // half of é escaped
	} {
		t.Run(s, func(t *testing.T) {
			if got, err := Unescape(s); err == nil {
				t.Errorf("Unescape(%q) = %q, want an error", s, got)
			}
		})
	}
}

func TestKeyIntEncoding(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{int8(math.MinInt8), "-000"},
		{int8(-127), "-001"},
		{int8(-1), "-127"},
		{int8(0), "000"},
		{int8(1), "001"},
		{int8(math.MaxInt8), "127"},
		{int16(math.MinInt16), "-00000"},
		{int16(-1), "-32767"},
		{int16(0), "00000"},
		{int16(math.MaxInt16), "32767"},
		{int32(math.MinInt32), "-0000000000"},
		{int32(-1), "-2147483647"},
		{int32(0), "0000000000"},
		{int32(math.MaxInt32), "2147483647"},
		{int64(math.MinInt64), "-0000000000000000000"},
		{int64(math.MinInt64 + 1), "-0000000000000000001"},
		{int64(-1), "-9223372036854775807"},
		{int64(0), "0000000000000000000"},
		{int64(42), "0000000000000000042"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{int(math.MinInt64), "-0000000000000000000"},
		{int(-1), "-9223372036854775807"},
		{int(math.MaxInt64), "9223372036854775807"},
		{time.Duration(-1), "-9223372036854775807"},
		{uint8(0), "000"},
		{uint8(math.MaxUint8), "255"},
		{uint16(0), "00000"},
		{uint16(math.MaxUint16), "65535"},
		{uint32(0), "0000000000"},
		{uint32(math.MaxUint32), "4294967295"},
		{uint64(0), "00000000000000000000"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{uint(math.MaxUint64), "18446744073709551615"},
		{keyTestCount(7), "0000000000000000007"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%T(%v)", c.v, c.v), func(t *testing.T) {
			got, err := encodeKey(c.v)
			if err != nil || got != c.want {
				t.Fatalf("encode = %q, %v; want %q", got, err, c.want)
			}
			p := reflect.New(reflect.TypeOf(c.v))
			if err := DecodeValue(got, p.Elem()); err != nil {
				t.Fatal(err)
			}
			if back := p.Elem().Interface(); back != c.v {
				t.Errorf("decode(%q) = %v, want %v", got, back, c.v)
			}
		})
	}
}

type keyTestCount int64

// checkSortedEncoding encodes vals, sorts the encodings bytewise and checks
// that they decode back in the order cmpFn gives the values.
func checkSortedEncoding[T comparable](t *testing.T, vals []T, cmpFn func(a, b T) int) {
	t.Helper()
	type pair struct {
		enc string
		v   T
	}
	pairs := make([]pair, len(vals))
	for i, v := range vals {
		pairs[i] = pair{roundTrip(t, v), v}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.enc, b.enc) })
	for i := 1; i < len(pairs); i++ {
		a, b := pairs[i-1], pairs[i]
		c := cmpFn(a.v, b.v)
		if c > 0 || (c == 0) != (a.enc == b.enc) {
			t.Fatalf("encodings out of order: %v → %q, %v → %q", a.v, a.enc, b.v, b.enc)
		}
	}
}

// randomInts gives boundary values and random ones over the whole range and
// near zero.
func randomInts[T int8 | int16 | int32 | int64 | int | uint8 | uint16 | uint32 | uint64 | uint](rng *rand.Rand, lo, hi T) []T {
	var zero, one T = 0, 1
	vals := []T{lo, lo + 1, hi - 1, hi, zero, one, zero - one} // zero − one wraps to hi for unsigned types
	for range 3000 {
		vals = append(vals, T(rng.Uint64()), T(rng.IntN(200)-100))
	}
	return vals
}

func TestKeyIntOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	t.Run("int8", func(t *testing.T) {
		checkSortedEncoding(t, randomInts[int8](rng, math.MinInt8, math.MaxInt8), cmp.Compare)
	})
	t.Run("int16", func(t *testing.T) {
		checkSortedEncoding(t, randomInts[int16](rng, math.MinInt16, math.MaxInt16), cmp.Compare)
	})
	t.Run("int32", func(t *testing.T) {
		checkSortedEncoding(t, randomInts[int32](rng, math.MinInt32, math.MaxInt32), cmp.Compare)
	})
	t.Run("int64", func(t *testing.T) {
		checkSortedEncoding(t, randomInts[int64](rng, math.MinInt64, math.MaxInt64), cmp.Compare)
	})
	t.Run("int", func(t *testing.T) {
		checkSortedEncoding(t, randomInts[int](rng, math.MinInt, math.MaxInt), cmp.Compare)
	})
	t.Run("uint8", func(t *testing.T) { checkSortedEncoding(t, randomInts[uint8](rng, 0, math.MaxUint8), cmp.Compare) })
	t.Run("uint16", func(t *testing.T) { checkSortedEncoding(t, randomInts[uint16](rng, 0, math.MaxUint16), cmp.Compare) })
	t.Run("uint32", func(t *testing.T) { checkSortedEncoding(t, randomInts[uint32](rng, 0, math.MaxUint32), cmp.Compare) })
	t.Run("uint64", func(t *testing.T) { checkSortedEncoding(t, randomInts[uint64](rng, 0, math.MaxUint64), cmp.Compare) })
	t.Run("uint", func(t *testing.T) { checkSortedEncoding(t, randomInts[uint](rng, 0, math.MaxUint), cmp.Compare) })
}

func TestKeyFloatEncoding(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{0.0, "8000000000000000"},
		{math.Copysign(0, -1), "8000000000000000"},
		{1.0, "bff0000000000000"},
		{-1.0, "400fffffffffffff"},
		{math.Inf(1), "fff0000000000000"},
		{math.Inf(-1), "000fffffffffffff"},
		{math.SmallestNonzeroFloat64, "8000000000000001"},
		{-math.SmallestNonzeroFloat64, "7ffffffffffffffe"},
		{math.MaxFloat64, "ffefffffffffffff"},
		{float32(1), "bff0000000000000"},
		{float32(-0.5), "401fffffffffffff"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%T(%v)", c.v, c.v), func(t *testing.T) {
			got, err := encodeKey(c.v)
			if err != nil || got != c.want {
				t.Fatalf("encode = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	for _, v := range []any{math.NaN(), float32(math.NaN()), -math.NaN()} {
		if got, err := encodeKey(v); err == nil {
			t.Errorf("encode(%v) = %q, want an error", v, got)
		}
	}
	if got, err := decodeKeyAs[float64]("8000000000000000"); err != nil || got != 0 || math.Signbit(got) {
		t.Errorf("decode of zero = %v, %v; want +0", got, err)
	}
}

func TestKeyFloatOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []float64{0, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		-math.SmallestNonzeroFloat64, 2 * math.SmallestNonzeroFloat64, 0x1p-1022, -0x1p-1022, 1, -1, 0.1, -0.1, 1e300, -1e-300}
	f64 := slices.Clone(special)
	f32 := []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1}
	for range 5000 {
		f := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(f) {
			f64 = append(f64, f)
		}
		f64 = append(f64, rng.NormFloat64()*1e6, rng.NormFloat64()*1e-310)
		g := math.Float32frombits(rng.Uint32())
		if g == g {
			f32 = append(f32, g)
		}
		f32 = append(f32, float32(rng.NormFloat64()))
	}
	t.Run("float64", func(t *testing.T) { checkSortedEncoding(t, f64, cmp.Compare) })
	t.Run("float32", func(t *testing.T) { checkSortedEncoding(t, f32, cmp.Compare) })
	if mustEncodeKey(t, math.Copysign(0, -1)) != mustEncodeKey(t, 0.0) {
		t.Error("−0 and +0 encode differently")
	}
}

func TestKeyTimeEncoding(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	cases := []struct {
		v    time.Time
		want string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05.000000000Z"},
		{time.Date(2024, 1, 2, 3, 4, 5, 1, time.UTC), "2024-01-02T03:04:05.000000001Z"},
		{time.Date(2024, 1, 2, 3, 4, 5, 500_000_000, time.UTC), "2024-01-02T03:04:05.500000000Z"},
		{time.Date(2024, 7, 1, 2, 0, 0, 0, paris), "2024-07-01T00:00:00.000000000Z"},
		{time.Date(2024, 1, 1, 0, 30, 0, 0, time.FixedZone("", 45*60)), "2023-12-31T23:45:00.000000000Z"},
		{time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "1969-12-31T23:59:59.999999999Z"},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "0000-01-01T00:00:00.000000000Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "9999-12-31T23:59:59.999999999Z"},
		{time.Unix(0, 0), "1970-01-01T00:00:00.000000000Z"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			got := mustEncodeKey(t, c.v)
			if got != c.want {
				t.Fatalf("encode(%v) = %q, want %q", c.v, got, c.want)
			}
			// Non-addressable values take the boxing path; same result.
			b, err := AppendValue(nil, reflect.ValueOf(c.v))
			if err != nil || string(b) != c.want {
				t.Fatalf("encode of non-addressable value = %q, %v", b, err)
			}
			back, err := decodeKeyAs[time.Time](got)
			if err != nil || !back.Equal(c.v) || back.Location() != time.UTC {
				t.Errorf("decode(%q) = %v, %v; want %v in UTC", got, back, err, c.v)
			}
		})
	}
	for _, v := range []time.Time{
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -3600)), // year 10000 in UTC
		time.Date(0, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600)),       // year −1 in UTC
	} {
		if got, err := encodeKey(v); err == nil {
			t.Errorf("encode(%v) = %q, want an error", v, got)
		}
	}
}

func TestKeyTimeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	zones := []*time.Location{time.UTC, time.FixedZone("", 14*3600), time.FixedZone("", -12*3600), time.FixedZone("", 5*3600+30*60)}
	lo := time.Date(0, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	var vals []time.Time
	for range 3000 {
		z := zones[rng.IntN(len(zones))]
		vals = append(vals,
			time.Unix(lo+rng.Int64N(hi-lo), rng.Int64N(1e9)).In(z),
			base.Add(time.Duration(rng.Int64N(2000)-1000)).In(z), // nanosecond neighbours
			time.Unix(rng.Int64N(2e9)-1e9, 0).In(z),              // around 1970
		)
	}
	type pair struct {
		enc string
		v   time.Time
	}
	pairs := make([]pair, len(vals))
	for i, v := range vals {
		pairs[i] = pair{mustEncodeKey(t, v), v}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.enc, b.enc) })
	for i := 1; i < len(pairs); i++ {
		a, b := pairs[i-1], pairs[i]
		if a.v.After(b.v) || a.v.Equal(b.v) != (a.enc == b.enc) {
			t.Fatalf("out of order: %v → %q, %v → %q", a.v, a.enc, b.v, b.enc)
		}
	}
}

// keyTestLevel has a text form, which takes precedence over its int kind; its
// UnmarshalText is case-insensitive, so "expert" is not canonical.
type keyTestLevel int

func (l keyTestLevel) MarshalText() ([]byte, error) {
	switch l {
	case 0:
		return nil, nil
	case 1:
		return []byte("BEGINNER"), nil
	case 2:
		return []byte("EXPERT #1"), nil
	}
	return nil, fmt.Errorf("bad level %d", int(l))
}

func (l *keyTestLevel) UnmarshalText(b []byte) error {
	switch strings.ToUpper(string(b)) {
	case "BEGINNER":
		*l = 1
	case "EXPERT #1":
		*l = 2
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

// keyTestWriteOnly marshals to text but cannot be decoded.
type keyTestWriteOnly string

func (w keyTestWriteOnly) MarshalText() ([]byte, error) { return []byte("W-" + w), nil }

type keyTestName string

func TestKeyValueKinds(t *testing.T) {
	s := "x#y"
	var nilStr *string
	n := int16(-5)
	bi := big.NewInt(-42)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"string", "john", "john"},
		{"named string", keyTestName("a b"), "a%20b"},
		{"pointer", &s, "x%23y"},
		{"pointer to pointer", func() **string { p := &s; return &p }(), "x%23y"},
		{"pointer to int", &n, "-32763"},
		{"true", true, "true"},
		{"false", false, "false"},
		{"text enum", keyTestLevel(2), "EXPERT%20%231"},
		{"pointer text", bi, "-42"},
		{"pointer-receiver text by value", *big.NewInt(7), "7"},
		{"netip", netip.MustParseAddr("10.0.0.1"), "10.0.0.1"},
		{"ipv6 zone", netip.MustParseAddr("fe80::1%eth0"), "fe80::1%25eth0"},
		{"pointer to time", ptrTo(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), "2024-01-01T00:00:00.000000000Z"},
		{"nil pointer", nilStr, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := TypeSupported(reflect.TypeOf(c.v)); err != nil {
				t.Fatalf("TypeSupported: %v", err)
			}
			got, err := encodeKey(c.v)
			if c.name == "nil pointer" {
				if !errors.Is(err, ErrMissingValue) {
					t.Fatalf("encode(nil) = %q, %v; want ErrMissingValue", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("encode = %q, %v; want %q", got, err, c.want)
			}
			p := reflect.New(reflect.TypeOf(c.v))
			if err := DecodeValue(got, p.Elem()); err != nil {
				t.Fatalf("decode(%q): %v", got, err)
			}
			again, err := AppendValue(nil, p.Elem())
			if err != nil || string(again) != got {
				t.Errorf("re-encode of decoded value = %q, %v; want %q", again, err, got)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestKeyValueDecodePointers(t *testing.T) {
	var p *int32
	if err := DecodeValue("-2147483646", reflect.ValueOf(&p).Elem()); err != nil || p == nil || *p != -2 {
		t.Fatalf("decode into *int32 = %v, %v", p, err)
	}
	var tp *time.Time
	if err := DecodeValue("2024-01-01T00:00:00.000000000Z", reflect.ValueOf(&tp).Elem()); err != nil || tp == nil || tp.Year() != 2024 {
		t.Fatalf("decode into *time.Time = %v, %v", tp, err)
	}
	var bp *big.Int
	if err := DecodeValue("123", reflect.ValueOf(&bp).Elem()); err != nil || bp == nil || bp.Int64() != 123 {
		t.Fatalf("decode into *big.Int = %v, %v", bp, err)
	}
	old := ptrTo("keep")
	if err := DecodeValue("a b", reflect.ValueOf(&old).Elem()); err == nil || *old != "keep" {
		t.Errorf("failed decode changed the destination to %q (err %v)", *old, err)
	}
	var x int
	if err := DecodeValue("0000000000000000001", reflect.ValueOf(x)); err == nil {
		t.Error("decode into an unsettable value succeeded")
	}
}

func TestKeyValueEmpty(t *testing.T) {
	for _, v := range []any{"", keyTestName(""), keyTestLevel(0), netip.Addr{}, ptrTo("")} {
		if got, err := encodeKey(v); !errors.Is(err, ErrEmptyValue) {
			t.Errorf("encode(%#v) = %q, %v; want ErrEmptyValue", v, got, err)
		}
	}
	for _, dst := range []any{new(string), new(keyTestName), new(keyTestLevel), new(*string)} {
		if err := DecodeValue("", reflect.ValueOf(dst).Elem()); !errors.Is(err, ErrEmptyValue) {
			t.Errorf("decode(\"\") into %T = %v; want ErrEmptyValue", dst, err)
		}
	}
}

func TestKeyValueTextErrors(t *testing.T) {
	if _, err := encodeKey(keyTestLevel(9)); err == nil || !strings.Contains(err.Error(), "bad level") {
		t.Errorf("MarshalText error not returned: %v", err)
	}
	// A pointer-receiver MarshalText on a value that is not addressable.
	if b, err := AppendValue(nil, reflect.ValueOf(*big.NewInt(-7))); err != nil || string(b) != "-7" {
		t.Errorf("big.Int by value = %q, %v", b, err)
	}
	if got := mustEncodeKey(t, keyTestWriteOnly("x")); got != "W-x" {
		t.Errorf("write-only text = %q", got)
	}
	if _, err := decodeKeyAs[keyTestWriteOnly]("W-x"); err == nil || !strings.Contains(err.Error(), "TextUnmarshaler") {
		t.Errorf("decode into a type without UnmarshalText: %v", err)
	}
	if _, err := decodeKeyAs[keyTestLevel]("NOVICE"); err == nil || !strings.Contains(err.Error(), "unknown level") {
		t.Errorf("UnmarshalText error not returned: %v", err)
	}
}

func TestKeyTypeUnsupported(t *testing.T) {
	for _, v := range []any{
		struct{}{}, struct{ A string }{}, []byte("x"), []string{"x"}, map[string]int{}, complex(1, 2), complex64(1),
		uintptr(1), make(chan int), func() {}, [2]int{}, new([]int), new(any), new(error),
	} {
		typ := reflect.TypeOf(v)
		t.Run(typ.String(), func(t *testing.T) {
			err := TypeSupported(typ)
			if err == nil {
				t.Fatal("TypeSupported = nil")
			}
			name := typ.String()
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			if !strings.Contains(err.Error(), typ.String()) {
				t.Errorf("error %q does not name %s", err, name)
			}
			if reflect.TypeOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).Elem().Kind() == reflect.Interface {
				return // a nil interface inside: encoding reports the pointee
			}
			if got, err := encodeKey(v); err == nil {
				t.Errorf("AppendValue = %q, want an error", got)
			}
		})
	}
	if TypeSupported(nil) == nil {
		t.Error("TypeSupported(nil) = nil")
	}
}

// TestKeyDecodeRejectsNonCanonical: decode(s) succeeds only if
// s == encode(decode(s)), so a key never has two parses and a hand-written
// key with a stray '+' or short number is an error, not a silent alias.
func TestKeyDecodeRejectsNonCanonical(t *testing.T) {
	cases := []struct {
		dst any
		in  []string
	}{
		{new(int8), []string{"", "12", "0012", "+12", " 12", "128", "-128", "-12", "1a2", "-", "--12", "-1270", "١٢٣"}},
		{new(int16), []string{"32768", "-32768", "3276", "+3276"}},
		{new(int32), []string{"2147483648", "-2147483648", "-214748364"}},
		{new(int64), []string{"9223372036854775808", "-9223372036854775808", "99999999999999999999", "0", "-0"}},
		{new(int), []string{"9223372036854775808", "000000000000000001"}},
		{new(uint8), []string{"256", "-01", "-001", "25"}},
		{new(uint16), []string{"65536", "6553"}},
		{new(uint32), []string{"4294967296"}},
		{new(uint64), []string{"18446744073709551616", "99999999999999999999", "0000000000000000000"}},
		{new(float64), []string{"", "BFF0000000000000", "bff000000000000", "bff00000000000000", "7fffffffffffffff",
			"fff8000000000000", "0007ffffffffffff", "ffffffffffffffff", "0000000000000000", "+ff0000000000000", "gff0000000000000"}},
		{new(float32), []string{"bff0000000000001", "ffefffffffffffff", "8000000000000001"}},
		{new(bool), []string{"", "True", "TRUE", "1", "t", "yes", "false "}},
		{new(time.Time), []string{"", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.000000000+00:00", "2024-01-02T03:04:05.000000000z",
			"2024-02-30T00:00:00.000000000Z", "2024-1-02T03:04:05.000000000Z", "2024-01-02 03:04:05.000000000Z",
			"2024-01-02T03:04:05.00000000Z", "2024-01-02T03:04:05.0000000000Z", "2024-01-02T24:00:00.000000000Z",
			"+2024-01-02T03:04:05.000000000Z", "12024-01-02T03:04:05.000000000Z", "2024-01-02T03:04:60.000000000Z"}},
		{new(string), []string{"", "a b", "%41", "%2f", "a%2", "\xff"}},
		{new(keyTestLevel), []string{"", "beginner", "expert%20%231", "EXPERT #1", "EXPERT%20%231%"}},
		{new(*int8), []string{"+01", "1"}},
	}
	for _, c := range cases {
		for _, s := range c.in {
			t.Run(fmt.Sprintf("%T/%q", c.dst, s), func(t *testing.T) {
				v := reflect.ValueOf(c.dst).Elem()
				if err := DecodeValue(s, v); err == nil {
					t.Errorf("decode(%q) into %v = %v, want an error", s, v.Type(), v)
				}
			})
		}
	}
}

func TestAppendKeyValueAllocs(t *testing.T) {
	type item struct {
		S  string
		I  int
		I8 int8
		U  uint32
		F  float64
		B  bool
		T  time.Time
		P  *int64
	}
	it := item{S: "john#doe", I: -42, I8: 3, U: 7, F: -1.5, B: true, T: time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600)), P: ptrTo(int64(9))}
	v := reflect.ValueOf(&it).Elem()
	buf := make([]byte, 0, 128)
	for i := range v.NumField() {
		f := v.Field(i)
		allocs := testing.AllocsPerRun(100, func() {
			var err error
			if buf, err = AppendValue(buf[:0], f); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("AppendValue(%s) allocates %v times", v.Type().Field(i).Name, allocs)
		}
	}
}

func BenchmarkAppendKeyValue(b *testing.B) {
	type item struct {
		Username string
		Years    int
		LastUsed time.Time
	}
	it := item{"john.doe@example.com", 12, time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)}
	v := reflect.ValueOf(&it).Elem()
	buf := make([]byte, 0, 128)
	for i := range v.NumField() {
		f := v.Field(i)
		b.Run(v.Type().Field(i).Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = AppendValue(buf[:0], f)
			}
		})
	}
}

// randomKeyString draws from an alphabet dense in the bytes that matter:
// delimiters, '%', hex digits, the 0x25/0x26 boundary, multi-byte runes and,
// unless valid is set, U+10FFFF and invalid UTF-8.
func randomKeyString(rng *rand.Rand, valid bool) string {
	alphabet := []string{"\x00", "\x01", " ", "!", "#", "$", "%", "&", "'", "0", "2", "9", "A", "F", "a", "f", "z", "~", "\x7f",
		"é", "€", "\uffff", "\ufffd", "😀", "\U0010FFFE", "\u0080"}
	if !valid {
		alphabet = append(alphabet, "\U0010FFFF", "\xff", "\xc3", "\x80", "\xf4\x8f", "\xed\xa0\x80")
	}
	var b strings.Builder
	for range rng.IntN(8) {
		b.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}
