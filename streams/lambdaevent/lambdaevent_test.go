package lambdaevent_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/streams"
	"github.com/singletable-go/singletable/streams/lambdaevent"
)

var update = flag.Bool("update", false, "record testdata/dynamodb_event.json again from DynamoDB Local's stream")

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// Account has a unique email and a TTL.
type Account struct {
	Username string    `dynamodbav:"Username"`
	Email    string    `dynamodbav:"Email,omitempty"`
	Name     string    `dynamodbav:"Name"`
	Expires  time.Time `dynamodbav:"Expires"`
}

var Accounts = singletable.MustDefine(singletable.Schema[Account]{
	Type: "Account", PK: "ACCOUNT#{Username}", SK: "PROFILE",
	Unique: []singletable.Unique{{Fields: []string{"Email"}}}, TTL: "Expires",
})

const eventFile = "testdata/dynamodb_event.json"

// expiry is bob's TTL in the recorded event.
var expiry = time.Unix(1736937000, 0).UTC() // 2025-01-15T10:30:00Z, as a TTL decodes

// The recorded event: the records DynamoDB Local's stream held after
// these writes through the library, in the JSON a Lambda function
// receives. DynamoDB Local does not expire items, so bob's removal is a
// DeleteItem of the item alone (as TTL does: its guard stays), and the
// recording gives that record the identity AWS documents for TTL
// deletions.
func record(t *testing.T) {
	ctx := context.Background()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	accounts := singletable.MustBind(tbl, Accounts)
	require.NoError(t, tbl.CreateTable(ctx, func(o *singletable.CreateTableOptions) { o.Stream = ddbtypes.StreamViewTypeNewAndOldImages }))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com", Name: "Ann"})
	require.NoError(t, err)
	_, err = accounts.Update(Account{Username: "ann"}).Set("Name", "Anna").Run(ctx)
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "bob", Email: "bob@example.com", Name: "Bob", Expires: expiry})
	require.NoError(t, err)
	_, err = srv.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNT#bob"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "PROFILE"}}})
	require.NoError(t, err)
	_, err = accounts.Delete(ctx, Account{Username: "ann"})
	require.NoError(t, err)

	sc := srv.StreamsClient()
	arn, err := streams.LatestARN(ctx, sc, name)
	require.NoError(t, err)
	desc, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	require.NoError(t, err)
	require.Len(t, desc.StreamDescription.Shards, 1)
	it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn,
		ShardId: desc.StreamDescription.Shards[0].ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	require.NoError(t, err)
	out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	require.NoError(t, err)
	var ev events.DynamoDBEvent
	for _, r := range out.Records {
		d := r.Dynamodb
		er := events.DynamoDBEventRecord{
			AWSRegion: aws.ToString(r.AwsRegion), EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
			EventSource: aws.ToString(r.EventSource), EventVersion: aws.ToString(r.EventVersion), EventSourceArn: arn,
			Change: events.DynamoDBStreamRecord{
				ApproximateCreationDateTime: events.SecondsEpochTime{Time: aws.ToTime(d.ApproximateCreationDateTime)},
				Keys:                        toLambda(d.Keys), NewImage: toLambda(d.NewImage), OldImage: toLambda(d.OldImage),
				SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes), StreamViewType: string(d.StreamViewType),
			},
		}
		if r.EventName == types.OperationTypeRemove && d.Keys["PK"].(*types.AttributeValueMemberS).Value == "ACCOUNT#bob" {
			er.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
		}
		ev.Records = append(ev.Records, er)
	}
	b, err := json.MarshalIndent(ev, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(eventFile), 0o755))
	require.NoError(t, os.WriteFile(eventFile, append(b, '\n'), 0o644))
}

func toLambda(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if m == nil {
		return nil
	}
	out := map[string]events.DynamoDBAttributeValue{}
	for k, v := range m {
		out[k] = toLambdaValue(v)
	}
	return out
}

func toLambdaValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toLambdaValue(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(toLambda(v.Value))
	}
	panic("unknown attribute type")
}

func loadEvent(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	if *update {
		record(t)
	}
	b, err := os.ReadFile(eventFile)
	require.NoError(t, err)
	var ev events.DynamoDBEvent
	require.NoError(t, json.Unmarshal(b, &ev))
	return ev
}

type seen struct {
	kind     streams.ChangeKind
	old, new any
	ttl      bool
}

// The recorded event decodes into one typed change per change of an
// entity's item, guard items skipped, bob's expiry recognised as TTL.
func TestRecordedEvent(t *testing.T) {
	ev := loadEvent(t)
	tbl := singletable.NewTable(nil, "glad")
	accounts := singletable.MustBind(tbl, Accounts)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{accounts.Target()})
	require.NoError(t, err)
	var got []seen
	resp, err := lambdaevent.Handler(changes, func(_ context.Context, ch streams.Change) error {
		got = append(got, seen{ch.Kind, ch.Old, ch.New, ch.TTL})
		return nil
	})(context.Background(), ev)
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	ann := Account{Username: "ann", Email: "ann@example.com", Name: "Ann"}
	anna := Account{Username: "ann", Email: "ann@example.com", Name: "Anna"}
	bob := Account{Username: "bob", Email: "bob@example.com", Name: "Bob", Expires: expiry}
	assert.Equal(t, []seen{
		{streams.ChangeInsert, nil, ann, false},
		{streams.ChangeModify, ann, anna, false},
		{streams.ChangeInsert, nil, bob, false},
		{streams.ChangeRemove, bob, nil, true},
		{streams.ChangeRemove, anna, nil, false},
	}, got)

	recs, err := lambdaevent.Records(ev)
	require.NoError(t, err)
	assert.Len(t, recs, len(ev.Records), "guards included: Records converts every record")
	assert.Greater(t, len(recs), len(got))
}

// A change that fails is the batch item failure: its sequence number,
// after the changes before it were handled once.
func TestHandlerReportsFailedRecord(t *testing.T) {
	ev := loadEvent(t)
	tbl := singletable.NewTable(nil, "glad")
	accounts := singletable.MustBind(tbl, Accounts)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{accounts.Target()})
	require.NoError(t, err)
	n := 0
	var failed string
	resp, err := lambdaevent.Handler(changes, func(_ context.Context, ch streams.Change) error {
		if n++; n == 3 {
			failed = ch.Record.SequenceNumber
			return errors.New("index unavailable")
		}
		return nil
	})(context.Background(), ev)
	require.NoError(t, err)
	assert.Equal(t, []events.DynamoDBBatchItemFailure{{ItemIdentifier: failed}}, resp.BatchItemFailures)
	assert.Equal(t, 3, n)
}

// The Lambda path against DynamoDB Local: a handler releasing expired
// guards frees bob's email when it gets the recorded TTL record.
func TestHandlerReleasesExpiredGuards(t *testing.T) {
	ev := loadEvent(t)
	ctx := context.Background()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	accounts := singletable.MustBind(tbl, Accounts)
	require.NoError(t, tbl.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	_, err := accounts.Create(ctx, Account{Username: "bob", Email: "bob@example.com", Expires: expiry})
	require.NoError(t, err)
	_, err = srv.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "ACCOUNT#bob"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "PROFILE"}}})
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "bobby", Email: "bob@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)

	changes, err := streams.NewChanges(tbl, []*singletable.Target{accounts.Target()})
	require.NoError(t, err)
	released := 0
	resp, err := lambdaevent.Handler(changes, func(ctx context.Context, ch streams.Change) error {
		n, err := changes.ReleaseExpiredGuards(ctx, ch)
		released += n
		return err
	})(ctx, ev)
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, 1, released)
	_, err = accounts.Create(ctx, Account{Username: "bobby", Email: "bob@example.com"})
	require.NoError(t, err)
}
