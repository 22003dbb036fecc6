package docs_test

import (
	"context"
	"time"

	"github.com/singletable-go/singletable"
)

// The online shop's order items of adopting.md, "Fields held only in the
// key"; keyonly_index_test.go in the root runs the same design against
// DynamoDB Local.

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
	return items.QueryIndex("GSI2", OrderItem{CustomerID: customer, Date: from}).
		Between(OrderItem{Date: to}, "Date").Collect(ctx)
}
