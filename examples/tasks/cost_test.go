package tasks_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/tasks"
	"github.com/singletable-go/singletable/singletabletest"
)

const day = 86_400.0

func taskCatalog() *catalog.Catalog {
	m := tasks.New(nil, tasks.TableName)
	return catalog.New(m.Table, m.AccessPatterns()...)
}

// daily is the units a day of the report's lines selected by keep.
func daily(r *catalog.CostReport, keep func(catalog.CostLine) bool) float64 {
	u, _ := r.Total(keep)
	return math.Round(u*day*1000) / 1000
}

func tableReads(l catalog.CostLine) bool  { return !l.Write && l.Index == "" }
func tableWrites(l catalog.CostLine) bool { return l.Write && l.Index == "" }

// TestCostMatchesTheDesignsArithmetic checks the cost report against the
// design's capacity planning, at the design's own prices
// (tasks.DesignPrices). Its example day counts 500 task views as 500
// read units, 500 "my tasks" queries as 2,500 (5 tasks each), and 100
// creations, 200 assignments and 300 status updates as 600 write units:
// reads (3000 × 30) / 1M × $0.25 and writes (600 × 30) / 1M × $1.25, both
// $0.0225 (the design rounds to $0.02), plus 1 GB of storage at $0.25,
// about $0.30 a month. The report gives the same figures from the same
// counting.
//
// Where the design is wrong by its own formulas:
//   - "500 user task queries: 2500 RCUs". Its pattern 4 is one GSI1 query
//     costing "(n / 4KB) RCUs": 5 assignments of about 0.25 KB are 1.25 KB,
//     one read unit a query, 500 a day (250 as billed: index reads are
//     eventually consistent). 2,500 is what reading the 5 tasks
//     themselves costs with strongly consistent reads, which pattern 4
//     does not do (the manager does: P4+, one eventually consistent
//     BatchGetItem, 1,250 a day).
//   - Pattern 1: "1 RCU (eventually consistent) or 2 RCU (strongly
//     consistent)". A read of up to 4 KB is 1 read unit strongly
//     consistent and half of one eventually consistent.
//   - The 600 write units leave out the indexes: every creation also
//     writes GSI2, every assignment GSI1, and every status change moves
//     the task within GSI2 (a delete and a put there); and the manager's
//     assignments and member status changes are transactions, whose
//     index writes are doubled too (see tasks.Workload).
//   - The 1 GB of storage is an allowance: 1,000 tasks, 100 users and 500
//     assignments with their index entries are about 2 MB.
func TestCostMatchesTheDesignsArithmetic(t *testing.T) {
	t.Parallel()
	c := taskCatalog()

	// The design's counting: each view a strongly consistent read of up
	// to 4 KB (1 unit), each "my tasks" query five of them, each write one
	// unit of a 1 KB item (the design's pattern 7, a conditional put).
	asDesigned := catalog.Workload{Loads: []catalog.Load{
		{Pattern: "P1", PerSecond: 500 / day, ItemKB: 4, Consistent: true},
		{Pattern: "P4+", PerSecond: 500 / day, ItemKB: 4, Items: 5, Consistent: true},
		{Pattern: "T1", PerSecond: 100 / day, ItemKB: 1},
		{Pattern: "P7", PerSecond: 200 / day, ItemKB: 1},
		{Pattern: "T2", PerSecond: 300 / day, ItemKB: 1},
	}}
	r, err := c.Cost(asDesigned, tasks.DesignPrices)
	require.NoError(t, err)
	assert.Equal(t, 3000.0, daily(r, tableReads))
	assert.Equal(t, 600.0, daily(r, tableWrites))
	_, reads := r.Total(tableReads)
	_, writes := r.Total(tableWrites)
	assert.InDelta(t, 3000*30/1e6*0.25, reads, 1e-12)
	assert.InDelta(t, 600*30/1e6*1.25, writes, 1e-12)
	assert.Equal(t, "0.02 0.02", fmt.Sprintf("%.2f %.2f", reads, writes), "the design's rounding")
	assert.Equal(t, 0.30, math.Round((reads+writes+1*tasks.DesignPrices.StorageGBMonth)*100)/100, "~$0.30/month")
	// What the design leaves out: 100 + 300 GSI2 writes, 200 GSI1 writes.
	assert.Equal(t, 400.0, daily(r, func(l catalog.CostLine) bool { return l.Write && l.Index == "GSI2" }))
	assert.Equal(t, 200.0, daily(r, func(l catalog.CostLine) bool { return l.Write && l.Index == "GSI1" }))

	// Pattern 4 by the design's own formula: 500 queries of 5 × 0.25 KB,
	// ⌈1.25 / 4⌉ = 1 unit each, halved on the index: 250 a day, not 2,500.
	r, err = c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "P4", PerSecond: 500 / day, ItemKB: 0.25, Items: 5}}}, tasks.DesignPrices)
	require.NoError(t, err)
	assert.Equal(t, 250.0, daily(r, func(l catalog.CostLine) bool { return l.Index == "GSI1" }))
	// Pattern 1: half a unit eventually consistent, one strongly.
	for _, consistent := range []bool{false, true} {
		r, err = c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "P1", PerSecond: 1, ItemKB: 4, Consistent: consistent}}}, tasks.DesignPrices)
		require.NoError(t, err)
		want := 0.5
		if consistent {
			want = 1
		}
		assert.Equal(t, want, r.Lines[0].Units, "consistent %v", consistent)
	}

	// The manager's day (tasks.Workload), by hand: table reads are 800
	// task reads × 0.5 + 600 user reads × 0.5 + 500 batches × 5 × 0.5 =
	// 1,950 a day; table writes 100 creations × 1 + 200 assignments × 4 +
	// 300 status changes × 4 = 2,100; GSI1 250 read and 400 write units,
	// GSI2 100 + 1,200 write units. A month at the design's prices:
	// (1,950 + 250) × 30 / 1M × $0.25 + (2,100 + 400 + 1,300) × 30 / 1M ×
	// $1.25 = $0.0165 + $0.1425.
	r, err = c.Cost(tasks.Workload(), tasks.DesignPrices)
	require.NoError(t, err)
	assert.Equal(t, 1950.0, daily(r, tableReads))
	assert.Equal(t, 2100.0, daily(r, tableWrites))
	assert.Equal(t, 250.0, daily(r, func(l catalog.CostLine) bool { return !l.Write && l.Index == "GSI1" }))
	assert.Equal(t, 400.0, daily(r, func(l catalog.CostLine) bool { return l.Write && l.Index == "GSI1" }))
	assert.Equal(t, 1300.0, daily(r, func(l catalog.CostLine) bool { return l.Write && l.Index == "GSI2" }))
	assert.InDelta(t, 0.0165+0.1425, r.OnDemand, 1e-9)
	// Storage: 1,000 KB of tasks and 1,000 KB of their GSI2 entries, 25 KB
	// of users, 125 KB of assignments and 125 KB of their GSI1 entries.
	assert.InDelta(t, 2275.0/(1024*1024), r.StorageGB, 1e-12)
	assert.Empty(t, r.Findings)

	// docs/cost.md: the same workload at today's us-east-1 prices.
	r, err = c.Cost(tasks.Workload(), catalog.USEast1)
	require.NoError(t, err)
	got := r.Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "cost.md"), got, *update)
}

