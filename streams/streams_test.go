package streams_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/streams"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

type Note struct {
	ID   string `dynamodbav:"ID"`
	Text string `dynamodbav:"Text"`
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{Type: "Note", PK: "NOTE#{ID}", SK: "NOTE"})

func noteTable(t *testing.T) (*singletable.Repo[Note], string) {
	t.Helper()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	notes := singletable.MustBind(tbl, Notes)
	require.NoError(t, tbl.CreateTable(context.Background(), func(o *singletable.CreateTableOptions) {
		o.Stream = ddbtypes.StreamViewTypeNewAndOldImages
	}))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	arn, err := streams.LatestARN(context.Background(), srv.StreamsClient(), name)
	require.NoError(t, err)
	return notes, arn
}

func putNotes(t *testing.T, notes *singletable.Repo[Note], from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		_, err := notes.Create(context.Background(), Note{ID: fmt.Sprintf("n%03d", i), Text: "x"})
		require.NoError(t, err)
	}
}

// A reader that stops part way (its handler fails on the third batch)
// leaves a checkpoint; a reader started from that checkpoint, saved as
// JSON, hands on every later record once, in order: no loss, no
// duplicate. Records written later are read once more, and a reader
// started from the final checkpoint finds nothing.
func TestReaderResumesFromCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	notes, arn := noteTable(t)
	sc := ddblocal.Shared(t).StreamsClient()
	putNotes(t, notes, 0, 25)

	var saved []byte
	save := func(_ context.Context, cp streams.Checkpoint) error {
		var err error
		saved, err = json.Marshal(cp)
		return err
	}
	var ids []string
	handle := func(_ context.Context, recs []singletable.StreamRecord) error {
		for _, r := range recs {
			ids = append(ids, r.NewImage["ID"].(*ddbtypes.AttributeValueMemberS).Value)
		}
		return nil
	}
	errStop := errors.New("stop")
	batches := 0
	first := streams.NewReader(sc, arn, func(o *streams.Options) { o.Limit = 4; o.Save = save })
	err := first.Read(ctx, func(ctx context.Context, recs []singletable.StreamRecord) error {
		if batches++; batches == 3 {
			return errStop
		}
		return handle(ctx, recs)
	})
	require.ErrorIs(t, err, errStop)
	require.Len(t, ids, 8, "two batches of 4 were handled")

	var cp streams.Checkpoint
	require.NoError(t, json.Unmarshal(saved, &cp))
	assert.Equal(t, first.Checkpoint(), cp)
	second := streams.NewReader(sc, arn, func(o *streams.Options) { o.From = cp; o.Limit = 7; o.Save = save })
	require.NoError(t, second.Read(ctx, handle))
	var want []string
	for i := range 25 {
		want = append(want, fmt.Sprintf("n%03d", i))
	}
	assert.Equal(t, want, ids)

	putNotes(t, notes, 25, 30)
	ids = nil
	require.NoError(t, second.Read(ctx, handle))
	assert.Equal(t, []string{"n025", "n026", "n027", "n028", "n029"}, ids)

	ids = nil
	require.NoError(t, json.Unmarshal(saved, &cp))
	require.NoError(t, streams.NewReader(sc, arn, func(o *streams.Options) { o.From = cp }).Read(ctx, handle))
	assert.Empty(t, ids)
}

// Run reads until its context ends, picking up records written while it
// runs.
func TestReaderRun(t *testing.T) {
	t.Parallel()
	notes, arn := noteTable(t)
	sc := ddblocal.Shared(t).StreamsClient()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- streams.NewReader(sc, arn, func(o *streams.Options) { o.Poll = 20 * time.Millisecond }).
			Run(ctx, func(_ context.Context, recs []singletable.StreamRecord) error {
				for _, r := range recs {
					got <- r.Keys["PK"].(*ddbtypes.AttributeValueMemberS).Value
				}
				return nil
			})
	}()
	putNotes(t, notes, 0, 3)
	for _, want := range []string{"NOTE#n000", "NOTE#n001", "NOTE#n002"} {
		select {
		case pk := <-got:
			assert.Equal(t, want, pk)
		case <-ctx.Done():
			t.Fatal("Run did not deliver the records")
		}
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

func TestLatestARNWithoutStream(t *testing.T) {
	t.Parallel()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	singletable.MustBind(tbl, Notes)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	_, err := streams.LatestARN(context.Background(), srv.StreamsClient(), name)
	assert.ErrorContains(t, err, "has no stream")
}

// Record converts every attribute type, the keys, the sequence number,
// the time and a TTL deletion's identity.
func TestRecord(t *testing.T) {
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	img := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "NOTE#1"},
		"N":  &types.AttributeValueMemberN{Value: "42"},
		"B":  &types.AttributeValueMemberB{Value: []byte{1, 2}},
		"T":  &types.AttributeValueMemberBOOL{Value: true},
		"Z":  &types.AttributeValueMemberNULL{Value: true},
		"L":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "a"}}},
		"M":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "1"}}},
		"SS": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"NS": &types.AttributeValueMemberNS{Value: []string{"1"}},
		"BS": &types.AttributeValueMemberBS{Value: [][]byte{{3}}},
	}
	rec, err := streams.Record(types.Record{
		EventID: aws.String("e1"), EventName: types.OperationTypeRemove,
		UserIdentity: &types.Identity{PrincipalId: aws.String("dynamodb.amazonaws.com"), Type: aws.String("Service")},
		Dynamodb: &types.StreamRecord{
			ApproximateCreationDateTime: &at, SequenceNumber: aws.String("123"),
			Keys:     map[string]types.AttributeValue{"PK": img["PK"]},
			OldImage: img,
		},
	})
	require.NoError(t, err)
	assert.Equal(t, singletable.StreamRecord{
		EventID: "e1", EventName: "REMOVE", SequenceNumber: "123", ApproximateCreationDateTime: at,
		Keys: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "NOTE#1"}},
		OldImage: map[string]ddbtypes.AttributeValue{
			"PK": &ddbtypes.AttributeValueMemberS{Value: "NOTE#1"},
			"N":  &ddbtypes.AttributeValueMemberN{Value: "42"},
			"B":  &ddbtypes.AttributeValueMemberB{Value: []byte{1, 2}},
			"T":  &ddbtypes.AttributeValueMemberBOOL{Value: true},
			"Z":  &ddbtypes.AttributeValueMemberNULL{Value: true},
			"L":  &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{&ddbtypes.AttributeValueMemberS{Value: "a"}}},
			"M":  &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{"k": &ddbtypes.AttributeValueMemberN{Value: "1"}}},
			"SS": &ddbtypes.AttributeValueMemberSS{Value: []string{"a", "b"}},
			"NS": &ddbtypes.AttributeValueMemberNS{Value: []string{"1"}},
			"BS": &ddbtypes.AttributeValueMemberBS{Value: [][]byte{{3}}},
		},
		UserIdentity: &singletable.StreamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"},
	}, rec)

	_, err = streams.Record(types.Record{EventID: aws.String("e2")})
	assert.ErrorContains(t, err, "no dynamodb part")
}
