package ddbfault_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestHotKeyThrottlesOnlyItsPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, ft, name := setup(t, ddbfault.Config{Seed: 1, Hot: []ddbfault.Hot{{Value: "hot", Throttles: 2}}})
	for i := 0; i < 2; i++ {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("hot")})
		var pte *types.ProvisionedThroughputExceededException
		require.ErrorAs(t, err, &pte)
		require.Len(t, pte.ThrottlingReasons, 1)
		assert.Equal(t, "TableWriteKeyRangeThroughputExceeded", aws.ToString(pte.ThrottlingReasons[0].Reason))
		assert.Contains(t, aws.ToString(pte.ThrottlingReasons[0].Resource), "table/"+name)
		assert.False(t, exists(t, name, "hot"))
		_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("cold")})
		require.NoError(t, err, "other keys pass")
	}
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("hot")})
	require.NoError(t, err, "the third request in a row is let through")
	assert.Equal(t, 2, ft.Stats().HotThrottles)

	// Reads of the hot key are throttled as reads.
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: item("hot")})
	var pte *types.ProvisionedThroughputExceededException
	require.ErrorAs(t, err, &pte)
	assert.Equal(t, "TableReadKeyRangeThroughputExceeded", aws.ToString(pte.ThrottlingReasons[0].Reason))
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: item("hot")})
	require.Error(t, err)
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: item("hot")})
	require.NoError(t, err, "two throttles, then one through")

	// A batch: the hot item is left unprocessed, the others written.
	out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: {
		{PutRequest: &types.PutRequest{Item: item("b1")}},
		{DeleteRequest: &types.DeleteRequest{Key: item("hot")}},
		{PutRequest: &types.PutRequest{Item: item("b2")}},
	}}})
	require.NoError(t, err)
	require.Len(t, out.UnprocessedItems[name], 1)
	assert.NotNil(t, out.UnprocessedItems[name][0].DeleteRequest)
	assert.True(t, exists(t, name, "b1") && exists(t, name, "b2") && exists(t, name, "hot"))

	// A transaction: cancelled, ThrottlingError on the hot item only.
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &name, Item: item("t1")}},
		{Delete: &types.Delete{TableName: &name, Key: item("hot")}},
	}})
	var tce *types.TransactionCanceledException
	require.ErrorAs(t, err, &tce)
	require.Len(t, tce.CancellationReasons, 2)
	assert.Equal(t, "None", aws.ToString(tce.CancellationReasons[0].Code))
	assert.Equal(t, "ThrottlingError", aws.ToString(tce.CancellationReasons[1].Code))
	assert.False(t, exists(t, name, "t1"))
}

func TestHoldConflictsLikeAnOngoingTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, ft, name := setup(t, ddbfault.Config{Seed: 1})
	release := ft.Hold(name, item("a"))
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("a")})
	var tce *types.TransactionConflictException
	require.ErrorAs(t, err, &tce)
	assert.Contains(t, err.Error(), "Transaction is ongoing for the item")

	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &name, Item: item("b")}},
		{ConditionCheck: &types.ConditionCheck{TableName: &name, Key: item("a"), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	var cancel *types.TransactionCanceledException
	require.ErrorAs(t, err, &cancel)
	require.Len(t, cancel.CancellationReasons, 2)
	assert.Equal(t, "None", aws.ToString(cancel.CancellationReasons[0].Code))
	assert.Equal(t, "TransactionConflict", aws.ToString(cancel.CancellationReasons[1].Code))
	assert.Contains(t, aws.ToString(cancel.Message), "[None, TransactionConflict]")
	assert.False(t, exists(t, name, "a") || exists(t, name, "b"))

	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: item("a")})
	require.NoError(t, err, "reads do not conflict")
	release()
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("a")})
	require.NoError(t, err)
	assert.Equal(t, 2, ft.Stats().Conflicts)
}

// gate holds TransactWriteItems requests at the server's door until the
// test lets them go, so that a single write can race one deterministically.
type gate struct {
	arrived, release chan struct{}
}

