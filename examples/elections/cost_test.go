package elections_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/elections"
	"github.com/singletable-go/singletable/singletabletest"
)

// costReports makes the cost report of each of the design's two tables
// from its catalog and its part of the illustrative workload.
func costReports(t *testing.T, s *elections.Store, data, log catalog.Workload) (*catalog.CostReport, *catalog.CostReport) {
	t.Helper()
	dataAPs, logAPs := s.AccessPatterns()
	dr, err := catalog.New(s.Data, dataAPs...).Cost(data, catalog.USEast1)
	require.NoError(t, err)
	lr, err := catalog.New(s.Log, logAPs...).Cost(log, catalog.USEast1)
	require.NoError(t, err)
	return dr, lr
}

func line(t *testing.T, r *catalog.CostReport, pattern, index string, write bool) catalog.CostLine {
	t.Helper()
	i := slices.IndexFunc(r.Lines, func(l catalog.CostLine) bool {
		return l.Pattern == pattern && l.Index == index && l.Write == write
	})
	require.GreaterOrEqual(t, i, 0, "no line for %s %q write=%v", pattern, index, write)
	return r.Lines[i]
}

// TestCostReport checks the cost reports of both tables against hand
// arithmetic (a write unit per KB rounded up, twice in a transaction; a
// read unit per 4 KB summed over a query's items, rounded up, halved when
// eventually consistent; 2,592,000 seconds a month; $0.625 per million
// write request units) and keeps docs/cost.md current.
func TestCostReport(t *testing.T) {
	t.Parallel()
	s := elections.New(nil, elections.DataTableName, elections.EventTableName)
	data, log := elections.Workload()
	dr, lr := costReports(t, s, data, log)

	// Casting a ballot: (1 ballot + 2 condition checks) × 1 unit × 2 = 6
	// write units, 100 a second: 600, $972 a month on demand, $280.80
	// provisioned (600 × 720 h × $0.00065).
	b3 := line(t, dr, "B3", "", true)
	assert.InDelta(t, 600, b3.Units, 1e-9)
	assert.InDelta(t, 600*2_592_000*0.625/1e6, b3.OnDemand, 1e-9)
	assert.InDelta(t, 972.0, b3.OnDemand, 1e-9)
	assert.InDelta(t, 280.8, b3.Provisioned, 1e-9)
	// Adding a user: (1 user + guard + counts) × 2 = 6 on the table, one
	// write of the user into each of its two indexes.
	assert.InDelta(t, 6, line(t, dr, "U5", "", true).Units, 1e-9)
	assert.InDelta(t, 1, line(t, dr, "U5", elections.EmailIndex, true).Units, 1e-9)
	assert.InDelta(t, 1, line(t, dr, "U5", elections.ListIndex, true).Units, 1e-9)
	// The tally: 10,000 ballots of 0.5 KB summed, ⌈5,000 / 4⌉ = 1,250
	// read units, halved: 625 a request, once a minute.
	assert.InDelta(t, 625.0/60, line(t, dr, "B2", "", false).Units, 1e-9)
	// The event log: 101.1 commands a second, each the sequence update and
	// the event put, 2 items × 2 = 4 write units; and one strongly
	// consistent read of the sequence, 1 unit.
	assert.InDelta(t, 404.4, line(t, lr, "L4", "", true).Units, 1e-9)
	assert.InDelta(t, 101.1, line(t, lr, "L1", "", false).Units, 1e-9)
	// Storage: 100,000 × 0.5 KB users (in both indexes too), 1,000 × 0.3
	// KB elections (and in GSI-2), 10,000 × 0.2 + 1,000,000 × 0.2 +
	// 1,000,000 × 0.5 KB.
	kb := 100_000*0.5*3 + 1_000*0.3*2 + 10_000*0.2 + 1_000_000*0.2 + 1_000_000*0.5
	assert.InDelta(t, kb/(1024*1024), dr.StorageGB, 1e-9)
	assert.InDelta(t, 5_000_000*0.5/(1024*1024), lr.StorageGB, 1e-9)
	assert.Empty(t, dr.Findings, "no partition past its limits at this load")
	assert.Empty(t, lr.Findings, "no partition past its limits at this load")

	got := dr.Markdown() + "\n" + lr.Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "cost.md"), got, *update)
}

