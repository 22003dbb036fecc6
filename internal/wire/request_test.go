package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// recorder answers every request with 200 {} and keeps the last one.
type recorder struct {
	body   []byte
	header http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r.body, r.header = b, req.Header.Clone()
	r.header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader("{}")), ContentLength: 2, Request: req}, nil
}

// sent returns what a client sends for in: through the SDK's serializer
// (direct false) or written by the path (a client with Enable, the call
// marked with Write).
func sent(t *testing.T, in any, direct bool) ([]byte, http.Header) {
	t.Helper()
	rec := &recorder{}
	opts := []func(*dynamodb.Options){}
	sdk := &spy{}
	if direct {
		opts = append(opts, Enable, func(o *dynamodb.Options) {
			p := o.Protocol.(*Protocol)
			sdk.ClientProtocol, p.ClientProtocol = p.ClientProtocol, sdk
		})
	}
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
		Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: rec}}, opts...)
	ctx := context.Background()
	if direct {
		ctx = Write(ctx, in, true)
	}
	var err error
	switch in := in.(type) {
	case *dynamodb.PutItemInput:
		_, err = c.PutItem(ctx, in)
	case *dynamodb.BatchGetItemInput:
		_, err = c.BatchGetItem(ctx, in)
	case *dynamodb.TransactGetItemsInput:
		_, err = c.TransactGetItems(ctx, in)
	case *dynamodb.BatchWriteItemInput:
		_, err = c.BatchWriteItem(ctx, in)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := AppendInput(nil, in); direct && ok != (sdk.serialized == 0) {
		t.Errorf("%T: the SDK serialized %d requests, the path could write it: %v", in, sdk.serialized, ok)
	}
	return rec.body, rec.header
}

// spy is the SDK's protocol, counting the requests it serializes.
type spy struct {
	smithyhttp.ClientProtocol
	serialized int
}

func (s *spy) SerializeRequest(ctx context.Context, o *smithy.OperationSchema, in smithy.Serializable, r *smithyhttp.Request) error {
	s.serialized++
	return s.ClientProtocol.SerializeRequest(ctx, o, in, r)
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// tricky are strings whose escaping differs between JSON writers.
var tricky = []string{"", "plain", `q"uote`, `back\slash`, "nl\nr\rt\ttab", "\x00\x01\x08\x0c\x1f", "del\x7fdel",
	"\u2028line\u2029para", "bad\xff\xfeutf8", "é😀ü", "truncated \xe2\x82", "<html>&amp;</html>",
	"0123456789abcdef\"0123456789abcdef", "0123456\u20280123456", "01234567\x7f"}

// every is one attribute value of each type, nested, each map of one
// entry (so that the body's bytes do not depend on map order).
func every() types.AttributeValue {
	l := []types.AttributeValue{
		&types.AttributeValueMemberN{Value: "-12.5E+3"}, &types.AttributeValueMemberB{Value: []byte{0, 1, 0xff}},
		&types.AttributeValueMemberB{Value: []byte{}}, &types.AttributeValueMemberBOOL{Value: true},
		&types.AttributeValueMemberBOOL{}, &types.AttributeValueMemberNULL{Value: true},
		&types.AttributeValueMemberSS{Value: tricky}, &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		&types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k\"\u2028": s("v")}},
	}
	for _, v := range tricky {
		l = append(l, s(v))
	}
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: l}}}
}

