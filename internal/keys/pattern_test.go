package keys

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/singletable-go/singletable/internal/format"
)

// Constrained raw placeholders, {Field:raw=pattern} (issue 24 item 12).

func TestParseConstraint(t *testing.T) {
	cases := []struct {
		tmpl, source string
		delim        int
	}{
		{"u#{UserID:raw=[0-9]+}", "[0-9]+", -1},
		{"u#{UserID:raw=[^#]+}#follower", "[^#]+", '#'},
		{"u#{UserID:raw=^[0-9]+$}", "^[0-9]+$", -1},
		{"ZIP#{Zip:raw=[0-9]{5}}", "[0-9]{5}", -1},
		{"{Code:raw=[A-Z]{2,3}-[0-9]{1,}}#x", "[A-Z]{2,3}-[0-9]{1,}", '#'},
		{"{Brace:raw=a\\}b}", "a\\}b", -1},
		{"{Brace:raw=[\\{\\}]+}", "[\\{\\}]+", -1},
		{"{Alt:raw=(?i)draft|published}", "(?i)draft|published", -1},
	}
	for _, c := range cases {
		t.Run(c.tmpl, func(t *testing.T) {
			tp, p := formatPart(t, c.tmpl)
			if p.Format != format.Raw || p.Pattern == nil || p.Pattern.Source != c.source || p.Delim != c.delim {
				t.Fatalf("part = %+v, want raw constrained by %q, delim %d", *p, c.source, c.delim)
			}
			if want := "raw=" + c.source; p.Spec() != want || p.Placeholder() != "{"+p.Field+":"+want+"}" {
				t.Errorf("Spec() = %q, Placeholder() = %q", p.Spec(), p.Placeholder())
			}
			if tp.Raw != c.tmpl || len(tp.Fields()) != 1 {
				t.Errorf("template %+v", tp)
			}
		})
	}
}

func TestParseConstraintErrors(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{"{A:raw=}", "empty constraint"},
		{"{A:raw=(}", "missing closing )"},
		{"{A:raw=[0-9}", "missing closing ]"},
		{"{A:raw=[0-9]{5}", "unclosed '{'"},
		{"{A:raw=a\\bb}", "anchors and word boundaries"},
		{"{A:raw=a^b}", "anchors and word boundaries"},
		{"{A:raw=a$b}", "anchors and word boundaries"},
		{"{A:raw=[^\\x00-\\x{10FFFF}]}", "matches no value"},
		{"{A:raw=[0-9]{300}}", "too complex"},
		{"{A:raw=x}é", "ASCII delimiter"},
		{"{A:raw=x}{B}", "adjacent"},
		{"{A:RAW=x}", "unknown key format"},
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

// A constraint is checked where every raw rule is: on render (before any
// request), on decoding a stored key, and on a BeginsWith prefix; its
// refusals wrap ErrUnrepresentable and never quote the value.
func TestConstraintRefusesWithoutQuoting(t *testing.T) {
	tp := mustParse(t, "u#{UserID:raw=[0-9]+}#follower#{Since:raw=[0-9]{4}-[0-9]{2}}")
	for _, c := range []struct {
		vals []any
		key  string // "" when refused
	}{
		{[]any{"12345", "2024-01"}, "u#12345#follower#2024-01"},
		{[]any{"12345xyzzy", "2024-01"}, ""},
		{[]any{"12345", "2024-1"}, ""},
		{[]any{"12345", "2024-01x"}, ""},
		{[]any{"123#45", "2024-01"}, ""},
	} {
		key, err := renderValues(t, tp, -1, c.vals...)
		if c.key != "" {
			if err != nil || key != c.key {
				t.Errorf("render %q = %q, %v; want %q", c.vals, key, err, c.key)
			}
			continue
		}
		var re *RenderError
		if !errors.As(err, &re) || !errors.Is(err, ErrUnrepresentable) {
			t.Errorf("render %q: %v, want a *RenderError wrapping ErrUnrepresentable", c.vals, err)
			continue
		}
		for _, v := range c.vals {
			if strings.Contains(err.Error(), v.(string)) {
				t.Errorf("render %q: error %q quotes the value", c.vals, err)
			}
		}
	}
	// Decoding a stored key: the constraint is the format's, so a key
	// whose value breaks it is not decoded (nor decoded differently).
	_, end := formatPart(t, "u#{UserID:raw=[0-9]+}")
	for s, ok := range map[string]bool{"12345": true, "12345#follower": false, "1x": false, "": false} {
		var v string
		err := end.DecodeValue(s, reflect.ValueOf(&v).Elem())
		if (err == nil) != ok || ok && v != s {
			t.Errorf("decode %q = %q, %v; want ok %v", s, v, err, ok)
		}
		if err != nil && s != "" && (!errors.Is(err, ErrUnrepresentable) || strings.Contains(err.Error(), s)) {
			t.Errorf("decode %q: %v, want ErrUnrepresentable without the value", s, err)
		}
	}
	// Splitting a stored key: one whose constrained value breaks the
	// constraint was not rendered from the template, wherever the value
	// is (a field with an attribute of its own is not decoded from the
	// key, but its key is split).
	for tmpl, keys := range map[string]map[string]bool{
		"u#{UserID:raw=[0-9]+}":          {"u#12345": true, "u#12345#follower": false, "u#x": false},
		"u#{UserID:raw=[0-9]+}#follower": {"u#12345#follower": true, "u#1x#follower": false},
	} {
		tp := mustParse(t, tmpl)
		for key, ok := range keys {
			vals, err := tp.Split(key)
			if (err == nil) != ok {
				t.Errorf("%s: Split(%q) = %q, %v; want ok %v", tmpl, key, vals, err, ok)
			}
			if err != nil && (!errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "{UserID:raw=[0-9]+} does not match its constraint")) {
				t.Errorf("%s: Split(%q): %v, want ErrMismatch naming the constraint", tmpl, key, err)
			}
		}
	}
	// A BeginsWith prefix must start some value the constraint matches.
	_, date := formatPart(t, "{Day:raw=[0-9]{4}-[0-9]{2}-[0-9]{2}}")
	for prefix, ok := range map[string]bool{"": true, "2024": true, "2024-0": true, "2024-01-31": true, "2024-01-311": false, "24-": false, "x": false} {
		got, err := date.AppendPrefix(nil, prefix)
		if (err == nil) != ok || ok && string(got) != prefix {
			t.Errorf("AppendPrefix(%q) = %q, %v; want ok %v", prefix, got, err, ok)
		}
		if err != nil && !errors.Is(err, ErrUnrepresentable) {
			t.Errorf("AppendPrefix(%q): %v does not wrap ErrUnrepresentable", prefix, err)
		}
	}
}

