package codec

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/benchfix"
)

// decodeBoth decodes doc, one item's JSON, on the direct path with keep
// and through Item and Unmarshal, and
// fails t where they differ: the value, the field error, completeness,
// and the head (Values always; Lazy when incomplete; Present as there).
func decodeBoth(t *testing.T, doc []byte, keep *Keep) {
	t.Helper()
	plan := StructPlan(reflect.TypeFor[wireEntity]())
	var got wireEntity
	head := map[string]types.AttributeValue{}
	complete, ferr, err := UnmarshalJSON(NewJSON(doc), reflect.TypeFor[wireEntity](), plan, unsafe.Pointer(&got), keep, head)
	item, ierr := NewJSON(doc).Item()
	if (err == nil) != (ierr == nil) {
		t.Fatalf("direct error %v, Item error %v: %s", err, ierr, doc)
	}
	if err != nil || duplicateNames(doc) {
		return // DynamoDB sends no item naming an attribute twice; Item keeps the last, the direct read each
	}
	var want wireEntity
	wantComplete, wantErr := UnmarshalInPlaceComplete(item, &want)
	if (wantErr == nil) != (ferr == nil) || wantErr != nil && wantErr.Error() != ferr.Error() {
		t.Fatalf("error %v, want %v: %s", ferr, wantErr, doc)
	}
	if wantErr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("got %+v\nwant %+v: %s", got, want, doc)
	}
	if complete != wantComplete {
		t.Fatalf("complete %v, want %v: %s", complete, wantComplete, doc)
	}
	wantHead := map[string]types.AttributeValue{}
	for k, av := range item {
		switch keep.keeps([]byte(k)).how {
		case keepValue:
			wantHead[k] = av
		case keepLazy:
			if !complete {
				wantHead[k] = av
			}
		case keepPresent:
			if !complete {
				wantHead[k] = Here
			}
		}
	}
	for k := range head { // a Present attribute past the 64th is there always
		if keep.keeps([]byte(k)).how == keepPresent && complete {
			wantHead[k] = Here
		}
	}
	if !reflect.DeepEqual(head, wantHead) {
		t.Fatalf("head %v, want %v: %s", head, wantHead, doc)
	}
}

// duplicateNames reports whether doc, an item, names an attribute twice.
func duplicateNames(doc []byte) bool {
	seen, dup, d := map[string]bool{}, false, NewJSON(doc)
	_ = d.Object(func(k []byte) error {
		dup = dup || seen[string(k)]
		seen[string(k)] = true
		return d.Skip()
	})
	return dup
}

// members are attribute texts of wireEntity's fields and of others, some
// in forms the known names must not take as theirs: escaped, spaced,
// folded.
var members = []string{
	`"S":{"S":"a\"b"}`, `"N":{"N":"-12"}`, `"N":{"N":"+7"}`, `"I8":{"N":"127"}`, `"U":{"N":"3"}`,
	`"F":{"N":"1.5"}`, `"F32":{"N":"2"}`, `"B":{"BOOL":true}`, `"T":{"S":"2024-01-02T03:04:05Z"}`,
	`"Tags":{"L":[{"S":"x"}]}`, `"M":{"M":{"k":{"S":"v"}}}`, `"P":{"S":"p"}`, `"AsStr":{"S":"17"}`,
	`"PK":{"S":"USER#1"}`, `"SK":{"S":"P"}`, `"GSI1PK":{"S":"G#1"}`, `"EntityType":{"S":"E"}`,
	`"\u0053":{"S":"escaped key"}`, `"N" : {"N":"5"}`, `"FOLDED":{"S":"f"}`, `"Other":{"N":"1"}`,
	`"U":{"N":"-1"}`, `"N":{"N":"99999999999999999999"}`, `"I8":{"N":"300"}`, `"B":{"S":"x"}`,
	`"T":{"S":"2024-01-02T03:04:05\u005a"}`, `"S":{"N":"4"}`, `"P":{"N":"5"}`, `"S":{"S":"x"} `,
	`"N":{"N":"1e2"}`, `"F":{"N":"-0.25e1"}`, `"U":{"N":"+3"}`, `"Tags":{"NULL":true}`,
}

