// Package singletabletest gives a test a fresh table in DynamoDB Local with
// the entities it needs, created before the test and deleted after it:
//
//	func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
//
//	func TestNotes(t *testing.T) {
//		t.Parallel()
//		table := singletabletest.NewTable(t, Notes, Skills)
//		notes := singletable.MustBind(table, Notes)
//		// ...
//	}
//
// It is a package of its own, like net/http/httptest, because it imports
// both singletable and ddblocal, while the library's own internal tests
// (package singletable) import ddblocal: ddblocal stays free of the library
// so that those tests build. Tests in package singletable cannot import it
// for the same reason; they use ddblocal directly.
package singletabletest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// NewTable creates a table for t in the test binary's DynamoDB Local
// (ddblocal.Shared: started on first use, or DYNAMODB_ENDPOINT), with the
// key schema and indexes that entities declare, named after the test
// (ddblocal.TableName), and deletes it when t ends. It skips t, as
// ddblocal.Shared does, where DynamoDB Local cannot run.
//
// The table has singletable.NewTable's default options and comes back with
// no entities bound: bind those the test uses, as production code does, to
// get their repositories. A test that needs other table options does what
// NewTable does: ddblocal.Shared, ddblocal.TableName, create the table,
// ddblocal.DeleteTableOnCleanup.
func NewTable(t testing.TB, entities ...singletable.AnyEntity) *singletable.Table {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	decl := singletable.NewTable(client, name)
	if err := singletable.BindAll(decl, entities...); err != nil {
		t.Fatalf("singletabletest.NewTable: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := decl.CreateTable(ctx); err != nil {
		t.Fatalf("singletabletest.NewTable: create table %s: %v", name, err)
	}
	ddblocal.DeleteTableOnCleanup(t, client, name)
	return singletable.NewTable(client, name)
}

// Golden compares got with the file at path: a document generated from the
// declarations and kept beside the code, such as a catalog
// (catalog.Catalog.Markdown) or a cost report, so that it cannot drift
// from them. With update set (a test's -update flag) it writes got to path
// first. A difference fails t with the first line that differs and the
// command that brings the file up to date.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test -run %s -update to create it", err, t.Name())
	}
	if string(want) == got {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return strconv.Quote(ls[i])
		}
		return "end of file"
	}
	t.Errorf("%s is stale at line %d:\n  file: %s\n  now:  %s\nrun go test -run %s -update", path, i+1, line(wl), line(gl), t.Name())
}