// TestSameRequestBytes checks that the bodies the path writes are the
// SDK's, byte for byte where no map holds two entries (their order is the
// map's), as JSON values otherwise, with the same X-Amz-Target and
// Content-Type.
func TestSameRequestBytes(t *testing.T) {
	one := func(k string, v types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{k: v}
	}
	two := map[string]types.AttributeValue{"PK": s("USER#ana"), "SK": s("SKILL#go")}
	exact := map[string]any{
		"put-every-type": &dynamodb.PutItemInput{TableName: aws.String("t\"1"), Item: one("a", every())},
		"put-options": &dynamodb.PutItemInput{TableName: aws.String("t"), Item: one("PK", s("k")),
			ConditionExpression:      aws.String("attribute_not_exists(#pk) OR #t = :t"),
			ExpressionAttributeNames: map[string]string{"#pk\n": "PK\u2028"}, ExpressionAttributeValues: one(":t", s("User")),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes, ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize,
			ReturnValues: types.ReturnValueAllOld, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld},
		"put-empty-maps": &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{},
			ExpressionAttributeNames: map[string]string{}, ExpressionAttributeValues: map[string]types.AttributeValue{}},
		"batchget": &dynamodb.BatchGetItemInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			RequestItems: map[string]types.KeysAndAttributes{"t": {ConsistentRead: aws.Bool(true),
				Keys: []map[string]types.AttributeValue{one("PK", s("a")), one("PK", every()), {}, nil}, ProjectionExpression: aws.String("#a, b"),
				ExpressionAttributeNames: map[string]string{"#a": "A"}}}},
		"batchget-bare": &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {ConsistentRead: aws.Bool(false), Keys: []map[string]types.AttributeValue{}}}},
		"txget": &dynamodb.TransactGetItemsInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
			TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: aws.String("t"), Key: one("PK", s("a")),
				ProjectionExpression: aws.String("#n"), ExpressionAttributeNames: map[string]string{"#n": "Name"}}},
				{Get: &types.Get{TableName: aws.String("u"), Key: map[string]types.AttributeValue{}}}}},
		"txget-bare": &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{}},
		"batchwrite": &dynamodb.BatchWriteItemInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
			ReturnItemCollectionMetrics: types.ReturnItemCollectionMetricsSize, RequestItems: map[string][]types.WriteRequest{"t\u2028": {
				{PutRequest: &types.PutRequest{Item: one("a", every())}}, {DeleteRequest: &types.DeleteRequest{Key: one("PK", s("k"))}},
				{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{}}}}}},
	}
	asJSON := map[string]any{
		"put-item": &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{"PK": s("a"), "SK": s("b"), "n": &types.AttributeValueMemberN{Value: "1"}, "x": every()},
			ExpressionAttributeNames: map[string]string{"#a": "A", "#b": "B"}, ExpressionAttributeValues: two},
		"batchget-tables": &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			"t1": {Keys: []map[string]types.AttributeValue{two, two}}, "t2": {Keys: []map[string]types.AttributeValue{two}, ConsistentRead: aws.Bool(true)}}},
		"txget-keys": &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{{Get: &types.Get{TableName: aws.String("t"), Key: two}}}},
		"batchwrite-tables": &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
			"t1": {{PutRequest: &types.PutRequest{Item: two}}, {DeleteRequest: &types.DeleteRequest{Key: two}}}, "t2": {{PutRequest: &types.PutRequest{Item: two}}}}},
	}
	for name, in := range exact {
		want, wh := sent(t, in, false)
		got, gh := sent(t, in, true)
		if b, ok := AppendInput(nil, in); !ok || !bytes.Equal(b, want) {
			t.Errorf("%s: AppendInput wrote (ok %v)\n%s\nthe SDK\n%s", name, ok, b, want)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the path sent\n%s\nthe SDK\n%s", name, got, want)
		}
		for _, h := range []string{"X-Amz-Target", "Content-Type", "Content-Length"} {
			if gh.Get(h) != wh.Get(h) || wh.Get(h) == "" {
				t.Errorf("%s: header %s %q, the SDK's %q", name, h, gh.Get(h), wh.Get(h))
			}
		}
	}
	for name, in := range asJSON {
		want, _ := sent(t, in, false)
		got, _ := sent(t, in, true)
		if !reflect.DeepEqual(decode(t, got), decode(t, want)) {
			t.Errorf("%s: the path sent\n%s\nthe SDK\n%s", name, got, want)
		}
		if b, ok := AppendInput(nil, in); !ok || !reflect.DeepEqual(decode(t, b), decode(t, want)) {
			t.Errorf("%s: AppendInput wrote (ok %v)\n%s", name, ok, b)
		}
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestSDKWritesWhatThePathCannot: inputs with a legacy member or a value
// the SDK would not write are left to the SDK, which sends them as ever.
func TestSDKWritesWhatThePathCannot(t *testing.T) {
	for name, in := range map[string]any{
		"expected": &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{"a": s("b")},
			Expected: map[string]types.ExpectedAttributeValue{"a": {Exists: aws.Bool(false)}}},
		"conditional-operator": &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{}, ConditionalOperator: types.ConditionalOperatorAnd},
		"attributes-to-get": &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			"t": {AttributesToGet: []string{"a"}, Keys: []map[string]types.AttributeValue{{"a": s("b")}}}}},
		"nil-value":   &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"a": nil}},
		"nil-in-list": &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"a": &types.AttributeValueMemberL{Value: []types.AttributeValue{nil}}}},
		"query":       &dynamodb.QueryInput{TableName: aws.String("t")},
	} {
		if _, ok := AppendInput(nil, in); ok {
			t.Errorf("%s: written by the path", name)
		}
		if strings.HasPrefix(name, "nil") || name == "query" {
			continue // the SDK writes no value there; a Query is not sent here
		}
		want, _ := sent(t, in, false)
		if got, _ := sent(t, in, true); !reflect.DeepEqual(decode(t, got), decode(t, want)) {
			t.Errorf("%s: sent\n%s\nthe SDK\n%s", name, got, want)
		}
	}
}

