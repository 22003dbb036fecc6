package codec

import (
	"encoding/json"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The json tag option: a value stored as its JSON text in an S, the way
// services in other languages often store a nested value (the elections
// service's ballot rankings). attributevalue has no equivalent.

// JSONError reports a value of a field tagged json that encoding/json
// cannot encode. attributevalue is not asked again for its own error, as
// it is for other failures: it would store the value in another shape.
type JSONError struct {
	Type reflect.Type
	Err  error
}

func (e *JSONError) Error() string {
	return "codec: json option: cannot encode " + e.Type.String() + ": " + e.Err.Error()
}

func (e *JSONError) Unwrap() error { return e.Err }

// keepErr reports whether err, from a plan's encoder, is returned as it is
// rather than replaced by attributevalue's own error.
func keepErr(err error) bool {
	_, ok := err.(*JSONError)
	return ok
}

// jsonEnc encodes a value of type t as its encoding/json text. A nil
// pointer, slice, map or interface is what attributevalue makes of it: a
// NULL, or nothing under omitempty; so is a zero value under omitempty.
func jsonEnc(t reflect.Type, tg tag) encFunc {
	omit, null := tg.OmitEmpty, tg.NullEmpty
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if v.IsNil() {
				if omit {
					return nil, nil
				}
				return st.sizedNull(), nil
			}
		}
		if v.IsZero() && (omit || null) {
			if omit {
				return nil, nil
			}
			return st.sizedNull(), nil
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, &JSONError{Type: t, Err: err}
		}
		return st.newS(string(b)), nil
	}
}

// jsonDec decodes an S holding JSON text into a value of type t with
// encoding/json. A NULL sets the zero value; any other attribute value
// (a list or map stored before the field was tagged json) is decoded as
// the field would be without the option.
func (b *builder) jsonDec(t reflect.Type, tg tag) decFunc {
	tg.JSON = false
	plain := b.dec(t, tg)
	return func(av types.AttributeValue, v reflect.Value) error {
		switch x := av.(type) {
		case *types.AttributeValueMemberS:
			p := reflect.New(t)
			if err := json.Unmarshal([]byte(x.Value), p.Interface()); err != nil {
				return &attributevalue.UnmarshalError{Err: err, Value: "JSON text", Type: t}
			}
			v.Set(p.Elem())
			return nil
		case *types.AttributeValueMemberNULL:
			v.SetZero()
			return nil
		}
		return plain(av, v)
	}
}
