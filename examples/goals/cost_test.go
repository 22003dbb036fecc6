package goals_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/examples/goals"
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
//     and 0.1 on EmailIndex;
//   - the table's writes are 0.4 + 1 + 0.5 + 0.1 + 4 + 3 = 9 units a
//     second, $14.58 a month, EmailIndex's 8.7;
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
	assert.InDelta(t, 0.1, line("U1", goals.IndexName, true).Units, 1e-9)
	units, dollars := rep.Total(func(l catalog.CostLine) bool { return l.Write && l.Index == "" })
	assert.InDelta(t, 9.0, units, 1e-9)
	assert.Equal(t, 14.58, cents(dollars))
	units, _ = rep.Total(func(l catalog.CostLine) bool { return l.Write && l.Index == goals.IndexName })
	assert.InDelta(t, 8.7, units, 1e-9)
	assert.InDelta(t, 11_400_000.0/(1024*1024), rep.StorageGB, 1e-9)
	assert.Equal(t, 2.72, cents(rep.StorageCost))
	assert.Empty(t, rep.Findings, "no partition past its limits at this load")

	got := rep.Markdown()
	path := filepath.Join("docs", "cost.md")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestCostReport -update to create it")
	assert.Equal(t, string(want), got, "docs/cost.md is stale: run go test ./examples/goals -run TestCostReport -update")
}