// TestInputMembersKnown fails loudly when the SDK adds a member to an
// input the path writes: AppendInput must learn to write it (or leave
// such inputs to the SDK).
func TestInputMembersKnown(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[dynamodb.PutItemInput](): "ConditionExpression ConditionalOperator Expected ExpressionAttributeNames ExpressionAttributeValues Item " +
			"ReturnConsumedCapacity ReturnItemCollectionMetrics ReturnValues ReturnValuesOnConditionCheckFailure TableName",
		reflect.TypeFor[dynamodb.BatchGetItemInput]():     "RequestItems ReturnConsumedCapacity",
		reflect.TypeFor[types.KeysAndAttributes]():        "AttributesToGet ConsistentRead ExpressionAttributeNames Keys ProjectionExpression",
		reflect.TypeFor[dynamodb.TransactGetItemsInput](): "ReturnConsumedCapacity TransactItems",
		reflect.TypeFor[types.TransactGetItem]():          "Get",
		reflect.TypeFor[types.Get]():                      "ExpressionAttributeNames Key ProjectionExpression TableName",
		reflect.TypeFor[dynamodb.BatchWriteItemInput]():   "RequestItems ReturnConsumedCapacity ReturnItemCollectionMetrics",
		reflect.TypeFor[types.WriteRequest]():             "DeleteRequest PutRequest",
		reflect.TypeFor[types.PutRequest]():               "Item",
		reflect.TypeFor[types.DeleteRequest]():            "Key",
	} {
		var got []string
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() {
				got = append(got, f.Name)
			}
		}
		if sort.Strings(got); strings.Join(got, " ") != want {
			t.Errorf("%s has members %q; the path writes %q (internal/wire/request.go)", typ, got, want)
		}
	}
	for _, av := range []types.AttributeValue{&types.AttributeValueMemberS{}, &types.AttributeValueMemberN{}, &types.AttributeValueMemberB{},
		&types.AttributeValueMemberBOOL{}, &types.AttributeValueMemberNULL{}, &types.AttributeValueMemberSS{}, &types.AttributeValueMemberNS{},
		&types.AttributeValueMemberBS{}, &types.AttributeValueMemberL{}, &types.AttributeValueMemberM{}} {
		if n := reflect.TypeOf(av).Elem().NumField(); n != 2 { // Value and noSmithyDocumentSerde
			t.Errorf("%T has %d fields", av, n)
		}
	}
}

// FuzzSameStringBytes: any string, as a value, a map key and a name, is
// written as the SDK writes it.
func FuzzSameStringBytes(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		in := &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{v: s(v)},
			ExpressionAttributeNames: map[string]string{v: v}, ConditionExpression: &v}
		want, _ := sent(t, in, false)
		if got, _ := sent(t, in, true); !bytes.Equal(got, want) {
			t.Errorf("%q: the path sent\n%s\nthe SDK\n%s", v, got, want)
		}
	})
}
