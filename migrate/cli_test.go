package migrate_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/migrate"
	"github.com/singletable-go/singletable/migrate/migratecli"
)

func TestMigrateCLI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 300)
	tbl, users, skills := usersTarget(t)
	copyUsers := migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users))
	copyUsers.Description = "legacy users"
	m, err := migrate.New(tbl,
		copyUsers,
		migrate.Backfill("001-skills-gsi1", skills),
	)
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	cli := func(args ...string) int {
		out.Reset()
		errOut.Reset()
		return migratecli.Main(ctx, m, args, func(o *migratecli.Options) {
			o.Stdout, o.Stderr = &out, &errOut
			o.LineInterval = 5 * time.Millisecond
			o.Run = func(r *migrate.RunOptions) { r.PageSize = 50 }
		})
	}

	require.Equal(t, migratecli.ExitOK, cli("status"), errOut.String())
	assert.Regexp(t, `000-users\s+copy\s+pending\s+0\s+0\s+0\s+0\s+-\s+0\s+-\s+legacy users`, out.String())
	assert.Regexp(t, `001-skills-gsi1\s+backfill\s+pending`, out.String())

	require.Equal(t, migratecli.ExitOK, cli("run", "-dry-run", "000-users"), errOut.String())
	assert.Contains(t, out.String(), "000-users: dry run (nothing written)")
	assert.Contains(t, out.String(), "would write: 297 User put")

	require.Equal(t, migratecli.ExitOK, cli("run", "-segments", "2", "-writers", "4", "-wcu", "5000", "000-users"), errOut.String())
	assert.Contains(t, out.String(), "000-users: completed\n")
	assert.Contains(t, out.String(), "read 300 = written 297 + skipped 3 + failed 0 (scanned 300, 2 segments)")
	assert.Contains(t, out.String(), "writes: 297 User put")
	t.Logf("progress lines:\n%s", errOut.String())

	require.Equal(t, migratecli.ExitOK, cli("run", "000-users"))
	assert.Contains(t, out.String(), "already completed")

	require.Equal(t, migratecli.ExitOK, cli("verify", "000-users"), errOut.String())
	assert.Contains(t, out.String(), "User                 expected 297, found 297  ok")
	assert.Contains(t, out.String(), "\nOK\n")

	require.Equal(t, migratecli.ExitOK, cli("status"))
	assert.Regexp(t, `000-users\s+copy\s+completed\s+300\s+297\s+3\s+0\s+2/2\s+1\s+\d{4}-`, out.String())

	_, err = users.Delete(ctx, User{Username: "user00001"})
	require.NoError(t, err)
	require.Equal(t, migratecli.ExitFailure, cli("verify", "-sample", "1", "000-users"))
	assert.Contains(t, out.String(), "missing User {PK=USER#user00001 SK=PROFILE}")
	assert.Contains(t, out.String(), "DIFFERENCES FOUND")

	assert.Equal(t, migratecli.ExitUsage, cli())
	assert.Equal(t, migratecli.ExitUsage, cli("frobnicate"))
	assert.Equal(t, migratecli.ExitUsage, cli("run"))
	assert.Equal(t, migratecli.ExitUsage, cli("run", "-segments", "x", "000-users"))
	assert.Equal(t, migratecli.ExitFailure, cli("run", "no-such-migration"))
	assert.Contains(t, errOut.String(), "unknown migration ID")
}
