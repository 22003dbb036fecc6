package format

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestTableEntries checks every time format of the table against its own
// fields, so that a new entry whose Width, Order or Cut disagree with what
// its layout writes fails here: each value is Width bytes of its alphabet,
// reads back to the time it was written from, refuses a finer time, sorts
// as its times do when the entry says it is Ordered, and Stored gives what
// a read of the text gives.
func TestTableEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const lo, span = -62167219200, 315537897600 // 0000-01-01 and the seconds to 10000-01-01
	for _, f := range append(table, KeyTime) {
		if f.Kind != Time {
			continue
		}
		t.Run(f.Title(), func(t *testing.T) {
			var prev string
			var prevT time.Time
			for i := range 20000 {
				tm := time.Unix(lo+r.Int64N(span), r.Int64N(1e9)).UTC()
				if i%2 == 0 {
					tm = time.Unix(946684800+r.Int64N(2e9), r.Int64N(1e9)).UTC() // 2000 to 2063
				}
				cut := tm.Truncate(f.Cut)
				if f.Check(cut) != nil {
					t.Fatalf("Check(%v) refuses a time cut to %v", cut, f.Cut)
				}
				if f.Cut > time.Nanosecond && cut != tm && f.Check(tm) == nil {
					t.Fatalf("Check(%v) accepts a time finer than %v", tm, f.Cut)
				}
				s := string(f.AppendTime(nil, cut))
				if f.Width > 0 && len(s) != f.Width {
					t.Fatalf("%q is %d bytes, want %d", s, len(s), f.Width)
				}
				for j := 0; j < len(s); j++ {
					if !f.Produces(s[j]) {
						t.Fatalf("%q holds %q, outside the alphabet", s, s[j])
					}
				}
				back, ok := f.ParseTime(s)
				if !ok || !back.Equal(cut) || back.Location() != time.UTC {
					t.Fatalf("ParseTime(%q) = %v, %v; want %v", s, back, ok, cut)
				}
				if f.Use&InAttrs != 0 {
					if st := f.Stored(tm, nil); !st.Equal(cut) {
						t.Fatalf("Stored(%v) = %v, want %v", tm, st, cut)
					}
				}
				if f.Order == Ordered && prev != "" && strings.Compare(prev, s) != prevT.Compare(cut) {
					t.Fatalf("%q and %q sort unlike %v and %v", prev, s, prevT, cut)
				}
				prev, prevT = s, cut
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got, want := names(InKeys), "raw, rfc3339, rfc3339milli, date, unix, unixmilli, isoformat, %0Nd (N from 1 to 20)"; got != want {
		t.Errorf("names(InKeys) = %q, want %q", got, want)
	}
	for _, c := range []struct {
		spec string
		want *Format
	}{{"rfc3339", RFC3339}, {"raw", Raw}, {"unix", Unix}, {"%08d", &padded[8]}, {"%020d", &padded[20]}} {
		if f, err := Key(c.spec); f != c.want || err != nil {
			t.Errorf("Key(%q) = %v, %v", c.spec, f, err)
		}
	}
	for _, spec := range []string{"", "%0Nd", "%00d", "%021d", "%+8d", "unixtime", "RFC3339"} {
		if f, err := Key(spec); err == nil {
			t.Errorf("Key(%q) = %v, want an error", spec, f)
		}
	}
	for _, c := range []struct {
		option string
		want   *Format
	}{{"rfc3339milli", RFC3339Milli}, {"date", Date}, {"unix", Unix}, {"unixmilli", UnixMilli}, {"raw", nil}, {"%08d", nil}, {"unixtime", nil}, {"", nil}, {"isoformat", ISOFormat}} {
		if f, err := Attr(c.option); f != c.want || err != nil {
			t.Errorf("Attr(%q) = %v, want %v", c.option, f, c.want)
		}
	}
}
