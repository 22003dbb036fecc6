package attrvalue

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeyText renders a key (or any item) for messages, the same way every
// time: the partition key attribute pk, the sort key attribute sk, then
// any other attribute in name order, e.g. {PK=USER#john SK=PROFILE}
// ("" for pk and sk: every attribute in name order). Strings and numbers
// print as they are, binary values in base64, anything else as "?". Every
// message of the library that shows a key renders it here.
func KeyText(key map[string]types.AttributeValue, pk, sk string) string {
	var b strings.Builder
	b.WriteByte('{')
	write := func(a string) {
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
		b.WriteByte('=')
		switch v := key[a].(type) {
		case *types.AttributeValueMemberS:
			b.WriteString(v.Value)
		case *types.AttributeValueMemberN:
			b.WriteString(v.Value)
		case *types.AttributeValueMemberB:
			b.WriteString(base64.StdEncoding.EncodeToString(v.Value))
		default:
			b.WriteByte('?') // not a key type: never in a key DynamoDB accepts
		}
	}
	for _, a := range [...]string{pk, sk} {
		if _, ok := key[a]; ok && a != "" {
			write(a)
		}
	}
	for _, a := range slices.Sorted(maps.Keys(key)) {
		if a != pk && a != sk {
			write(a)
		}
	}
	b.WriteByte('}')
	return b.String()
}
