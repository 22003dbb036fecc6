package codec

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestNumberLimits: the number texts DynamoDB accepts and refuses (as
// DynamoDB Local 3.3.1 answers them; the root package's
// TestNumberCheckMatchesDynamoDB asks it again), and the canonical form
// that makes numerically equal texts equal.
func TestNumberLimits(t *testing.T) {
	ok := map[string]string{
		"0": "0", "-0": "0", "+0": "0", "0.000": "0", "0e500": "0", "00.00": "0",
		"1": "1e0", "+1": "1e0", "1.0": "1e0", "1.": "1e0", "10e-1": "1e0", "0.1e1": "1e0", "1E0": "1e0",
		".5": "5e-1", "-.5": "-5e-1", "1e+5": "1e5", "100": "1e2", "1e2": "1e2",
		"-12.3400": "-1234e1", "0.00120": "12e-3",
		"12345678901234567890123456789012345678":       "12345678901234567890123456789012345678e37",
		"1234567890123456789012345678901234567800000":  "12345678901234567890123456789012345678e42",
		"9.9999999999999999999999999999999999999e+125": "99999999999999999999999999999999999999e125",
		"1e-130": "1e-130", "-1E-130": "-1e-130",
		"0.00000000000000000000000000000000000000000001": "1e-44",
		"0000000000000000000000000000000000000000000001": "1e0",
	}
	for s, want := range ok {
		got, why := number(s)
		if why != "" || got != want {
			t.Errorf("number(%q) = %q, %q; want %q", s, got, why, want)
		}
		if err := Check(&types.AttributeValueMemberN{Value: s}); err != nil {
			t.Errorf("Check(N %q): %v", s, err)
		}
	}
	bad := map[string]string{
		"": reasonNotNumber, "+": reasonNotNumber, ".": reasonNotNumber, "e5": reasonNotNumber, "1e": reasonNotNumber,
		"1e+": reasonNotNumber, " 5": reasonNotNumber, "5 ": reasonNotNumber, "NaN": reasonNotNumber, "+Inf": reasonNotNumber,
		"-Inf": reasonNotNumber, "Infinity": reasonNotNumber, "0x10": reasonNotNumber, "1.2.3": reasonNotNumber, "--1": reasonNotNumber,
		"1e99999999999": reasonNotNumber, "secret": reasonNotNumber,
		"123456789012345678901234567890123456789":   reasonDigits,
		"1.000000000000000000000000000000000000001": reasonDigits,
		"1e126": reasonHuge, "-1e126": reasonHuge, "10e125": reasonHuge, "1e308": reasonHuge,
		"1e-131": reasonTiny, "0.1e-130": reasonTiny, "1e-200": reasonTiny, "-5e-324": reasonTiny,
	}
	for s, want := range bad {
		if _, why := number(s); why != want {
			t.Errorf("number(%q) refused for %q, want %q", s, why, want)
		}
		err := Check(&types.AttributeValueMemberN{Value: s})
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Reason != want {
			t.Errorf("Check(N %q) = %v, want reason %q", s, err, want)
		}
	}
}

// TestFloatEncodingChecked: float64 and float32 fields that DynamoDB cannot
// store are refused by Marshal and MarshalSized with an *InvalidError
// naming the attribute, not the value; the edges of the range are stored.
// With the string option the text is a string, which is always storable.
func TestFloatEncodingChecked(t *testing.T) {
	type F struct {
		ID   string
		X    float64
		Y    float32
		S    float64 `dynamodbav:",string"`
		List []float64
	}
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 1e126, -1e126, 1e300, math.MaxFloat64,
		1e-131, -1e-200, math.SmallestNonzeroFloat64} {
		for _, v := range []F{{ID: "a", X: x}, {ID: "a", List: []float64{1, x}}} {
			_, err := Marshal(&v, 0)
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Marshal of %v: %v, want an *InvalidError", x, err)
			}
			if want := "X"; v.List != nil {
				want = "List"
				if ie.Attr != want {
					t.Errorf("Marshal of %v: attribute %q, want %q", x, ie.Attr, want)
				}
			} else if ie.Attr != want {
				t.Errorf("Marshal of %v: attribute %q, want %q", x, ie.Attr, want)
			}
			if _, _, _, err2 := MarshalSized(&v, 0); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("MarshalSized of %v: %v, Marshal: %v", x, err2, err)
			}
		}
	}
	for _, y := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		if _, err := Marshal(&F{Y: y}, 0); err == nil {
			t.Errorf("Marshal of float32 %v succeeded", y)
		}
	}
	// (9.999999999999999e125 is the float64 1e126.)
	for _, x := range []float64{0, math.Copysign(0, -1), 1e-130, -1e-130, 9.999999999999998e125, -9.999999999999998e125,
		math.Nextafter(1e126, 0), math.MaxFloat32, 1.5} {
		v := F{X: x, List: []float64{x}}
		if _, err := Marshal(&v, 0); err != nil {
			t.Errorf("Marshal of %v: %v", x, err)
		}
	}
	if _, err := Marshal(&F{S: math.Inf(1)}, 0); err != nil {
		t.Errorf("Marshal of +Inf with the string option: %v", err)
	}
}

