package singletable

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
)

// avEqual reports whether two attribute values are equal as DynamoDB
// compares them (see internal/attrvalue, which every comparison of
// attribute values in the library goes through).
func avEqual(a, b types.AttributeValue) bool { return attrvalue.Equal(a, b) }

// itemsEqual reports whether two items (or maps) have the same attributes
// with equal values.
func itemsEqual(a, b map[string]types.AttributeValue) bool { return attrvalue.ItemsEqual(a, b) }

// avN is a number attribute value.
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
