package format

import (
	"strings"
	"testing"
	"time"
)

func TestLayoutEntries(t *testing.T) {
	cases := []struct {
		layout  string
		cut     time.Duration
		width   int
		ordered bool
		utc     bool
	}{
		{"2006-01-02T15:04:05", time.Second, 19, true, false},
		{"15:04:05", time.Second, 8, true, false},
		{"2006-01-02T15:04:05.000000", time.Microsecond, 26, true, false},
		{"2006-01-02T15:04:05-07:00", time.Second, 25, true, true},
		{"2006-01-02 15:04", time.Minute, 16, true, false},
		{"02/01/2006", 24 * time.Hour, 10, false, false},
		{"2006-01-02T03:04:05PM", time.Second, 21, false, false},
		{"2006-1-2", 24 * time.Hour, 0, false, false},
		{"06-01-02", 24 * time.Hour, 8, false, false},
		{"2006-01-02T15:04:05.999", time.Millisecond, 0, false, false},
	}
	for _, c := range cases {
		f, err := Key(c.layout)
		if err != nil {
			t.Fatalf("Key(%q): %v", c.layout, err)
		}
		if g, _ := Key(c.layout); g != f {
			t.Errorf("Key(%q) is not cached", c.layout)
		}
		if a, err := Attr(LayoutOption + c.layout); a != f || err != nil {
			t.Errorf("Attr(layout=%q) = %v, %v; want the same entry", c.layout, a, err)
		}
		if f.Cut != c.cut || f.Width != c.width || (f.Order == Ordered) != c.ordered || f.UTC != c.utc || !f.Custom() {
			t.Errorf("%q: cut %v width %d order %v utc %v; want %v %d %v %v", c.layout, f.Cut, f.Width, f.Order, f.UTC, c.cut, c.width, c.ordered, c.utc)
		}
		text, warn := f.Lint("{At:"+c.layout+"}", "At", "#", nil)
		if warn == c.ordered || text == "" || strings.Contains(text, "%!") {
			t.Errorf("%q: lint %q (warn %v)", c.layout, text, warn)
		}
		// What the layout writes is in its alphabet and parses back.
		tm := time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)
		if c.layout == "15:04:05" {
			tm = time.Date(0, 1, 1, 10, 0, 0, 0, time.UTC)
		}
		if c.cut == 24*time.Hour {
			tm = tm.Truncate(24 * time.Hour)
		}
		w := string(f.AppendTime(nil, tm))
		for i := 0; i < len(w); i++ {
			if !f.Produces(w[i]) {
				t.Errorf("%q: %q holds %q outside its alphabet", c.layout, w, w[i])
			}
		}
		if back, ok := f.ParseTime(w); !ok || !back.Equal(tm) {
			t.Errorf("%q: ParseTime(%q) = %v, %v", c.layout, w, back, ok)
		}
	}
	for _, bad := range []string{"Jan 2 2006", "2006-01-02 MST", "2006-01-02T15:04:05 Monday", "2006-01-027"} {
		if f, err := Key(bad); err == nil {
			t.Errorf("Key(%q) = %v, want an error", bad, f)
		}
		if f, err := Attr(LayoutOption + bad); err == nil {
			t.Errorf("Attr(layout=%q) = %v, want an error", bad, f)
		}
	}
}

// A layout refuses what it cannot write whole, without quoting the time.
func TestLayoutRefusals(t *testing.T) {
	for _, c := range []struct {
		layout string
		t      time.Time
	}{
		{"15:04:05", time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)},                   // a date it leaves out
		{"2006-01-02T15:04:05", time.Date(2024, 1, 10, 10, 0, 0, 5000, time.UTC)},     // a fraction
		{"2006-01-02T15:04:05.000", time.Date(2024, 1, 10, 10, 0, 0, 1500, time.UTC)}, // finer than ms
		{"2006-01-02T03:04:05", time.Date(2024, 1, 10, 15, 0, 0, 0, time.UTC)},        // an afternoon without PM
	} {
		f, _ := Key(c.layout)
		err := f.Check(c.t)
		if err == nil || strings.Contains(err.Error(), "2024") {
			t.Errorf("%q.Check(%v) = %v; want a refusal that quotes no value", c.layout, c.t, err)
		}
	}
}

// isoformat writes Python's form for a UTC time and reads its naive forms.
func TestISOFormat(t *testing.T) {
	whole := time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)
	micro := whole.Add(500 * time.Microsecond)
	for _, c := range []struct {
		t    time.Time
		want string
	}{{whole, "2024-01-10T10:00:00+00:00"}, {micro, "2024-01-10T10:00:00.000500+00:00"}} {
		if got := string(ISOFormat.AppendTime(nil, c.t)); got != c.want {
			t.Errorf("AppendTime(%v) = %q, want %q", c.t, got, c.want)
		}
		for _, s := range ISOForms(c.t) {
			if back, ok := ISOFormat.ParseTime(s); !ok || !back.Equal(c.t) || back.Location() != time.UTC {
				t.Errorf("ParseTime(%q) = %v, %v", s, back, ok)
			}
		}
	}
	for _, s := range []string{"2024-01-10T10:00:00Z", "2024-01-10T10:00:00.000000+00:00", "2024-01-10T10:00:00.5+00:00",
		"2024-01-10T10:00:00+01:00", "2024-01-10T10:00:00.000500-00:00", "2024-01-10 10:00:00"} {
		if back, ok := ISOFormat.ParseTime(s); ok {
			t.Errorf("ParseTime(%q) = %v, want refused", s, back)
		}
	}
	if err := ISOFormat.Check(whole.Add(1)); err == nil {
		t.Error("Check accepts a nanosecond")
	}
	// Every form sorts by time; within an instant the naive form first.
	forms := []string{"2024-01-10T10:00:00#", "2024-01-10T10:00:00+00:00#", "2024-01-10T10:00:00.000500#", "2024-01-10T10:00:00.000500+00:00#", "2024-01-10T10:00:01#"}
	for i := 1; i < len(forms); i++ {
		if forms[i-1] >= forms[i] {
			t.Errorf("%q sorts after %q", forms[i-1], forms[i])
		}
	}
	if text, warn := ISOFormat.Lint("{At:isoformat}", "At", "#x", nil); !warn || !strings.Contains(text, "Ge and Between's lower bound miss it") {
		t.Errorf("lint: %q, %v", text, warn)
	}
}
