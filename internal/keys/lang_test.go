package keys

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// langAccepts reports whether key is in l's language: the automaton run
// on key's runes.
func langAccepts(l *Lang, key string) bool {
	cur := l.closure(0)
	for _, r := range key {
		var next []int
		for _, s := range cur {
			for _, e := range l.states[s].edges {
				if !e.set.intersect(runeSet{r, r}).empty() {
					for _, t := range l.closure(e.to) {
						if !slices.Contains(next, t) {
							next = append(next, t)
						}
					}
				}
			}
		}
		cur = next
	}
	return slices.Contains(cur, l.accept)
}

func TestOverlap(t *testing.T) {
	cases := []struct {
		name, a, b string
		key        string // the shortest forged key, "" for none
		values     [2][]string
		forger     [2]int
		covered    rune
	}{
		{name: "a raw value at the end holds the other's literal",
			a: "u#{UserID:raw}", b: "u#{UserID:raw}#follower",
			key: "u#0#follower", values: [2][]string{{"0#follower"}, {"0"}}, forger: [2]int{0, -1}, covered: '#'},
		{name: "a constraint without the delimiter closes it", a: "u#{UserID:raw=[^#]+}", b: "u#{UserID:raw}#follower"},
		{name: "a numeric constraint closes it", a: "u#{UserID:raw=[0-9]+}", b: "u#{UserID:raw}#follower"},
		{name: "a constraint that lets the literal in does not",
			a: "u#{UserID:raw=[0-9]+(#[a-z]+)?}", b: "u#{UserID:raw}#follower",
			key: "u#0#follower", values: [2][]string{{"0#follower"}, {"0"}}, forger: [2]int{0, -1}, covered: '#'},
		{name: "the other side forges", a: "u#{UserID:raw}#follower", b: "u#{UserID:raw}",
			key: "u#0#follower", values: [2][]string{{"0"}, {"0#follower"}}, forger: [2]int{-1, 0}, covered: '#'},
		{name: "a raw value in the middle holds no delimiter", a: "u#{UserID:raw}#x", b: "u#{UserID:raw}#follower#x"},
		{name: "a raw value that is the whole key", a: "{ID:raw}", b: "USER#{Name}",
			key: "USER#0", values: [2][]string{{"USER#0"}, {"0"}}, forger: [2]int{0, -1}, covered: 'U'},
		{name: "the same shape is an item collection, not a forgery", a: "USER#{ID:raw}", b: "USER#{Name:raw}"},
		{name: "the same shape in the default format", a: "USER#{ID}", b: "USER#{Name}"},
		{name: "an escaped value holds no delimiter", a: "USER#{ID}", b: "USER#{ID}#follower"},
		{name: "an escaped value can continue a shorter literal",
			a: "U{ID}", b: "US{X}",
			key: "US0", values: [2][]string{{"S0"}, {"0"}}, forger: [2]int{0, -1}, covered: 'S'},
		{name: "an escape is a placeholder's too", a: "{ID}", b: "%41{X}",
			key: "%410", values: [2][]string{{"%410"}, {"0"}}, forger: [2]int{0, -1}, covered: '%'},
		{name: "formats write their alphabet only", a: "E#{At:rfc3339}", b: "E#LATEST"},
		{name: "a fixed width cannot reach a longer literal", a: "{N:%04d}", b: "0000#{X}"},
		{name: "a date's dashes are where the date has them", a: "D#{Day:date}", b: "D#0000000000"},
		{name: "a raw value reaches a date", a: "D#{Note:raw}", b: "D#{Day:date}#x",
			key: "D#2024-01-02#x", values: [2][]string{{"2024-01-02#x"}, {"2024-01-02"}}, forger: [2]int{0, -1}, covered: '#'},
		{name: "a variable width can", a: "{At:unix}", b: "17{X}",
			key: "170", values: [2][]string{{"170"}, {"0"}}, forger: [2]int{0, -1}, covered: '1'},
		{name: "both sides forge", a: "x#{P:raw}", b: "{Q:raw}#{R:raw}",
			key: "x#0", values: [2][]string{{"0"}, {"x", "0"}}, forger: [2]int{-1, 0}, covered: 'x'},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ta, tb := mustParse(t, c.a), mustParse(t, c.b)
			f, ok := Overlap(NewLang(ta), NewLang(tb))
			if ok != (c.key != "") {
				t.Fatalf("Overlap(%s, %s) = %+v, %v", c.a, c.b, f, ok)
			}
			if !ok {
				return
			}
			if f.Key != c.key || !reflect.DeepEqual(f.Values[0], c.values[0]) || !reflect.DeepEqual(f.Values[1], c.values[1]) ||
				f.Forger != c.forger {
				t.Errorf("Overlap = %+v, want key %q values %q forger %v", f, c.key, c.values, c.forger)
			}
			if side := 0; c.forger[0] < 0 {
				if side = 1; f.Covered[side] != c.covered {
					t.Errorf("covered %q, want %q", f.Covered[side], c.covered)
				}
			} else if f.Covered[side] != c.covered {
				t.Errorf("covered %q, want %q", f.Covered[side], c.covered)
			}
			// The forged key is one both templates render: each splits
			// it into the values reported.
			for i, tp := range []Template{ta, tb} {
				vals, err := tp.Split(f.Key)
				if err != nil || !slices.Equal(vals, f.Values[i]) {
					t.Errorf("%s.Split(%q) = %q, %v; want %q", tp.Raw, f.Key, vals, err, f.Values[i])
				}
			}
		})
	}
}

