package codec

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fieldError marks the attribute whose decoding failed. Its text is its
// cause's, so that Plan.Decode's errors stay attributevalue's own; the
// library's entry points turn it into a *DecodeError.
type fieldError struct {
	name string       // the item's attribute name
	kind string       // the attribute value's type, as avKindName
	typ  reflect.Type // the Go field's type
	err  error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func fieldErr(name string, av types.AttributeValue, typ reflect.Type, err error) error {
	return &fieldError{name: name, kind: avKindName(av), typ: typ, err: err}
}

// DecodeError reports an item that cannot be decoded into a struct. Its
// text names the attribute (a path through nested maps, "Address.Zip"),
// the type of the stored value and of the Go field, and what went wrong,
// but never the stored value or its cause's text, which may quote it
// (attributevalue's and strconv's errors do): error texts end up in logs.
// Unwrap reaches the cause.
type DecodeError struct {
	Attr   string       // the attribute's path; "" when not known
	Kind   string       // the stored value's type: "string", "number", "map", …
	Type   reflect.Type // the Go type it was decoded into, when known
	Reason string
	Err    error
}

// Error names the attribute, the types and the reason.
func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("codec: cannot decode")
	if e.Attr != "" {
		b.WriteString(" attribute ")
		b.WriteString(e.Attr)
	}
	if e.Kind != "" {
		b.WriteString(" (")
		b.WriteString(e.Kind)
		b.WriteString(")")
	}
	if e.Type != nil {
		b.WriteString(" into ")
		b.WriteString(e.Type.String())
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// decodeError turns an error of Plan.Decode into a *DecodeError.
func decodeError(err error) error {
	if err == nil {
		return nil
	}
	de := &DecodeError{Err: err}
	var path []string
	cause := err
	for {
		fe, ok := cause.(*fieldError)
		if !ok {
			break
		}
		path = append(path, fe.name)
		de.Kind, de.Type = fe.kind, fe.typ
		cause = fe.err
	}
	de.Attr = strings.Join(path, ".")
	de.Reason = decodeReason(cause)
	return de
}

// decodeReason says what went wrong without quoting the value.
func decodeReason(err error) string {
	var te *attributevalue.UnmarshalTypeError
	var ue *attributevalue.UnmarshalError
	var ne *strconv.NumError
	var pe *time.ParseError
	switch {
	case errors.As(err, &te):
		if strings.HasPrefix(te.Value, "number overflow") {
			return "the number overflows " + te.Type.String()
		}
		if strings.HasPrefix(te.Value, "map key") {
			return "a map key cannot be decoded into " + te.Type.String()
		}
		return "the stored type does not fit " + te.Type.String()
	case errors.As(err, &pe):
		return "not a time in RFC 3339 form"
	case errors.As(err, &ne):
		if errors.Is(ne.Err, strconv.ErrRange) {
			return "the number is out of range"
		}
		return "not a number of that type"
	case errors.As(err, &ue):
		if ue.Type == timeType {
			return "not a time"
		}
		return "the value cannot be unmarshaled into " + ue.Type.String()
	}
	// An Unmarshaler's or attributevalue's own words may quote the value.
	return "decoding failed (the cause, which may quote the value, is left out; errors.Unwrap reaches it)"
}
