package singletabletest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/singletabletest"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

type Note struct {
	Owner string
	ID    int
	Text  string
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{
	Type: "Note",
	PK:   "OWNER#{Owner}",
	SK:   "NOTE#{ID}",
})

type Tag struct {
	Owner string
	Name  string
	Color string
}

var Tags = singletable.MustDefine(singletable.Schema[Tag]{
	Type:    "Tag",
	PK:      "OWNER#{Owner}",
	SK:      "TAG#{Name}",
	Indexes: []singletable.IndexSchema[Tag]{{Name: "GSI1", PK: "COLOR#{Color}", SK: "TAG#{Name}"}},
})

// NewTable creates the table with the indexes its entities declare, the
// repositories bound afterwards work against it, and the table is gone
// once the test has ended.
func TestNewTableCreatesAndDeletes(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		table := singletabletest.NewTable(t, Notes, Tags)
		name = table.Name()
		notes := singletable.MustBind(table, Notes)
		tags := singletable.MustBind(table, Tags)
		ctx := t.Context()

		out, err := table.Client().(*dynamodb.Client).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if gsis := out.Table.GlobalSecondaryIndexes; len(gsis) != 1 || aws.ToString(gsis[0].IndexName) != "GSI1" {
			t.Fatalf("table %s has indexes %v, want GSI1 from Tags", name, gsis)
		}
		if _, err := notes.Create(ctx, Note{Owner: "ann", ID: 1, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		if _, err := notes.Create(ctx, Note{Owner: "ann", ID: 1, Text: "again"}); !errors.Is(err, singletable.ErrAlreadyExists) {
			t.Fatalf("second Create: %v, want ErrAlreadyExists", err)
		}
		if _, err := tags.Create(ctx, Tag{Owner: "ann", Name: "home", Color: "red"}); err != nil {
			t.Fatal(err)
		}
		page, err := tags.QueryIndex("GSI1", Tag{Color: "red"}).Page(ctx)
		if err != nil || len(page.Items) != 1 || page.Items[0].Name != "home" {
			t.Fatalf("query GSI1 = %+v, %v; want the home tag", page.Items, err)
		}
	})
	_, err := ddblocal.Shared(t).Client().DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Fatalf("DescribeTable %s after the test: %v, want ResourceNotFoundException", name, err)
	}
}

// recordingTB records what Golden reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper()      {}
func (r *recordingTB) Name() string { return "TestDoc" }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestGolden: a current file passes, a stale one fails naming its first
// differing line and the command, and update rewrites it.
func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	require.NoError(t, os.WriteFile(path, []byte("# Doc\nold line\n"), 0o644))

	r := &recordingTB{TB: t}
	singletabletest.Golden(r, path, "# Doc\nold line\n", false)
	assert.Empty(t, r.errs)

	singletabletest.Golden(r, path, "# Doc\nnew line\n", false)
	require.Len(t, r.errs, 1)
	assert.Contains(t, r.errs[0], "is stale at line 2")
	assert.Contains(t, r.errs[0], `file: "old line"`)
	assert.Contains(t, r.errs[0], `now:  "new line"`)
	assert.Contains(t, r.errs[0], "go test -run TestDoc -update")

	r.errs = nil
	singletabletest.Golden(r, path, "# Doc\nnew line\n", true)
	assert.Empty(t, r.errs)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "# Doc\nnew line\n", string(b))
}
