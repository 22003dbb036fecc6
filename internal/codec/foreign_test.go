package codec

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// The tag options and decodings for data other services write: time
// forms, zone-less and date-only texts, epoch milliseconds, JSON text.

type ranking struct {
	CandidateName string `json:"candidate_name"`
	Rank          int    `json:"rank"`
}

type foreignItem struct {
	At      time.Time  `dynamodbav:"at,rfc3339"`
	AtMilli time.Time  `dynamodbav:"at_milli,rfc3339milli"`
	Day     time.Time  `dynamodbav:"day,date"`
	Unix    time.Time  `dynamodbav:"unix,unix"`
	Legacy  time.Time  `dynamodbav:"legacy,unixtime"`
	Milli   time.Time  `dynamodbav:"milli,unixmilli"`
	PtrAt   *time.Time `dynamodbav:"ptr_at,rfc3339,omitempty"`
	Plain   time.Time  `dynamodbav:"plain"`

	Rankings []ranking      `dynamodbav:"rankings,json"`
	Data     map[string]any `dynamodbav:"data,json,omitempty"`
	Nothing  []ranking      `dynamodbav:"nothing,json"`
}

func TestTimeFormsEncode(t *testing.T) {
	at := time.Date(2025, 1, 15, 10, 30, 0, 123456789, time.FixedZone("", 3600))
	v := foreignItem{At: at, AtMilli: at, Day: at, Unix: at, Legacy: at, Milli: at, PtrAt: &at, Plain: at,
		Rankings: []ranking{{"Kotlin", 1}, {"Python", 2}}}
	item, err := Marshal(&v, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"at":       &types.AttributeValueMemberS{Value: "2025-01-15T09:30:00Z"},
		"at_milli": &types.AttributeValueMemberS{Value: "2025-01-15T09:30:00.123Z"},
		"day":      &types.AttributeValueMemberS{Value: "2025-01-15"},
		"unix":     &types.AttributeValueMemberN{Value: "1736933400"},
		"legacy":   &types.AttributeValueMemberN{Value: "1736933400"},
		"milli":    &types.AttributeValueMemberN{Value: "1736933400123"},
		"ptr_at":   &types.AttributeValueMemberS{Value: "2025-01-15T09:30:00Z"},
		"plain":    &types.AttributeValueMemberS{Value: "2025-01-15T10:30:00.123456789+01:00"},
		"rankings": &types.AttributeValueMemberS{Value: `[{"candidate_name":"Kotlin","rank":1},{"candidate_name":"Python","rank":2}]`},
		"nothing":  &types.AttributeValueMemberNULL{Value: true},
	}
	if !reflect.DeepEqual(item, want) {
		t.Fatalf("item\n got %s\nwant %s", dump(item), dump(want))
	}
	// The sized path makes the same item and sizes it as a scan would.
	sized, size, _, err := MarshalSized(&v, 0)
	if err != nil || !reflect.DeepEqual(sized, want) {
		t.Fatalf("MarshalSized: %v %s", err, dump(sized))
	}
	if scan, _ := itemsize.Scan(want); size != scan {
		t.Errorf("size %d, scan %d", size, scan)
	}

	var back foreignItem
	if err := Unmarshal(item, &back); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want time.Time
		form      *format.Format
	}{
		{"At", back.At, at, format.RFC3339},
		{"AtMilli", back.AtMilli, at, format.RFC3339Milli},
		{"Day", back.Day, at, format.Date},
		{"Unix", back.Unix, at, format.Unix},
		{"Milli", back.Milli, at, format.UnixMilli},
		{"PtrAt", *back.PtrAt, at, format.RFC3339},
	} {
		// What a read gives back is what Stored says, to the location.
		if w := c.form.Stored(c.want, nil); !c.got.Equal(w) || c.got.Location().String() != w.Location().String() {
			t.Errorf("%s: decoded %v, Stored says %v", c.name, c.got, w)
		}
	}
	if !reflect.DeepEqual(back.Rankings, v.Rankings) || back.Nothing != nil {
		t.Errorf("json fields: %+v %+v", back.Rankings, back.Nothing)
	}
}

