package docs_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// The online shop's order items of adopting.md, "Fields held only in the
// key"; keyonly_index_test.go in the root tests the same design further.

// An order item as the shop's other service writes it:
// PK o#12345, SK p#12345, GSI1-PK p#12345, GSI1-SK 2020-06-21T19:18:00,
// GSI2-PK c#12345, GSI2-SK p#2020-06-21T19:18:00, Quantity, Price.
type OrderItem struct {
	OrderID    string    `dynamodbav:"-"`
	ProductID  string    `dynamodbav:"-"`
	CustomerID string    `dynamodbav:"-"`
	Date       time.Time `dynamodbav:"-"`
	Quantity   string
	Price      string
}

var OrderItems = singletable.MustDefine(singletable.Schema[OrderItem]{
	Type: "orderItem", PK: "o#{OrderID:raw}", SK: "p#{ProductID:raw}",
	KeyOnly: []string{"OrderID", "ProductID", "CustomerID", "Date"},
	Indexes: []singletable.IndexSchema[OrderItem]{
		{Name: "GSI1", PK: "p#{ProductID:raw}", PKAttr: "GSI1-PK", SK: "{Date:2006-01-02T15:04:05}", SKAttr: "GSI1-SK"},
		{Name: "GSI2", PK: "c#{CustomerID:raw}", PKAttr: "GSI2-PK", SK: "p#{Date:2006-01-02T15:04:05}", SKAttr: "GSI2-SK"},
	},
})

// Moving an order's time rewrites both index keys; the customer is read
// back from the stored GSI2-PK, so the item stays in the customer's
// date-range query.
func moveOrder(ctx context.Context, items *singletable.Repo[OrderItem], order, product string, at time.Time) (OrderItem, error) {
	return items.Update(OrderItem{OrderID: order, ProductID: product}).Set("Date", at).Run(ctx)
}

func customerProducts(ctx context.Context, items *singletable.Repo[OrderItem], customer string, from, to time.Time) ([]OrderItem, error) {
	return items.QueryIndex("GSI2", OrderItem{CustomerID: customer}).
		Between("Date", from, to).Collect(ctx)
}

// The order item of the worked example, written as the other service
// writes it, moved through the library and still found by its customer's
// date-range query.
func Example_adoptingKeyOnlyIndex() {
	ctx := context.Background()
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), ddblocal.UniqueTableName("adopting-keyonly"))
	items := singletable.MustBind(table, OrderItems)
	if err := table.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = table.DeleteTable(ctx) }()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	_, err := table.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table.Name()), Item: map[string]types.AttributeValue{
		"PK": s("o#12345"), "SK": s("p#12345"), "EntityType": s("orderItem"),
		"GSI1-PK": s("p#12345"), "GSI1-SK": s("2020-06-21T19:18:00"),
		"GSI2-PK": s("c#12345"), "GSI2-SK": s("p#2020-06-21T19:18:00"),
		"Quantity": s("2"), "Price": s("100"),
	}})
	if err != nil {
		log.Fatal(err)
	}
	moved, err := moveOrder(ctx, items, "12345", "12345", time.Date(2020, 6, 22, 8, 0, 0, 0, time.UTC))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(moved.CustomerID, moved.Date.Format(time.DateTime))
	june, err := customerProducts(ctx, items, "12345", time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 6, 30, 0, 0, 0, 0, time.UTC))
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range june {
		fmt.Println(it.OrderID, it.ProductID, it.Quantity, it.Date.Format(time.DateTime))
	}
	// Output:
	// 12345 2020-06-22 08:00:00
	// 12345 12345 2 2020-06-22 08:00:00
}
