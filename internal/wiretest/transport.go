package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RoundTripFunc is an http.RoundTripper.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// respond returns a response of status with body and body's CRC32 header,
// as DynamoDB sends it.
func respond(status int, body []byte) *http.Response {
	h := http.Header{"Content-Type": {"application/x-amz-json-1.0"},
		"X-Amz-Crc32": {strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10)}}
	return &http.Response{StatusCode: status, Header: h, ContentLength: int64(len(body)),
		Body: io.NopCloser(bytes.NewReader(body))}
}

// Canned answers each operation (by X-Amz-Target) with a fixed body.
type Canned map[string][]byte

// NewCanned returns a Canned answering with bodies (operation → body).
func NewCanned(bodies map[string][]byte) Canned { return Canned(bodies) }

// RoundTrip answers r.
func (c Canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return nil, err
		}
		r.Body.Close()
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	b, ok := c[op]
	if !ok {
		return nil, fmt.Errorf("canned: no response for %q", op)
	}
	return respond(200, b), nil
}

// Client returns a *dynamodb.Client sending through rt, unsigned, with
// optFns applied last (wire.Enable).
func Client(rt http.RoundTripper, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
		Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: rt}}, optFns...)
}

// SDKJSON returns each item as the SDK's own JSON serializer writes it
// (each item's object, from a BatchWriteItem request body).
func SDKJSON(items []map[string]types.AttributeValue) ([][]byte, error) {
	var body []byte
	c := Client(RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		return respond(200, []byte(`{}`)), nil
	}))
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	_, err := c.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": reqs}})
	if err != nil {
		return nil, err
	}
	var in struct {
		RequestItems map[string][]struct {
			PutRequest struct{ Item json.RawMessage }
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("%w: %s", err, body)
	}
	out := make([][]byte, len(items))
	for i, r := range in.RequestItems["t"] {
		out[i] = r.PutRequest.Item
	}
	return out, nil
}