// A time field decodes the texts and numbers other services write, with
// or without a form option.
func TestTimeDecodeForeign(t *testing.T) {
	type item struct {
		Plain time.Time  `dynamodbav:"t"`
		Ptr   *time.Time `dynamodbav:"p"`
		Milli time.Time  `dynamodbav:"m,unixmilli"`
	}
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	cases := []struct {
		av   types.AttributeValue
		want time.Time
	}{
		{&types.AttributeValueMemberS{Value: "2025-01-15T10:30:00.123456"}, utc(2025, 1, 15, 10, 30, 0, 123456000)}, // Python utcnow().isoformat()
		{&types.AttributeValueMemberS{Value: "2025-01-15T10:30:00"}, utc(2025, 1, 15, 10, 30, 0, 0)},
		{&types.AttributeValueMemberS{Value: "2025-01-15 10:30:00"}, utc(2025, 1, 15, 10, 30, 0, 0)}, // Python str(datetime)
		{&types.AttributeValueMemberS{Value: "2024-03-01"}, utc(2024, 3, 1, 0, 0, 0, 0)},
		{&types.AttributeValueMemberS{Value: "2025-01-15T10:30:00+00:00"}, utc(2025, 1, 15, 10, 30, 0, 0)}, // Python isoformat() with tz
		{&types.AttributeValueMemberS{Value: "2025-01-15T11:00:00.000Z"}, utc(2025, 1, 15, 11, 0, 0, 0)},   // JavaScript toISOString()
		{&types.AttributeValueMemberN{Value: "1736937000"}, time.Unix(1736937000, 0)},
	}
	for _, c := range cases {
		for _, attr := range []string{"t", "p"} {
			var got item
			if err := Unmarshal(map[string]types.AttributeValue{attr: c.av}, &got); err != nil {
				t.Fatalf("%s %s: %v", attr, dump(c.av), err)
			}
			tm := got.Plain
			if attr == "p" {
				tm = *got.Ptr
			}
			_, off := tm.Zone()
			_, wantOff := c.want.Zone()
			if !tm.Equal(c.want) || off != wantOff {
				t.Errorf("%s %s: got %v, want %v", attr, dump(c.av), tm, c.want)
			}
		}
	}
	var got item
	if err := Unmarshal(map[string]types.AttributeValue{"m": &types.AttributeValueMemberN{Value: "1736937000123"}}, &got); err != nil {
		t.Fatal(err)
	}
	if want := time.UnixMilli(1736937000123); !got.Milli.Equal(want) {
		t.Errorf("unixmilli: got %v want %v", got.Milli, want)
	}
	for _, bad := range []string{"yesterday", "2025-13-01", "2025-01-15T25:00:00", "2025-01-15T10:30:00+99"} {
		err := Unmarshal(map[string]types.AttributeValue{"t": &types.AttributeValueMemberS{Value: bad}}, &got)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%q: got %v, want a *DecodeError", bad, err)
		}
	}
}

