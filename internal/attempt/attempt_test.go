package attempt

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestMayHaveApplied: only a 4xx answer and a failed dial are known not to
// have written; a 5xx, a reset connection or a timeout may have.
func TestMayHaveApplied(t *testing.T) {
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("answer")}}
	}
	sent := func(op string) error {
		return &smithyhttp.RequestSendError{Err: &url.Error{Op: "Post", URL: "http://127.0.0.1:8000/",
			Err: &net.OpError{Op: op, Net: "tcp", Err: errors.New("failed")}}}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"400", status(400), false},
		{"429", status(429), false},
		{"500", status(500), true},
		{"503", status(503), true},
		{"dial", sent("dial"), false},
		{"read", sent("read"), true},
		{"write", sent("write"), true},
		{"other", errors.New("timeout"), true},
	} {
		if got := MayHaveApplied(c.err); got != c.want {
			t.Errorf("%s: MayHaveApplied = %v, want %v", c.name, got, c.want)
		}
	}
}
