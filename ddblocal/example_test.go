package ddblocal_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/ddblocal"
)

// A package's tests share one DynamoDB Local per test binary, started by
// TestMain, and give every test a fresh table so they can run in parallel.
// Set DYNAMODB_ENDPOINT to run them against a server that is already running.
func Example() {
	// main_test.go:
	testMain := func(m *testing.M) {
		os.Exit(ddblocal.Run(m))
	}

	// skills_test.go:
	testSkills := func(t *testing.T) {
		t.Parallel()
		client := ddblocal.Shared(t).Client()
		table := ddblocal.TableName(t) // e.g. "TestSkills-3f9c0e7a1b2d4c5e"
		_, err := client.CreateTable(t.Context(), &dynamodb.CreateTableInput{
			TableName: aws.String(table),
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
			},
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
			},
			BillingMode: types.BillingModePayPerRequest,
		})
		if err != nil {
			t.Fatal(err)
		}
		ddblocal.DeleteTableOnCleanup(t, client, table)
		// ... exercise the code under test against table ...
	}

	_, _ = testMain, testSkills
}

// Start and Stop run a server outside of tests, for a program or a benchmark
// harness; NewClient connects to any DynamoDB Local endpoint.
func ExampleStart() {
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer srv.Stop()

	out, err := srv.Client().ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(srv.Endpoint(), len(out.TableNames))
}
