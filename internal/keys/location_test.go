package keys

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York on a machine without a zone database
)

// decodeTime decodes s with placeholder p into a time.Time.
func decodeTime(p *Part, s string) (time.Time, error) {
	var tm time.Time
	err := p.DecodeValue(s, reflect.ValueOf(&tm).Elem())
	return tm, err
}

// TestTemplateInLocation: with a Location, zone-less key times (a layout
// without a zone, date, isoformat's naive form) are written and read as
// wall clocks there, as another service in that zone writes them: every
// time renders its wall clock, reads back as the same instant, in the
// location; a key another service wrote reads as that wall clock there.
// A layout with a zone, the default and isoformat's aware form stay UTC.
func TestTemplateInLocation(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	winter := time.Date(2024, 1, 10, 15, 4, 5, 0, time.UTC) // 10:04:05 EST
	summer := time.Date(2024, 7, 10, 14, 4, 5, 0, time.UTC) // 10:04:05 EDT
	cases := []struct {
		tpl        string
		v          time.Time
		want       string // the key rendered in ny
		wantUTC    string // the key rendered without a location
		foreign    string // a key another service in ny wrote
		foreignsAt time.Time
	}{
		{"AT#{At:2006-01-02T15:04:05}", winter, "AT#2024-01-10T10:04:05", "AT#2024-01-10T15:04:05",
			"AT#2024-01-10T09:00:00", time.Date(2024, 1, 10, 14, 0, 0, 0, time.UTC)},
		{"AT#{At:2006-01-02T15:04:05}", summer, "AT#2024-07-10T10:04:05", "AT#2024-07-10T14:04:05",
			"AT#2024-07-10T09:00:00", time.Date(2024, 7, 10, 13, 0, 0, 0, time.UTC)},
		{"AT#{At:2006-01-02 15:04:05.000000}#x", winter.Add(250 * time.Microsecond), "AT#2024-01-10 10:04:05.000250#x", "AT#2024-01-10 15:04:05.000250#x",
			"AT#2024-01-10 00:00:00.000001#x", time.Date(2024, 1, 10, 5, 0, 0, 1000, time.UTC)},
		{"D#{D:date}", time.Date(2024, 3, 1, 5, 0, 0, 0, time.UTC), "D#2024-03-01", "",
			"D#2024-07-04", time.Date(2024, 7, 4, 4, 0, 0, 0, time.UTC)},
		{"G#{At:isoformat}", winter, "G#2024-01-10T15:04:05+00:00", "G#2024-01-10T15:04:05+00:00",
			"G#2024-01-10T10:04:05.000001", winter.Add(time.Microsecond)},
		{"Z#{At:2006-01-02T15:04:05Z07:00}", winter, "Z#2024-01-10T15:04:05Z", "Z#2024-01-10T15:04:05Z",
			"Z#2024-01-10T10:04:05Z", time.Date(2024, 1, 10, 10, 4, 5, 0, time.UTC)},
		{"K#{At}", winter, "K#2024-01-10T15:04:05.000000000Z", "K#2024-01-10T15:04:05.000000000Z", "", time.Time{}},
	}
	timeType := reflect.TypeFor[time.Time]()
	for _, c := range cases {
		tp, err := Parse(c.tpl)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := render(&tp, []any{c.v}); c.wantUTC != "" && got != c.wantUTC {
			t.Errorf("%s in UTC: %q, want %q", c.tpl, got, c.wantUTC)
		}
		tp.In(ny)
		got, ok := render(&tp, []any{c.v.In(time.FixedZone("elsewhere", 7*3600))})
		if !ok || got != c.want {
			t.Errorf("%s in %s: %q, %v; want %q", c.tpl, ny, got, ok, c.want)
			continue
		}
		if back, ok := parsed(&tp, got, 0, timeType); !ok || !back.(time.Time).Equal(c.v) {
			t.Errorf("%s: %q reads back as %v, %v; want %v", c.tpl, got, back, ok, c.v)
		}
		if c.foreign == "" {
			continue
		}
		back, ok := parsed(&tp, c.foreign, 0, timeType)
		if at, _ := back.(time.Time); !ok || !at.Equal(c.foreignsAt) {
			t.Errorf("%s: another service's %q reads as %v, %v; want %v", c.tpl, c.foreign, back, ok, c.foreignsAt)
		} else if zoned := strings.Contains(c.tpl, "Z07") || strings.HasSuffix(c.foreign, "+00:00"); !zoned && at.Location() != ny {
			t.Errorf("%s: %q reads in %v, want %v", c.tpl, c.foreign, at.Location(), ny)
		}
	}
}

// TestTemplateInLocationClockChanges: a wall clock a clock change
// repeats names two instants, so exactly one of them has a key (the
// other is refused, never written as its twin's key); a wall clock a
// clock change skips names none, and a key holding one does not parse.
// Keys of the instants around both changes keep time order.
func TestTemplateInLocationClockChanges(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tp, p := formatPart(t, "{At:2006-01-02T15:04:05}")
	tp.In(ny)
	// 2024-11-03: 01:30 EDT (05:30 UTC) and 01:30 EST (06:30 UTC).
	first, second := time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC), time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC)
	k1, err1 := formatEncode(p, first)
	k2, err2 := formatEncode(p, second)
	if (err1 == nil) == (err2 == nil) {
		t.Fatalf("the repeated 01:30: %q, %v and %q, %v; want exactly one refused", k1, err1, k2, err2)
	}
	for _, err := range []error{err1, err2} {
		if err != nil && (!errors.Is(err, ErrUnrepresentable) || !strings.Contains(err.Error(), "America/New_York")) {
			t.Errorf("refusal %v: want ErrUnrepresentable naming the location", err)
		}
	}
	// 2024-03-10: 02:30 is skipped.
	if at, err := decodeTime(p, "2024-03-10T02:30:00"); err == nil {
		t.Errorf("the skipped 02:30 reads as %v", at)
	}
	var last string
	for _, day := range []time.Time{time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2024, 11, 3, 0, 0, 0, 0, time.UTC)} {
		for m := 0; m < 24*60; m += 10 {
			at := day.Add(time.Duration(m) * time.Minute)
			k, err := formatEncode(p, at)
			if err != nil {
				continue
			}
			if k <= last {
				t.Errorf("%v renders %q, not after %q", at, k, last)
			}
			if back, err := decodeTime(p, k); err != nil || !back.Equal(at) {
				t.Errorf("%v: %q reads back as %v, %v", at, k, back, err)
			}
			last = k
		}
	}
}
