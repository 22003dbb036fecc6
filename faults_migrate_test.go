package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// runToCompletion runs a migration through faults until it completes, as
// an operator would: a run that stops on an error is run again and
// resumes from its checkpoints; one refused because a failed run's lease
// is still held waits for it to expire. It returns the last report and
// how many runs it took.
func runToCompletion(t *testing.T, m *singletable.Migrator, id string) (*singletable.MigrationReport, int) {
	t.Helper()
	ctx := context.Background()
	for run := 1; ; run++ {
		rep, err := m.Run(ctx, id, func(o *singletable.RunOptions) {
			o.Segments, o.Writers, o.PageSize = 4, 4, 250
			fastRetries(&o.Batch)
			o.Lease = 2 * time.Second
		})
		if err == nil {
			return rep, run
		}
		require.Less(t, run, 25, "migration %s still failing after %d runs: %v", id, run, err)
		t.Logf("run %d: %v", run, err)
		if errors.Is(err, singletable.ErrMigrationRunning) {
			time.Sleep(time.Second)
		}
	}
}

// TestCopyMigrationUnderFaults copies the skills service's legacy users into the
// single table while scans, batch writes and ledger writes meet faults.
// The copy completes (resuming where a run stopped), its counts add up,
// and the target holds exactly the users the source says, each as it is
// in the source: nothing lost, nothing extra, nothing counted twice.
func TestCopyMigrationUnderFaults(t *testing.T) {
	t.Parallel()
	for _, rate := range faultRates {
		t.Run(fmt.Sprintf("rate=%.0f%%", rate*100), func(t *testing.T) {
			t.Parallel()
			runCopyFaultSuite(t, rate)
		})
	}
}

func runCopyFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	const n, deleted = 2000, 2000 / 100
	src := newLegacyTable(t, n)
	var users *singletable.Repo[User]
	tbl, ft := faultSuiteTable(t, rate, uint64(rate*1000)+19, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		singletable.MustBind(tbl, UserSkills)
	})
	m, err := singletable.NewMigrator(tbl, singletable.CopyMigration("000-users", singletable.CopySource{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	ft.SetEnabled(true)
	rep, runs := runToCompletion(t, m, "000-users")
	ft.SetEnabled(false)
	stats := ft.Stats()

	c := rep.Counts
	assert.Equal(t, singletable.MigrationCompleted, rep.State)
	assert.Equal(t, singletable.MigrationCounts{Scanned: n, Read: n, Written: n - deleted, Skipped: deleted}, c)
	assert.Equal(t, c.Read, c.Written+c.Skipped+c.Failed, "counts add up")

	// The target against the source model: every live user, exactly once,
	// as the source has it; no other item.
	got := contents(t, tbl)
	lost, extra := 0, 0
	keys := make([]User, n)
	for i := range keys {
		keys[i] = User{Username: fmt.Sprintf("user%05d", i)}
	}
	found, err := batchGet(ctx, users, keys, nil)
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
	reportFaults(faultRow{Suite: "Migration: copy (legacy users → single table)", Rate: rate, Ops: int(c.Read), Errors: runs - 1,
		Faults: stats.Total(), Checked: n, Lost: lost, Dups: extra,
		Notes: fmt.Sprintf("%d run(s) to complete, resuming from checkpoints; read = written + skipped + failed; target = source model; Verify OK", runs)})
}

// TestBackfillMigrationUnderFaults adds GSI1 and GSI2 keys to skills
// written before those indexes existed, under faults. The backfill
// completes, its counts add up, and every skill is found through GSI1
// exactly once with its values unchanged.
func TestBackfillMigrationUnderFaults(t *testing.T) {
	t.Parallel()
	for _, rate := range faultRates {
		t.Run(fmt.Sprintf("rate=%.0f%%", rate*100), func(t *testing.T) {
			t.Parallel()
			runBackfillFaultSuite(t, rate)
		})
	}
}

func runBackfillFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	const n = 500
	var skills *singletable.Repo[UserSkill]
	tbl, ft := faultSuiteTable(t, rate, uint64(rate*1000)+23, func(tbl *singletable.Table) {
		singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})
	seedSkills(t, tbl, userSkillsNoIndex, n)
	m, err := singletable.NewMigrator(tbl, skills.BackfillMigration("001-skills-gsi1"))
	require.NoError(t, err)
	ft.SetEnabled(true)
	rep, runs := runToCompletion(t, m, "001-skills-gsi1")
	ft.SetEnabled(false)
	stats := ft.Stats()

	c := rep.Counts
	assert.Equal(t, singletable.MigrationCompleted, rep.State)
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
	reportFaults(faultRow{Suite: "Migration: backfill (GSI1/GSI2 keys on existing skills)", Rate: rate, Ops: int(c.Read), Errors: runs - 1,
		Faults: stats.Total(), Checked: n, Lost: lost, Dups: dups,
		Notes: fmt.Sprintf("%d run(s) to complete; read = written + skipped + failed; every item in GSI1 once, values unchanged; Verify OK", runs)})
}
