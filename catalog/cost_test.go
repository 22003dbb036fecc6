package catalog_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

type costUser struct{ ID, Email, Name string }

type costEvent struct {
	Seq int
	Day string
}

func costCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	tbl := singletable.NewTable(nil, "t")
	users := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[costUser]{
		Type: "User", PK: "USER#{ID}", SK: "PROFILE", Unique: []singletable.Unique{{Fields: []string{"Email"}}},
		Indexes: []singletable.IndexSchema[costUser]{{Name: "GSI1", PK: "NAME#{Name}", SK: "USER#{ID}"}},
	}))
	events := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[costEvent]{
		Type: "Event", PK: "EVENTS", SK: "{Seq}#{Day}",
	}))
	return catalog.New(tbl,
		catalog.Item("get", "Get a user", catalog.OpGet, users),
		catalog.Item("register", "Create a user", catalog.OpCreate, users),
		catalog.Item("rename", "Update a user", catalog.OpUpdate, users),
		catalog.Query("byname", "Users by name", users.QueryIndex("GSI1", costUser{Name: "x"})),
		catalog.Query("log", "The event log", events.Query(costEvent{})),
		catalog.Item("append", "Append an event", catalog.OpCreate, events),
		catalog.Pattern{Name: "move", Description: "Move a user, counting it", Entity: "User", Operation: "TransactWriteItems"},
	)
}

func TestCostArithmetic(t *testing.T) {
	t.Parallel()
	c := costCatalog(t)
	r, err := c.Cost(catalog.Workload{Loads: []catalog.Load{
		{Pattern: "get", PerSecond: 10, ItemKB: 5},                                   // ⌈5/4⌉ = 2 units, halved: 10 units/s
		{Pattern: "get", PerSecond: 10, ItemKB: 5, Consistent: true},                 // strongly consistent: 20
		{Pattern: "log", PerSecond: 10, ItemKB: 0.5, Items: 20},                      // 10 KB summed: ⌈10/4⌉ = 3, halved: 15
		{Pattern: "byname", PerSecond: 10, ItemKB: 0.5, Items: 20, Consistent: true}, // index reads are eventually consistent: 15
		{Pattern: "register", PerSecond: 10, ItemKB: 1.5},                            // (2 + 1 guard) × 2 (transaction) = 6, GSI1 2
		{Pattern: "rename", PerSecond: 10, ItemKB: 0.2},                              // 1, GSI1 1
		{Pattern: "append", PerSecond: 2000, ItemKB: 0.1},                            // 2,000 on one partition
		{Pattern: "rename", PerSecond: 1, Measured: &catalog.Units{Write: 3, IndexWrite: map[string]float64{"GSI1": 2}}},
		{Pattern: "rename", PerSecond: 10, ItemKB: 0.2, OtherItems: 1}, // a counter too: 1 + 1, GSI1 still 1
		{Pattern: "move", PerSecond: 10, ItemKB: 1.5, OtherItems: 2},   // (2 + 2 others) × 2 (transaction) = 8, GSI1 2
	}}, catalog.USEast1)
	require.NoError(t, err)
	var got []string
	for _, l := range r.Lines {
		got = append(got, fmt.Sprintf("%s %s %v %g", l.Pattern, l.Index, l.Write, l.Units))
	}
	assert.Equal(t, []string{
		"get  false 10", "get  false 20", "log  false 15", "byname GSI1 false 15",
		"register  true 60", "register GSI1 true 20",
		"rename  true 10", "rename GSI1 true 10",
		"append  true 2000",
		"rename  true 3", "rename GSI1 true 2",
		"rename  true 20", "rename GSI1 true 10",
		"move  true 80", "move GSI1 true 20",
	}, got)
	// On demand: units a second × 2,592,000 seconds × price per million.
	assert.InDelta(t, 10*2_592_000*0.125/1e6, r.Lines[0].OnDemand, 1e-9)
	assert.InDelta(t, 60*2_592_000*0.625/1e6, r.Lines[4].OnDemand, 1e-9)
	// Provisioned: units × 720 hours × price per unit-hour.
	assert.InDelta(t, 60*720*0.00065, r.Lines[4].Provisioned, 1e-9)
	require.Len(t, r.Findings, 1)
	assert.Contains(t, r.Findings[0].String(), "access pattern append takes 2000 write units a second on the table, spread over 1 partition(s)")
	assert.Contains(t, r.Markdown(), "| GSI1 | 62 | 173 | 0.358× |")
}

func TestCostRefusesBadLoads(t *testing.T) {
	t.Parallel()
	c := costCatalog(t)
	_, err := c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "nope", PerSecond: 1}}}, catalog.USEast1)
	assert.ErrorContains(t, err, `load for access pattern "nope", which the catalog does not list`)
	_, err = c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "get", PerSecond: -1}}}, catalog.USEast1)
	assert.ErrorContains(t, err, "negative")
	_, err = c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "move", OtherItems: -1}}}, catalog.USEast1)
	assert.ErrorContains(t, err, "negative")
	_, err = c.Cost(catalog.Workload{Storage: []catalog.Stored{{Entity: "Ghost", Items: 1}}}, catalog.USEast1)
	assert.ErrorContains(t, err, `entity "Ghost"`)
}

// The cost of a workload: a Get of a 1 KB user a thousand times a second,
// eventually consistent, takes 500 read units, $162 a month on demand.
func ExampleCatalog_Cost() {
	tbl := singletable.NewTable(nil, "users")
	users := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[costUser]{
		Type: "User", PK: "USER#{ID}", SK: "PROFILE",
	}))
	c := catalog.New(tbl, catalog.Item("AP1", "Get user by id", catalog.OpGet, users))
	r, err := c.Cost(catalog.Workload{Loads: []catalog.Load{{Pattern: "AP1", PerSecond: 1000, ItemKB: 1}}}, catalog.USEast1)
	if err != nil {
		panic(err)
	}
	l := r.Lines[0]
	fmt.Printf("%s: %g read units/s, $%.2f a month on demand, $%.2f provisioned\n", l.Pattern, l.Units, l.OnDemand, l.Provisioned)
	// Output: AP1: 500 read units/s, $162.00 a month on demand, $46.80 provisioned
}