// The constraint automaton agrees with package regexp on whole values,
// and MatchPrefix with "some extension matches".
func TestPatternMatchesAsRegexp(t *testing.T) {
	patterns := []string{"[0-9]+", "[^#]+", "^[a-z]+$", "(?i)draft|published", "a*b?c{2,3}", "(ab|a)(bc|c)", "[[:alpha:]_]\\w*", "\\p{Greek}+", ".", "(?s).+", "x|y|", "é+|\\x{1F600}"}
	values := []string{"", "0", "12345", "12a", "#", "a#b", "DRAFT", "Draft", "published", "publishedx", "bcc", "abccc", "abc", "ac", "_x1", "αβγ", "\n", "x", "y", "ééé", "\U0001F600", "ab\nc"}
	for _, src := range patterns {
		p, err := CompilePattern(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		re := regexp.MustCompile(`^(?:` + src + `)$`)
		for _, v := range values {
			if got, want := p.Match(v), re.MatchString(v); got != want {
				t.Errorf("%s: Match(%q) = %v, regexp says %v", src, v, got, want)
			}
			if p.Match(v) {
				for i := range v {
					if !p.MatchPrefix(v[:i]) {
						t.Errorf("%s: %q matches but its prefix %q does not start a match", src, v, v[:i])
					}
				}
			}
		}
	}
}

// MayHold tells the lint whether a value can hold a byte sorting before
// the delimiter (its order caveat).
func TestPatternMayHold(t *testing.T) {
	for src, below := range map[string]bool{"[0-9]+": false, "[^#]+": true, "[a-z ]+": true, "[A-Za-z0-9_-]+": false, "(?i)x": false} {
		p, err := CompilePattern(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MayHold(0, '#'-1); got != below {
			t.Errorf("%s: MayHold(below '#') = %v, want %v", src, got, below)
		}
	}
}

// Checking a value against a constraint allocates nothing.
func TestConstraintAllocs(t *testing.T) {
	tp := mustParse(t, "u#{UserID:raw=[0-9]+}#f#{Name:raw=(?i)[a-z]+(-[a-z]+)*}")
	fields, v := bindValues(t, tp, []any{"12345", "Mary-Ann"})
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := tp.Append(buf[:0], fields, v); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("rendering with constraints: %v allocations, want 0", n)
	}
}

func mustParse(t testing.TB, tmpl string) Template {
	t.Helper()
	tp, err := Parse(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}
