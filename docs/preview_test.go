package docs_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
)

func Example_guidePreview() {
	ctx := context.Background()
	table, _, skills, done := guideTable("guide-preview")
	defer done()

	// Show what a transaction moving a skill to another level would send,
	// without sending it.
	reqs, err := table.Preview(ctx, func(ctx context.Context) error {
		return singletable.Tx(ctx, []singletable.WriteOp{
			skills.CreateOp(UserSkill{Username: "john", SkillName: "rust", Level: "Beginner"}),
			skills.Update(UserSkill{Username: "john", SkillName: "go"}).Set("Level", "Expert").Op(),
		})
	})
	fmt.Println(err)
	for _, r := range reqs {
		in := r.Input.(*dynamodb.TransactWriteItemsInput)
		fmt.Println(r.Op, r.Sent, len(in.TransactItems), "items:")
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				fmt.Println("  Put if", aws.ToString(it.Put.ConditionExpression))
			case it.Update != nil:
				fmt.Println("  Update", aws.ToString(it.Update.UpdateExpression), it.Update.ExpressionAttributeNames)
			}
		}
	}
	n, err := skills.Query(UserSkill{Username: "john"}).Count(ctx)
	fmt.Println(n, err) // nothing was written
	// Output:
	// <nil>
	// TransactWriteItems false 2 items:
	//   Put if attribute_not_exists(#n0)
	//   Update SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3 map[#n0:EntityType #n1:ProficiencyLevel #n2:GSI1PK #n3:GSI1SK #n4:PK]
	// 0 <nil>
}
