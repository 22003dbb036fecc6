package migrate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/rawitems"
	"github.com/singletable-go/singletable/migrate"
)

// ForeignPatron is a member record another service writes without
// entity_type; the Go service adopts it with MatchKeys, an email guard and
// a sparse listing index.
type ForeignPatron struct {
	Branch string `dynamodbav:"branch"`
	ID     string `dynamodbav:"patron_id"`
	Email  string `dynamodbav:"email"`
	Name   string `dynamodbav:"name"`
	Status string `dynamodbav:"status"`
}

var ForeignPatrons = singletable.MustDefine(singletable.Schema[ForeignPatron]{
	Type: "PATRON", PK: "BRANCH#{Branch:raw}", SK: "PATRON#{ID:raw}", MatchKeys: true,
	Unique: []singletable.Unique{{Fields: []string{"Email"}}},
	Indexes: []singletable.IndexSchema[ForeignPatron]{{
		Name: "GSI1", PK: "STATUS#{Status:raw}", SK: "{Name:raw}",
		When: func(p ForeignPatron) bool { return p.Status != "closed" }, WhenFields: []string{"Status"},
	}},
})

// The migrations that adopt another service's items (guards, backfill,
// and their Verify) select an entity matching keys by its query filter:
// its untyped items whose keys parse are migrated, untyped items of
// another shape are not read.
func TestForeignUntypedMigrations(t *testing.T) {
	ctx := context.Background()
	var patrons *singletable.Repo[ForeignPatron]
	tbl := newTable(t, func(tbl *singletable.Table) { patrons = singletable.MustBind(tbl, ForeignPatrons) },
		func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" })
	patron := func(id, status, email string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": sAV("BRANCH#main"), "SK": sAV("PATRON#" + id),
			"name": sAV("n" + id), "status": sAV(status), "email": sAV(email), "py_only": sAV("kept")}
	}
	rawPut(t, tbl, patron("a", "active", "a@x"))
	rawPut(t, tbl, patron("b", "active", "b@x"))
	rawPut(t, tbl, patron("c", "closed", "c@x"))
	rawPut(t, tbl, patron("d", "active", "a@x")) // the same email as a
	// Untyped items of another shape are not the entity's.
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("BRANCH#main"), "SK": sAV("PATRONAGE#z"), "email": sAV("z@x")})
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("BRANCH#main"), "SK": sAV("PATRON#x"), "entity_type": sAV("OTHER"), "email": sAV("x@x"), "status": sAV("active")})

	m, err := migrate.New(tbl, migrate.UniqueGuards("guards", patrons), migrate.Backfill("listing", patrons))
	if err != nil {
		t.Fatal(err)
	}
	vr, err := m.Verify(ctx, "listing")
	if err != nil {
		t.Fatal(err)
	}
	if vr.SourceItems != 4 || vr.Different != 3 {
		t.Errorf("verify before the backfill: %d items, %d different; want 4, 3", vr.SourceItems, vr.Different)
	}
	rep, err := m.Run(ctx, "guards")
	if !errors.Is(err, singletable.ErrAlreadyExists) {
		t.Fatalf("guards: %v, want the duplicate a@x reported", err)
	}
	if rep.Counts.Read != 4 || rep.Counts.Written != 3 || rep.Counts.Failed != 1 {
		t.Errorf("guards counts %+v, want 4 read, 3 written (a or d, b, c), 1 failed (the other of a and d)", rep.Counts)
	}
	rep, err = m.Run(ctx, "listing")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Read != 4 || rep.Counts.Written != 3 || rep.Counts.Skipped != 1 {
		t.Errorf("backfill counts %+v, want 4 read, 3 written, 1 skipped (closed)", rep.Counts)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		raw := rawGet(t, tbl, "BRANCH#main", "PATRON#"+id)
		if raw["py_only"] == nil || raw["email"] == nil {
			t.Errorf("%s: the other service's attributes were lost: %v", id, raw)
		}
		pk, _ := raw["GSI1PK"].(*types.AttributeValueMemberS)
		if closed := id == "c"; closed != (pk == nil) || !closed && pk.Value != "STATUS#active" {
			t.Errorf("%s: GSI1PK %v after the backfill", id, raw["GSI1PK"])
		}
	}
	for _, sk := range []string{"PATRONAGE#z", "PATRON#x"} {
		if raw := rawGet(t, tbl, "BRANCH#main", sk); raw["GSI1PK"] != nil {
			t.Errorf("%s is not a patron but was backfilled", sk)
		}
	}
	if vr, err := m.Verify(ctx, "listing"); err != nil || vr.Different != 0 || vr.SourceItems != 4 {
		t.Errorf("verify after the backfill: %+v %v", vr, err)
	}
	// The guards hold: b@x is taken, and the items the migration claimed
	// for release theirs on delete.
	if _, err := patrons.Create(ctx, ForeignPatron{Branch: "main", ID: "e", Email: "b@x"}); !errors.Is(err, singletable.ErrAlreadyExists) {
		t.Errorf("create with b@x, which the migration guarded: %v", err)
	}
	if _, err := patrons.Delete(ctx, ForeignPatron{Branch: "main", ID: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := patrons.Create(ctx, ForeignPatron{Branch: "main", ID: "e", Email: "b@x"}); err != nil {
		t.Errorf("create with b@x once released: %v", err)
	}
}

// The other service's items, written and read with the SDK alone
// (internal/rawitems), as the root package's tests do.
var (
	sAV    = rawitems.S
	rawPut = rawitems.Put
	rawGet = rawitems.Get
)
