package keys

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/format"
)

// matchCase is a template, the values each placeholder takes in the keys
// of a table, and keys another service wrote in spellings the template
// reads too. The exactness tests render every combination and check, for
// each value, that the conditions Equal and BeginsWith return hold on
// exactly the keys whose field parses back to a value satisfying the
// caller's condition. (A key that does not parse is no item of the
// template: a read reports it, whatever the condition says of it.)
type matchCase struct {
	tpl   string
	vals  [][]any
	extra []string       // keys another service wrote
	loc   *time.Location // the entity's Location (Template.In)
}

// parse parses the case's template, in its location.
func (c matchCase) parse() (Template, error) {
	tp, err := Parse(c.tpl)
	tp.In(c.loc)
	return tp, err
}

// est is a zone another service writes zone-less times in.
var est = time.FixedZone("EST", -5*3600)

// locCases are templates whose zone-less times are wall clocks in est:
// another service's keys in est's wall clock, in UTC's (another
// instant), and isoformat's aware form (UTC whatever the location).
var locCases = []matchCase{
	{tpl: "D#{Day:date}#{At:2006-01-02T15:04:05}#{ID}", loc: est,
		vals:  [][]any{{day.Add(5 * time.Hour), day2.Add(5 * time.Hour)}, {at, at2}, {"1"}},
		extra: []string{"D#2024-03-01#2024-01-10T05:00:00#1", "D#2024-03-01#2024-01-10T10:00:00#1"}},
	{tpl: "GOAL#{At:isoformat}#{ID}", loc: est, vals: [][]any{{at, atUs, at2}, {"460"}},
		extra: []string{"GOAL#2024-01-10T05:00:00#460", "GOAL#2024-01-10T10:00:00#460", "GOAL#2024-01-10T05:00:00.500000#460", "GOAL#2024-01-10T10:00:00+00:00#460"}},
	{tpl: "T#{At:15:04:05}", loc: est, vals: [][]any{{tod.Add(5 * time.Hour), tod2.Add(5 * time.Hour), tod}}},
}

// allMatchCases are matchCases, in UTC and in est, and locCases.
func allMatchCases() []matchCase {
	out := append(slices.Clone(matchCases), locCases...)
	for _, c := range matchCases {
		c.loc = est
		out = append(out, c)
	}
	return out
}

var (
	day  = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	day2 = time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)
	at   = time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)
	atUs = time.Date(2024, 1, 10, 10, 0, 0, 500000000, time.UTC)
	at2  = time.Date(2024, 1, 10, 10, 0, 1, 0, time.UTC)
	tod  = time.Date(0, 1, 1, 10, 0, 0, 0, time.UTC) // a time of day
	tod2 = time.Date(0, 1, 1, 10, 0, 1, 0, time.UTC)
)

var hostile = []any{"a", "ab", "a#b", "a%", "a%23", "a b", "é", "a\x00", "2024-03-01", "USAGE", "a\U0010FFFF"}

