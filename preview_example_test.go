package singletable_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// offline is a Client that cannot send: calling any of its methods panics
// (its embedded Client is nil). The preview below sends nothing.
type offline struct{ singletable.Client }

// A preview shows the requests of a Create, an Update and a query page
// without sending them (none of these needs a read first).
func ExampleTable_Preview() {
	type Customer struct {
		ID   string
		Plan string
	}
	customers := singletable.MustDefine(singletable.Schema[Customer]{Type: "Customer", PK: "CUSTOMER#{ID}", SK: "PROFILE"})
	tbl := singletable.NewTable(offline{}, "app")
	repo := singletable.MustBind(tbl, customers)

	reqs, err := tbl.Preview(context.Background(), func(ctx context.Context) error {
		if _, err := repo.Create(ctx, Customer{ID: "c1", Plan: "free"}); err != nil {
			return err
		}
		if _, err := repo.Update(Customer{ID: "c1"}).Set("Plan", "pro").Run(ctx); err != nil {
			return err
		}
		_, err := repo.Query(Customer{ID: "c1"}).Page(ctx)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := func(av types.AttributeValue) string { return av.(*types.AttributeValueMemberS).Value }
	for _, r := range reqs {
		switch in := r.Input.(type) {
		case *dynamodb.PutItemInput:
			fmt.Println(r.Op, s(in.Item["PK"]), s(in.Item["Plan"]), "if", aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames)
		case *dynamodb.UpdateItemInput:
			fmt.Println(r.Op, s(in.Key["PK"]), aws.ToString(in.UpdateExpression), "if", aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames)
		case *dynamodb.QueryInput:
			fmt.Println(r.Op, aws.ToString(in.KeyConditionExpression), in.ExpressionAttributeNames)
		}
	}
	// Output:
	// PutItem CUSTOMER#c1 free if attribute_not_exists(#n0) map[#n0:PK]
	// UpdateItem CUSTOMER#c1 SET #n0 = :v0, #n1 = :v1 if (attribute_exists(#n2)) AND (#n0 = :v2) map[#n0:EntityType #n1:Plan #n2:PK]
	// Query #n0 = :v0 AND #n1 = :v1 map[#n0:PK #n1:SK #n2:EntityType]
}
