package singletable_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// putSeedEvent writes an event of the elections service's log as its
// Kotlin service does: PK EVENTS, SK "00000042#2025-01-15T10:30:00Z", no
// entity-type attribute.
func putSeedEvent(t *testing.T, tbl *singletable.Table, n int64, at time.Time) {
	t.Helper()
	_, err := tbl.Client().PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(tbl.Name()),
		Item: map[string]types.AttributeValue{
			"PK":            &types.AttributeValueMemberS{Value: "EVENTS"},
			"SK":            &types.AttributeValueMemberS{Value: fmt.Sprintf("%08d#%s", n, at.UTC().Format(time.RFC3339))},
			"event_id":      &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)},
			"actor":         &types.AttributeValueMemberS{Value: "alice"},
			"when_occurred": &types.AttributeValueMemberS{Value: at.UTC().Format(time.RFC3339)},
			"event_type":    &types.AttributeValueMemberS{Value: "BallotCast"},
		},
	})
	require.NoError(t, err)
}

// highestSeedEvent is the elections service's "last event": the first
// item of a descending query of the EVENTS partition, whose sort key
// starts with the zero-padded number.
func highestSeedEvent(tbl *singletable.Table, calls *atomic.Int32) func(ctx context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		calls.Add(1)
		out, err := tbl.Client().Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(tbl.Name()),
			KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :digit)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "EVENTS"}, ":digit": &types.AttributeValueMemberS{Value: "0"}},
			ScanIndexForward:          aws.Bool(false),
			Limit:                     aws.Int32(1),
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil || len(out.Items) == 0 {
			return 0, err
		}
		sk := out.Items[0]["SK"].(*types.AttributeValueMemberS).Value
		num, _, _ := strings.Cut(sk, "#")
		return strconv.ParseInt(num, 10, 64)
	}
}

func TestSequenceContinuesAnotherServicesLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var events *singletable.Repo[VoteEvent]
	eventTbl, _ := newTable(t, func(tbl *singletable.Table) { events = singletable.MustBind(tbl, VoteEvents) })
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	for n := int64(1); n <= 3; n++ {
		putSeedEvent(t, eventTbl, n, at.Add(time.Duration(n)*time.Minute))
	}
	var calls atomic.Int32
	seq := singletable.NewSequence(eventTbl, "events", func(o *singletable.SequenceOptions) {
		o.Highest = highestSeedEvent(eventTbl, &calls)
	})

	// Concurrent first appenders all find no counter; each asks Highest,
	// one creates the counter, the others continue after it.
	const writers = 8
	got := make([]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
				return []singletable.WriteOp{events.CreateOp(VoteEvent{Seq: n, When: at.Add(time.Hour), Actor: fmt.Sprint("go", w), Type: "BallotCast"})}, nil
			})
			assert.NoError(t, err)
			got[w] = n
		}()
	}
	wg.Wait()
	slices.Sort(got)
	assert.Equal(t, []int64{4, 5, 6, 7, 8, 9, 10, 11}, got, "the Go service continues at 4 after the Kotlin service's 1..3")
	before := calls.Load()
	assert.GreaterOrEqual(t, before, int32(1))
	n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
		return []singletable.WriteOp{events.CreateOp(VoteEvent{Seq: n, When: at.Add(2 * time.Hour), Actor: "go", Type: "BallotCast"})}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(12), n)
	assert.Equal(t, before, calls.Load(), "Highest is asked only while the counter does not exist")
	cur, err := seq.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(12), cur)
}

func TestSequenceStartAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _ := newTable(t, func(*singletable.Table) {})
	seq := singletable.NewSequence(tbl, "events")
	appendOne := func() int64 {
		t.Helper()
		n, err := seq.Append(ctx, func(int64) ([]singletable.WriteOp, error) { return nil, nil })
		require.NoError(t, err)
		return n
	}

	cur, err := seq.StartAfter(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), cur)
	assert.Equal(t, int64(1), appendOne(), "a counter made at 0 hands out 1")
	cur, err = seq.StartAfter(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(3), cur)
	assert.Equal(t, int64(4), appendOne())
	cur, err = seq.StartAfter(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, int64(4), cur, "a counter beyond n stays: no number is handed out twice")
	assert.Equal(t, int64(5), appendOne())
	_, err = seq.StartAfter(ctx, -1)
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)

	// Beside concurrent appenders: every number is handed out once, and
	// none at or below 100 after StartAfter(100) returned.
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	started := make(chan struct{})
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			for range 4 {
				n, err := seq.Append(ctx, func(int64) ([]singletable.WriteOp, error) { return nil, nil })
				if assert.NoError(t, err) {
					mu.Lock()
					got = append(got, n)
					mu.Unlock()
				}
			}
		}()
	}
	close(started)
	cur, err = seq.StartAfter(ctx, 100)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cur, int64(100))
	after := appendOne()
	wg.Wait()
	assert.Greater(t, after, int64(100))
	got = append(got, after)
	slices.Sort(got)
	assert.Len(t, slices.Compact(slices.Clone(got)), len(got), "no number handed out twice: %v", got)
}
