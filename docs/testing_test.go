package docs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/singletabletest"
)

// newSkillsTable gives each test its own table in the shared DynamoDB
// Local, deleted when the test ends, so tests can run in parallel.
func newSkillsTable(t *testing.T) (*singletable.Repo[User], *singletable.Repo[UserSkill]) {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	table := singletable.NewTable(client, name)
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	if err := table.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	ddblocal.DeleteTableOnCleanup(t, client, name)
	return users, skills
}

// TestListSkills gets its table from singletabletest.NewTable: created
// with the indexes Users and UserSkills declare, deleted after the test.
func TestListSkills(t *testing.T) {
	t.Parallel()
	table := singletabletest.NewTable(t, Users, UserSkills)
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	ctx := t.Context()
	if _, err := users.Create(ctx, User{Username: "john", Name: "John"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"go", "golang", "python"} {
		if _, err := skills.Create(ctx, UserSkill{Username: "john", SkillName: s, Level: "Expert"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := skills.Query(UserSkill{Username: "john"}).Page(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 3 || page.Items[0].SkillName != "go" || page.Items[1].SkillName != "golang" {
		t.Fatalf("john's skills = %+v, want go, golang, python in key order", page.Items)
	}
}

func TestRegisterTwice(t *testing.T) {
	t.Parallel()
	users, _ := newSkillsTable(t)
	ctx := t.Context()
	if _, err := users.Create(ctx, User{Username: "john", Name: "John"}); err != nil {
		t.Fatal(err)
	}
	_, err := users.Create(ctx, User{Username: "john", Name: "John again"})
	if !errors.Is(err, singletable.ErrAlreadyExists) {
		t.Fatalf("second Create: got %v, want ErrAlreadyExists", err)
	}
}

// Faults: a client whose requests go through ddbfault, which turns a share
// of them into throttling, 500s, dropped connections and unprocessed
// batch items, as real DynamoDB does. The SDK's retryer and the library's
// batch retries must absorb them.
func TestWritesSurviveThrottling(t *testing.T) {
	t.Parallel()
	faults := ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 1, Rate: 0.3})
	client := ddblocal.NewClient(ddblocal.Shared(t).Endpoint(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: faults}
	})
	name := ddblocal.TableName(t)
	table := singletable.NewTable(client, name)
	users := singletable.MustBind(table, Users)
	faults.SetEnabled(false) // create the table without faults
	if err := table.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	faults.SetEnabled(true)

	var ops []singletable.WriteOp
	for i := range 500 {
		ops = append(ops, users.PutOp(User{Username: fmt.Sprintf("user%03d", i), Name: "x"}))
	}
	if err := singletable.BatchWrite(t.Context(), ops); err != nil {
		t.Fatal(err) // a *BatchError would list, item by item, what failed
	}
	faults.SetEnabled(false)
	n, err := ddblocal.Shared(t).Client().Scan(t.Context(), &dynamodb.ScanInput{TableName: &name, Select: "COUNT"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Count != 500 {
		t.Fatalf("%d items written, want 500", n.Count)
	}
	if faults.Stats().Total() == 0 {
		t.Fatal("no fault was injected")
	}
}
