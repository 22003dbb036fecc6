package docs_test

import (
	"context"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// The declarations of adopting.md; foreign_test.go in the
// root runs the same designs against DynamoDB Local.

type ElectionCounts struct {
	UserCount     int       `dynamodbav:"user_count"`
	ElectionCount int       `dynamodbav:"election_count"`
	LastUpdated   time.Time `dynamodbav:"last_updated"`
}

var Counts = singletable.MustDefine(singletable.Schema[ElectionCounts]{
	Type: "COUNTS", PK: "METADATA", SK: "COUNTS", MatchKeys: true,
})

type UsageLog struct {
	User   string `dynamodbav:"username"`
	Day    string
	Action string
	Count  int `dynamodbav:"count"`
}

var UsageLogs = singletable.MustDefine(singletable.Schema[UsageLog]{
	Type: "UsageLog", PK: "USER#{User}", SK: "USAGE#{Day}#{Action}", KeyOnly: []string{"Day", "Action"},
})

type DeviceLog struct {
	DeviceID    string
	State       string
	Date        string
	EscalatedTo string
	Message     string
}

var DeviceLogs = singletable.MustDefine(singletable.Schema[DeviceLog]{
	Type: "DeviceLog", PK: "DEVICE#{DeviceID}", SK: "{State}#{Date}",
	Indexes: []singletable.IndexSchema[DeviceLog]{
		{Name: "GSI2", PK: "{EscalatedTo:raw}", PKAttr: "EscalatedTo", SK: "{State}#{Date}", SKAttr: "SK"},
		{Name: "Inverted", PK: "{State}#{Date}", PKAttr: "SK", SK: "DEVICE#{DeviceID}", SKAttr: "PK"},
	},
})

type ForeignRanking struct {
	Candidate string `json:"candidate_name"`
	Rank      int    `json:"rank"`
}

type ForeignBallot struct {
	Election     string           `dynamodbav:"election_name"`
	Voter        string           `dynamodbav:"voter_name"`
	Confirmation string           `dynamodbav:"confirmation"`
	WhenCast     time.Time        `dynamodbav:"when_cast,unix"`
	Rankings     []ForeignRanking `dynamodbav:"rankings,json"`
}

var _ = singletable.MustDefine(singletable.Schema[ForeignBallot]{
	Type: "BALLOT", PK: "ELECTION#{Election}", SK: "BALLOT#{Voter}",
})

// Receipt is the receipts of "Items a read cannot decode";
// undecodable_test.go in the root reads them against DynamoDB Local.
type Receipt struct {
	User   string    `dynamodbav:"user"`
	At     time.Time `dynamodbav:"at"`
	ID     string    `dynamodbav:"id"`
	Amount int       `dynamodbav:"amount"`
}

var Receipts = singletable.MustDefine(singletable.Schema[Receipt]{
	Type: "RECEIPT", PK: "USER#{User}", SK: "REC#{At:date}#{ID}", MatchKeys: true,
})

var _ = receiptsOf

func receiptsOf(ctx context.Context, receipts *singletable.Repo[Receipt], user string) ([]Receipt, error) {
	var out []Receipt
	q := receipts.Query(Receipt{User: user}).Limit(100)
	for cursor := ""; ; {
		page, err := q.After(cursor).Page(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		for _, de := range page.Skipped {
			log.Printf("receipt not read: %v", de) // the key and why, no values
		}
		if cursor = page.Cursor; cursor == "" {
			return out, nil
		}
	}
}

// Subscription is the recurring payments design of "Index projections";
// projections_test.go in the root runs it against DynamoDB Local.
type Subscription struct {
	AccountID       string            `dynamodbav:"-"`
	SubID           string            `dynamodbav:"-"`
	SKU             string            `dynamodbav:"SKU"`
	Email           string            `dynamodbav:"Email"`
	PaymentAmount   string            `dynamodbav:"PaymentAmount"`
	PaymentDetails  map[string]string `dynamodbav:"PaymentDetails"`
	LastPaymentDate time.Time         `dynamodbav:"LastPaymentDate,rfc3339milli"`
	NextPaymentDate time.Time         `dynamodbav:"NextPaymentDate,date"`
	CreatedDate     time.Time         `dynamodbav:"CreatedDate,rfc3339milli"`
}

var Subscriptions = singletable.MustDefine(singletable.Schema[Subscription]{
	Type: "Subscription", PK: "ACC#{AccountID}", SK: "SUB#{SubID}#SKU#{SKU}",
	MatchKeys: true, KeyOnly: []string{"AccountID", "SubID"},
	Indexes: []singletable.IndexSchema[Subscription]{
		{Name: "GSI-2", MultiAttribute: true, PartitionAttrs: []string{"NextPaymentDate"}, SortAttrs: []string{"LastPaymentDate"},
			Projection: types.ProjectionTypeInclude,
			Include:    []string{"PK", "SK", "Email", "PaymentAmount", "SKU", "PaymentDetails"}},
	},
})

var _ = duePayments

func duePayments(ctx context.Context, subs *singletable.Repo[Subscription], day time.Time) ([]Subscription, error) {
	var out []Subscription
	q := subs.QueryIndex("GSI-2", Subscription{NextPaymentDate: day}).Limit(100)
	for cursor := ""; ; {
		page, err := q.After(cursor).Page(ctx)
		if err != nil {
			return nil, err
		}
		// page.Unprojected is [CreatedDate]: the job does not need it.
		out = append(out, page.Items...)
		if cursor = page.Cursor; cursor == "" {
			return out, nil
		}
	}
}