func (g *gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		g.arrived <- struct{}{}
		<-g.release
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestInFlightTransactionConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, name := setup(t, ddbfault.Config{})
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	ft := ddbfault.New(g, ddbfault.Config{Seed: 1, Conflicts: ddbfault.Conflicts{InFlight: true}})
	c := ddblocal.Shared(t).Client(func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
		o.RetryMaxAttempts = 1
	})
	done := make(chan error)
	go func() {
		_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &name, Item: map[string]types.AttributeValue{"PK": s("a"), "by": s("tx")}}},
		}})
		done <- err
	}()
	<-g.arrived
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{"PK": s("a"), "by": s("put")}})
	var tce *types.TransactionConflictException
	require.ErrorAs(t, err, &tce, "a single write racing a transaction")
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: &name, Key: item("a")}},
	}})
	var cancel *types.TransactionCanceledException
	require.ErrorAs(t, err, &cancel, "a transaction racing a transaction")
	assert.Equal(t, "TransactionConflict", aws.ToString(cancel.CancellationReasons[0].Code))
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("other")})
	require.NoError(t, err, "other items are free")
	close(g.release)
	require.NoError(t, <-done)
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: item("a"), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	assert.Equal(t, "tx", out.Item["by"].(*types.AttributeValueMemberS).Value)
}

func TestConflictRateDrawsOneItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, ft, name := setup(t, ddbfault.Config{Seed: 3, Conflicts: ddbfault.Conflicts{Rate: 1}})
	_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name, Key: item("a"), UpdateExpression: aws.String("SET x = :x"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":x": s("1")}})
	var tce *types.TransactionConflictException
	require.ErrorAs(t, err, &tce)
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &name, Item: item("a")}}, {Put: &types.Put{TableName: &name, Item: item("b")}},
		{Put: &types.Put{TableName: &name, Item: item("c")}},
	}})
	var cancel *types.TransactionCanceledException
	require.ErrorAs(t, err, &cancel)
	var codes []string
	for _, r := range cancel.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	sort.Strings(codes)
	assert.Equal(t, []string{"None", "None", "TransactionConflict"}, codes)
	ft.SetEnabled(false)
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item("a")})
	require.NoError(t, err, "SetEnabled(false) stops drawn conflicts")
}

// setupGSI makes a table keyed PK with a sparse index GSI1 on G.
func setupGSI(t *testing.T, cfg ddbfault.Config) (*dynamodb.Client, *ddbfault.Transport, string) {
	t.Helper()
	ft := ddbfault.New(nil, cfg)
	t.Cleanup(func() { require.NoError(t, ft.Close()) })
	c := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	name := ddblocal.TableName(t)
	_, err := c.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("G"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("GSI1"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("G"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("PK"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
	})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	return c, ft, name
}

func indexed(t *testing.T, c *dynamodb.Client, name string) []string {
	t.Helper()
	out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: &name, IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("G = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("g")}})
	require.NoError(t, err)
	var pks []string
	for _, it := range out.Items {
		pks = append(pks, it["PK"].(*types.AttributeValueMemberS).Value+"="+it["V"].(*types.AttributeValueMemberS).Value)
	}
	return pks
}

func TestIndexLagSeesTheTableAsItWas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, ft, name := setupGSI(t, ddbfault.Config{IndexLag: 2})
	put := func(pk, v string, inIndex bool) {
		it := map[string]types.AttributeValue{"PK": s(pk), "V": s(v)}
		if inIndex {
			it["G"] = s("g")
		}
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: it})
		require.NoError(t, err)
	}
	put("a", "1", true)
	assert.Empty(t, indexed(t, c, name), "a write inside the window is not in the index")
	assert.True(t, exists(t, name, "a"), "the table has it")
	put("b", "1", true)
	put("a", "2", true)
	assert.Equal(t, []string{"a=1"}, indexed(t, c, name), "the index shows a as it was two writes ago")
	assert.Equal(t, 2, ft.Pending(name))
	put("a", "3", false) // leaves the sparse index
	_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &name, Key: item("b")})
	require.NoError(t, err)
	assert.Equal(t, []string{"a=2", "b=1"}, indexed(t, c, name), "b deleted but still in the index; a as it was before it left the sparse index")
	require.NoError(t, ft.CatchUp())
	assert.Empty(t, indexed(t, c, name), "caught up: a left the sparse index, b is deleted")
	st := ft.Stats()
	assert.Equal(t, 4, st.IndexReads)
	assert.Equal(t, 3, st.LaggedReads)
}