// TestDecodeJSONKnownNames reads items of shifting shapes with one Keep:
// attributes moved, missing, added, written with escapes and white space.
func TestDecodeJSONKnownNames(t *testing.T) {
	keep := &Keep{Values: []string{"PK", "SK", "EntityType"}, Present: []string{"N", "S"}, Lazy: []string{"GSI1PK", "F"}}
	r := rand.New(rand.NewPCG(1, 2))
	base := members[:17]
	for i := range 3000 {
		ms := append([]string(nil), base...)
		switch i % 4 {
		case 1: // shuffled
			r.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
		case 2: // some dropped, some from the whole list added
			for range 3 {
				j := r.IntN(len(ms))
				ms = append(ms[:j], ms[j+1:]...)
			}
			fallthrough
		case 3:
			for range r.IntN(4) {
				ms = append(ms, members[r.IntN(len(members))])
			}
			r.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
		}
		decodeBoth(t, []byte("{"+strings.Join(unique(t, ms), ",")+"}"), keep)
	}
}

// unique is ms but for members naming an attribute an earlier one names
// (DynamoDB sends none; Item keeps the last, the direct read all).
func unique(t *testing.T, ms []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		var name string
		if err := json.Unmarshal([]byte(m[:strings.Index(m, ":")]), &name); err != nil {
			t.Fatal(err)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, m)
		}
	}
	return out
}

// FuzzDecodeJSONKeep is FuzzDecodeJSON with a Keep of values, Present
// and Lazy attributes, whose names are read as known names.
func FuzzDecodeJSONKeep(f *testing.F) {
	f.Add([]byte("{" + strings.Join(members[:17], ",") + "}"))
	f.Add([]byte(`{"S":{"S":"a"},"N":{"N":"1"},"S":{"S":"b"}}`))
	f.Add([]byte(`{"PK":{"S":"x"},"GSI1PK":{"S":"g"},"Tags":{"L":[]}}`))
	f.Add([]byte(`{"\u0050K":{"S":"x"},"S":{"S":"a"}}`))
	keep := &Keep{Values: []string{"PK", "SK"}, Present: []string{"N"}, Lazy: []string{"GSI1PK"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBoth(t, b, keep)
	})
}

