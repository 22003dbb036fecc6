package ddbfault_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// setup makes a table and a client whose requests pass through ft, with
// the SDK's retries off so each injected fault is visible.
func setup(t *testing.T, cfg ddbfault.Config) (*dynamodb.Client, *ddbfault.Transport, string) {
	t.Helper()
	ft := ddbfault.New(nil, cfg)
	c := ddblocal.Shared(t).Client(func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
		o.RetryMaxAttempts = 1
	})
	name := ddblocal.TableName(t)
	_, err := c.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
	})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	return c, ft, name
}

func item(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}
}

func exists(t *testing.T, name, pk string) bool {
	t.Helper()
	out, err := ddblocal.Shared(t).Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name, Key: item(pk), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	return out.Item != nil
}

func TestErrorsLookLikeDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		kind  ddbfault.Kind
		check func(t *testing.T, err error)
	}{
		{ddbfault.Throttle, func(t *testing.T, err error) {
			var e *types.ProvisionedThroughputExceededException
			assert.ErrorAs(t, err, &e)
		}},
		{ddbfault.Throttling, func(t *testing.T, err error) {
			var e interface{ ErrorCode() string }
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "ThrottlingException", e.ErrorCode())
		}},
		{ddbfault.ServerError, func(t *testing.T, err error) {
			var e *types.InternalServerError
			assert.ErrorAs(t, err, &e)
		}},
		{ddbfault.Timeout, func(t *testing.T, err error) { assert.True(t, ddbfault.IsInjected(err), "%v", err) }},
	}
	for _, tc := range cases {
		t.Run(tc.kind.String(), func(t *testing.T) {
			c, ft, name := setup(t, ddbfault.Config{Seed: 1, Rate: 1, Kinds: []ddbfault.Kind{tc.kind}})
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("a")})
			require.Error(t, err)
			tc.check(t, err)
			assert.False(t, exists(t, name, "a"), "a fault before sending must not write")
			assert.Equal(t, 1, ft.Stats().Faults[tc.kind])
		})
	}
}

func TestLostResponseAppliesTheWrite(t *testing.T) {
	t.Parallel()
	c, _, name := setup(t, ddbfault.Config{Seed: 1, Rate: 1, Kinds: []ddbfault.Kind{ddbfault.LostResponse}})
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &name, Item: item("a")})
	require.Error(t, err)
	assert.True(t, ddbfault.IsInjected(err))
	assert.True(t, exists(t, name, "a"), "the server applied the write")
}

func TestPartialBatchesReportTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _, name := setup(t, ddbfault.Config{Seed: 7, Rate: 1, Kinds: []ddbfault.Kind{ddbfault.PartialBatch}})
	var reqs []types.WriteRequest
	for i := 0; i < 20; i++ {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item(fmt.Sprint(i))}})
	}
	out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs}})
	require.NoError(t, err)
	held := map[string]bool{}
	for _, w := range out.UnprocessedItems[name] {
		held[w.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value] = true
	}
	require.NotEmpty(t, held)
	for i := 0; i < 20; i++ {
		pk := fmt.Sprint(i)
		assert.Equal(t, !held[pk], exists(t, name, pk), "item %s: written exactly when not reported unprocessed", pk)
	}

	var keys []map[string]types.AttributeValue
	for i := 0; i < 20; i++ {
		keys = append(keys, item(fmt.Sprint(i)))
	}
	gout, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{name: {Keys: keys}}})
	require.NoError(t, err)
	unprocessed := map[string]bool{}
	for _, k := range gout.UnprocessedKeys[name].Keys {
		unprocessed[k["PK"].(*types.AttributeValueMemberS).Value] = true
	}
	assert.NotEmpty(t, unprocessed)
	returned := map[string]bool{}
	for _, it := range gout.Responses[name] {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		returned[pk] = true
		assert.False(t, unprocessed[pk], "%s both returned and unprocessed", pk)
		assert.False(t, held[pk], "%s returned but never written", pk)
	}
	for i := 0; i < 20; i++ {
		pk := fmt.Sprint(i)
		if !unprocessed[pk] {
			assert.Equal(t, !held[pk], returned[pk], "sent key %s is returned exactly when it was written", pk)
		}
	}
}

func TestTransactionConflict(t *testing.T) {
	t.Parallel()
	c, _, name := setup(t, ddbfault.Config{Seed: 1, Rate: 1, Kinds: []ddbfault.Kind{ddbfault.TxConflict}})
	_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &name, Item: item("a")}},
		{Put: &types.Put{TableName: &name, Item: item("b")}},
	}})
	var tce *types.TransactionCanceledException
	require.ErrorAs(t, err, &tce)
	require.Len(t, tce.CancellationReasons, 2)
	assert.Equal(t, "TransactionConflict", aws.ToString(tce.CancellationReasons[0].Code))
	assert.False(t, exists(t, name, "a"))
}

func TestSeedReproducible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := func() []bool {
		c, _, name := setup(t, ddbfault.Config{Seed: 42, Rate: 0.3, Kinds: []ddbfault.Kind{ddbfault.Throttle, ddbfault.ServerError}})
		var out []bool
		for i := 0; i < 40; i++ {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item(fmt.Sprint(i))})
			out = append(out, err != nil)
		}
		return out
	}
	a, b := run(), run()
	assert.Equal(t, a, b)
	faults := 0
	for _, f := range a {
		if f {
			faults++
		}
	}
	assert.InDelta(t, 12, faults, 8, "about 30%% of 40 requests")
	assert.False(t, errors.Is(nil, context.Canceled))
}

func TestNextScriptsOneLostResponse(t *testing.T) {
	t.Parallel()
	// Rate 0: only the scripted fault happens. The SDK retries the lost
	// response; the retry finds the item the first attempt wrote.
	_, ft, name := setup(t, ddbfault.Config{Seed: 1})
	c := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	ft.SetEnabled(false)
	ft.Next("PutItem", ddbfault.LostResponse)
	cond := "attribute_not_exists(PK)"
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &name, Item: item("a"), ConditionExpression: &cond})
	var ccf *types.ConditionalCheckFailedException
	require.ErrorAs(t, err, &ccf, "the retry of an applied create fails its condition")
	assert.True(t, exists(t, name, "a"))
	assert.Equal(t, 1, ft.Stats().Faults[ddbfault.LostResponse])
	assert.Equal(t, 1, ft.Stats().Total())
}
