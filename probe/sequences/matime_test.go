package sequences_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
)

type MAT struct {
	P    string     `dynamodbav:"P"`
	ID   string     `dynamodbav:"ID"`
	At   time.Time  `dynamodbav:"At"`
	Day  time.Time  `dynamodbav:"Day,date"`
	Ptr  *time.Time `dynamodbav:"Ptr,omitempty"`
	Unix time.Time  `dynamodbav:"Unix,unixtime"`
	Note string     `dynamodbav:"Note"`
}

var MATs = singletable.MustDefine(singletable.Schema[MAT]{Type: "MAT", PK: "M#{P}", SK: "I#{ID}",
	Indexes: []singletable.IndexSchema[MAT]{
		{Name: "MA1", PartitionAttrs: []string{"P"}, SortAttrs: []string{"At"}},
		{Name: "MA2", PartitionAttrs: []string{"P"}, SortAttrs: []string{"Day", "Ptr"}},
		{Name: "MA3", PartitionAttrs: []string{"P"}, SortAttrs: []string{"Unix"}},
	}})

// Every write path stores a multi-attribute index's time attributes in one
// form: Put, Update.Set, Upsert, Tx, BatchWrite.
func TestMultiAttrTimeFormsAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[MAT]
	tbl, plain := newTable(t, nil, func(tb *singletable.Table) { repo = singletable.MustBind(tb, MATs) })
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	v := MAT{P: "p", At: at, Day: day, Ptr: &at, Unix: at, Note: "x"}
	forms := map[string]map[string]string{}
	record := func(id string) {
		for _, raw := range rawScan(t, plain, tbl.Name()) {
			if s(raw["ID"]) == id {
				f := map[string]string{}
				for _, a := range []string{"At", "Day", "Ptr", "Unix"} {
					f[a] = show(raw[a])
				}
				forms[id] = f
			}
		}
	}
	v.ID = "put"
	if _, err := repo.Put(ctx, v); err != nil {
		t.Fatal(err)
	}
	record("put")
	v.ID = "upd"
	if _, err := repo.Put(ctx, MAT{P: "p", ID: "upd", Note: "y", At: at.Add(time.Hour), Day: day.AddDate(0, 0, 1), Unix: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Update(MAT{P: "p", ID: "upd"}).SetFrom(v, "At", "Day", "Ptr", "Unix").Run(ctx); err != nil {
		t.Fatal(err)
	}
	record("upd")
	if _, err := repo.Update(MAT{P: "p", ID: "ups"}).SetFrom(v, "At", "Day", "Ptr", "Unix", "Note").Upsert().Run(ctx); err != nil {
		t.Fatal(err)
	}
	record("ups")
	if _, err := repo.Update(MAT{P: "p", ID: "set"}).Set("At", at).Set("Day", day).Set("Ptr", &at).Set("Unix", at).Upsert().Run(ctx); err != nil {
		t.Fatal(err)
	}
	record("set")
	v.ID = "tx"
	if err := singletable.Tx(ctx, tbl, func(tx *singletable.Txn) error { repo.TxPut(tx, v); return nil }); err != nil {
		t.Fatal(err)
	}
	record("tx")
	v.ID = "batch"
	if err := singletable.BatchWrite(ctx, []singletable.WriteOp{repo.PutOp(v)}); err != nil {
		t.Fatal(err)
	}
	record("batch")
	for id, f := range forms {
		for a, form := range f {
			if form != forms["put"][a] {
				t.Errorf("%s stores %s as %s, Put as %s", id, a, form, forms["put"][a])
			}
		}
	}
	t.Logf("%v", forms["put"])
	// The index finds each of them by its time.
	got, err := repo.QueryIndex("MA1", MAT{P: "p", At: at}).Where(singletable.Eq, "At").Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Errorf("MA1 At=%v finds %d items, want 6", at, len(got))
	}
}

func TestMultiAttrTimeFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[MAT]
	_, _ = newTable(t, nil, func(tb *singletable.Table) { repo = singletable.MustBind(tb, MATs) })
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	if _, err := repo.Put(ctx, MAT{P: "p", ID: "1", At: at, Day: at.Truncate(24 * time.Hour), Unix: at}); err != nil {
		t.Fatal(err)
	}
	got, err := repo.Query(MAT{P: "p"}).Filter(expression.Name("At").Equal(expression.Value(at))).Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("Filter At = %v finds %d items", at, len(got))
	}
	_, err = repo.Update(MAT{P: "p", ID: "1"}).Set("Note", "n").If(expression.Name("At").Equal(expression.Value(at))).Run(ctx)
	if err != nil {
		t.Errorf("Update.If At = %v: %v", at, err)
	}
}