// TestCostCeilings checks the limits the Workload's godoc derives by hand:
// one election's partition takes 1,000 / 6 ≈ 166 ballots a second, and
// the sequence item 1,000 / 2 = 500 commands a second.
func TestCostCeilings(t *testing.T) {
	t.Parallel()
	s := elections.New(nil, elections.DataTableName, elections.EventTableName)
	at := func(ballots, commands float64) (dataFindings, logFindings int) {
		data, log := elections.Workload()
		for i := range data.Loads {
			if data.Loads[i].Pattern == "B3" {
				data.Loads[i].PerSecond = ballots
			}
		}
		for i := range log.Loads {
			if log.Loads[i].Pattern == "L4" {
				log.Loads[i].PerSecond = commands
			}
		}
		dr, lr := costReports(t, s, data, log)
		return len(dr.Findings), len(lr.Findings)
	}
	d, l := at(166, 500)
	assert.Zero(t, d, "166 ballots a second fit one election's partition")
	assert.Zero(t, l, "500 commands a second fit the sequence's partition")
	d, l = at(167, 501)
	assert.Equal(t, 1, d, "167 ballots a second: 1,002 write units on one partition")
	assert.Equal(t, 1, l, "501 commands a second: 1,002 write units on the sequence's partition")
	data, _ := elections.Workload()
	for i := range data.Loads {
		if data.Loads[i].Pattern == "B3" {
			data.Loads[i].PerSecond = 167
		}
	}
	dr, _ := costReports(t, s, data, catalog.Workload{})
	require.Len(t, dr.Findings, 1)
	assert.Contains(t, dr.Findings[0].String(), "access pattern B3 takes 1002 write units a second on the table, spread over 1 partition(s)")
}

// TestMeasuredCostReport makes docs/cost-measured.md: the Workload's rates
// priced at the capacity a request of each pattern took against DynamoDB
// Local while a small voting day ran through the store, recorded by
// catalog.Recorder from the Observe hook. The figures are deterministic:
// the items have fixed sizes, and DynamoDB Local reports capacity from
// them.
func TestMeasuredCostReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := catalog.NewRecorder()
	client := ddblocal.Shared(t).Client()
	dataName, logName := ddblocal.TableName(t), ddblocal.TableName(t)
	s := elections.New(client, dataName, logName, func(o *singletable.TableOptions) { o.Observe = rec.Observe })
	require.NoError(t, s.CreateTables(ctx))
	ddblocal.DeleteTableOnCleanup(t, client, dataName)
	ddblocal.DeleteTableOnCleanup(t, client, logName)
	s.NewConfirmation = func() string { return "00000000-0000-4000-8000-000000000000" }

	// A small voting day, every request through the query and command
	// models, which name their patterns.
	voters := []string{"voter01", "voter02", "voter03", "voter04"}
	for _, n := range append([]string{"owner01"}, voters...) {
		require.NoError(t, s.AddUser(ctx, "system", elections.User{Name: n, Email: n + "@example.com", Salt: "salt", Hash: "hash", Role: "USER"}))
	}
	require.NoError(t, s.AddElection(ctx, "owner01", "Favorite Language"))
	require.NoError(t, s.AddCandidates(ctx, "owner01", "Favorite Language", "Go", "Kotlin", "Python"))
	require.NoError(t, s.AddVoters(ctx, "owner01", "Favorite Language", voters...))
	require.NoError(t, s.LaunchElection(ctx, "owner01", "Favorite Language"))
	for _, v := range voters {
		_, err := s.CastBallot(ctx, v, "Favorite Language", []elections.Ranking{{CandidateName: "Go", Rank: 1}, {CandidateName: "Python", Rank: 2}})
		require.NoError(t, err)
		_, err = s.FindUserByName(ctx, v)
		require.NoError(t, err)
		_, err = s.FindUserByEmail(ctx, v+"@example.com")
		require.NoError(t, err)
		ok, err := s.IsEligible(ctx, "Favorite Language", v)
		require.NoError(t, err)
		require.True(t, ok)
		b, err := s.SearchBallot(ctx, v, "Favorite Language")
		require.NoError(t, err)
		require.NotNil(t, b)
	}
	rankings, err := s.ListRankings(ctx, "Favorite Language")
	require.NoError(t, err)
	require.Len(t, rankings, len(voters))
	es, err := s.ListElections(ctx)
	require.NoError(t, err)
	require.Len(t, es, 1)
	_, err = s.Counts(ctx)
	require.NoError(t, err)
	evs, err := s.EventsSince(ctx, 0)
	require.NoError(t, err)
	require.Len(t, evs, 5+1+1+1+1+len(voters)) // users, election, candidates, voters, launch, ballots

	requests := rec.Requests()
	assert.Equal(t, int64(len(voters)), requests["B3"])
	assert.Equal(t, int64(len(voters)), requests["E1"], "casting reads the election")
	assert.Equal(t, int64(5+1+1+1+1+len(voters)), requests["L1"], "every command reads the sequence first")

	data, log := elections.Workload()
	data, estData := rec.Measure(dataName, data)
	log, estLog := rec.Measure(logName, log)
	assert.Empty(t, estData, "every vote_data pattern of the workload ran")
	assert.Equal(t, []string{"L4"}, estLog, "the event append is part of the commands' transactions, recorded under their patterns")
	cat := elections.New(nil, elections.DataTableName, elections.EventTableName)
	dr, lr := costReports(t, cat, data, log)

	// DynamoDB Local does not charge transactions as DynamoDB does: the
	// ballot's transaction (two condition checks and the ballot put in
	// vote_data) takes 2 write units there, where the estimate counts 6.
	b3 := line(t, dr, "B3", "", true)
	assert.True(t, b3.Measured)
	assert.InDelta(t, 2*100, b3.Units, 1e-9)
	assert.InDelta(t, 6*100, line(t, mustCost(t, cat, elections.Workload), "B3", "", true).Units, 1e-9)
	// The same transaction's share in vote_event_log (the sequence update
	// and the event put) is recorded for that table, not counted in
	// vote_data.
	assert.InDelta(t, 4, rec.Total("B3").Write/float64(requests["B3"]), 1e-9)
	// An eventually consistent GetItem of a small item: half a unit.
	assert.InDelta(t, 0.5*20, line(t, dr, "U1", "", false).Units, 1e-9)
	// Strongly consistent: a whole unit.
	assert.InDelta(t, 101.1, line(t, lr, "L1", "", false).Units, 1e-9)

	got := dr.Markdown() + "\n" + lr.Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "cost-measured.md"), got, *update)
}

