package codec

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// wireEntity has a field of every shape the direct decoder handles
// itself, and some it hands to the attribute value decoders.
type wireEntity struct {
	S      string            `dynamodbav:"S"`
	N      int               `dynamodbav:"N"`
	I8     int8              `dynamodbav:"I8"`
	U      uint32            `dynamodbav:"U"`
	F      float64           `dynamodbav:"F"`
	F32    float32           `dynamodbav:"F32"`
	B      bool              `dynamodbav:"B"`
	T      time.Time         `dynamodbav:"T"`
	Unix   time.Time         `dynamodbav:"Unix,unixtime"`
	Tags   []string          `dynamodbav:"Tags"`
	Set    []string          `dynamodbav:"Set,stringset"`
	Nums   []int             `dynamodbav:"Nums,numberset"`
	M      map[string]string `dynamodbav:"M"`
	MI     map[string]int    `dynamodbav:"MI"`
	P      *string           `dynamodbav:"P"`
	Bin    []byte            `dynamodbav:"Bin"`
	Any    any               `dynamodbav:"Any"`
	Nested struct {
		A string
		B []any
	} `dynamodbav:"Nested"`
	AsStr  int    `dynamodbav:"AsStr,string"`
	Folded string `dynamodbav:"folded"`
	Omit   string `dynamodbav:"Omit,omitempty"`
}

// sdkJSON is item as the SDK's serializer writes it (a PutItem's Item),
// and what the SDK's deserializer makes of that JSON (a GetItem's Item).
func sdkJSON(t testing.TB, item map[string]types.AttributeValue) ([]byte, map[string]types.AttributeValue) {
	t.Helper()
	var itemJSON []byte
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), "PutItem") {
			var in struct{ Item json.RawMessage }
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, err
			}
			itemJSON = in.Item
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(append(append([]byte(`{"Item":`), itemJSON...), '}')))}, nil
	})
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
		Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: rt}})
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("t"), Item: item}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	return itemJSON, out.Item
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestDecodeJSONMatchesSDK(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	items := []map[string]types.AttributeValue{
		{"PK": s("USER#a"), "SK": s("P"), "EntityType": s("E"), "S": s("héllo \"q\" \\ \n \u2028 😀"), "N": n("-42"), "I8": n("12"),
			"U": n("7"), "F": n("1.5e3"), "F32": n("0.25"), "B": &types.AttributeValueMemberBOOL{Value: true},
			"T": s("2024-01-02T03:04:05.123456789+02:00"), "Unix": n("1700000000"),
			"Tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), n("2"), &types.AttributeValueMemberNULL{Value: true}}},
			"Set":  &types.AttributeValueMemberSS{Value: []string{"x", "y"}}, "Nums": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
			"M":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": s("v"), "é": s("")}},
			"MI": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": n("3")}},
			"P":  s("p"), "Bin": &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
			"Any":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), s("2")}}}},
			"Nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"A": s("a"), "B": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberBS{Value: [][]byte{{1}}}}}}},
			"AsStr":  s("17"), "FOLDED": s("f"), "Other": n("1")},
		// NULLs, a list into a set field, a string where a number goes (a field error).
		{"PK": s("USER#b"), "S": &types.AttributeValueMemberNULL{Value: true}, "Tags": &types.AttributeValueMemberNULL{Value: true},
			"M": &types.AttributeValueMemberNULL{Value: true}, "P": &types.AttributeValueMemberNULL{Value: true},
			"Set": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("z")}}},
		{"PK": s("USER#c"), "N": s("not a number")},
		{"PK": s("USER#d"), "Tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberBOOL{Value: true}}}, "N": n("99999999999999999999")},
		{"PK": s("USER#e"), "I8": n("300"), "F32": n("1e300")},
	}
	plan := StructPlan(reflect.TypeFor[wireEntity]())
	for i, item := range items {
		js, sdkItem := sdkJSON(t, item)
		var want wireEntity
		wantComplete, wantErr := UnmarshalInPlaceComplete(sdkItem, &want)

		var got wireEntity
		head := map[string]types.AttributeValue{}
		keep := &Keep{Values: []string{"PK", "SK", "EntityType", "S"}, Present: []string{"N"}}
		gotComplete, gotErr, err := UnmarshalJSON(NewJSON(js), reflect.TypeFor[wireEntity](), plan, unsafe.Pointer(&got), keep, head)
		if err != nil {
			t.Fatalf("item %d: %v\n%s", i, err, js)
		}
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Errorf("item %d: error %v, want %v", i, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(want, got) {
			t.Errorf("item %d:\ngot  %+v\nwant %+v", i, got, want)
		}
		if gotComplete != wantComplete {
			t.Errorf("item %d: complete %v, want %v", i, gotComplete, wantComplete)
		}
		for _, k := range keep.Values {
			if av, ok := sdkItem[k]; ok && !reflect.DeepEqual(head[k], av) {
				t.Errorf("item %d: head[%s] = %#v, want %#v", i, k, head[k], av)
			}
		}
	}
}

// FuzzDecodeJSON: malformed JSON is an error, never a panic, and a
// document that decodes decodes as the SDK's attribute values do.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{`{"S":{"S":"a"}}`, `{"N":{"N":"1"},"Tags":{"L":[{"S":"x"}]}}`, `{"M":{"M":{"a":{"S":"\ud83d\ude00"}}}}`,
		`{"S":{"S":"a"`, `{"S":{"X":1}}`, `{"Bin":{"B":"!!"}}`, `[`, `{"S":{"S":"\u12"}}`, `{"Any":{"L":[{"L":[{"L":[]}]}]}}`} {
		f.Add([]byte(seed))
	}
	plan := StructPlan(reflect.TypeFor[wireEntity]())
	f.Fuzz(func(t *testing.T, b []byte) {
		var got wireEntity
		head := map[string]types.AttributeValue{}
		d := NewJSON(b)
		_, ferr, err := UnmarshalJSON(d, reflect.TypeFor[wireEntity](), plan, unsafe.Pointer(&got), &Keep{Values: []string{"S"}}, head)
		if err != nil {
			return
		}
		b = b[:d.Offset()] // the item; what follows is its reader's (an array's comma)
		item, err := NewJSON(b).Item()
		if err != nil {
			// Where Item refuses what DecodeJSON read, the document must
			// be JSON, and the attributes it decodes or keeps attribute
			// values (DecodeJSON checks the ones it skips as the SDK does).
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				t.Fatalf("DecodeJSON read what is not a JSON object: %s", b)
			}
			read := map[string]json.RawMessage{}
			for k, v := range m {
				if _, folds := plan.fold(k); k == "S" || plan.isField(k) || folds {
					read[k] = v
				}
			}
			rb, _ := json.Marshal(read)
			if _, err := NewJSON(rb).Item(); err != nil {
				t.Fatalf("DecodeJSON decoded an attribute Item refuses (%v): %s", err, b)
			}
			return
		}
		if duplicateNames(b) {
			return // see decodeBoth
		}
		var want wireEntity
		wantErr := Unmarshal(item, &want)
		if (wantErr == nil) != (ferr == nil) {
			t.Fatalf("error %v, want %v: %s", ferr, wantErr, b)
		}
		if ferr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("got %+v, want %+v: %s", got, want, b)
		}
	})
}
