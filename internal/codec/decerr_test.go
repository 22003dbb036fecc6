package codec

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type secretUnmarshaler string

func (s *secretUnmarshaler) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	return fmt.Errorf("bad value %v", av.(*types.AttributeValueMemberS).Value)
}

type decInner struct {
	Zip int
}

type decTarget struct {
	N    int
	I8   int8
	U    uint
	F32  float32
	T    time.Time
	TU   time.Time `dynamodbav:",unixtime"`
	B    bool
	M    map[int]string
	In   decInner
	L    []decInner
	X    secretUnmarshaler
	Any  any
	Name string
}

// TestDecodeErrorsDoNotQuoteValues: whatever the stored value that cannot
// be decoded, Unmarshal's error names the attribute and the types but
// never quotes the value (attributevalue's, strconv's and time's errors,
// reachable through Unwrap, do).
func TestDecodeErrorsDoNotQuoteValues(t *testing.T) {
	const secret = "S3CRET"
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	m := func(k string, v types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{k: v}}
	}
	cases := []struct {
		attr string
		av   types.AttributeValue
		path string
	}{
		{"N", s(secret), "N"},
		{"N", n("9" + secret), "N"},
		{"I8", n("1234" + strings.Repeat("9", 20)), "I8"},
		{"I8", n("999"), "I8"},
		{"U", n("-5" + secret), "U"},
		{"F32", n("1e300"), "F32"},
		{"T", s(secret + "T00:00"), "T"},
		{"TU", n(secret), "TU"},
		{"B", s(secret), "B"},
		{"M", m(secret, s("x")), "M"},
		{"In", m("Zip", s(secret)), "In.Zip"},
		{"In", s(secret), "In"},
		{"L", &types.AttributeValueMemberL{Value: []types.AttributeValue{m("Zip", n("1.5"+secret))}}, "L.Zip"},
		{"X", s(secret), "X"},
		{"Any", n(secret), "Any"},
		{"name", &types.AttributeValueMemberL{Value: []types.AttributeValue{s(secret)}}, "name"},
	}
	for _, tc := range cases {
		item := map[string]types.AttributeValue{tc.attr: tc.av, "Name": s(secret + "-fine")}
		if tc.attr == "name" {
			// Matched to Name ignoring case; the exact Name is left out.
			delete(item, "Name")
		}
		for _, decode := range []func() error{
			func() error { var out decTarget; return Unmarshal(item, &out) },
			func() error { out := new(decTarget); return UnmarshalInPlace(item, out) },
		} {
			err := decode()
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%s: %v, want a *DecodeError", tc.attr, err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "999") || strings.Contains(err.Error(), "1e300") {
				t.Errorf("%s: the error quotes the value: %v", tc.attr, err)
			}
			if de.Attr != tc.path {
				t.Errorf("%s: attribute %q, want %q (%v)", tc.attr, de.Attr, tc.path, err)
			}
			if errors.Unwrap(err) == nil {
				t.Errorf("%s: no cause", tc.attr)
			}
		}
	}
	// The cause stays reachable, with its details.
	var out decTarget
	err := Unmarshal(map[string]types.AttributeValue{"N": s("x")}, &out)
	var te *attributevalue.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Errorf("%v does not reach attributevalue's error", err)
	}
	err = Unmarshal(map[string]types.AttributeValue{"I8": n("x")}, &out)
	var ne *strconv.NumError
	if !errors.As(err, &ne) {
		t.Errorf("%v does not reach strconv's error", err)
	}
	// Plan.Decode keeps attributevalue's text.
	item := map[string]types.AttributeValue{"N": s("x")}
	want := attributevalue.UnmarshalMap(item, &decTarget{})
	got := For(reflect.TypeFor[decTarget]()).Decode(item, reflect.New(reflect.TypeFor[decTarget]()).Elem())
	if want == nil || got == nil || want.Error() != got.Error() {
		t.Errorf("Plan.Decode: %v, attributevalue: %v", got, want)
	}
}
