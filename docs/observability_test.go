package docs_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// The observability guide (observability.md): a hook installed on a
// table, requests named by access pattern, a Preview (which sends nothing,
// so nothing is observed), and the capacity a recorded request consumed
// turned into the cost report. It runs offline: the observation is the one
// the hook receives when the create is sent, with the capacity DynamoDB
// reports for a small item written to the table and one index.
func Example_guideObservability() {
	type Doc struct{ Team, ID, Owner string }
	ctx := context.Background()

	rec := catalog.NewRecorder()
	observed := 0
	table := singletable.NewTable(nil, "docs", func(o *singletable.TableOptions) {
		o.Observe = func(ctx context.Context, ob *singletable.Observation) {
			observed++
			rec.Observe(ctx, ob)
		}
	})
	docs := singletable.MustBind(table, singletable.MustDefine(singletable.Schema[Doc]{
		Type: "Doc", PK: "TEAM#{Team}", SK: "DOC#{ID}",
		Indexes: []singletable.IndexSchema[Doc]{{Name: "GSI1", PK: "OWNER#{Owner}", SK: "DOC#{ID}"}},
	}))

	ctx = singletable.WithPattern(ctx, "AP1")
	reqs, err := table.Preview(ctx, func(ctx context.Context) error {
		_, err := docs.Create(ctx, Doc{Team: "core", ID: "1", Owner: "ann"})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(reqs), "request previewed,", observed, "observed")

	rec.Observe(ctx, &singletable.Observation{
		Op: "PutItem", Table: "docs", Entity: "Doc", Pattern: singletable.PatternOf(ctx),
		Capacity: []types.ConsumedCapacity{{
			TableName: aws.String("docs"), CapacityUnits: aws.Float64(2),
			Table:                  &types.Capacity{CapacityUnits: aws.Float64(1)},
			GlobalSecondaryIndexes: map[string]types.Capacity{"GSI1": {CapacityUnits: aws.Float64(1)}},
		}},
	})

	cat := catalog.New(table, catalog.Item("AP1", "Create a document", catalog.OpCreate, docs))
	w, _ := rec.Measure("docs", catalog.Workload{Loads: []catalog.Load{{Pattern: "AP1", PerSecond: 100}}})
	report, err := cat.Cost(w, catalog.USEast1)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range report.Lines {
		fmt.Printf("%s %s: %g write units/s, measured %v, $%.2f a month on demand\n", l.Pattern, l.Index, l.Units, l.Measured, l.OnDemand)
	}
	// Output:
	// 1 request previewed, 0 observed
	// AP1 : 100 write units/s, measured true, $162.00 a month on demand
	// AP1 GSI1: 100 write units/s, measured true, $162.00 a month on demand
}
