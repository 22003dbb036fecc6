package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/batchread"
	"github.com/singletable-go/singletable/internal/testfaults"
	"github.com/singletable-go/singletable/migrate"
)

// faultRows are the fault table rows of this package's suites, which
// TestMain hands to the root package's report (make reliability).
var faultRows testfaults.Rows

// A copy and a re-key through a client that throttles, fails, times out,
// loses responses after applied writes, leaves batch items unprocessed and
// reports transaction conflicts: nothing is lost, nothing fails, the
// ledger ends completed.
func TestMigrateUnderFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 2000
	src := newLegacyTable(t, n)
	ft := ddbfault.New(nil, ddbfault.Config{Seed: 7, Rate: 0.15})
	// Which drawn fault lands on which request depends on goroutine
	// timing, so script a few partial batches to be sure that path runs.
	ft.Next("BatchWriteItem", ddbfault.PartialBatch, ddbfault.PartialBatch, ddbfault.PartialBatch)
	faulty := ddblocal.NewClient(ddblocal.Shared(t).Endpoint(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
	})
	tbl, users := usersTargetVia(t, faulty)
	m, err := migrate.New(tbl,
		migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) { o.PageSize = 200 })
	require.NoError(t, err)
	assert.Equal(t, migrate.Counts{Scanned: n, Read: n, Written: n - n/100, Skipped: n / 100}, rep.Counts)
	stats := ft.Stats()
	t.Logf("copy: %d requests, %d faults %v", stats.Requests, stats.Total(), stats.Faults)
	require.Positive(t, stats.Faults[ddbfault.PartialBatch])

	ft.SetEnabled(false)
	vr, err := m.Verify(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Equal(t, migrate.Completed, must(m.Status(ctx))[0].State)

	// Re-key 300 skills to a new sort key template under the same faults.
	seedSkills(t, tbl, UserSkills, 300)
	newTbl := singletable.NewTable(faulty, tbl.Name())
	skills := singletable.MustBind(newTbl, userSkillsNewSK)
	mk, err := migrate.New(newTbl, migrate.Backfill("002-skill-sk", skills))
	require.NoError(t, err)
	ft.SetEnabled(true)
	before := ft.Stats().Total()
	rk, err := mk.Run(ctx, "002-skill-sk", func(o *migrate.RunOptions) { o.PageSize = 100 })
	require.NoError(t, err)
	t.Logf("re-key: %+v, %d faults, %d retried", rk.Counts, ft.Stats().Total()-before, rk.Retried)
	ft.SetEnabled(false)
	assert.Equal(t, int64(0), rk.Counts.Failed)
	assert.Equal(t, rk.Counts.Read, rk.Counts.Written+rk.Counts.Skipped)
	skillsLeft := 0
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if attrS(it, "EntityType") == "UserSkill" {
			skillsLeft++
			require.True(t, strings.HasPrefix(attrS(it, "SK"), "USKILL#"), attrS(it, "SK"))
		}
	}
	assert.Equal(t, 300, skillsLeft)
	vr, err = mk.Verify(ctx, "002-skill-sk")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
}

// runToCompletion runs a migration through faults until it completes, as
// an operator would: a run that stops on an error is run again and
// resumes from its checkpoints; one refused because a failed run's lease
// is still held (its release was lost to a fault) waits until the ledger
// shows that lease expired, and is not counted as a run. It returns the
// last report and how many runs it took.
func runToCompletion(t *testing.T, m *migrate.Migrator, id string) (*migrate.Report, int) {
	t.Helper()
	ctx := context.Background()
	refused := 0
	for run := 1; ; {
		rep, err := m.Run(ctx, id, func(o *migrate.RunOptions) {
			o.Segments, o.Writers, o.PageSize = 4, 4, 250
			testfaults.FastRetries(&o.Batch)
			// Long enough that a loaded machine renews it in time; a lease
			// left by a lost release is waited out (waitLeaseExpired).
			o.Lease = 10 * time.Second
		})
		if err == nil {
			return rep, run
		}
		if errors.Is(err, migrate.ErrRunning) && !strings.Contains(err.Error(), "lost its lease") {
			// Every refusal is by the lease of a run before it.
			refused++
			require.LessOrEqual(t, refused, run, "run %d refused %d times: %v", run, refused, err)
			t.Logf("run %d refused: %v", run, err)
			waitLeaseExpired(t, m, id)
			continue
		}
		require.Less(t, run, 25, "migration %s still failing after %d runs: %v", id, run, err)
		t.Logf("run %d: %v", run, err)
		run++
	}
}

// waitLeaseExpired waits until the ledger shows no live lease on migration
// id, reading it again after each error (the faults are still on).
func waitLeaseExpired(t *testing.T, m *migrate.Migrator, id string) {
	t.Helper()
	for {
		all, err := m.Status(context.Background())
		if err != nil {
			continue
		}
		i := slices.IndexFunc(all, func(s migrate.Status) bool { return s.ID == id })
		require.GreaterOrEqual(t, i, 0, "no status for %s", id)
		left := time.Until(all[i].LeaseUntil)
		if all[i].LeaseOwner == "" || left < 0 {
			return
		}
		time.Sleep(left + time.Millisecond) // until the lease the ledger shows has expired; then read it again
	}
}

// TestCopyMigrationUnderFaults copies the skills service's legacy users into the
// single table while scans, batch writes and ledger writes meet faults.
// The copy completes (resuming where a run stopped), its counts add up,
// and the target holds exactly the users the source says, each as it is
// in the source: nothing lost, nothing extra, nothing counted twice.
func TestCopyMigrationUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runCopyFaultSuite)
}

func runCopyFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	const n, deleted = 2000, 2000 / 100
	src := newLegacyTable(t, n)
	var users *singletable.Repo[User]
	tbl, ft := testfaults.Table(t, rate, uint64(rate*1000)+19, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		singletable.MustBind(tbl, UserSkills)
	})
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	ft.SetEnabled(true)
	rep, runs := runToCompletion(t, m, "000-users")
	ft.SetEnabled(false)
	stats := ft.Stats()

	c := rep.Counts
	assert.Equal(t, migrate.Completed, rep.State)
	assert.Equal(t, migrate.Counts{Scanned: n, Read: n, Written: n - deleted, Skipped: deleted}, c)
	assert.Equal(t, c.Read, c.Written+c.Skipped+c.Failed, "counts add up")

	// The target against the source model: every live user, exactly once,
	// as the source has it; no other item.
	got := contents(t, tbl)
	lost, extra := 0, 0
	keys := make([]User, n)
	for i := range keys {
		keys[i] = User{Username: fmt.Sprintf("user%05d", i)}
	}
	found, err := batchread.Get(ctx, users, keys, nil)
	require.NoError(t, err)
	byName := make(map[string]User, len(found))
	for _, u := range found {
		byName[u.Username] = u
	}
	for i, k := range keys {
		u, ok := byName[k.Username]
		switch {
		case i%100 == 42:
			if ok {
				extra++
				t.Errorf("soft-deleted user %d was copied", i)
			}
		case !ok:
			lost++
			t.Errorf("user %d missing", i)
		case u.Name != fmt.Sprintf("User Number %d", i):
			lost++
			t.Errorf("user %d copied as %+v", i, u)
		}
	}
	if len(got) != n-deleted {
		extra++
		t.Errorf("target holds %d items besides the ledger; want %d", len(got), n-deleted)
	}
	vr, err := m.Verify(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Greater(t, stats.Total(), 0)
	t.Logf("rate %.0f%%: %d runs, counts %+v, %d requests, %d faults %v; %d lost, %d extra",
		rate*100, runs, c, stats.Requests, stats.Total(), stats.Faults, lost, extra)
	faultRows.Add(testfaults.Row{Suite: "Migration: copy (legacy users → single table)", Rate: rate, Ops: int(c.Read), Errors: runs - 1,
		Faults: stats.Total(), Checked: n, Lost: lost, Dups: extra,
		Notes: fmt.Sprintf("%d run(s) to complete, resuming from checkpoints; read = written + skipped + failed; target = source model; Verify OK", runs)})
}

// TestBackfillMigrationUnderFaults adds GSI1 and GSI2 keys to skills
// written before those indexes existed, under faults. The backfill
// completes, its counts add up, and every skill is found through GSI1
// exactly once with its values unchanged.
func TestBackfillMigrationUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runBackfillFaultSuite)
}

func runBackfillFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	const n = 500
	var skills *singletable.Repo[UserSkill]
	tbl, ft := testfaults.Table(t, rate, uint64(rate*1000)+23, func(tbl *singletable.Table) {
		singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})
	seedSkills(t, tbl, userSkillsNoIndex, n)
	m, err := migrate.New(tbl, migrate.Backfill("001-skills-gsi1", skills))
	require.NoError(t, err)
	ft.SetEnabled(true)
	rep, runs := runToCompletion(t, m, "001-skills-gsi1")
	ft.SetEnabled(false)
	stats := ft.Stats()

	c := rep.Counts
	assert.Equal(t, migrate.Completed, rep.State)
	assert.Equal(t, int64(n), c.Read)
	assert.Zero(t, c.Failed)
	assert.Equal(t, c.Read, c.Written+c.Skipped+c.Failed, "counts add up")

	// Every skill through GSI1, once, as seeded.
	want := map[[2]string]UserSkill{}
	for i := range n {
		s := skillAt(i)
		want[[2]string{s.Username, s.SkillName}] = s
	}
	lost, dups := 0, 0
	seen := map[[2]string]bool{}
	for _, name := range seededSkillNames {
		got, err := skills.QueryIndex("GSI1", UserSkill{SkillName: name}).Collect(ctx)
		require.NoError(t, err)
		for _, s := range got {
			k := [2]string{s.Username, s.SkillName}
			if seen[k] {
				dups++
				t.Errorf("%v found twice in GSI1", k)
			}
			seen[k] = true
			if w, ok := want[k]; !ok || !w.LastUsed.Equal(s.LastUsed) || w.Level != s.Level || w.Years != s.Years {
				lost++
				t.Errorf("%v in GSI1 is %+v; seeded %+v", k, s, w)
			}
		}
	}
	for k := range want {
		if !seen[k] {
			lost++
			t.Errorf("%v not in GSI1", k)
		}
	}
	vr, err := m.Verify(ctx, "001-skills-gsi1")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	t.Logf("rate %.0f%%: %d runs, counts %+v, %d requests, %d faults %v; %d lost, %d duplicated",
		rate*100, runs, c, stats.Requests, stats.Total(), stats.Faults, lost, dups)
	faultRows.Add(testfaults.Row{Suite: "Migration: backfill (GSI1/GSI2 keys on existing skills)", Rate: rate, Ops: int(c.Read), Errors: runs - 1,
		Faults: stats.Total(), Checked: n, Lost: lost, Dups: dups,
		Notes: fmt.Sprintf("%d run(s) to complete; read = written + skipped + failed; every item in GSI1 once, values unchanged; Verify OK", runs)})
}
