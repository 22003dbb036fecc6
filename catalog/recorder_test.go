package catalog_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// TestRecorderMeasureSplitsTables: a transaction spanning two tables is
// measured on each table at its own share, and Measure keeps the
// workload's rates. (A pure test: the observations are made here; their
// capacity against DynamoDB Local is checked by the elections service's
// TestMeasuredCostReport.)
func TestRecorderMeasureSplitsTables(t *testing.T) {
	t.Parallel()
	rec := catalog.NewRecorder()
	ctx := context.Background()
	tx := func() *singletable.Observation {
		return &singletable.Observation{Op: "TransactWriteItems", Pattern: "move", Capacity: []types.ConsumedCapacity{
			{TableName: aws.String("t"), CapacityUnits: aws.Float64(6), Table: &types.Capacity{CapacityUnits: aws.Float64(4)},
				GlobalSecondaryIndexes: map[string]types.Capacity{"GSI1": {CapacityUnits: aws.Float64(2)}}},
			{TableName: aws.String("log"), CapacityUnits: aws.Float64(2), Table: &types.Capacity{CapacityUnits: aws.Float64(2)}},
		}}
	}
	rec.Observe(ctx, tx())
	rec.Observe(ctx, tx())
	rec.Observe(ctx, &singletable.Observation{Op: "GetItem", Pattern: "get", Capacity: []types.ConsumedCapacity{
		{TableName: aws.String("t"), CapacityUnits: aws.Float64(0.5)}}})

	assert.Equal(t, map[string]int64{"move": 2, "get": 1}, rec.Requests())
	assert.Equal(t, 12.0, rec.Total("move").Write, "both tables, summed")

	w := catalog.Workload{Loads: []catalog.Load{
		{Pattern: "move", PerSecond: 10, ItemKB: 1.5, OtherItems: 2},
		{Pattern: "get", PerSecond: 100, ItemKB: 1},
		{Pattern: "byname", PerSecond: 5, ItemKB: 1},
	}}
	m, estimated := rec.Measure("t", w)
	assert.Equal(t, []string{"byname"}, estimated)
	require.NotNil(t, m.Loads[0].Measured)
	assert.Equal(t, catalog.Units{Write: 4, IndexRead: map[string]float64{}, IndexWrite: map[string]float64{"GSI1": 2}}, *m.Loads[0].Measured)
	assert.Equal(t, 10.0, m.Loads[0].PerSecond, "the workload's rate stays")
	assert.Equal(t, 0.5, m.Loads[1].Measured.Read)
	assert.Nil(t, m.Loads[2].Measured)
	assert.Nil(t, w.Loads[0].Measured, "the workload given is not changed")

	logM, estimated := rec.Measure("log", w)
	assert.Equal(t, []string{"get", "byname"}, estimated)
	assert.Equal(t, 2.0, logM.Loads[0].Measured.Write)

	r, err := costCatalog(t).Cost(m, catalog.USEast1)
	require.NoError(t, err)
	assert.True(t, r.Lines[0].Measured)
	assert.InDelta(t, 40, r.Lines[0].Units, 1e-9, "4 units measured, 10 a second")
	assert.Contains(t, r.Markdown(), "Measured: the capacity a request of move, get took while a workload ran, as DynamoDB reported it. Estimated from item sizes: byname.")
}
