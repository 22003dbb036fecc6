package attrvalue

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TypeText names the DynamoDB type of av for messages, e.g. "a string (S)".
func TypeText(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "a string (S)"
	case *types.AttributeValueMemberN:
		return "a number (N)"
	case *types.AttributeValueMemberB:
		return "binary (B)"
	case *types.AttributeValueMemberBOOL:
		return "a boolean (BOOL)"
	case *types.AttributeValueMemberL:
		return "a list (L)"
	case *types.AttributeValueMemberM:
		return "a map (M)"
	case *types.AttributeValueMemberSS:
		return "a string set (SS)"
	case *types.AttributeValueMemberNS:
		return "a number set (NS)"
	case *types.AttributeValueMemberBS:
		return "a binary set (BS)"
	}
	return fmt.Sprintf("%T", av)
}
