// Command quickstart is the README's quick start: it starts DynamoDB Local,
// declares an entity, creates a table, writes, reads and queries.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
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

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	srv, err := ddblocal.Start(ctx, ddblocal.Options{}) // needs Java 17+; fetches DynamoDB Local once
	if err != nil {
		return err
	}
	defer srv.Stop()
	client := srv.Client() // or dynamodb.NewFromConfig(cfg) for AWS
	return quickStart(ctx, client, "notes", os.Stdout)
}

func quickStart(ctx context.Context, client singletable.Client, tableName string, out io.Writer) error {
	table := singletable.NewTable(client, tableName)
	notes := singletable.MustBind(table, Notes)
	if err := table.CreateTable(ctx); err != nil {
		return err
	}
	defer table.DeleteTable(ctx)

	for i, text := range []string{"buy milk", "call mum", "write docs"} {
		if _, err := notes.Create(ctx, Note{Owner: "ann", ID: i + 1, Text: text}); err != nil {
			return err
		}
	}
	_, err := notes.Create(ctx, Note{Owner: "ann", ID: 2, Text: "again"})
	fmt.Fprintln(out, errors.Is(err, singletable.ErrAlreadyExists)) // true

	n, err := notes.Get(ctx, Note{Owner: "ann", ID: 2})
	fmt.Fprintln(out, n.Text, err) // call mum <nil>

	page, err := notes.Query(Note{Owner: "ann"}).Where("ID", singletable.Ge, 2).Limit(10).Page(ctx)
	if err != nil {
		return err
	}
	for _, n := range page.Items {
		fmt.Fprintln(out, n.ID, n.Text) // 2 call mum, then 3 write docs
	}
	return nil
}
