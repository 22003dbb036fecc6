package model

import (
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
)

// Scalar returns the DynamoDB scalar type (S, N or B) the field is stored
// as when it is a multi-attribute key attribute: a time is an S, or an N
// when its tag option stores epoch numbers (unix, unixmilli).
func (f *Field) Scalar() (types.ScalarAttributeType, error) {
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == TimeType {
		if f.Form.Number() {
			return types.ScalarAttributeTypeN, nil
		}
		return types.ScalarAttributeTypeS, nil
	}
	switch {
	case t.Kind() == reflect.String:
		return types.ScalarAttributeTypeS, nil
	case codec.IsNumberKind(t.Kind()):
		return types.ScalarAttributeTypeN, nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return types.ScalarAttributeTypeB, nil
	}
	return "", fmt.Errorf("type %s is not a string, number, time or []byte", t)
}

// KeyBytes is the length DynamoDB's key size limits count of a string or
// binary key value (0 for a number, which always fits).
func KeyBytes(av types.AttributeValue) int {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberB:
		return len(x.Value)
	}
	return 0
}