var matchCases = []matchCase{
	{tpl: "USAGE#{Day}#{Action}", vals: [][]any{hostile, {"login", "x#y"}}},
	{tpl: "PLATFORM#{Platform}", vals: [][]any{hostile}},
	{tpl: "{State}#{Date}", vals: [][]any{hostile, {"2024-01-02", "b"}}},
	{tpl: "U#{User}#META", vals: [][]any{hostile}},
	{tpl: "N#{N}#{S}", vals: [][]any{{-5, 0, 5, 12, -12}, {"s"}}},
	{tpl: "F#{F}#{U}", vals: [][]any{{-1.5, 0.0, 2.25, 1e300}, {uint8(0), uint8(200)}}},
	{tpl: "B#{B}", vals: [][]any{{true, false}}},
	{tpl: "T#{At}#{ID}", vals: [][]any{{at, atUs, at2}, {"1"}}},
	{tpl: "USAGE#{Day:date}#{At:15:04:05}#{User}", vals: [][]any{{day, day2}, {tod, tod2}, {"ann", "bob"}}},
	{tpl: "SEQ#{Seq:%04d}#x", vals: [][]any{{0, 7, 42, 9999}}},
	{tpl: "{Name:raw}#{ID:raw}", vals: [][]any{{"a", "ab", "a b", "a%", "é"}, {"1", "1#2", "x y"}}},
	{tpl: "R#{Name:raw}", vals: [][]any{{"a", "ab", "a#b", "a b"}}},
	{tpl: "GOAL#{At:isoformat}#{ID}", vals: [][]any{{at, atUs, at2}, {"460"}},
		extra: []string{"GOAL#2024-01-10T10:00:00#460", "GOAL#2024-01-10T10:00:00.500000#460"}},
	{tpl: "U#{ID:raw=[0-9]+}#{N:raw=[0-9]+}", vals: [][]any{{"1", "12", "123"}, {"7", "70"}},
		extra: []string{"U#1a#7", "U#12#7b"}}, // another service's values the constraints refuse: they do not parse
	{tpl: "E#{At:unix}#{ID}", vals: [][]any{{at, at2, time.Unix(5, 0).UTC()}, {"1"}}},
}

// render renders tp with vals (one per placeholder), or reports that a
// placeholder refuses its value.
func render(tp *Template, vals []any) (string, bool) {
	var b []byte
	k := 0
	for j := range tp.Parts {
		p := &tp.Parts[j]
		if !p.IsPlaceholder() {
			b = append(b, p.Literal...)
			continue
		}
		v := reflect.New(reflect.TypeOf(vals[k])).Elem()
		v.Set(reflect.ValueOf(vals[k]))
		var err error
		if b, err = p.AppendValue(b, v); err != nil {
			return "", false
		}
		k++
	}
	return string(b), true
}

// parsed returns placeholder i of key parsed back as a value of typ.
func parsed(tp *Template, key string, i int, typ reflect.Type) (any, bool) {
	vals, err := tp.Split(key)
	if err != nil {
		return nil, false
	}
	p, _ := (&Holder{Tpl: tp, Place: i}).part()
	v := reflect.New(typ).Elem()
	if p.DecodeValue(vals[i], v) != nil {
		return nil, false
	}
	return v.Interface(), true
}

func equalValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return reflect.DeepEqual(a, b)
}

func holds(conds []expr.KeyCond, key string) bool {
	for _, c := range conds {
		if c.Holds(&types.AttributeValueMemberS{Value: key}) {
			return true
		}
	}
	return false
}

func keyCond(attr, op, key string) expr.KeyCond { return *expr.KeyCmp(attr, op, key) }

// universe renders every combination of the case's values, and its extra
// keys.
func (c matchCase) universe(tp *Template) []string {
	combos := [][]any{nil}
	for _, vs := range c.vals {
		var next [][]any
		for _, prefix := range combos {
			for _, v := range vs {
				next = append(next, append(append([]any(nil), prefix...), v))
			}
		}
		combos = next
	}
	out := append([]string(nil), c.extra...)
	for _, vals := range combos {
		if k, ok := render(tp, vals); ok {
			out = append(out, k)
		}
	}
	return out
}

func valueOf(v any) reflect.Value {
	rv := reflect.New(reflect.TypeOf(v)).Elem()
	rv.Set(reflect.ValueOf(v))
	return rv
}

