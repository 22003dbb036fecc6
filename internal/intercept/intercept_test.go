package intercept_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/intercept"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// A hook sees a copy of each input, may change it and add call options,
// and its nil answer is an empty response with nothing sent.
func TestWrap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	var ops []string
	var results []intercept.Result
	var keys [][]map[string]types.AttributeValue
	optionRan, send := false, true
	w := intercept.Wrap(c, func(ctx context.Context, op string, in any, next intercept.Send) (any, error) {
		ops = append(ops, op)
		if !send {
			return nil, nil
		}
		if rc := intercept.CapacityField(in); rc != nil {
			*rc = types.ReturnConsumedCapacityIndexes
		}
		out, err := next(ctx, func(*dynamodb.Options) { optionRan = true })
		results, keys = append(results, intercept.ResultOf(ctx, in, out)), append(keys, intercept.Keys(in, "PK", ""))
		return out, err
	})

	_, err := w.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &name, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}}})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, c, name)
	require.NoError(t, dynamodb.NewTableExistsWaiter(c).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, time.Minute))
	assert.True(t, optionRan, "the hook's extra call option ran")
	assert.Nil(t, intercept.CapacityField(&dynamodb.CreateTableInput{}), "table administration has no capacity field")

	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "a"}}
	put := &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
		"PK": key["PK"], "N": &types.AttributeValueMemberN{Value: "1"}}}
	out, err := w.PutItem(ctx, put)
	require.NoError(t, err)
	assert.Empty(t, put.ReturnConsumedCapacity, "the caller's input is not changed")
	require.NotNil(t, out.ConsumedCapacity, "the hook's copy asked for capacity")
	assert.Equal(t, []map[string]types.AttributeValue{key}, keys[1], "a put's key is its item's key attributes")

	q, err := w.Query(ctx, &dynamodb.QueryInput{TableName: &name, KeyConditionExpression: aws.String("PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": key["PK"]}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, q.Count)
	r := results[2]
	assert.Equal(t, 1, r.Count)
	assert.Equal(t, 1, r.Scanned)
	assert.False(t, r.Continued)
	require.Len(t, r.Capacity, 1)
	read, write := intercept.Units("Query", r.Capacity)
	assert.Positive(t, read)
	assert.Zero(t, write)
	assert.Equal(t, read, intercept.IndexUnits(r.Capacity)[""])

	send = false
	del, err := w.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &name, Key: key})
	require.NoError(t, err)
	assert.NotNil(t, del, "an empty response, not nil")
	got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	assert.NotEmpty(t, got.Item, "the delete was not sent")
	assert.Equal(t, []string{"CreateTable", "PutItem", "Query", "DeleteItem"}, ops)
}
