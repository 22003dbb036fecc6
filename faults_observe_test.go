package singletable_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// TestObserveCountsThrottles injects faults on the wire (ddbfault, with
// scripted faults against DynamoDB Local) and checks what the Observe hook
// reports: the SDK's HTTP attempts and the throttled ones, a batch's
// unprocessed items and the library's own retry of them, a transaction
// conflict retried by the library; and that the throttles the hook counts
// are exactly the throttles injected.
func TestObserveCountsThrottles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ft := ddbfault.New(nil, ddbfault.Config{Seed: 1})
	ft.SetEnabled(false) // only the scripted faults below
	client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	col := &observed{}
	var docs *singletable.Repo[PDoc]
	var members *singletable.Repo[Member]
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(client, name, func(o *singletable.TableOptions) { o.Observe = col.hook })
	docs = singletable.MustBind(tbl, PDocs)
	members = singletable.MustBind(tbl, Members)
	require.NoError(t, tbl.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	col.take()

	var throttles int // counted by the hook, over every request
	only := func(op string) []singletable.Observation {
		var out []singletable.Observation
		for _, o := range col.take() {
			throttles += o.Throttles
			if o.Op == op {
				out = append(out, o)
			}
		}
		return out
	}

	// Two throttles, then success: one request, three HTTP attempts.
	ft.Next("PutItem", ddbfault.Throttle, ddbfault.Throttling)
	_, err := docs.Create(singletable.WithPattern(ctx, "AP1"), PDoc{Team: "t", ID: "1", Owner: "o", Status: "s", Title: "x"})
	require.NoError(t, err)
	puts := only("PutItem")
	require.Len(t, puts, 1)
	assert.Equal(t, 3, puts[0].Attempts)
	assert.Equal(t, 2, puts[0].Throttles)
	assert.Equal(t, "AP1", puts[0].Pattern)
	assert.NoError(t, puts[0].Err)
	assert.NotEmpty(t, puts[0].Capacity, "the capacity of the attempt that succeeded")

	// A server error is retried by the SDK but is no throttle.
	ft.Next("GetItem", ddbfault.ServerError)
	_, err = docs.Get(ctx, PDoc{Team: "t", ID: "1"})
	require.NoError(t, err)
	gets := only("GetItem")
	require.Len(t, gets, 1)
	assert.Equal(t, 2, gets[0].Attempts)
	assert.Zero(t, gets[0].Throttles)

	// Throttled past the SDK's five attempts: the request fails, and the
	// hook says how it failed.
	ft.Next("GetItem", ddbfault.Throttle, ddbfault.Throttle, ddbfault.Throttle, ddbfault.Throttle, ddbfault.Throttle)
	_, err = docs.Get(ctx, PDoc{Team: "t", ID: "1"})
	require.Error(t, err)
	gets = only("GetItem")
	require.NotEmpty(t, gets)
	assert.Equal(t, 5, gets[0].Attempts)
	assert.Equal(t, 5, gets[0].Throttles)
	assert.Error(t, gets[0].Err)
	assert.Nil(t, gets[0].Capacity)

	// A batch left partly unprocessed: the library sends the rest again,
	// observed as its retry.
	ft.Next("BatchWriteItem", ddbfault.PartialBatch)
	var ops []singletable.WriteOp
	for i := range 10 {
		ops = append(ops, docs.PutOp(PDoc{Team: "u", ID: fmt.Sprint(i), Owner: "o", Status: "s", Title: "t"}))
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops, fastRetries))
	batches := only("BatchWriteItem")
	require.GreaterOrEqual(t, len(batches), 2)
	assert.Positive(t, batches[0].Unprocessed)
	assert.Zero(t, batches[0].Retry)
	assert.Equal(t, 1, batches[1].Retry)
	var unprocessed int
	for _, b := range batches {
		unprocessed += b.Unprocessed
	}
	assert.Equal(t, batches[0].Unprocessed, unprocessed, "the retry took the rest")

	// A transaction conflict (a guarded create is a transaction) is
	// retried by the library: two observations, the second its retry.
	ft.Next("TransactWriteItems", ddbfault.TxConflict)
	_, err = members.Create(ctx, Member{ID: "m1", Email: "m1@example.com", Plan: "p"})
	require.NoError(t, err)
	txs := only("TransactWriteItems")
	require.Len(t, txs, 2)
	assert.Error(t, txs[0].Err)
	assert.Zero(t, txs[0].Retry)
	assert.NoError(t, txs[1].Err)
	assert.Equal(t, 1, txs[1].Retry)

	// Every throttle injected was counted by the hook, no more.
	stats := ft.Stats()
	assert.Equal(t, 7, stats.Faults[ddbfault.Throttle]+stats.Faults[ddbfault.Throttling])
	assert.Equal(t, 7, throttles)
}