// TestCostMeasured runs the design's day in miniature through the manager
// against DynamoDB Local with a catalog.Recorder, and checks that every
// pattern of tasks.Workload costs a request what DynamoDB Local reports:
// the estimates from item sizes and the transactions' figures alike.
func TestCostMeasured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := catalog.NewRecorder()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	require.NoError(t, tasks.New(client, name).Table.CreateTable(ctx))
	m := tasks.New(client, name, func(o *singletable.TableOptions) { o.Observe = rec.Observe })
	ddblocal.DeleteTableOnCleanup(t, client, name)

	_, err := m.CreateUser(ctx, tasks.User{UserID: "admin-0001", Email: "admin@example.com", Groups: []string{tasks.GroupAdmins}})
	require.NoError(t, err)
	members := []string{"member-0001", "member-0002"}
	for _, u := range members {
		_, err := m.CreateUser(ctx, tasks.User{UserID: u, Email: u + "@example.com", Groups: []string{tasks.GroupMembers}})
		require.NoError(t, err)
	}
	// Tasks of about 0.9 KB, the Workload's upper bound of 1 KB.
	for i := range 10 {
		_, err := m.CreateTask(ctx, "admin-0001", tasks.Task{TaskID: fmt.Sprintf("task-%04d", i), Title: fmt.Sprintf("Task %d", i),
			Description: strings.Repeat("d", 700), Priority: tasks.PriorityHigh})
		require.NoError(t, err)
	}
	// 5 tasks for each member.
	for i, u := range members {
		for j := range 5 {
			_, err := m.Assign(ctx, "admin-0001", fmt.Sprintf("task-%04d", i*5+j), u)
			require.NoError(t, err)
		}
	}
	for i := range 10 {
		_, err := m.GetTask(ctx, fmt.Sprintf("task-%04d", i))
		require.NoError(t, err)
	}
	for i, u := range members {
		ts, err := m.UserTasks(ctx, u)
		require.NoError(t, err)
		require.Len(t, ts, 5)
		for j, s := range []tasks.Status{tasks.StatusInProgress, tasks.StatusCompleted, tasks.StatusClosed} {
			_, err := m.SetStatus(ctx, u, fmt.Sprintf("task-%04d", i*5+j), s)
			require.NoError(t, err)
		}
	}

	// The other patterns, once each: every request names its pattern.
	_, err = m.TaskAssignments(ctx, "task-0000")
	require.NoError(t, err)
	_, err = m.IsAssigned(ctx, "task-0000", "member-0001")
	require.NoError(t, err)
	_, err = m.TasksByStatus(ctx, tasks.StatusOpen, 0, "")
	require.NoError(t, err)
	_, err = m.SetStatus(ctx, "admin-0001", "task-0009", tasks.StatusClosed)
	require.NoError(t, err)
	_, err = m.SetPriority(ctx, "admin-0001", "task-0009", tasks.PriorityLow)
	require.NoError(t, err)
	require.NoError(t, m.Unassign(ctx, "admin-0001", "task-0009", "member-0002"))
	require.NoError(t, m.Deactivate(ctx, "member-0002"))

	c := taskCatalog()
	var named []string
	for _, p := range c.Patterns {
		if p.Name != "P7" { // the design's plain conditional put: the manager's assignment is P7+
			named = append(named, p.Name)
		}
	}
	var seen []string
	for p := range rec.Requests() {
		seen = append(seen, p)
	}
	assert.ElementsMatch(t, named, seen, "every request names a pattern of the catalog")

	est, err := c.Cost(tasks.Workload(), catalog.USEast1)
	require.NoError(t, err)
	requests := rec.Requests()
	checked := map[string]bool{}
	for _, l := range est.Lines {
		n := requests[l.Pattern]
		require.NotZero(t, n, "pattern %s did not run", l.Pattern)
		u := rec.Total(l.Pattern)
		var measured float64
		switch {
		case l.Index == "" && l.Write:
			measured = u.Write
		case l.Index == "":
			measured = u.Read
		case l.Write:
			measured = u.IndexWrite[l.Index]
		default:
			measured = u.IndexRead[l.Index]
		}
		assert.InDelta(t, l.Units/l.PerSecond, measured/float64(n), 1e-9, "%s %s write=%v: units a request", l.Pattern, l.Index, l.Write)
		checked[l.Pattern] = true
	}
	assert.Len(t, checked, len(tasks.Workload().Loads))
}