// TestMatchEqualIsExact: in a filter (no key known), equality on the
// first placeholder holds on exactly the keys whose field parses back to
// the value, hostile values, numbers, times, raw values and isoformat's
// naive spellings included; on a later placeholder it is refused.
func TestMatchEqualIsExact(t *testing.T) {
	for _, c := range allMatchCases() {
		tp, err := c.parse()
		if err != nil {
			t.Fatal(err)
		}
		keys := c.universe(&tp)
		for i := range c.vals {
			typ := reflect.TypeOf(c.vals[i][0])
			for _, v := range c.vals[i] {
				hs := []Holder{{Attr: "SK", Tpl: &tp, Place: i, Always: true}}
				conds, err := Equal(hs, valueOf(v))
				switch {
				case i > 0: // only the first placeholder starts at a known place
					if !errors.Is(err, ErrInexact) {
						t.Errorf("%s: {%d} = %#v: %v, want ErrInexact", c.tpl, i, v, err)
					}
					continue
				case err != nil && !errors.Is(err, ErrUnrepresentable) && !errors.Is(err, ErrEmptyValue):
					t.Errorf("%s: {%d} = %#v: %v", c.tpl, i, v, err)
					continue
				}
				for _, k := range keys { // a value refused is in no key
					got, ok := parsed(&tp, k, i, typ)
					if want := ok && equalValue(got, v); ok && holds(conds, k) != want || err != nil && want {
						t.Errorf("%s: {%d} = %#v: %v (%v) on key %q: holds %v, want %v", c.tpl, i, v, conds, err, k, !want, want)
					}
				}
			}
		}
	}
}

// TestMatchEqualOnKnownKey: a write's condition, whose item's key the
// request names, tests any placeholder by equality of the whole key.
func TestMatchEqualOnKnownKey(t *testing.T) {
	for _, c := range allMatchCases() {
		tp, _ := c.parse()
		keys := c.universe(&tp)
		for _, known := range keys {
			if _, err := tp.Split(known); err != nil {
				continue // a write's key is one the library rendered
			}
			for i := range c.vals {
				typ := reflect.TypeOf(c.vals[i][0])
				for _, v := range c.vals[i] {
					conds, err := Equal([]Holder{{Attr: "SK", Tpl: &tp, Place: i, Always: true, Known: known}}, valueOf(v))
					if err != nil {
						continue // the value is in no key
					}
					got, ok := parsed(&tp, known, i, typ)
					if want := ok && equalValue(got, v); holds(conds, known) != want {
						t.Errorf("%s on %q: {%d} = %#v: %v holds %v, want %v", c.tpl, known, i, v, conds, !want, want)
					}
					for _, c := range conds {
						if c.Op != expr.OpEq {
							t.Errorf("%s on %q: {%d} = %#v: %v, want the whole key", tp.Raw, known, i, v, conds)
						}
					}
				}
			}
		}
	}
}

// TestMatchBeginsWithIsExact: begins_with on a string placeholder's value
// holds on exactly the keys whose value starts with the prefix; a raw
// prefix holding the delimiter after it is refused, as is a field that
// is not a string.
func TestMatchBeginsWithIsExact(t *testing.T) {
	prefixes := []string{"", "a", "ab", "a#", "a%", "a%2", "é", "\xc3", "a b", "a\U0010FFFF", "USAGE#", "x"}
	for _, c := range allMatchCases() {
		tp, _ := c.parse()
		keys := c.universe(&tp)
		for i := range c.vals {
			typ := reflect.TypeOf(c.vals[i][0])
			for _, prefix := range prefixes {
				conds, err := BeginsWith([]Holder{{Attr: "SK", Tpl: &tp, Place: i, Always: true}}, typ, prefix)
				switch {
				case typ.Kind() != reflect.String || i > 0:
					if !errors.Is(err, ErrInexact) {
						t.Errorf("%s: begins_with({%d}, %q): %v, want ErrInexact", c.tpl, i, prefix, err)
					}
					continue
				case err != nil:
					if !errors.Is(err, ErrUnrepresentable) && !errors.Is(err, ErrEmptyValue) {
						t.Errorf("%s: begins_with({%d}, %q): %v", c.tpl, i, prefix, err)
					}
					continue
				}
				for _, k := range keys {
					got, ok := parsed(&tp, k, i, typ)
					if want := ok && strings.HasPrefix(got.(string), prefix); ok && holds(conds, k) != want {
						t.Errorf("%s: begins_with({%d}, %q): %v on key %q: holds %v, want %v", c.tpl, i, prefix, conds, k, !want, want)
					}
				}
			}
		}
	}
}

