package format

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendRFC3339Nano compares appendRFC3339Nano with AppendFormat on
// every day of the first and the last 400-year Gregorian cycles it formats
// itself (the calendar repeats every 400 years, and the date arithmetic
// works a cycle at a time) and of the years around now, on the days
// around them, and on random times over the whole range in zones of every
// kind of offset.
func TestAppendRFC3339Nano(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	zonesAll := []*time.Location{
		time.UTC, time.Local,
		time.FixedZone("", 0), time.FixedZone("X", 3600*5+1800), time.FixedZone("", -7*3600),
		time.FixedZone("", -30), time.FixedZone("", 59), time.FixedZone("", -7*3600-30), time.FixedZone("", 45*60+17),
		time.FixedZone("", 99*3600+59*60), time.FixedZone("", -(99*3600 + 59*60 + 59)),
		time.FixedZone("", 100*3600), time.FixedZone("", -100*3600), time.FixedZone("", math.MaxInt32),
	}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zonesAll = append(zonesAll, ny)
	}
	nanos := func() int64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return []int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 999999999, 120000000}[r.IntN(11)]
		}
		return r.Int64N(1e9)
	}
	check := func(tm time.Time) {
		t.Helper()
		want := tm.AppendFormat([]byte("x"), time.RFC3339Nano)
		got := appendRFC3339Nano([]byte("x"), tm)
		if string(got) != string(want) {
			t.Fatalf("%#v: appendRFC3339Nano %q, AppendFormat %q", tm, got, want)
		}
	}
	// Every day of years -1 to 401, 1900 to 2100 and 9599 to 10000, at a
	// random second and nanosecond, in UTC and in a random zone.
	for _, years := range [][2]int{{-1, 401}, {1900, 2100}, {9599, 10000}} {
		for d := time.Date(years[0], 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= years[1]; d = d.AddDate(0, 0, 1) {
			tm := d.Add(time.Duration(r.Int64N(86400))*time.Second + time.Duration(nanos()))
			check(tm)
			check(tm.In(zonesAll[r.IntN(len(zonesAll))]))
		}
	}
	// The first and last seconds of the range, in every zone.
	for _, z := range zonesAll {
		for _, tm := range []time.Time{
			time.Date(0, 1, 1, 0, 0, 0, 0, z), time.Date(-1, 12, 31, 23, 59, 59, 999999999, z),
			time.Date(9999, 12, 31, 23, 59, 59, 999999999, z), time.Date(10000, 1, 1, 0, 0, 0, 0, z),
			{}, time.Unix(0, 0).In(z), time.Unix(-1, 1).In(z),
		} {
			check(tm)
			check(tm.In(time.UTC))
		}
	}
	// Random instants over the whole range of time.Time, and near now.
	for i := 0; i < 200000; i++ {
		var tm time.Time
		switch r.IntN(3) {
		case 0:
			tm = time.Unix(int64(r.Uint64()), nanos())
		case 1:
			tm = time.Unix(r.Int64N(rfcMaxSec-rfcMinSec+3*86400)+rfcMinSec-86400, nanos())
		default:
			tm = time.Unix(r.Int64N(4e9)-1e9, nanos())
		}
		check(tm.In(zonesAll[r.IntN(len(zonesAll))]))
	}
}

func TestParseStoredLocation(t *testing.T) {
	ny := time.FixedZone("NY", -5*3600)
	tm, ok := ParseStored("2025-01-15T10:30:00", ny)
	if !ok || !tm.Equal(time.Date(2025, 1, 15, 15, 30, 0, 0, time.UTC)) {
		t.Errorf("got %v %v", tm, ok)
	}
	if Zoneless("2025-01-15T10:30:00Z") || !Zoneless("2025-01-15T10:30:00") || !Zoneless("2024-03-01") || Zoneless("x") {
		t.Error("Zoneless")
	}
}
