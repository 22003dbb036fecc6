package migrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// The skills service's migration: the legacy users table (PK username) copied into
// glad-entities, then GSI1 backfilled onto existing skills. Run it again and
// nothing happens; Verify compares the result with the transform's output.
func ExampleMigrator() {
	ctx := context.Background()
	client := ddblocal.Shared(nil).Client() // any *dynamodb.Client
	legacy := fmt.Sprintf("users-%d", time.Now().UnixNano())
	mustDo(client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &legacy,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("username"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("username"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}))
	defer client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &legacy})
	for _, name := range []string{"john", "mary", "gone"} {
		item := map[string]types.AttributeValue{
			"username": &types.AttributeValueMemberS{Value: name},
			"name":     &types.AttributeValueMemberS{Value: name},
		}
		if name == "gone" {
			item["deleted"] = &types.AttributeValueMemberBOOL{Value: true}
		}
		mustDo(client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &legacy, Item: item}))
	}

	table := singletable.NewTable(client, fmt.Sprintf("glad-entities-%d", time.Now().UnixNano()))
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	if err := table.CreateTable(ctx); err != nil {
		panic(err)
	}
	defer table.DeleteTable(ctx)

	m, err := migrate.New(table,
		migrate.Copy("000-users", migrate.Source{Table: legacy},
			migrate.TransformAs(func(u legacyUser) ([]singletable.WriteOp, error) {
				if u.Deleted {
					return nil, nil // skipped
				}
				return []singletable.WriteOp{users.PutOp(User{Username: u.Username, Name: u.Name})}, nil
			})),
		migrate.Backfill("001-skills-gsi1", skills),
	)
	if err != nil {
		panic(err)
	}
	rep, err := m.Run(ctx, "000-users")
	if err != nil {
		panic(err)
	}
	c := rep.Counts
	fmt.Printf("%s: read %d = written %d + skipped %d + failed %d\n", rep.State, c.Read, c.Written, c.Skipped, c.Failed)

	again, _ := m.Run(ctx, "000-users")
	fmt.Println("second run did nothing:", again.AlreadyCompleted)

	vr, _ := m.Verify(ctx, "000-users")
	fmt.Println("verified:", vr.OK(), vr.Found["User"], "users")

	john, _ := users.Get(ctx, User{Username: "john"})
	fmt.Println(john.Name)
	// Output:
	// completed: read 3 = written 2 + skipped 1 + failed 0
	// second run did nothing: true
	// verified: true 2 users
	// john
}

func mustDo[T any](_ T, err error) {
	if err != nil {
		panic(err)
	}
}
