package testcontainers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	ddbtc "github.com/singletable-go/singletable/ddblocal/testcontainers"
)

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

// The library works against DynamoDB Local in a container as it does
// against the one ddblocal runs with Java: create a table, write, read back,
// and the write plan's conditions are enforced by the server.
func TestLibraryAgainstContainer(t *testing.T) {
	srv := ddbtc.ForTest(t) // skips with the reason where there is no Docker
	ctx := t.Context()
	table := singletable.NewTable(srv.Client(), ddblocal.TableName(t))
	notes := singletable.MustBind(table, Notes)
	if err := table.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), table.Name())

	if _, err := notes.Create(ctx, Note{Owner: "ann", ID: 1, Text: "buy milk"}); err != nil {
		t.Fatal(err)
	}
	if _, err := notes.Create(ctx, Note{Owner: "ann", ID: 1, Text: "again"}); !errors.Is(err, singletable.ErrAlreadyExists) {
		t.Fatalf("second Create: %v, want ErrAlreadyExists", err)
	}
	got, err := notes.Get(ctx, Note{Owner: "ann", ID: 1})
	if err != nil || got.Text != "buy milk" {
		t.Fatalf("Get = %+v, %v; want the note", got, err)
	}
	out, err := srv.Client().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "OWNER#ann"},
			"SK": &types.AttributeValueMemberS{Value: "NOTE#1"},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("raw GetItem: %v, item %v; want the stored item under the rendered keys", err, out)
	}
}

// Without a Docker engine Start says so, and the error is
// ddblocal.ErrUnavailable, which ForTest turns into a skip. With one, Start
// and Stop work from a plain context, outside any test helper.
func TestStartAndStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), ddblocal.DefaultStartTimeout)
	defer cancel()
	srv, err := ddbtc.Start(ctx, ddbtc.Options{})
	if err != nil {
		if !errors.Is(err, ddblocal.ErrUnavailable) {
			t.Fatalf("Start: %v; without Docker want an error wrapping ddblocal.ErrUnavailable", err)
		}
		t.Logf("no Docker here, as expected from the error: %v", err)
		return
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := srv.Client().ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables on %s: %v", srv.Endpoint(), err)
	}
}