// TestSetDuplicatesChecked: sets whose members repeat (number sets
// compared as numbers) are refused by Marshal, MarshalSized and
// EncodeAttr, whatever made them: the codec's own set encoders, a
// Marshaler, attributevalue (a fallback), json.Number texts.
func TestSetDuplicatesChecked(t *testing.T) {
	type S struct {
		SS  []string      `dynamodbav:",stringset"`
		NS  []int         `dynamodbav:",numberset"`
		FS  []float64     `dynamodbav:",numberset"`
		JS  []json.Number `dynamodbav:",numberset"`
		BS  [][]byte
		Arr *[2]string `dynamodbav:",stringset"`
		M   setMarshaler
	}
	cases := []struct {
		name, attr string
		v          S
	}{
		{"string set", "SS", S{SS: []string{"a", "secret", "secret"}}},
		{"int set", "NS", S{NS: []int{1, 2, 1}}},
		{"float set", "FS", S{FS: []float64{0.5, 1, 0.5}}},
		{"json numbers 1 and 1.0", "JS", S{JS: []json.Number{"1", "1.0"}}},
		{"json numbers 10 and 1e1", "JS", S{JS: []json.Number{"10", "1e1"}}},
		{"json numbers 0 and -0", "JS", S{JS: []json.Number{"0", "-0"}}},
		{"binary set", "BS", S{BS: [][]byte{[]byte("secret"), []byte("x"), []byte("secret")}}},
		{"array set (fallback)", "Arr", S{Arr: &[2]string{"secret", "secret"}}},
		{"marshaler", "M", S{M: setMarshaler{"secret", "secret"}}},
	}
	plan := For(reflect.TypeFor[S]())
	for _, tc := range cases {
		v := tc.v
		_, err := Marshal(&v, 0)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Attr != tc.attr {
			t.Errorf("%s: Marshal: %v, want an *InvalidError for %s", tc.name, err, tc.attr)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error quotes the value: %v", tc.name, err)
		}
		if _, _, _, err2 := MarshalSized(&v, 0); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: MarshalSized: %v, Marshal: %v", tc.name, err2, err)
		}
		if _, err3 := plan.EncodeAttr(reflect.ValueOf(v), tc.attr); err3 == nil || err3.Error() != err.Error() {
			t.Errorf("%s: EncodeAttr: %v, Marshal: %v", tc.name, err3, err)
		}
		// Plan.Encode stays attributevalue's exact mirror.
		if _, err := plan.Encode(reflect.ValueOf(v), 0); err != nil {
			t.Errorf("%s: Plan.Encode: %v", tc.name, err)
		}
	}
	ok := S{SS: []string{"a", "b"}, NS: []int{1, 10}, FS: []float64{0.1, 0.01}, JS: []json.Number{"1", "1.5"},
		BS: [][]byte{{1}, {1, 0}}, Arr: &[2]string{"a", "A"}, M: setMarshaler{"x", "y"}}
	if _, err := Marshal(&ok, 0); err != nil {
		t.Errorf("distinct members: %v", err)
	}
	for i := 2; i < 40; i++ {
		// Long sets take the sorting path.
		v := S{NS: make([]int, i)}
		for j := range v.NS {
			v.NS[j] = j * 3
		}
		if _, err := Marshal(&v, 0); err != nil {
			t.Fatalf("%d distinct members: %v", i, err)
		}
		v.NS[i-1] = v.NS[(i-1)/2]
		if _, err := Marshal(&v, 0); err == nil {
			t.Fatalf("%d members, two equal: no error", i)
		}
	}
}

