package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// testdata/migration_ledger_interrupted.json holds the ledger items, as
// stored, of a copy of 500 legacy users (2 segments, pages of 50)
// interrupted after 150 items, written by the library before the engine
// moved to internal/migration. A run of this version resumes it from
// those checkpoints: the stored format of the ledger is unchanged.
func TestMigrateLedgerResumesEarlierRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 500)
	tbl, users, _ := usersTarget(t)
	c := ddblocal.Shared(t).Client()
	for _, item := range readDynamoJSON(t, "testdata/migration_ledger_interrupted.json") {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: ptr(tbl.Name()), Item: item})
		require.NoError(t, err)
	}
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	sts, err := m.Status(ctx)
	require.NoError(t, err)
	require.Len(t, sts, 1)
	assert.Equal(t, migrate.Interrupted, sts[0].State)
	assert.Equal(t, migrate.Counts{Scanned: 150, Read: 150, Written: 148, Skipped: 2}, sts[0].Counts)
	assert.Equal(t, 2, sts[0].Segments)
	assert.Equal(t, "context canceled", sts[0].LastError)

	// Other options than the first run's: the recorded segments win.
	rep, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) { o.Segments = 3; o.PageSize = 50 })
	require.NoError(t, err)
	assert.True(t, rep.Resumed)
	assert.Equal(t, migrate.Completed, rep.State)
	assert.Equal(t, 2, rep.Segments)
	assert.Equal(t, migrate.Counts{Scanned: 500, Read: 500, Written: 495, Skipped: 5}, rep.Counts)
	// Only the items after the checkpoints were written by this run: 350
	// read, 3 of them soft-deleted.
	assert.Equal(t, map[string]int64{"User put": 347}, rep.Ops)

	sts, err = m.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, migrate.Completed, sts[0].State)
	assert.Equal(t, 2, sts[0].Runs)
	assert.Equal(t, 2, sts[0].SegmentsDone)
}

// readDynamoJSON reads items in DynamoDB's JSON form (S, N, BOOL and M
// values: what ledger items hold).
func readDynamoJSON(t *testing.T, path string) []map[string]types.AttributeValue {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var raw []map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &raw))
	var conv func(map[string]json.RawMessage) types.AttributeValue
	conv = func(v map[string]json.RawMessage) types.AttributeValue {
		for typ, val := range v {
			switch typ {
			case "S", "N":
				var s string
				require.NoError(t, json.Unmarshal(val, &s))
				if typ == "N" {
					return &types.AttributeValueMemberN{Value: s}
				}
				return &types.AttributeValueMemberS{Value: s}
			case "BOOL":
				var x bool
				require.NoError(t, json.Unmarshal(val, &x))
				return &types.AttributeValueMemberBOOL{Value: x}
			case "M":
				var m map[string]map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(val, &m))
				out := map[string]types.AttributeValue{}
				for k, x := range m {
					out[k] = conv(x)
				}
				return &types.AttributeValueMemberM{Value: out}
			}
			panic(fmt.Sprintf("%s: unsupported attribute type %s", path, typ))
		}
		panic(path + ": empty attribute value")
	}
	items := make([]map[string]types.AttributeValue, len(raw))
	for i, r := range raw {
		items[i] = map[string]types.AttributeValue{}
		for k, v := range r {
			items[i][k] = conv(v)
		}
	}
	return items
}
