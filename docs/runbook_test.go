package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/migrate"
)

// Runbook: create a table. CreateTableInput is the exact CreateTable
// request, for infrastructure code (CDK, Terraform, CloudFormation) to
// mirror, or to send with Table.CreateTable.
func Example_runbookCreateTableInput() {
	table := singletable.NewTable(nil, "glad-entities")
	singletable.MustBind(table, Users)
	singletable.MustBind(table, UserSkills)
	in := table.CreateTableInput()
	for _, g := range in.GlobalSecondaryIndexes {
		fmt.Print(aws.ToString(g.IndexName), ":")
		for _, k := range g.KeySchema {
			fmt.Print(" ", aws.ToString(k.AttributeName), " ", k.KeyType)
		}
		fmt.Println()
	}
	fmt.Println(in.BillingMode)
	// Output:
	// GSI1: GSI1PK HASH GSI1SK RANGE
	// GSI2: SkillName HASH ProficiencyLevel HASH YearsOfExperience RANGE LastUsedDate RANGE
	// PAY_PER_REQUEST
}

// Runbook: a table with an index no entity declares (one another
// service queries), named in the options with its key attributes; Check
// given the same options checks it too.
func withAuditIndex(o *singletable.CreateTableOptions) {
	o.Indexes = []describe.Index{{Name: "GSI3",
		Partition:  []describe.KeyAttribute{{Name: "GSI3PK"}},
		Sort:       []describe.KeyAttribute{{Name: "GSI3SK"}},
		Projection: types.ProjectionTypeKeysOnly}}
}

func createWithAuditIndex(ctx context.Context, table *singletable.Table) error {
	if err := table.CreateTable(ctx, withAuditIndex); err != nil {
		return err
	}
	return table.Check(ctx, withAuditIndex)
}

func Example_runbookCreateTableExtraIndex() {
	table := singletable.NewTable(nil, "glad-entities")
	singletable.MustBind(table, Users)
	singletable.MustBind(table, UserSkills)
	for _, g := range table.CreateTableInput(withAuditIndex).GlobalSecondaryIndexes {
		fmt.Print(aws.ToString(g.IndexName), ":")
		for _, k := range g.KeySchema {
			fmt.Print(" ", aws.ToString(k.AttributeName), " ", k.KeyType)
		}
		fmt.Println("", g.Projection.ProjectionType)
	}
	// Output:
	// GSI1: GSI1PK HASH GSI1SK RANGE ALL
	// GSI2: SkillName HASH ProficiencyLevel HASH YearsOfExperience RANGE LastUsedDate RANGE ALL
	// GSI3: GSI3PK HASH GSI3SK RANGE KEYS_ONLY
}

// writeCreateTableJSON writes the request as JSON for the AWS CLI:
// aws dynamodb create-table --cli-input-json file://table.json
func writeCreateTableJSON(table *singletable.Table, path string) error {
	b, err := json.MarshalIndent(table.CreateTableInput(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Runbook: at start-up, check that the live table matches the
// declarations (key schema, every index and its key attributes).
func checkAtStartup(ctx context.Context, table *singletable.Table) {
	if err := table.Check(ctx); err != nil {
		log.Fatalf("table does not match the code: %v", err)
	}
}

// Runbook: add an index to an entity that already has items, then
// backfill it. Once the new declaration is deployed (and the index
// created in the table), new writes carry the index keys; the backfill
// rewrites the old items, conditionally, so concurrent writes are not lost.
func backfillGSI1(ctx context.Context, table *singletable.Table, skills *singletable.Repo[UserSkill]) error {
	m, err := migrate.New(table, migrate.Backfill("002-skills-gsi1", skills))
	if err != nil {
		return err
	}
	rep, err := m.Run(ctx, "002-skills-gsi1", func(o *migrate.RunOptions) {
		o.WCU = 200 // leave capacity for live traffic
		o.Progress = func(p migrate.Progress) {
			log.Printf("%s: %d read, %d written, ETA %s", p.ID, p.Read, p.Written, p.ETA)
		}
	})
	if err != nil {
		return err // a re-run resumes from the ledger's checkpoints
	}
	log.Printf("rewrote %d of %d items", rep.Counts.Written, rep.Counts.Read)
	return nil
}

// Runbook: throttling. The SDK retries throttled requests; give it more
// attempts and a longer backoff ceiling for bursty workloads.
func productionClient(ctx context.Context) (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 8
			o.MaxBackoff = 5 * time.Second
		})
	}))
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg), nil
}

// Runbook: batch writes retry unprocessed items with backoff; what still
// fails is returned item by item, never dropped.
func importUsers(ctx context.Context, users *singletable.Repo[User], list []User) error {
	ops := make([]singletable.WriteOp, len(list))
	for i, u := range list {
		ops[i] = users.PutOp(u)
	}
	err := singletable.BatchWrite(ctx, ops, func(o *singletable.BatchOptions) {
		o.Concurrency = 2
		o.MaxAttempts = 15
		o.Backoff = singletable.Backoff{Base: 50 * time.Millisecond, Max: 5 * time.Second}
	})
	var be *singletable.BatchError
	if errors.As(err, &be) {
		for _, f := range be.Failed {
			log.Printf("user #%d not written: %v", f.Index, f.Err)
		}
	}
	return err
}

// isThrottled tells throttling apart from other failures, e.g. to shed
// load in a handler.
func isThrottled(err error) bool {
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	return errors.As(err, &pte) || errors.As(err, &rle)
}

// The runbook's functions are exercised here against DynamoDB Local.
func Example_runbook() {
	ctx := context.Background()
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), ddblocal.UniqueTableName("runbook"))
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	if err := createWithAuditIndex(ctx, table); err != nil {
		log.Fatal(err)
	}
	defer table.DeleteTable(ctx)
	checkAtStartup(ctx, table)
	if err := importUsers(ctx, users, []User{{Username: "ann", Name: "Ann"}, {Username: "ben", Name: "Ben"}}); err != nil {
		log.Fatal(err)
	}
	log.SetOutput(discard{})
	defer log.SetOutput(os.Stderr)
	fmt.Println(backfillGSI1(ctx, table, skills))
	path := os.TempDir() + "/runbook-table.json"
	fmt.Println(writeCreateTableJSON(table, path), os.Remove(path))
	fmt.Println(isThrottled(&types.ProvisionedThroughputExceededException{}), isThrottled(singletable.ErrNotFound))
	_ = productionClient
	// Output:
	// <nil>
	// <nil> <nil>
	// true false
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
