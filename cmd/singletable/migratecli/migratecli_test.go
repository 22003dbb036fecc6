package migratecli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/cmd/singletable/migratecli"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/migrate"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// newLegacyTable creates the skills service's legacy users table (PK
// username, no SK) and fills it with n users; every 100th one has a
// username the service refuses, so the copy skips it.
func newLegacyTable(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	c := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("username"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("username"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, c, name)
	var batch []types.WriteRequest
	flush := func() {
		in := map[string][]types.WriteRequest{name: batch}
		for len(in) > 0 {
			out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in})
			require.NoError(t, err)
			in = out.UnprocessedItems
		}
		batch = nil
	}
	for i := range n {
		username := fmt.Sprintf("user%05d", i)
		if i%100 == 42 {
			username = fmt.Sprintf("Bad User %d", i)
		}
		created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"username":      &types.AttributeValueMemberS{Value: username},
			"name":          &types.AttributeValueMemberS{Value: fmt.Sprintf("User Number %d", i)},
			"password_hash": &types.AttributeValueMemberS{Value: fmt.Sprintf("$2a$10$%053d", i)},
			"created_at":    &types.AttributeValueMemberS{Value: created.Format(time.RFC3339)},
			"updated_at":    &types.AttributeValueMemberS{Value: created.Add(time.Hour).Format(time.RFC3339)},
		}}})
		if len(batch) == 25 {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	return name
}

// newStore makes a fresh skills table from the declarations.
func newStore(t *testing.T) *skills.Store {
	t.Helper()
	c := ddblocal.Shared(t).Client()
	st := skills.NewStore(c, ddblocal.TableName(t))
	require.NoError(t, st.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, c, st.Table.Name())
	return st
}

func TestMigrateCLI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 300)
	st := newStore(t)
	copyUsers := skills.LegacyUsersMigration(st, src)
	copyUsers.Description = "legacy users"
	m, err := migrate.New(st.Table,
		copyUsers,
		skills.UsersListingMigration(st),
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
	assert.Regexp(t, `000-legacy-users\s+copy\s+pending\s+0\s+0\s+0\s+0\s+-\s+0\s+-\s+legacy users`, out.String())
	assert.Regexp(t, `001-users-listing\s+backfill\s+pending`, out.String())

	require.Equal(t, migratecli.ExitOK, cli("run", "-dry-run", "000-legacy-users"), errOut.String())
	assert.Contains(t, out.String(), "000-legacy-users: dry run (nothing written)")
	assert.Contains(t, out.String(), "would write: 297 User put")

	require.Equal(t, migratecli.ExitOK, cli("run", "-segments", "2", "-writers", "4", "-wcu", "5000", "000-legacy-users"), errOut.String())
	assert.Contains(t, out.String(), "000-legacy-users: completed\n")
	assert.Contains(t, out.String(), "read 300 = written 297 + skipped 3 + failed 0 (scanned 300, 2 segments)")
	assert.Contains(t, out.String(), "writes: 297 User put")
	t.Logf("progress lines:\n%s", errOut.String())

	require.Equal(t, migratecli.ExitOK, cli("run", "000-legacy-users"))
	assert.Contains(t, out.String(), "already completed")

	require.Equal(t, migratecli.ExitOK, cli("verify", "000-legacy-users"), errOut.String())
	assert.Contains(t, out.String(), "User                 expected 297, found 297  ok")
	assert.Contains(t, out.String(), "\nOK\n")
	// Its progress lines, one per tick while it scans and compares. The
	// verification's scans wait for the first line, so one is printed
	// however slowly a loaded machine runs the ticker.
	progress := &firstLine{seen: make(chan struct{})}
	gated := skills.NewStore(scansAfter{Client: ddblocal.Shared(t).Client(), open: progress.seen}, st.Table.Name())
	gatedCopy := skills.LegacyUsersMigration(gated, src)
	gatedCopy.Description = copyUsers.Description
	mg, err := migrate.New(gated.Table, gatedCopy, skills.UsersListingMigration(gated))
	require.NoError(t, err)
	require.Equal(t, migratecli.ExitOK, migratecli.Main(ctx, mg, []string{"verify", "000-legacy-users"}, func(o *migratecli.Options) {
		o.Stdout, o.Stderr, o.LineInterval = io.Discard, progress, time.Millisecond
	}))
	assert.Regexp(t, `(?m)^verify 000-legacy-users: scanned \d+, compared \d+, \d+ items/s$`, progress.String())

	require.Equal(t, migratecli.ExitOK, cli("status"))
	assert.Regexp(t, `000-legacy-users\s+copy\s+completed\s+300\s+297\s+3\s+0\s+2/2\s+1\s+\d{4}-`, out.String())

	_, err = st.Users.Delete(ctx, skills.User{Username: "user00001"})
	require.NoError(t, err)
	require.Equal(t, migratecli.ExitFailure, cli("verify", "-sample", "1", "000-legacy-users"))
	assert.Contains(t, out.String(), "missing User {PK=USER#user00001 SK=PROFILE}")
	assert.Contains(t, out.String(), "DIFFERENCES FOUND")

	assert.Equal(t, migratecli.ExitUsage, cli())
	assert.Equal(t, migratecli.ExitUsage, cli("frobnicate"))
	assert.Equal(t, migratecli.ExitUsage, cli("run"))
	assert.Equal(t, migratecli.ExitUsage, cli("run", "-segments", "x", "000-legacy-users"))
	assert.Equal(t, migratecli.ExitFailure, cli("run", "no-such-migration"))
	assert.Contains(t, errOut.String(), "unknown migration ID")

	for _, help := range [][]string{{"--help"}, {"help"}, {"status", "-h"}, {"run", "--help"}, {"verify", "-help"}} {
		assert.Equal(t, migratecli.ExitOK, cli(help...), "%v", help)
		assert.Contains(t, out.String(), "migrate run [flags] ID", "%v prints the usage on standard output", help)
		assert.Empty(t, errOut.String(), "%v", help)
	}
}

// firstLine is a progress writer that closes seen at its first write.
type firstLine struct {
	bytes.Buffer
	once sync.Once
	seen chan struct{}
}

func (w *firstLine) Write(p []byte) (int, error) {
	defer w.once.Do(func() { close(w.seen) })
	return w.Buffer.Write(p)
}

// scansAfter is a client whose scans wait until open is closed.
type scansAfter struct {
	*dynamodb.Client
	open <-chan struct{}
}

func (c scansAfter) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	select {
	case <-c.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return c.Client.Scan(ctx, in, optFns...)
}
