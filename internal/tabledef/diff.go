package tabledef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Diff lists how have, the live table, differs from want, the table the
// declarations create: its key schema, the types of the attributes both
// define, and each declared index's key schema and projection (Set.Drift).
// An index have has and want does not is no difference.
func Diff(want *dynamodb.CreateTableInput, have *types.TableDescription) []string {
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range have.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	var diffs []string
	if a, b := keySchemaString(want.KeySchema), keySchemaString(have.KeySchema); a != b {
		diffs = append(diffs, fmt.Sprintf("table key is %s, declared %s", b, a))
	}
	for _, d := range want.AttributeDefinitions {
		if ty, ok := attrTypes[aws.ToString(d.AttributeName)]; ok && ty != d.AttributeType {
			diffs = append(diffs, fmt.Sprintf("attribute %s is %s, declared %s", aws.ToString(d.AttributeName), ty, d.AttributeType))
		}
	}
	for _, g := range want.GlobalSecondaryIndexes {
		i := slices.IndexFunc(have.GlobalSecondaryIndexes, func(h types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(h.IndexName) == aws.ToString(g.IndexName)
		})
		if i < 0 {
			diffs = append(diffs, fmt.Sprintf("index %s is missing", aws.ToString(g.IndexName)))
			continue
		}
		if a, b := keySchemaString(g.KeySchema), keySchemaString(have.GlobalSecondaryIndexes[i].KeySchema); a != b {
			diffs = append(diffs, fmt.Sprintf("index %s key is %s, declared %s", aws.ToString(g.IndexName), b, a))
		}
		if d := Of(g.Projection).Drift(Of(have.GlobalSecondaryIndexes[i].Projection)); d != "" {
			diffs = append(diffs, fmt.Sprintf("index %s %s", aws.ToString(g.IndexName), d))
		}
	}
	return diffs
}

func keySchemaString(ks []types.KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %s", aws.ToString(k.AttributeName), k.KeyType)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
