package singletable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/wiretest"
)

// capacitySum sums, in a middleware of the client (so on the direct wire
// path too, with SINGLETABLE_WIRE=1), the consumed capacity DynamoDB Local
// puts in the responses of the operations that report it: what DynamoDB
// reports, seen below the library, to hold the hook's figures against.
type capacitySum struct {
	mu       sync.Mutex
	requests int
	units    float64
	// byIndex sums the capacity per place ("" for the table).
	byIndex map[string]float64
	paths   wiretest.Paths // the responses with items each path decoded
}

func (c *capacitySum) add(ccs ...types.ConsumedCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	for _, cc := range ccs {
		c.units += aws.ToFloat64(cc.CapacityUnits)
		if cc.Table != nil {
			c.byIndex[""] += aws.ToFloat64(cc.Table.CapacityUnits)
		}
		for name, ic := range cc.GlobalSecondaryIndexes {
			c.byIndex[name] += aws.ToFloat64(ic.CapacityUnits)
		}
	}
}

func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// option adds c's middleware to a client, innermost of the Initialize
// step: it sees each successful call's output.
func (c *capacitySum) option(o *dynamodb.Options) {
	c.paths.Option(o)
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("capacitySum", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil {
				return out, md, err
			}
			switch o := out.Result.(type) {
			case *dynamodb.GetItemOutput:
				c.add(one(o.ConsumedCapacity)...)
			case *dynamodb.PutItemOutput:
				c.add(one(o.ConsumedCapacity)...)
			case *dynamodb.UpdateItemOutput:
				c.add(one(o.ConsumedCapacity)...)
			case *dynamodb.DeleteItemOutput:
				c.add(one(o.ConsumedCapacity)...)
			case *dynamodb.QueryOutput:
				c.add(one(o.ConsumedCapacity)...)
			case *dynamodb.BatchWriteItemOutput:
				c.add(o.ConsumedCapacity...)
			case *dynamodb.BatchGetItemOutput:
				c.add(o.ConsumedCapacity...)
			case *dynamodb.TransactWriteItemsOutput:
				c.add(o.ConsumedCapacity...)
			}
			return out, md, err
		}), middleware.After)
	})
}

// observed collects a table's observations.
type observed struct {
	mu  sync.Mutex
	obs []singletable.Observation
}

func (o *observed) hook(_ context.Context, ob *singletable.Observation) {
	o.mu.Lock()
	o.obs = append(o.obs, *ob)
	o.mu.Unlock()
}

func (o *observed) take() []singletable.Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.obs
	o.obs = nil
	return r
}

// observeTable is a fresh table of PDocs (GSI1 on Owner, Status, Title)
// and Members (unique Email) whose hooks are rec and the test's own
// collector, on a client summing what DynamoDB Local reports (the table's
// client is the *dynamodb.Client itself: with SINGLETABLE_WIRE=1, its
// reads and writes take the direct wire path).
func observeTable(t *testing.T, keys bool, rec *catalog.Recorder) (*singletable.Table, *capacitySum, *observed, *singletable.Repo[PDoc], *singletable.Repo[Member]) {
	t.Helper()
	c := &capacitySum{byIndex: map[string]float64{}}
	raw := ddblocal.Shared(t).Client(c.option)
	col := &observed{}
	tbl := singletable.NewTable(raw, ddblocal.TableName(t), func(o *singletable.TableOptions) {
		o.ObserveKeys = keys
		o.Observe = func(ctx context.Context, ob *singletable.Observation) {
			col.hook(ctx, ob)
			if rec != nil && ob.Pattern != "" { // the workload's requests, not the table's creation
				rec.Observe(ctx, ob)
			}
		}
	})
	docs := singletable.MustBind(tbl, PDocs)
	members := singletable.MustBind(tbl, Members)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, raw, tbl.Name())
	col.take()
	c.mu.Lock()
	c.requests, c.units, c.byIndex = 0, 0, map[string]float64{}
	c.mu.Unlock()
	return tbl, c, col, docs, members
}

// The patterns of the observed workload, as a catalog of the test table
// lists them.
func observePatterns() []catalog.Pattern {
	return []catalog.Pattern{
		{Name: "AP1", Description: "Create a document", Entity: "PreviewDoc", Operation: catalog.OpCreate},
		{Name: "AP2", Description: "Get a document", Entity: "PreviewDoc", Operation: catalog.OpGet},
		{Name: "AP3", Description: "Documents of an owner", Entity: "PreviewDoc", Index: "GSI1", Operation: catalog.OpQuery},
		{Name: "AP4", Description: "Change a document's status", Entity: "PreviewDoc", Operation: catalog.OpUpdate},
		{Name: "AP5", Description: "Import documents", Entity: "PreviewDoc", Operation: "BatchWriteItem"},
		{Name: "AP6", Description: "Register a member", Entity: "Member", Operation: catalog.OpCreate},
	}
}

