package singletabletest_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
