package redact

import (
	"errors"
	"testing"

	"github.com/aws/smithy-go"
)

func TestMessage(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Input collection [secret, secret] contains duplicates", "Input collection […] contains duplicates"},
		{"Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]",
			"Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]"},
		{"A value provided cannot be converted into a number; numeric value: 12x", "A value provided cannot be converted into a number; numeric value: (value left out)"},
		{"unclosed [secret", "unclosed […]"},
		{"no values here", "no values here"},
	} {
		if got := Message(c.in); got != c.want {
			t.Errorf("Message(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAPI(t *testing.T) {
	cause := &smithy.GenericAPIError{Code: "ValidationException", Message: "Input collection [secret] contains duplicates"}
	err := API(cause)
	if got, want := err.Error(), "api error ValidationException: Input collection […] contains duplicates"; got != want {
		t.Errorf("API(err).Error() = %q, want %q", got, want)
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae != cause {
		t.Errorf("API(err) does not unwrap to the SDK's error")
	}
	plain := errors.New("plain")
	if API(plain) != plain || API(nil) != nil {
		t.Errorf("API changed an error that is not an API error, or nil")
	}
}