// runObservedWorkload runs every kind of request the workload has, each
// under its pattern: 30 creates, 10 consistent and 10 eventually
// consistent gets, a GSI1 query in pages of 10, an update of an index key
// field (a plan read and a write), a batch of 30 puts and a member with a
// unique email (a transaction).
func runObservedWorkload(t *testing.T, docs *singletable.Repo[PDoc], members *singletable.Repo[Member]) {
	t.Helper()
	ctx := context.Background()
	for i := range 30 {
		_, err := docs.Create(singletable.WithPattern(ctx, "AP1"), PDoc{Team: "t", ID: fmt.Sprint(i), Owner: "o-ann", Status: "s-draft", Title: fmt.Sprintf("secret title %02d", i)})
		require.NoError(t, err)
	}
	for i := range 20 {
		var opts []func(*singletable.ReadOptions)
		if i < 10 {
			opts = append(opts, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		}
		_, err := docs.Get(singletable.WithPattern(ctx, "AP2"), PDoc{Team: "t", ID: fmt.Sprint(i)}, opts...)
		require.NoError(t, err)
	}
	n := 0
	for _, err := range docs.QueryIndex("GSI1", PDoc{Owner: "o-ann"}).PageSize(10).All(singletable.WithPattern(ctx, "AP3")) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 30, n)
	_, err := docs.Update(PDoc{Team: "t", ID: "3"}).Set("Status", "final").Run(singletable.WithPattern(ctx, "AP4"))
	require.NoError(t, err)
	var ops []singletable.WriteOp
	for i := range 30 {
		ops = append(ops, docs.PutOp(PDoc{Team: "u", ID: fmt.Sprint(i), Owner: "o-bob", Status: "s-draft", Title: "t-imported"}))
	}
	require.NoError(t, singletable.BatchWrite(singletable.WithPattern(ctx, "AP5"), ops))
	_, err = members.Create(singletable.WithPattern(ctx, "AP6"), Member{ID: "m1", Email: "m1@example.com", Plan: "plan-gold"})
	require.NoError(t, err)
}

// TestObserveSeesEveryRequest: the hook sees every request of a workload
// (the count equals the requests DynamoDB Local answered), the capacity it
// reports sums to what DynamoDB Local reported, total and per index, and
// agrees with DynamoDB's arithmetic for the workload's small items; each
// observation names its operation, entity, index and pattern; pages,
// plan reads and items read versus returned are told apart.
func TestObserveSeesEveryRequest(t *testing.T) {
	t.Parallel()
	_, c, col, docs, members := observeTable(t, false, nil)
	runObservedWorkload(t, docs, members)
	obs := col.take()

	var units float64
	byIndex := map[string]float64{}
	per := map[string][]singletable.Observation{}
	for _, o := range obs {
		require.NoError(t, o.Err)
		r, w := o.Units()
		units += r + w
		for k, v := range o.IndexUnits() {
			byIndex[k] += v
		}
		per[o.Pattern] = append(per[o.Pattern], o)
		require.Equal(t, 1, o.Attempts, "one HTTP attempt each against DynamoDB Local")
		require.Zero(t, o.Throttles)
		require.Positive(t, o.Latency)
	}
	require.Equal(t, c.requests, len(obs), "the hook sees every request sent")
	if direct, _ := c.paths.Counts(); ddblocal.Wire() {
		require.GreaterOrEqual(t, direct, int64(20), "with a hook, the table's gets (at least) take the direct wire path")
	} else {
		require.Zero(t, direct)
	}
	require.InDelta(t, c.units, units, 1e-9, "the capacity the hook reports is what DynamoDB Local reported")
	require.Equal(t, c.byIndex, byIndex)

	// AP1: 30 PutItem of items under 1 KB, each 1 write unit on the table
	// and 1 on GSI1.
	require.Len(t, per["AP1"], 30)
	for _, o := range per["AP1"] {
		require.Equal(t, "PutItem", o.Op)
		require.Equal(t, "PreviewDoc", o.Entity)
		_, w := o.Units()
		require.Equal(t, 2.0, w)
		require.Equal(t, map[string]float64{"": 1, "GSI1": 1}, o.IndexUnits())
		require.Nil(t, o.Keys, "no keys unless asked")
	}
	// AP2: strongly consistent reads take 1 unit, eventually consistent 0.5.
	require.Len(t, per["AP2"], 20)
	var reads float64
	for _, o := range per["AP2"] {
		require.Equal(t, "GetItem", o.Op)
		require.Equal(t, 1, o.Count)
		r, _ := o.Units()
		reads += r
	}
	require.Equal(t, 10*1+10*0.5, reads)
	// AP3: pages of 10 on GSI1; the first page is not Continued.
	pages := per["AP3"]
	require.GreaterOrEqual(t, len(pages), 3)
	returned := 0
	for i, o := range pages {
		require.Equal(t, "Query", o.Op)
		require.Equal(t, "GSI1", o.Index)
		require.Equal(t, i > 0, o.Continued)
		require.Equal(t, o.Count, o.Scanned, "no filter: every item read is returned")
		returned += o.Count
		require.Contains(t, o.IndexUnits(), "GSI1")
	}
	require.Equal(t, 30, returned)
	// AP4: the update reads the item's other GSI1 fields (a plan read),
	// then writes.
	require.Len(t, per["AP4"], 2)
	require.Equal(t, "GetItem", per["AP4"][0].Op)
	require.True(t, per["AP4"][0].PlanRead)
	require.Equal(t, "UpdateItem", per["AP4"][1].Op)
	require.False(t, per["AP4"][1].PlanRead)
	// AP5: 30 puts in two requests (25 and 5), none left unprocessed.
	var batchUnits float64
	for _, o := range per["AP5"] {
		require.Equal(t, "BatchWriteItem", o.Op)
		require.Zero(t, o.Unprocessed)
		require.Zero(t, o.Retry)
		_, w := o.Units()
		batchUnits += w
	}
	require.Len(t, per["AP5"], 2)
	require.Equal(t, 60.0, batchUnits, "30 items, each 1 unit on the table and 1 on GSI1")
	// AP6: a member with a unique email is one transaction of the item and
	// its guard.
	require.Len(t, per["AP6"], 1)
	require.Equal(t, "TransactWriteItems", per["AP6"][0].Op)
	require.Equal(t, "Member", per["AP6"][0].Entity, "a transaction of one entity's ops names it")
	// DynamoDB charges a transactional write twice (4 units here);
	// DynamoDB Local reports 1 unit an item, and the hook passes on what
	// was reported.
	_, w := per["AP6"][0].Units()
	require.Equal(t, 2.0, w, "two items under 1 KB, as DynamoDB Local reports them")
}

