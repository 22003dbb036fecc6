package codec

import (
	"reflect"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fallbackName is the field name of the single-field structs used to hand
// one value to attributevalue.
const fallbackName = "F"

// fallbacks counts values handed to attributevalue (tests check that the
// common shapes never are).
var fallbacks atomic.Int64

// singleField returns struct{ F t `dynamodbav:"F,<tg options>"` }: marshaling
// it makes attributevalue encode a value of type t exactly as it encodes a
// struct field of that type and tag, and unmarshaling decodes likewise.
func singleField(t reflect.Type, tg tag) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{
		Name: fallbackName,
		Type: t,
		Tag:  tg.structTag(fallbackName),
	}})
}

// fallbackEnc encodes a value of type t under tag tg through attributevalue.
// addr tells whether attributevalue would see the value as addressable
// (which decides whether pointer-receiver Marshalers are called).
func fallbackEnc(t reflect.Type, tg tag, addr bool) encFunc {
	single := singleField(t, tg)
	return func(st *encState, v reflect.Value) (types.AttributeValue, error) {
		fallbacks.Add(1)
		s := reflect.New(single)
		s.Elem().Field(0).Set(v)
		var in any = s.Interface()
		if !addr {
			in = s.Elem().Interface()
		}
		m, err := attributevalue.MarshalMap(in)
		if err != nil {
			return nil, err
		}
		av := m[fallbackName]
		if av != nil {
			st.suspect(av)
		}
		return av, nil
	}
}

// fallbackDec decodes into a value of type t under tag tg through
// attributevalue: the target's current value is copied in and the result
// copied back, which is what decoding in place does.
func fallbackDec(t reflect.Type, tg tag) decFunc {
	st := singleField(t, tg.decodeTag())
	return func(av types.AttributeValue, v reflect.Value) error {
		fallbacks.Add(1)
		s := reflect.New(st)
		f := s.Elem().Field(0)
		f.Set(v)
		err := attributevalue.UnmarshalMap(map[string]types.AttributeValue{fallbackName: av}, s.Interface())
		v.Set(f)
		return err
	}
}
