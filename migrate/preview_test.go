package migrate_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// countingTransport counts the requests that reach DynamoDB Local.
type countingTransport struct{ sent *atomic.Int64 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.sent.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// A migration inside a Preview sends nothing: Run, Verify and Status fail
// without a request, and the table stays as it was (the root package's
// TestPreviewSendsNothingElse shows the same of table administration).
func TestMigrationNotPreviewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sent atomic.Int64
	client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: countingTransport{&sent}} })
	tbl, _ := usersTargetVia(t, client)
	var skills *singletable.Repo[UserSkill]
	tbl = singletable.NewTable(client, tbl.Name())
	singletable.MustBind(tbl, Users)
	skills = singletable.MustBind(tbl, UserSkills)
	seedSkills(t, tbl, userSkillsNoIndex, 20)
	m, err := migrate.New(tbl, migrate.Backfill("001-skills-gsi1", skills))
	require.NoError(t, err)
	before := contents(t, tbl)

	sent.Store(0)
	reqs, err := tbl.Preview(ctx, func(ctx context.Context) error {
		_, err := m.Run(ctx, "001-skills-gsi1")
		return err
	})
	require.ErrorContains(t, err, "migrations are not previewed")
	require.Empty(t, reqs)
	_, err = tbl.Preview(ctx, func(ctx context.Context) error {
		_, err := m.Verify(ctx, "001-skills-gsi1")
		return err
	})
	require.ErrorContains(t, err, "migrations are not previewed")
	_, err = tbl.Preview(ctx, func(ctx context.Context) error {
		_, err := m.Status(ctx)
		return err
	})
	require.ErrorContains(t, err, "migrations are not previewed")
	require.Zero(t, sent.Load(), "requests sent")
	require.Equal(t, before, contents(t, tbl))
}
