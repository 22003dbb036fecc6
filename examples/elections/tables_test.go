package elections_test

// The store runs on two vote_data tables: the one it creates itself, with
// GSI-2 for listing users and elections, and the one the Kotlin service
// creates, with GSI-1 only, where it lists them by Scan. Open tells them
// apart by the table's description; the suite's tests run on both.

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/elections"
)

// kotlinDataTable is vote_data as the Kotlin service creates it: the
// design's keys PK and SK, and GSI-1 (GSI1PK, GSI1SK: sign-in by email)
// projecting every attribute (the design reads the user's salt and hash
// from it); the attribute definitions are those four, all strings; on
// demand. There is no GSI-2.
func kotlinDataTable(name string) *dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(n string, kt types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: kt}
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{s("GSI1PK"), s("GSI1SK"), s("PK"), s("SK")},
		KeySchema:            []types.KeySchemaElement{key("PK", types.KeyTypeHash), key("SK", types.KeyTypeRange)},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(elections.EmailIndex),
			KeySchema:  []types.KeySchemaElement{key("GSI1PK", types.KeyTypeHash), key("GSI1SK", types.KeyTypeRange)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		BillingMode: types.BillingModePayPerRequest,
	}
}

// kotlinLogTable is vote_event_log as the Kotlin service creates it: PK
// (always EVENTS) and SK ({sequence}#{timestamp}), no index.
func kotlinLogTable(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		BillingMode: types.BillingModePayPerRequest,
	}
}

// createTable creates a table with the raw SDK, waits until it is ACTIVE
// and deletes it when the test ends.
func createTable(t *testing.T, c *dynamodb.Client, in *dynamodb.CreateTableInput) {
	t.Helper()
	ctx := context.Background()
	_, err := c.CreateTable(ctx, in)
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, c, *in.TableName)
	require.NoError(t, dynamodb.NewTableExistsWaiter(c).Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, 2*time.Minute))
}

// createTables makes a fresh pair of empty tables for the listing: the
// store's own (created from its declarations: GSI-1 and GSI-2), or the
// Kotlin service's (kotlinDataTable, kotlinLogTable, by the raw SDK). It
// returns the raw client and the tables' names.
func createTables(t *testing.T, l elections.Listing) (*dynamodb.Client, string, string) {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	data, log := ddblocal.TableName(t), ddblocal.TableName(t)
	if l == elections.ByScan {
		createTable(t, client, kotlinDataTable(data))
		createTable(t, client, kotlinLogTable(log))
		return client, data, log
	}
	ddblocal.DeleteTableOnCleanup(t, client, data)
	ddblocal.DeleteTableOnCleanup(t, client, log)
	s := elections.New(client, data, log)
	require.NoError(t, s.Data.CreateTable(context.Background()))
	require.NoError(t, s.Log.CreateTable(context.Background()))
	return client, data, log
}

// openStore opens a store on the tables as an application would: Open
// detects the listing from the table, which must be l, and Init writes
// the singleton items.
func openStore(t *testing.T, client singletable.Client, data, log string, l elections.Listing) *elections.Store {
	t.Helper()
	ctx := context.Background()
	s, err := elections.Open(ctx, client, data, log)
	require.NoError(t, err)
	require.Equal(t, l, s.Listing(), "detected from the table")
	require.NoError(t, s.Init(ctx))
	return s
}

// newStoreOn returns a store opened on fresh tables of listing l, with
// numbered confirmations.
func newStoreOn(t *testing.T, l elections.Listing) *elections.Store {
	t.Helper()
	client, data, log := createTables(t, l)
	s := openStore(t, client, data, log, l)
	var n atomic.Int64
	s.NewConfirmation = func() string { return fmt.Sprintf("conf-%03d", n.Add(1)) }
	return s
}

// onEachTable runs f as a subtest on each of the two vote_data tables, a
// fresh store for each.
func onEachTable(t *testing.T, f func(t *testing.T, s *elections.Store)) {
	for _, l := range []elections.Listing{elections.ByIndex, elections.ByScan} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			f(t, newStoreOn(t, l))
		})
	}
}