type setMarshaler []string

func (m setMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if m == nil {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	return &types.AttributeValueMemberSS{Value: m}, nil
}

// TestEncodeAttrUTF8: the single-field path refuses invalid UTF-8 as the
// item path does (Update.Set must not store U+FFFD where Put refuses), in
// strings, lists, maps and their keys, and sets.
func TestEncodeAttrUTF8(t *testing.T) {
	type U struct {
		S  string
		P  *string
		L  []string
		M  map[string]string
		SS []string `dynamodbav:",stringset"`
		A  any
	}
	bad := "x\xffy"
	plan := For(reflect.TypeFor[U]())
	for attr, v := range map[string]U{
		"S": {S: bad}, "P": {P: &bad}, "L": {L: []string{"ok", bad}}, "M": {M: map[string]string{"k": bad}},
		"SS": {SS: []string{bad}}, "A": {A: map[string]any{bad: 1}},
	} {
		_, err := plan.EncodeAttr(reflect.ValueOf(v), attr)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Attr != attr || ie.Reason == "" {
			t.Errorf("EncodeAttr(%s): %v, want an *InvalidError", attr, err)
		}
		if _, _, invalid, err := MarshalSized(&v, 0); err != nil || invalid != attr {
			t.Errorf("MarshalSized: invalid %q, %v; want %q", invalid, err, attr)
		}
	}
	if av, err := plan.EncodeAttr(reflect.ValueOf(U{S: "héllo"}), "S"); err != nil || av == nil {
		t.Errorf("valid UTF-8: %v, %v", av, err)
	}
}

// TestCheckedEncodingMatchesCheckItem: on random values of every type the
// differential tests use, Marshal refuses exactly the items whose numbers
// or sets CheckItem refuses (the item being attributevalue's), MarshalSized
// agrees with Marshal, and EncodeAttr refuses exactly the attributes Check
// refuses (UTF-8 included).
func TestCheckedEncodingMatchesCheckItem(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 150
	}
	refused := 0
	for _, typ := range diffTypes {
		t.Run(typ.String(), func(t *testing.T) {
			g := &gen{r: rand.New(rand.NewPCG(7, uint64(len(typ.String()))))}
			plan := For(typ)
			for i := 0; i < n && !t.Failed(); i++ {
				v := g.value(typ)
				want, err := attributevalue.MarshalMap(v.Interface())
				if err != nil {
					continue
				}
				wantErr := checkItem(want, false)
				got, gotErr := plan.encodeTop(encodeInput(v, false), 0, true)
				switch {
				case (wantErr == nil) != (gotErr == nil):
					t.Fatalf("%#v: checkItem says %v, the checked encoding %v", v.Interface(), wantErr, gotErr)
				case wantErr != nil && wantErr.Error() != gotErr.Error():
					t.Fatalf("%#v: checkItem says %v, the checked encoding %v", v.Interface(), wantErr, gotErr)
				case wantErr == nil && !reflect.DeepEqual(want, got):
					t.Fatalf("%#v: items differ:\n%s\n%s", v.Interface(), dump(want), dump(got))
				}
				if wantErr != nil {
					refused++
				}
				_, _, _, sizedErr := plan.encodeSized(encodeInput(v, false), 0, nil, true)
				if (sizedErr == nil) != (gotErr == nil) || sizedErr != nil && sizedErr.Error() != gotErr.Error() {
					t.Fatalf("%#v: encodeSized %v, encodeTop %v", v.Interface(), sizedErr, gotErr)
				}
				for name, av := range want {
					_, err := plan.EncodeAttr(encodeInput(v, false), name)
					if (err == nil) != (Check(av) == nil) {
						t.Fatalf("%#v: EncodeAttr(%s) %v, Check %v", v.Interface(), name, err, Check(av))
					}
				}
			}
		})
	}
	if refused < n/10 {
		t.Errorf("only %d refused items: the generators should make more out-of-range numbers", refused)
	}
}
