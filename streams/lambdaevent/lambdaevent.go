// Package lambdaevent turns the DynamoDB stream events a Lambda function
// receives (aws-lambda-go's events.DynamoDBEvent) into [streams.Record]
// values, which a [streams.Changes] decodes into typed change events, and
// offers a handler that reports the first record it could not handle as
// the batch's item failure.
//
// It is a Go module of its own so that aws-lambda-go stays out of the
// library's go.mod:
//
//	go get github.com/singletable-go/singletable/streams/lambdaevent
//
// A function keeping per-entity counts, releasing the guards of expired
// items on the way:
//
//	changes, _ := streams.NewChanges(table, []*singletable.Target{users.Target(), skills.Target()})
//	lambda.Start(lambdaevent.Handler(changes, func(ctx context.Context, ch streams.Change) error {
//		if _, err := changes.ReleaseExpiredGuards(ctx, ch); err != nil {
//			return err
//		}
//		return count(ctx, ch)
//	}))
package lambdaevent

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/streams"
)

// Records converts the records of a Lambda DynamoDB event, in order.
func Records(ev events.DynamoDBEvent) ([]streams.Record, error) {
	out := make([]streams.Record, len(ev.Records))
	for i, r := range ev.Records {
		var err error
		if out[i], err = Record(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Record converts one record of a Lambda DynamoDB event: its attribute
// values into the dynamodb package's, the TTL identity into
// Record.UserIdentity.
func Record(r events.DynamoDBEventRecord) (streams.Record, error) {
	out := streams.Record{
		EventID:                     r.EventID,
		EventName:                   r.EventName,
		SequenceNumber:              r.Change.SequenceNumber,
		ApproximateCreationDateTime: r.Change.ApproximateCreationDateTime.Time,
	}
	if u := r.UserIdentity; u != nil {
		out.UserIdentity = &streams.Identity{PrincipalID: u.PrincipalID, Type: u.Type}
	}
	var err error
	if out.Keys, err = convertMap(r.Change.Keys); err != nil {
		return out, fmt.Errorf("singletable/lambdaevent: record %s keys: %w", r.EventID, err)
	}
	if out.OldImage, err = convertMap(r.Change.OldImage); err != nil {
		return out, fmt.Errorf("singletable/lambdaevent: record %s old image: %w", r.EventID, err)
	}
	if out.NewImage, err = convertMap(r.Change.NewImage); err != nil {
		return out, fmt.Errorf("singletable/lambdaevent: record %s new image: %w", r.EventID, err)
	}
	return out, nil
}

// Handler returns a Lambda handler of DynamoDB stream events: each record
// is converted and decoded by changes, and fn is called with each change
// that is not skipped, in order. When a record cannot be converted,
// decoded or handled, the handler stops there and reports that record's
// sequence number as the batch item failure, with no error, so that
// Lambda retries the batch from that record on; records before it are
// not handled again. The event source mapping must report batch item
// failures (FunctionResponseTypes: ReportBatchItemFailures): without it,
// Lambda ignores the response and the failed record would be lost.
func Handler(changes *streams.Changes, fn func(context.Context, streams.Change) error) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for _, r := range ev.Records {
			rec, err := Record(r)
			if err == nil {
				err = changes.Handle(ctx, []streams.Record{rec}, fn)
			}
			if err != nil {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}, nil
			}
		}
		return events.DynamoDBEventResponse{}, nil
	}
}

func convertMap(m map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := convert(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// convert turns one Lambda attribute value into the dynamodb package's.
func convert(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			av, err := convert(e)
			if err != nil {
				return nil, err
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m, err := convertMap(v.Map())
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]types.AttributeValue{}
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, errors.New("unknown attribute type")
}