func TestIntersects(t *testing.T) {
	for _, c := range []struct {
		a, b string
		ok   bool
	}{
		{"USER#{ID:raw}", "USER#{Name}", true},
		{"METADATA", "METADATA", true},
		{"METADATA", "COUNTS", false},
		{"{At:rfc3339}", "{Day:date}", false},
		{"{N:%08d}#{At:rfc3339}", "EVENTS", false},
		{"E#{ID}", "E#{ID}#{X}", false},
		{"{A:raw=[0-9]+}", "x", false},
	} {
		_, ok := Intersects(NewLang(mustParse(t, c.a)), NewLang(mustParse(t, c.b)))
		if ok != c.ok {
			t.Errorf("Intersects(%s, %s) = %v, want %v", c.a, c.b, ok, c.ok)
		}
	}
	// A write shard's suffix: USERS#shard_<n> is not USERS, and a raw
	// value at the end of another template can reach it.
	users := NewLang(mustParse(t, "USERS")).ThenDigits("#shard_")
	if _, ok := Intersects(users, NewLang(mustParse(t, "USERS"))); ok {
		t.Error("USERS#shard_<n> intersects USERS")
	}
	if f, ok := Overlap(NewLang(mustParse(t, "USERS#{Org:raw}")), users); !ok || f.Key != "USERS#shard_0" {
		t.Errorf("USERS#{Org:raw} against the shards of USERS: %+v, %v", f, ok)
	}
	if !langAccepts(users, "USERS#shard_12") || langAccepts(users, "USERS#shard_") {
		t.Error("the shard suffix's language")
	}
}

// The language of a template holds every key it renders, whatever the
// formats: the lint's search cannot miss a forgery for want of a key.
func TestLangHoldsRenderedKeys(t *testing.T) {
	at := time.Date(2024, 1, 10, 10, 0, 0, 500000000, time.UTC)
	cases := []struct {
		tmpl string
		vals []any
	}{
		{"USER#{ID}#{N}#{F}#{B}#{At}", []any{"a#b c%é\U0010FFFF", int64(-5), 2.5, true, at}},
		{"{ID:raw}", []any{"a#b\x00c"}},
		{"{ID:raw}#{Seq:%08d}#{At:rfc3339milli}", []any{"x y", int64(42), at.Truncate(time.Millisecond)}},
		{"{At:isoformat}#{Day:date}#{U:unix}", []any{at.Truncate(time.Microsecond), at.Truncate(24 * time.Hour), at.Truncate(time.Second)}},
		{"{At:2006-01-02T15:04:05}x{ID:raw=[0-9]+}", []any{at.Truncate(time.Second), "42"}},
	}
	for _, c := range cases {
		tp := mustParse(t, c.tmpl)
		key := mustRender(t, tp, -1, c.vals...)
		if !langAccepts(NewLang(tp), key) {
			t.Errorf("%s: rendered %q is not in its language", c.tmpl, key)
		}
	}
}

