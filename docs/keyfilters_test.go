package docs_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// The declarations of adopting.md's "Filters and conditions on fields held
// only in keys"; keyfilters_test.go in the root runs them against
// DynamoDB Local.

type UsageEntry struct {
	Platform  string    `dynamodbav:"-"`
	UsageDate time.Time `dynamodbav:"usage_date"`
	UsageTime time.Time `dynamodbav:"usage_time"`
	UserID    string    `dynamodbav:"user_id"`
	Count     int       `dynamodbav:"count"`
}

var UsageEntries = singletable.MustDefine(singletable.Schema[UsageEntry]{
	Type: "Usage", PK: "PLATFORM#{Platform}", SK: "USAGE#{UsageDate:date}#{UsageTime:15:04:05}#{UserID:raw}",
	KeyOnly: []string{"Platform", "UsageDate", "UsageTime"}, MatchKeys: true,
	Indexes: []singletable.IndexSchema[UsageEntry]{{Name: "GSI1", PK: "USER#{UserID:raw}", SK: "{UsageDate:date}#{UsageTime:15:04:05}"}},
})

// usesOn counts the uses of one day on every platform: the filter is
// begins_with(SK, "USAGE#2024-03-01#").
func usesOn(ctx context.Context, usage *singletable.Repo[UsageEntry], day time.Time) (int, error) {
	return usage.Scan().Filter(expression.Name("UsageDate").Equal(expression.Value(day))).Count(ctx)
}

// userUsesOn lists a user's uses on one platform: a Query of GSI1 whose
// filter is PK = "PLATFORM#ios".
func userUsesOn(ctx context.Context, usage *singletable.Repo[UsageEntry], user, platform string) ([]UsageEntry, error) {
	return usage.QueryIndex("GSI1", UsageEntry{UserID: user}).
		Filter(expression.Name("Platform").Equal(expression.Value(platform))).Collect(ctx)
}

var _, _ = usesOn, userUsesOn

// The filters the library writes for key-only fields, as adopting.md's
// table gives them (names and values put in place of their placeholders).
func Example_keyOnlyFilters() {
	usage := singletable.MustBind(singletable.NewTable(nil, "usage"), UsageEntries)
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	scan, err := usage.Scan().Filter(expression.Name("UsageDate").Equal(expression.Value(day))).Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(expanded(*scan.FilterExpression, scan.ExpressionAttributeNames, scan.ExpressionAttributeValues))
	q, err := usage.QueryIndex("GSI1", UsageEntry{UserID: "u1"}).
		Filter(expression.Name("Platform").In(expression.Value("ios"), expression.Value("web"))).Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(expanded(*q.FilterExpression, q.ExpressionAttributeNames, q.ExpressionAttributeValues))
	_, err = usage.Scan().Filter(expression.Name("UsageTime").Equal(expression.Value(day))).Request()
	fmt.Println(err)
	// Output:
	// (EntityType = "Usage" OR attribute_not_exists(EntityType)) AND (begins_with(SK, "USAGE#2024-03-01#"))
	// (EntityType = "Usage" OR attribute_not_exists(EntityType)) AND ((PK = "PLATFORM#ios") OR (PK = "PLATFORM#web"))
	// singletable: Usage: UsageTime: filter on UsageTime, a field only keys hold (SK "USAGE#{UsageDate:date}#{UsageTime:15:04:05}#{UserID:raw}", GSI1SK "{UsageDate:date}#{UsageTime:15:04:05}"), cannot be written against them exactly: no condition on the key matches exactly: {UsageTime} follows {UsageDate}, so where its value starts in the key depends on the value before it
}

// expanded is expression text with its names and string values in place
// of their placeholders.
func expanded(text string, names map[string]string, values map[string]types.AttributeValue) string {
	var refs []string
	for ref := range names {
		refs = append(refs, ref)
	}
	for ref := range values {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b string) int { return len(b) - len(a) }) // #n10 before #n1
	for _, ref := range refs {
		with := names[ref]
		if s, ok := values[ref].(*types.AttributeValueMemberS); ok {
			with = strconv.Quote(s.Value)
		}
		text = strings.ReplaceAll(text, ref, with)
	}
	return text
}
