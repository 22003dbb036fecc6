package skills_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/streams"
)

// itemsByEntity counts the table's items per entity type with a raw Scan.
func itemsByEntity(t *testing.T, client *dynamodb.Client, table string) map[string]int {
	t.Helper()
	out := map[string]int{}
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if s, ok := it["EntityType"].(*types.AttributeValueMemberS); ok {
				out[s.Value]++
			}
		}
	}
	return out
}

// The per-entity counts kept from the stream equal the items in the
// table: users registered, skills added and removed through the service,
// counted by a stream reader that stops half way and a second one that
// resumes from its checkpoint.
func TestCountsFromStreamEqualItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := ddblocal.Shared(t)
	client := srv.Client()
	name := ddblocal.TableName(t)
	st := skills.NewStore(client, name)
	require.NoError(t, st.Table.CreateTable(ctx, func(o *singletable.CreateTableOptions) {
		o.Stream = types.StreamViewTypeNewAndOldImages
	}))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	svc := skills.NewService(st)
	svc.PasswordIterations = 1000
	sc := srv.StreamsClient()
	arn, err := streams.LatestARN(ctx, sc, name)
	require.NoError(t, err)
	changes := st.Changes()
	count := func(r *streams.Reader) {
		require.NoError(t, r.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
			return changes.Handle(ctx, recs, st.CountChange)
		}))
	}
	check := func() {
		items := itemsByEntity(t, client, name)
		counts, err := st.ItemCounts(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"User": items["User"], "UserSkill": items["UserSkill"]}, counts)
	}

	level := "Expert"
	for i := range 6 {
		u := fmt.Sprintf("user%d", i)
		_, err := svc.Register(ctx, u, "User "+u, "correct horse battery")
		require.NoError(t, err)
		for _, sk := range []string{"go", "sql", "rust"}[:1+i%3] {
			_, err := svc.AddSkill(ctx, u, sk, skills.SkillInput{Level: &level})
			require.NoError(t, err)
		}
	}
	first := streams.NewReader(sc, arn)
	count(first)
	check()

	// More changes: removals, updates (no change of count), new skills.
	_, err = svc.RemoveSkill(ctx, "user2", "rust")
	require.NoError(t, err)
	_, err = svc.RemoveSkill(ctx, "user1", "go")
	require.NoError(t, err)
	_, err = svc.UpdateProfile(ctx, "user3", "Renamed")
	require.NoError(t, err)
	_, err = svc.AddSkill(ctx, "user0", "python", skills.SkillInput{Level: &level})
	require.NoError(t, err)
	_, err = svc.Register(ctx, "late", "Late Comer", "correct horse battery")
	require.NoError(t, err)

	resumed := streams.NewReader(sc, arn, func(o *streams.Options) { o.From = first.Checkpoint() })
	count(resumed)
	check()
	counts, err := st.ItemCounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"User": 7, "UserSkill": 11}, counts)
}