// TestMatchHolders: a table key is on every item, so the first exact one
// serves; a field held only in index keys is tested on each (any may
// hold), and one inexact index key refuses it; a key with a write shard's
// suffix is never equal to a rendered key.
func TestMatchHolders(t *testing.T) {
	pk, _ := Parse("DEV#{Owner}#{ID}")
	sk, _ := Parse("OWNER#{Owner}")
	gsi, _ := Parse("O#{Owner}#{At}")
	v := valueOf("ann")
	conds, err := Equal([]Holder{{Attr: "PK", Tpl: &pk, Place: 0, Always: true}, {Attr: "SK", Tpl: &sk, Place: 0, Always: true}}, v)
	if err != nil || len(conds) != 1 || !reflect.DeepEqual(conds[0], keyCond("PK", expr.OpBeginsWith, "DEV#ann#")) {
		t.Errorf("table keys: %v %v", conds, err)
	}
	conds, err = Equal([]Holder{{Attr: "GSI1SK", Tpl: &gsi, Place: 0}, {Attr: "GSI2PK", Tpl: &sk, Place: 0}}, v)
	if err != nil || len(conds) != 2 || conds[0].Attr != "GSI1SK" || !reflect.DeepEqual(conds[1], keyCond("GSI2PK", expr.OpEq, "OWNER#ann")) {
		t.Errorf("index keys: %v %v", conds, err)
	}
	if _, err := Equal([]Holder{{Attr: "GSI1SK", Tpl: &gsi, Place: 0}, {Attr: "GSI2SK", Tpl: &pk, Place: 1}}, valueOf("x")); !errors.Is(err, ErrInexact) {
		t.Errorf("one inexact index key: %v, want ErrInexact", err)
	}
	if _, err := Equal([]Holder{{Attr: "GSI2PK", Tpl: &sk, Place: 0, Suffixed: true}}, v); !errors.Is(err, ErrInexact) {
		t.Errorf("a sharded key: %v, want ErrInexact", err)
	}
	conds, err = BeginsWith([]Holder{{Attr: "GSI2PK", Tpl: &sk, Place: 0, Suffixed: true}}, v.Type(), "an")
	if err != nil || len(conds) != 1 || !reflect.DeepEqual(conds[0], keyCond("GSI2PK", expr.OpBeginsWith, "OWNER#an")) {
		t.Errorf("begins_with on a sharded key: %v %v", conds, err)
	}
	if _, err := Equal([]Holder{{Attr: "PK", Tpl: &pk, Place: 0, Always: true}}, valueOf("")); !errors.Is(err, ErrEmptyValue) {
		t.Errorf("empty value: %v, want ErrEmptyValue", err)
	}
	dt, _ := Parse("D#{Day:date}")
	if _, err := Equal([]Holder{{Attr: "SK", Tpl: &dt, Place: 0, Always: true}}, valueOf(at)); !errors.Is(err, ErrUnrepresentable) {
		t.Errorf("a time a date cannot hold: %v, want ErrUnrepresentable", err)
	}
	iso, _ := Parse("G#{At:isoformat}")
	conds, err = Equal([]Holder{{Attr: "SK", Tpl: &iso, Place: 0, Always: true}}, valueOf(atUs))
	if want := format.ISOForms(atUs); err != nil || len(conds) != 2 || !reflect.DeepEqual(conds, []expr.KeyCond{keyCond("SK", expr.OpEq, "G#"+want[0]), keyCond("SK", expr.OpEq, "G#"+want[1])}) {
		t.Errorf("isoformat: %v %v", conds, err)
	}
}
