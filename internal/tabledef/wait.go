package tabledef

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Describer is the DescribeTable call of a client.
type Describer func(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)

// WaitActive polls table until it and every index are ACTIVE, backing off
// from 20ms to 1s, for at most limit; a table not found yet is waited for.
func WaitActive(ctx context.Context, describe Describer, table string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	delay := 20 * time.Millisecond
	for {
		out, err := describe(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err == nil && out.Table.TableStatus == types.TableStatusActive && gsisActive(out.Table) {
			return nil
		}
		var rnf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &rnf) {
			return fmt.Errorf("singletable: wait for table %s: %w", table, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("singletable: table %s not ACTIVE after %s", table, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

func gsisActive(td *types.TableDescription) bool {
	return !slices.ContainsFunc(td.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
		return g.IndexStatus != types.IndexStatusActive
	})
}

// TTLInput is the request enabling time to live on attribute attr of
// table.
func TTLInput(table, attr string) *dynamodb.UpdateTimeToLiveInput {
	return &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(true)}}
}