// TestDecodeJSONKeepConcurrent reads items of two shapes with one fresh
// Keep from several goroutines (go test -race checks what the Keep works
// out once).
func TestDecodeJSONKeepConcurrent(t *testing.T) {
	keep := &Keep{Values: []string{"PK"}, Lazy: []string{"GSI1PK"}}
	docs := [][]byte{[]byte("{" + strings.Join(members[:17], ",") + "}"), []byte("{" + strings.Join(members[9:20], ",") + "}")}
	done := make(chan bool)
	for g := range 4 {
		go func() {
			defer func() { done <- true }()
			for i := range 200 {
				decodeBoth(t, docs[(g+i)%2], keep)
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// pageJSON is page() as the items of a Query response (as the SDK writes
// them), and the Keep of a Query of them.
func pageJSON(tb testing.TB) ([]byte, *Keep) {
	b := []byte{'['}
	for i, item := range page() {
		if i > 0 {
			b = append(b, ',')
		}
		js, _ := sdkJSON(tb, item)
		b = append(b, js...)
	}
	return append(b, ']'), &Keep{Values: []string{"PK", "SK"}, Present: []string{"Username", "SkillName"}}
}

func BenchmarkDecodeJSONPage20(b *testing.B) {
	doc, keep := pageJSON(b)
	plan := StructPlan(reflect.TypeFor[benchfix.Profile]())
	heads := make([]map[string]types.AttributeValue, 20)
	for i := range heads {
		heads[i] = map[string]types.AttributeValue{}
	}
	benchfix.Loop(b, func() {
		out := make([]benchfix.Profile, 20)
		d := NewJSON(doc)
		if err := d.Begin('['); err != nil {
			b.Fatal(err)
		}
		for i, first := 0, true; ; i++ {
			ok, err := d.NextElem(&first)
			if err != nil || !ok {
				break
			}
			clear(heads[i])
			if _, ferr, err := plan.DecodeJSON(d, unsafe.Pointer(&out[i]), keep, heads[i]); err != nil || ferr != nil {
				b.Fatal(err, ferr)
			}
		}
		if out[19].Username == "" {
			b.Fatal(fmt.Sprint(out[19]))
		}
	})
}

// TestDirectNumbersMatchSDK decodes numbers at and past each kind's
// limits, in every form the direct read takes or leaves, as Unmarshal
// decodes them.
func TestDirectNumbersMatchSDK(t *testing.T) {
	type nums struct {
		I   int
		I64 int64
		I32 int32
		I16 int16
		I8  int8
		U   uint
		U64 uint64
		U32 uint32
		U16 uint16
		U8  uint8
		F64 float64
		F32 float32
		B   bool
		SI  int16   `dynamodbav:",string"`
		SU  uint8   `dynamodbav:",string"`
		SF  float32 `dynamodbav:",string"`
	}
	texts := []string{"0", "-0", "+0", "1", "-1", "+1", "007", "127", "128", "-128", "-129", "255", "256", "32767", "32768",
		"-32768", "-32769", "65535", "65536", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295",
		"4294967296", "999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1.5", "1e3",
		"3.4028235e38", "3.5e38", "-3.5e38", "1e400", "", "-", "+", "1_0", "0x10", " 1", "1 ", "--1", "+-1"}
	plan := StructPlan(reflect.TypeFor[nums]())
	fields := []string{"I", "I64", "I32", "I16", "I8", "U", "U64", "U32", "U16", "U8", "F64", "F32", "B", "SI", "SU", "SF"}
	for _, f := range fields {
		for _, kind := range []string{"N", "S"} {
			for _, text := range texts {
				doc := []byte(fmt.Sprintf(`{%q:{%q:%q}}`, f, kind, text))
				var got, want nums
				_, ferr, err := UnmarshalJSON(NewJSON(doc), reflect.TypeFor[nums](), plan, unsafe.Pointer(&got), &Keep{}, map[string]types.AttributeValue{})
				item, ierr := NewJSON(doc).Item()
				if err != nil || ierr != nil {
					t.Fatalf("%s: %v %v", doc, err, ierr)
				}
				wantErr := Unmarshal(item, &want)
				if (ferr == nil) != (wantErr == nil) || ferr != nil && ferr.Error() != wantErr.Error() {
					t.Errorf("%s: error %v, want %v", doc, ferr, wantErr)
				}
				if wantErr == nil && !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %+v, want %+v", doc, got, want)
				}
			}
		}
	}
	for _, doc := range []string{`{"B":{"BOOL":false}}`, `{"B":{"BOOL":true}}`, `{"B":{"BOOL":tru}}`, `{"B":{"BOOL": true}}`} {
		var got, want nums
		_, ferr, err := UnmarshalJSON(NewJSON([]byte(doc)), reflect.TypeFor[nums](), plan, unsafe.Pointer(&got), &Keep{}, map[string]types.AttributeValue{})
		item, ierr := NewJSON([]byte(doc)).Item()
		if (err == nil) != (ierr == nil) {
			t.Fatalf("%s: %v, Item %v", doc, err, ierr)
		}
		if err == nil && (Unmarshal(item, &want) != nil || ferr != nil || got != want) {
			t.Errorf("%s: got %+v, want %+v", doc, got, want)
		}
	}
}

// TestTimeUTCMatchesParse: timeUTC reads what time.Parse reads, to the
// nanosecond and location, and leaves to it what it does not read.
func TestTimeUTCMatchesParse(t *testing.T) {
	texts := []string{"2024-01-02T03:04:05Z", "0000-01-01T00:00:00Z", "0000-02-29T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
		"1900-02-29T00:00:00Z", "2000-02-29T12:00:00Z", "2001-02-29T12:00:00Z", "2024-04-31T00:00:00Z", "2024-13-01T00:00:00Z",
		"2024-00-01T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z",
		"2024-01-01T23:59:59.Z", "2024-01-01T23:59:59.1Z", "2024-01-01T23:59:59.1234567891234Z", "2024-01-01T23:59:59,5Z",
		"2024-01-01T23:59:59.5+00:00", "2024-01-01T23:59:59+02:00", "2024-01-01 23:59:59Z", "2024-1-01T23:59:59Z",
		"+024-01-01T23:59:59Z", "2024-01-01T23:59:59.12a4Z", "1969-12-31T23:59:59.5Z", "1582-10-10T00:00:00Z"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		tm := time.Unix(r.Int64N(253402300800+62167219200)-62167219200, r.Int64N(1e9)).UTC()
		texts = append(texts, tm.Format(time.RFC3339Nano), tm.Format(time.RFC3339))
	}
	for _, s := range texts {
		want, err := time.Parse(time.RFC3339, s)
		got, ok := timeUTC([]byte(s))
		switch {
		case ok && err != nil:
			t.Errorf("%s: read, time.Parse: %v", s, err)
		case ok && (got != want || got.Location() != want.Location()):
			t.Errorf("%s: %v (%#v), want %v (%#v)", s, got, got, want, want)
		case !ok && err == nil && strings.HasSuffix(s, "Z") && !strings.Contains(s, ","):
			t.Errorf("%s: not read, time.Parse reads it", s)
		}
	}
}