// The table a ByScan store would create is the Kotlin service's: the
// store's declarations describe that table exactly.
func TestKotlinTableIsTheDesignDeclarations(t *testing.T) {
	t.Parallel()
	s := elections.NewListing(elections.ByScan, nil, "vote_data", "vote_event_log")
	assert.Equal(t, kotlinDataTable("vote_data"), s.Data.CreateTableInput())
	assert.Equal(t, kotlinLogTable("vote_event_log"), s.Log.CreateTableInput())
	withGSI2 := elections.New(nil, "vote_data", "vote_event_log").Data.CreateTableInput()
	assert.True(t, slices.ContainsFunc(withGSI2.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndex) bool {
		return *g.IndexName == elections.ListIndex
	}))
}

// describeAs is a client whose DescribeTable answers DynamoDB Local's
// description with GSI-2 in the given status: DynamoDB Local creates an
// index at once, so the states a real index passes through while it is
// created are set here.
type describeAs struct {
	*dynamodb.Client
	status      types.IndexStatus
	backfilling bool
}

func (d describeAs) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	out, err := d.Client.DescribeTable(ctx, in, o...)
	if err != nil {
		return nil, err
	}
	for i := range out.Table.GlobalSecondaryIndexes {
		if g := &out.Table.GlobalSecondaryIndexes[i]; *g.IndexName == elections.ListIndex {
			g.IndexStatus, g.Backfilling = d.status, aws.Bool(d.backfilling)
		}
	}
	return out, nil
}

func TestDetectListing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	detect := func(c singletable.Client, table string) elections.Listing {
		t.Helper()
		l, err := elections.DetectListing(ctx, c, table)
		require.NoError(t, err)
		return l
	}

	// The Kotlin service's tables: no GSI-2, listed by Scan.
	kotlin, kotlinLog := ddblocal.TableName(t), ddblocal.TableName(t)
	createTable(t, client, kotlinDataTable(kotlin))
	createTable(t, client, kotlinLogTable(kotlinLog))
	assert.Equal(t, elections.ByScan, detect(client, kotlin))

	// GSI-2 added to it (an UpdateTable, as a migration to the listing
	// index would do): listed from GSI-2 once it is ACTIVE, by Scan while
	// it is being created or backfilled.
	addListIndex(t, client, kotlin)
	assert.Equal(t, elections.ByIndex, detect(client, kotlin))
	assert.Equal(t, elections.ByScan, detect(describeAs{client, types.IndexStatusCreating, false}, kotlin))
	assert.Equal(t, elections.ByScan, detect(describeAs{client, types.IndexStatusActive, true}, kotlin))
	s, err := elections.Open(ctx, describeAs{client, types.IndexStatusCreating, false}, kotlin, kotlinLog)
	require.NoError(t, err)
	assert.Equal(t, elections.ByScan, s.Listing())

	// The store's own tables.
	_, data, log := createTables(t, elections.ByIndex)
	assert.Equal(t, elections.ByIndex, detect(client, data))
	s, err = elections.Open(ctx, client, data, log)
	require.NoError(t, err)
	assert.Equal(t, elections.ByIndex, s.Listing())

	// A GSI-2 keyed otherwise: neither listing can use it.
	odd := ddblocal.TableName(t)
	in := kotlinDataTable(odd)
	in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("GSI2PK"), AttributeType: types.ScalarAttributeTypeS})
	in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
		IndexName:  aws.String(elections.ListIndex),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("GSI2PK"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}})
	createTable(t, client, in)
	_, err = elections.DetectListing(ctx, client, odd)
	assert.ErrorContains(t, err, "index GSI-2 is not keyed GSI2PK (hash), GSI2SK (range)")
	_, err = elections.Open(ctx, client, odd, log)
	assert.ErrorContains(t, err, "GSI-2")

	// A table without GSI-1: Open refuses it, naming the index.
	bare := ddblocal.TableName(t)
	createTable(t, client, kotlinLogTable(bare))
	_, err = elections.Open(ctx, client, bare, log)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.ErrorContains(t, err, "index GSI-1 is missing")
	// No such table.
	_, err = elections.Open(ctx, client, "no-such-table", log)
	var nf *types.ResourceNotFoundException
	assert.ErrorAs(t, err, &nf)
}

// waitIndexActive waits until the table's index is ACTIVE and not
// backfilling.
func waitIndexActive(t *testing.T, c *dynamodb.Client, table, index string) {
	t.Helper()
	ready := func(out *dynamodb.DescribeTableOutput) bool {
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if *g.IndexName == index {
				return g.IndexStatus == types.IndexStatusActive && !aws.ToBool(g.Backfilling)
			}
		}
		return false
	}
	require.Eventually(t, func() bool {
		out, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		return err == nil && ready(out)
	}, 2*time.Minute, 50*time.Millisecond)
}