func TestJSONOption(t *testing.T) {
	type item struct {
		Rankings []ranking `dynamodbav:"rankings,json"`
		Any      any       `dynamodbav:"any,json,omitempty"`
		Ch       chan int  `dynamodbav:"ch,json,omitempty"`
	}
	// A list stored before the field was tagged json still decodes.
	old := map[string]types.AttributeValue{"rankings": &types.AttributeValueMemberL{Value: []types.AttributeValue{
		&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"CandidateName": &types.AttributeValueMemberS{Value: "Rust"}, "Rank": &types.AttributeValueMemberN{Value: "3"}}},
	}}}
	var got item
	if err := Unmarshal(old, &got); err != nil || len(got.Rankings) != 1 || got.Rankings[0] != (ranking{"Rust", 3}) {
		t.Fatalf("list: %v %+v", err, got)
	}
	// Bad JSON text is a decode error that does not quote the text.
	err := Unmarshal(map[string]types.AttributeValue{"rankings": &types.AttributeValueMemberS{Value: "[secret"}}, &got)
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad JSON: %v", err)
	}
	// A value encoding/json refuses is a *JSONError, not another shape.
	_, err = Marshal(&item{Any: math.Inf(1)}, 0)
	var je *JSONError
	if !errors.As(err, &je) {
		t.Errorf("Inf: got %v, want *JSONError", err)
	}
	_, _, _, err = MarshalSized(&item{Ch: make(chan int)}, 0)
	if !errors.As(err, &je) {
		t.Errorf("chan: got %v, want *JSONError", err)
	}
}

// Epoch times stored as an S, time layouts and isoformat as tag options:
// what each writes, and what it reads back.
func TestTimeLayoutOptions(t *testing.T) {
	type item struct {
		Epoch  time.Time `dynamodbav:"e,unixtime,string"`
		EpochN time.Time `dynamodbav:"n,unixtime"`
		Milli  time.Time `dynamodbav:"m,unixmilli,string"`
		Naive  time.Time `dynamodbav:"z,layout=2006-01-02T15:04:05"`
		Clock  time.Time `dynamodbav:"c,layout=15:04:05"`
		ISO    time.Time `dynamodbav:"i,isoformat"`
	}
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	in := item{Epoch: at, EpochN: at, Milli: at, Naive: at, Clock: time.Date(0, 1, 1, 10, 30, 0, 0, time.UTC), ISO: at.Add(500 * time.Microsecond)}
	av, err := Marshal(&in, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"e": &types.AttributeValueMemberS{Value: "1736937000"}, "n": &types.AttributeValueMemberN{Value: "1736937000"},
		"m": &types.AttributeValueMemberS{Value: "1736937000000"}, "z": &types.AttributeValueMemberS{Value: "2025-01-15T10:30:00"},
		"c": &types.AttributeValueMemberS{Value: "10:30:00"}, "i": &types.AttributeValueMemberS{Value: "2025-01-15T10:30:00.000500+00:00"},
	}
	for k, v := range want {
		if g := dump(map[string]types.AttributeValue{k: av[k]}); g != dump(map[string]types.AttributeValue{k: v}) || len(av) != len(want) {
			t.Errorf("Marshal %s: got %s, want %s", k, g, dump(map[string]types.AttributeValue{k: v}))
		}
	}
	// Another service's epoch seconds in an S, and the naive isoformat().
	foreign := map[string]types.AttributeValue{}
	for k, v := range want {
		foreign[k] = v
	}
	foreign["n"] = &types.AttributeValueMemberS{Value: "1736937000"}
	foreign["i"] = &types.AttributeValueMemberS{Value: "2025-01-15T10:30:00.000500"}
	for _, m := range []map[string]types.AttributeValue{want, foreign} {
		var got item
		if err := Unmarshal(m, &got); err != nil {
			t.Fatalf("Unmarshal %s: %v", dump(m), err)
		}
		for name, pair := range map[string][2]time.Time{"e": {got.Epoch, in.Epoch}, "n": {got.EpochN, in.EpochN}, "m": {got.Milli, in.Milli},
			"z": {got.Naive, in.Naive}, "c": {got.Clock, in.Clock}, "i": {got.ISO, in.ISO}} {
			if !pair[0].Equal(pair[1]) {
				t.Errorf("%s from %s: got %v, want %v", name, dump(m), pair[0], pair[1])
			}
		}
	}
	if err := TagError(`dynamodbav:"at,layout=Jan 2 2006"`); err == nil {
		t.Error("TagError accepts a layout with a month name")
	}
}