// TestObserveKeysOnly: an Observation holds no item values; with
// ObserveKeys it holds the primary keys of the items addressed, and still
// nothing else. (A unique guard's key holds the unique value: it is a
// key, and is listed as one.)
func TestObserveKeysOnly(t *testing.T) {
	t.Parallel()
	_, _, col, docs, members := observeTable(t, true, nil)
	runObservedWorkload(t, docs, members)
	for _, o := range col.take() {
		b, err := json.Marshal(o)
		require.NoError(t, err)
		for _, v := range []string{"secret title", "t-imported", "plan-gold", "o-ann", "o-bob", "s-draft"} {
			require.NotContains(t, string(b), v, "%s carries an item value", o.Op)
		}
		switch o.Op {
		case "Query":
			require.Empty(t, o.Keys)
		case "BatchWriteItem":
			require.NotEmpty(t, o.Keys)
		case "TransactWriteItems":
			require.Len(t, o.Keys, 2, "the member and its guard")
		default:
			require.Len(t, o.Keys, 1)
			for k := range o.Keys[0] {
				require.Contains(t, []string{"PK", "SK"}, k)
			}
		}
	}
}

// TestObservedCostReport: the cost report made from capacity measured
// while the workload ran, through catalog.Recorder.
func TestObservedCostReport(t *testing.T) {
	t.Parallel()
	rec := catalog.NewRecorder()
	tbl, c, _, docs, members := observeTable(t, false, rec)
	runObservedWorkload(t, docs, members)
	cat := catalog.New(tbl, observePatterns()...)

	var total int64
	for _, n := range rec.Requests() {
		total += n
	}
	require.Equal(t, int64(c.requests), total)
	require.Equal(t, int64(30), rec.Requests()["AP1"])
	require.Equal(t, catalog.Units{Write: 30, IndexRead: map[string]float64{}, IndexWrite: map[string]float64{"GSI1": 30}}, rec.Total("AP1"))

	w := rec.Workload(10 * time.Second)
	require.Len(t, w.Loads, 6)
	report, err := cat.Cost(w, catalog.USEast1)
	require.NoError(t, err)
	line := func(pattern, index string, write bool) catalog.CostLine {
		for _, l := range report.Lines {
			if l.Pattern == pattern && l.Index == index && l.Write == write {
				return l
			}
		}
		t.Fatalf("no line for %s %q write=%v in\n%s", pattern, index, write, report.Markdown())
		return catalog.CostLine{}
	}
	// AP1: 30 creates in 10 s, 3 a second, 1 unit each on the table and GSI1.
	require.InDelta(t, 3.0, line("AP1", "", true).PerSecond, 1e-9)
	require.InDelta(t, 3.0, line("AP1", "", true).Units, 1e-9)
	require.InDelta(t, 3.0, line("AP1", "GSI1", true).Units, 1e-9)
	// AP2: 2 gets a second, 0.75 units on average.
	require.InDelta(t, 1.5, line("AP2", "", false).Units, 1e-9)
	// AP4: the plan read shows as the pattern's read line.
	require.Positive(t, line("AP4", "", false).Units)
	require.Positive(t, line("AP4", "", true).Units)
	md := report.Markdown()
	require.True(t, strings.Contains(md, "| AP1 | PreviewDoc | GSI1 | write |"), md)
}
