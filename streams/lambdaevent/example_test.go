package lambdaevent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/streams"
	"github.com/singletable-go/singletable/streams/lambdaevent"
)

// Handler turns a Lambda function's DynamoDB stream event into typed
// changes. In a function: lambda.Start(lambdaevent.Handler(changes, fn)).
func ExampleHandler() {
	table := singletable.NewTable(nil, "accounts") // no request is sent here
	accounts := singletable.MustBind(table, Accounts)
	changes, err := streams.NewChanges(table, []*singletable.Target{accounts.Target()})
	if err != nil {
		panic(err)
	}
	handler := lambdaevent.Handler(changes, func(ctx context.Context, ch streams.Change) error {
		a := ch.Value().(Account)
		fmt.Println(ch.Kind, ch.Entity, a.Username, "ttl:", ch.TTL)
		return nil
	})

	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(`{"Records": [{
		"eventID": "7de3041dd709b024af6f29e4fa13d34c", "eventName": "REMOVE",
		"eventSource": "aws:dynamodb", "eventVersion": "1.1", "awsRegion": "us-east-1",
		"userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},
		"dynamodb": {
			"ApproximateCreationDateTime": 1736937000, "SequenceNumber": "111", "SizeBytes": 90,
			"StreamViewType": "NEW_AND_OLD_IMAGES",
			"Keys": {"PK": {"S": "ACCOUNT#bob"}, "SK": {"S": "PROFILE"}},
			"OldImage": {"PK": {"S": "ACCOUNT#bob"}, "SK": {"S": "PROFILE"}, "EntityType": {"S": "Account"},
				"Username": {"S": "bob"}, "Email": {"S": "bob@example.com"}, "Expires": {"N": "1736937000"}}
		}}]}`), &ev); err != nil {
		panic(err)
	}
	resp, err := handler(context.Background(), ev)
	fmt.Println(len(resp.BatchItemFailures), "failures", err)
	// Output:
	// REMOVE Account bob ttl: true
	// 0 failures <nil>
}

// users and skills are the repositories of the docs' function example.
type User struct {
	Username string `dynamodbav:"Username"`
}

type UserSkill struct {
	Username  string `dynamodbav:"Username"`
	SkillName string `dynamodbav:"SkillName"`
}

// A Lambda function of the table's stream (docs/streams.md): typed
// changes, the guards of expired items released, then counted. Compiled,
// not run: lambda.Start serves the Lambda runtime.
func Example_function() {
	table := singletable.NewTable(dynamodb.NewFromConfig(aws.Config{}), "glad-entities")
	users := singletable.MustBind(table, singletable.MustDefine(singletable.Schema[User]{Type: "User", PK: "USER#{Username}", SK: "PROFILE"}))
	skills := singletable.MustBind(table, singletable.MustDefine(singletable.Schema[UserSkill]{Type: "UserSkill", PK: "USER#{Username}", SK: "SKILL#{SkillName}"}))
	count := func(ctx context.Context, ch streams.Change) error { return nil }

	changes, _ := streams.NewChanges(table, []*singletable.Target{users.Target(), skills.Target()})
	lambda.Start(lambdaevent.Handler(changes, func(ctx context.Context, ch streams.Change) error {
		if _, err := changes.ReleaseExpiredGuards(ctx, ch); err != nil {
			return err
		}
		return count(ctx, ch)
	}))
}
