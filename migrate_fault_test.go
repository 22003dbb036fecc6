package singletable_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

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
	m, err := singletable.NewMigrator(tbl,
		singletable.CopyMigration("000-users", singletable.CopySource{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "000-users", func(o *singletable.RunOptions) { o.PageSize = 200 })
	require.NoError(t, err)
	assert.Equal(t, singletable.MigrationCounts{Scanned: n, Read: n, Written: n - n/100, Skipped: n / 100}, rep.Counts)
	stats := ft.Stats()
	t.Logf("copy: %d requests, %d faults %v", stats.Requests, stats.Total(), stats.Faults)
	require.Positive(t, stats.Faults[ddbfault.PartialBatch])

	ft.SetEnabled(false)
	vr, err := m.Verify(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Equal(t, singletable.MigrationCompleted, must(m.Status(ctx))[0].State)

	// Re-key 300 skills to a new sort key template under the same faults.
	seedSkills(t, tbl, UserSkills, 300)
	newTbl := singletable.NewTable(faulty, tbl.Name())
	skills := singletable.MustBind(newTbl, userSkillsNewSK)
	mk, err := singletable.NewMigrator(newTbl, skills.BackfillMigration("002-skill-sk"))
	require.NoError(t, err)
	ft.SetEnabled(true)
	before := ft.Stats().Total()
	rk, err := mk.Run(ctx, "002-skill-sk", func(o *singletable.RunOptions) { o.PageSize = 100 })
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
