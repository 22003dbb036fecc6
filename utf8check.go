package singletable

import (
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// invalidUTF8Attr returns the name of the first attribute (top level name
// for nested values) holding a string that is not valid UTF-8, or "".
// DynamoDB strings are UTF-8 and the SDK would replace bad bytes with U+FFFD
// on the wire, silently changing the data; such items are refused instead.
func invalidUTF8Attr(item map[string]types.AttributeValue) string {
	for name, v := range item {
		if !utf8.ValidString(name) || !validUTF8Value(v) {
			return name
		}
	}
	return ""
}

func validUTF8Value(v types.AttributeValue) bool {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return utf8.ValidString(v.Value)
	case *types.AttributeValueMemberSS:
		for _, s := range v.Value {
			if !utf8.ValidString(s) {
				return false
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if !validUTF8Value(e) {
				return false
			}
		}
	case *types.AttributeValueMemberM:
		return invalidUTF8Attr(v.Value) == ""
	}
	return true
}