// FuzzFormatRawConstraint: a constrained raw value is refused unless it
// matches its constraint (as package regexp reads it), what is accepted
// round-trips, a stored key whose value breaks the constraint is not
// decoded, the lint's language of the template is exactly the keys it
// renders, and the lint finds every key a value forges: when it says
// u#{A:raw=<pattern>} cannot render u#{B:raw}#follower's keys, no value
// does.
func FuzzFormatRawConstraint(f *testing.F) {
	f.Add("[0-9]+", "12345", "678", "12345#follower")
	f.Add("[^#]+", "a b", "x", "u#1#follower")
	f.Add("[0-9]+(#[a-z]+)?", "1#follower", "2", "1#x")
	f.Add("(?i)draft|published", "Draft", "PUBLISHED", "dRaFt")
	f.Add(".*", "", "\U0010FFFF", "\xff")
	f.Add("[a-z]{2,3}", "abcd", "ab", "a}")
	f.Fuzz(func(t *testing.T, pattern, a, b, s string) {
		if strings.ContainsAny(pattern, "{}") {
			return // braces are the template's; TestParseConstraint covers them
		}
		tp, err := Parse("E#{A:raw=" + pattern + "}#{B:raw=" + pattern + "}")
		if err != nil {
			return
		}
		mid, end, pat := &tp.Parts[1], &tp.Parts[3], tp.Parts[1].Pattern
		re, err := compileAnchored(pattern)
		if err != nil {
			t.Fatalf("constraint %q compiles, package regexp refuses it: %v", pattern, err)
		}
		valid := func(x string, delim bool) bool {
			return x != "" && utf8.ValidString(x) && !strings.ContainsRune(x, MaxRune) && !(delim && strings.Contains(x, "#"))
		}
		for _, x := range []string{a, b, s} {
			if utf8.ValidString(x) && pat.Match(x) != re.MatchString(x) {
				t.Fatalf("constraint %q: Match(%q) = %v, regexp says %v", pattern, x, pat.Match(x), re.MatchString(x))
			}
		}
		key, err := renderValues(t, tp, -1, a, b)
		if want := valid(a, true) && valid(b, false) && pat.Match(a) && pat.Match(b); (err == nil) != want {
			t.Fatalf("constraint %q: render(%q, %q) = %q, %v; want accepted %v", pattern, a, b, key, err, want)
		}
		lang := NewLang(tp)
		if err == nil {
			if vals, err := tp.Split(key); err != nil || vals[0] != a || vals[1] != b {
				t.Fatalf("Split(%q) = %q, %v", key, vals, err)
			}
			if !langAccepts(lang, key) {
				t.Fatalf("constraint %q: rendered %q is not in the language", pattern, key)
			}
		}
		// The language is exact: a valid key is in it iff it splits into
		// values both placeholders decode.
		if k := "E#" + s; utf8.ValidString(k) {
			decodes := false
			if vals, err := tp.Split(k); err == nil {
				var x, y string
				decodes = mid.DecodeValue(vals[0], reflect.ValueOf(&x).Elem()) == nil && end.DecodeValue(vals[1], reflect.ValueOf(&y).Elem()) == nil
			}
			if got := langAccepts(lang, k); got != decodes {
				t.Fatalf("constraint %q: %q in the language %v, decodes %v", pattern, k, got, decodes)
			}
		}
		// Forgery: the lint's verdict holds for this value.
		users := mustParse(t, "u#{A:raw="+pattern+"}")
		followers := mustParse(t, "u#{B:raw}#follower")
		forged, found := Overlap(NewLang(users), NewLang(followers))
		if found {
			for i, tp := range []Template{users, followers} {
				if vals, err := tp.Split(forged.Key); err != nil || !slices.Equal(vals, forged.Values[i]) {
					t.Fatalf("constraint %q: forged key %q does not split into %q under %s: %q, %v", pattern, forged.Key, forged.Values[i], tp.Raw, vals, err)
				}
			}
			if _, err := renderValues(t, users, -1, forged.Values[0][0]); err != nil {
				t.Fatalf("constraint %q: the forging value %q is refused: %v", pattern, forged.Values[0][0], err)
			}
		}
		for _, x := range []string{a, s} {
			k, err := renderValues(t, users, -1, x)
			if err != nil {
				continue
			}
			if vals, err := followers.Split(k); err == nil && valid(vals[0], true) && !found {
				t.Fatalf("constraint %q: %q renders followers' key %q, and the lint found no forgery", pattern, x, k)
			}
		}
	})
}

// compileAnchored is package regexp's reading of a constraint: the whole
// value matches.
func compileAnchored(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}
