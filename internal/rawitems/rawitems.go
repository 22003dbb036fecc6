// Package rawitems reads and writes a table's items with the SDK alone, as
// another service does, for the tests of several packages (the root's,
// package migrate's): a test writes a foreign item, and reads what the
// library stored, the same way in each.
package rawitems

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// S is a string attribute value.
func S(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// N is a number attribute value, s its digits.
func N(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }

// Put writes item into tbl's table with the SDK alone, as the other
// service does.
func Put(t testing.TB, tbl *singletable.Table, item map[string]types.AttributeValue) {
	t.Helper()
	_, err := tbl.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: item})
	if err != nil {
		t.Fatal(err)
	}
}

// Get reads the item PK = pk, SK = sk of tbl's table with the SDK alone,
// strongly consistent; nil when there is none.
func Get(t testing.TB, tbl *singletable.Table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := tbl.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()),
		Key: map[string]types.AttributeValue{"PK": S(pk), "SK": S(sk)}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// Scan returns every item of a table.
func Scan(t testing.TB, c singletable.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: &table, Limit: aws.Int32(1000)}
	for {
		page, err := c.Scan(context.Background(), in)
		require.NoError(t, err)
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Str is item's string attribute a, "" when it is absent or not a string.
func Str(item map[string]types.AttributeValue, a string) string {
	if s, ok := item[a].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// Num is the digits of item's number attribute a, "" when it is absent or
// not a number.
func Num(item map[string]types.AttributeValue, a string) string {
	if n, ok := item[a].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// GuardOwners maps the partition key of each unique guard item of tbl's
// table to its owner's partition key, from a strongly consistent scan.
func GuardOwners(t testing.TB, tbl *singletable.Table) map[string]string {
	t.Helper()
	out := map[string]string{}
	typeAttr := tbl.Describe().EntityTypeAttr
	p := dynamodb.NewScanPaginator(tbl.Client(), &dynamodb.ScanInput{TableName: aws.String(tbl.Name()), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if Str(it, typeAttr) == singletable.UniqueGuardType {
				out[Str(it, "PK")] = Str(it, "OwnerPK")
			}
		}
	}
	return out
}
