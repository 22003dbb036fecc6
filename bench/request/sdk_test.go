package request

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
)

// canned answers every request with an empty BatchWriteItem response, so
// a real *dynamodb.Client runs its whole middleware stack (validation,
// JSON serialization, signing, response parsing) without a network.
type canned struct{}

func (canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(`{"UnprocessedItems":{}}`)), Request: r}, nil
}

func sdkClient() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://localhost:1"),
		Credentials:  aws.AnonymousCredentials{},
		HTTPClient:   &http.Client{Transport: canned{}},
	})
}

// BenchmarkBatchWrite25SDK is BatchWrite25 through a real SDK client on a
// canned transport: the SDK's own work is included, the network is not.
func BenchmarkBatchWrite25SDK(b *testing.B) {
	c := sdkClient()
	repo := singletable.Bind(singletable.NewTable(c, "bench"), profiles)
	ps := make([]benchfix.Profile, 25)
	for i := range ps {
		ps[i] = benchfix.Sample(i)
	}
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchLibrary(repo, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchRaw(c, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
}
