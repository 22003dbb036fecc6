// Package redact leaves out of DynamoDB's error messages the values they
// quote, so that the library's errors never hold non-key attribute values
// (docs/security.md).
package redact

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"
)

// API returns err, an error of the SDK, with the values DynamoDB's message
// quotes left out of its text: a ValidationException for a set with
// duplicate members lists the members ("Input collection [a, a] contains
// duplicates"), and one for a number that does not parse quotes it. The
// result unwraps to err, so errors.As still reaches the SDK's types, whose
// fields hold DynamoDB's message unchanged.
func API(err error) error {
	var ae smithy.APIError
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	msg := ae.ErrorMessage()
	safe := Message(msg)
	if safe == msg {
		return err
	}
	return &redactedError{text: strings.ReplaceAll(err.Error(), msg, safe), err: err}
}

// redactedError is an SDK error with another text (see API).
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// Message leaves out of a DynamoDB error message the parts that quote
// values: what follows "numeric value:", and what lies between brackets
// (the members of a set) unless it is a list of cancellation reason codes,
// as a TransactionCanceledException's message has.
func Message(msg string) string {
	out := msg
	if i := strings.Index(out, "numeric value:"); i >= 0 {
		out = out[:i+len("numeric value:")] + " (value left out)"
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(out, '[')
		if i < 0 {
			b.WriteString(out)
			break
		}
		j := strings.IndexByte(out[i:], ']')
		if j < 0 {
			b.WriteString(out[:i])
			b.WriteString("[…]")
			break
		}
		inner := out[i+1 : i+j]
		b.WriteString(out[:i+1])
		if reasonCodes(inner) {
			b.WriteString(inner)
		} else {
			b.WriteString("…")
		}
		b.WriteByte(']')
		out = out[i+j+1:]
	}
	return b.String()
}

// reasonCodes reports whether s is a list of DynamoDB's cancellation
// reason codes ("ConditionalCheckFailed, None"), which quote no value.
func reasonCodes(s string) bool {
	for _, c := range strings.Split(s, ",") {
		switch strings.TrimSpace(c) {
		case "None", "ConditionalCheckFailed", "ItemCollectionSizeLimitExceeded", "TransactionConflict",
			"ProvisionedThroughputExceeded", "ThrottlingError", "ValidationError":
		default:
			return false
		}
	}
	return true
}