// mustCost is the estimated vote_data report of a workload.
func mustCost(t *testing.T, s *elections.Store, workload func() (data, log catalog.Workload)) *catalog.CostReport {
	t.Helper()
	data, log := workload()
	dr, _ := costReports(t, s, data, log)
	return dr
}

// TestCostOfScanListing prices the listings on the Kotlin service's
// vote_data (GSI-1 only), where they are Scans, at the Workload's rates: a
// Scan reads the whole table, so each listing of elections reads all that
// the Workload keeps at rest, 752,300 KB (100,000 × 0.5 + 1,000 × 0.3 +
// 10,000 × 0.2 + 1,000,000 × 0.2 + 1,000,000 × 0.5), ⌈752,300 / 4⌉ =
// 188,075 read units, halved: 94,037.5 a listing. Once a second that is
// $30,468.15 a month on demand, where the GSI-2 query of the same 50
// elections takes 2 read units.
func TestCostOfScanListing(t *testing.T) {
	t.Parallel()
	byIndex, byScan := mustCost(t, elections.New(nil, elections.DataTableName, elections.EventTableName), elections.Workload),
		mustCost(t, elections.NewListing(elections.ByScan, nil, elections.DataTableName, elections.EventTableName), scanWorkload)
	assert.InDelta(t, 2, line(t, byIndex, "E2", elections.ListIndex, false).Units, 1e-9)
	e2 := line(t, byScan, "E2", "", false)
	assert.InDelta(t, 94_037.5, e2.Units, 1e-9)
	assert.InDelta(t, 30_468.15, e2.OnDemand, 1e-6)
	// Adding a user writes it into GSI-1 only.
	assert.InDelta(t, 1, line(t, byScan, "U5", elections.EmailIndex, true).Units, 1e-9)
	assert.False(t, slices.ContainsFunc(byScan.Lines, func(l catalog.CostLine) bool { return l.Index == elections.ListIndex }))
	assert.Empty(t, byScan.Findings)
}

// scanWorkload is the Workload with the election listing as the Scan it
// is on a table without GSI-2: one request reading the whole table (its
// size at rest given as one item).
func scanWorkload() (data, log catalog.Workload) {
	data, log = elections.Workload()
	var tableKB float64
	for _, s := range data.Storage {
		tableKB += float64(s.Items) * s.ItemKB
	}
	for i := range data.Loads {
		if data.Loads[i].Pattern == "E2" {
			data.Loads[i].Items, data.Loads[i].ItemKB = 1, tableKB
		}
	}
	return data, log
}
