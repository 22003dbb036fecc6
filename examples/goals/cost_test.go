package goals_test

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
	"github.com/singletable-go/singletable/examples/goals"
	"github.com/singletable-go/singletable/singletabletest"
)

// TestCostReport keeps docs/cost.md current and checks figures of it
// against arithmetic done by hand with DynamoDB's formulas (RCU =
// requests/s × ⌈KB read/4⌉ / 2 eventually consistent, WCU = requests/s ×
// ⌈KB⌉, a month of 2,592,000 seconds, $0.125 and $0.625 per million
// request units):
//   - a dashboard load reads 40 items of 0.5 KB, 20 KB: ⌈20/4⌉ / 2 = 2.5
//     read units, 50 a second 125, $40.50 a month;
//   - a month of meals reads 90 × 0.4 KB = 36 KB: ⌈36/4⌉ / 2 = 4.5, 10 a
//     second 45, $14.58 a month;
//   - a page of 100 goals by status reads 50 KB: ⌈12.5⌉ = 13, halved 6.5,
//     2 a second 13;
//   - a registration writes the profile (1 unit) and its email guard (1)
//     in a transaction (twice): 4 units, 0.1 a second 0.4 on the table,
//     and the profile's EmailIndex entry, doubled too, 0.2 (measured:
//     TestCostMeasured);
//   - a status change reads created_at (1 strongly consistent unit, 0.5
//     a second), writes the goal (0.5) and deletes and puts its
//     EmailIndex entry (2 units, 1 a second);
//   - the table's writes are 0.4 + 1 + 0.5 + 0.1 + 4 + 3 = 9 units a
//     second, $14.58 a month, EmailIndex's 0.2 + 1 + 1 + 0.1 + 4 + 3 =
//     9.3;
//   - storage: (100,000 × 0.5 + 500,000 × 0.5 + 9,000,000 × 0.4 +
//     6,000,000 × 0.3) KB twice (table and EmailIndex) = 11,400,000 KB,
//     10.87 GB, $2.72 a month.
func TestCostReport(t *testing.T) {
	t.Parallel()
	r := goals.New(nil, "TABLE_NAME")
	c := catalog.New(r.Table, r.AccessPatterns()...)
	rep, err := c.Cost(goals.Workload(), catalog.USEast1)
	require.NoError(t, err)

	line := func(pattern, index string, write bool) catalog.CostLine {
		for _, l := range rep.Lines {
			if l.Pattern == pattern && l.Index == index && l.Write == write {
				return l
			}
		}
		t.Fatalf("no line for %s %q write=%v", pattern, index, write)
		return catalog.CostLine{}
	}
	cents := func(d float64) float64 { return math.Round(d*100) / 100 }
	dashboard := line("U3", "", false)
	assert.Equal(t, 125.0, dashboard.Units)
	assert.Equal(t, 40.50, cents(dashboard.OnDemand))
	month := line("M3", "", false)
	assert.Equal(t, 45.0, month.Units)
	assert.Equal(t, 14.58, cents(month.OnDemand))
	assert.Equal(t, 13.0, line("G4", goals.IndexName, false).Units)
	assert.InDelta(t, 0.4, line("U1", "", true).Units, 1e-9)
	assert.InDelta(t, 0.2, line("U1", goals.IndexName, true).Units, 1e-9)
	assert.InDelta(t, 0.5, line("G6", "", false).Units, 1e-9)
	assert.InDelta(t, 0.5, line("G6", "", true).Units, 1e-9)
	assert.InDelta(t, 1.0, line("G6", goals.IndexName, true).Units, 1e-9)
	units, dollars := rep.Total(func(l catalog.CostLine) bool { return l.Write && l.Index == "" })
	assert.InDelta(t, 9.0, units, 1e-9)
	assert.Equal(t, 14.58, cents(dollars))
	units, _ = rep.Total(func(l catalog.CostLine) bool { return l.Write && l.Index == goals.IndexName })
	assert.InDelta(t, 9.3, units, 1e-9)
	assert.InDelta(t, 11_400_000.0/(1024*1024), rep.StorageGB, 1e-9)
	assert.Equal(t, 2.72, cents(rep.StorageCost))
	assert.Empty(t, rep.Findings, "no partition past its limits at this load")

	got := rep.Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "cost.md"), got, *update)
}

// TestCostMeasured runs registrations (U1) and status changes (G6)
// through the repository against DynamoDB Local with a catalog.Recorder,
// and checks that the units a request of goals.Workload gives them are
// what DynamoDB Local reports: a registration is a transaction of the
// profile and its email guard (its table and EmailIndex writes doubled),
// a status change reads created_at (one strongly consistent read) and
// moves the goal to another GOALS#<status> partition of EmailIndex (a
// delete and a put there).
func TestCostMeasured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := catalog.NewRecorder()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	require.NoError(t, goals.New(client, name).Table.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	r := goals.New(client, name, func(o *singletable.TableOptions) { o.Observe = rec.Observe })

	// Items of about the Workload's 0.5 KB.
	for i := range 4 {
		id := fmt.Sprintf("user-%04d", i)
		require.NoError(t, r.CreateProfile(ctx, goals.Profile{UserID: id, Email: id + "@example.com", Name: strings.Repeat("n", 400)}))
		require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: id, GoalID: "g1", Title: strings.Repeat("t", 400), Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")}))
		_, err := r.SetGoalStatus(ctx, id, "g1", goals.GoalCompleted)
		require.NoError(t, err)
		_, err = r.SetGoalStatus(ctx, id, "g1", goals.GoalAbandoned)
		require.NoError(t, err)
	}
	requests := rec.Requests()
	require.Equal(t, int64(4), requests["U1"])
	require.Equal(t, int64(16), requests["G6"], "a plan read and an update a change")

	loads := map[string]catalog.Load{}
	for _, l := range goals.Workload().Loads {
		loads[l.Pattern] = l
	}
	for _, c := range []struct {
		pattern string
		changes float64 // requests of the Workload's kind made
	}{{"U1", 4}, {"G6", 8}} {
		ld := loads[c.pattern]
		require.NotNil(t, ld.Measured, "%s is measured", c.pattern)
		u := rec.Total(c.pattern)
		assert.InDelta(t, ld.Measured.Read, u.Read/c.changes, 1e-9, "%s table reads", c.pattern)
		assert.InDelta(t, ld.Measured.Write, u.Write/c.changes, 1e-9, "%s table writes", c.pattern)
		assert.InDelta(t, ld.Measured.IndexWrite[goals.IndexName], u.IndexWrite[goals.IndexName]/c.changes, 1e-9, "%s EmailIndex writes", c.pattern)
		assert.Empty(t, u.IndexRead[goals.IndexName], "%s reads no index", c.pattern)
	}
}
