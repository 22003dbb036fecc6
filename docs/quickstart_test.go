package docs_test

import (
	"context"
	"errors"
	"fmt"
	"log"

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

// The README's quick start: define an entity, bind it to a table, create
// the table, write, read and query.
func Example_quickStart() {
	ctx := context.Background()
	client := ddblocal.Shared(nil).Client() // or dynamodb.NewFromConfig(cfg) for AWS
	table := singletable.NewTable(client, "notes")
	notes := singletable.Bind(table, Notes)
	if err := table.Create(ctx); err != nil {
		log.Fatal(err)
	}
	defer table.Delete(ctx)

	for i, text := range []string{"buy milk", "call mum", "write docs"} {
		if err := notes.Create(ctx, Note{Owner: "ann", ID: i + 1, Text: text}); err != nil {
			log.Fatal(err)
		}
	}
	err := notes.Create(ctx, Note{Owner: "ann", ID: 2, Text: "again"})
	fmt.Println(errors.Is(err, singletable.ErrAlreadyExists))

	n, err := notes.Get(ctx, Note{Owner: "ann", ID: 2})
	fmt.Println(n.Text, err)

	page, err := notes.Query(Note{Owner: "ann", ID: 2}).Where(singletable.Ge, "ID").Limit(10).Page(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range page.Items {
		fmt.Println(n.ID, n.Text)
	}
	// Output:
	// true
	// call mum <nil>
	// 2 call mum
	// 3 write docs
}
