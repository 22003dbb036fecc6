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
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
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
	handle := func(_ context.Context, recs []streams.Record) error {
		for _, r := range recs {
			ids = append(ids, r.NewImage["ID"].(*ddbtypes.AttributeValueMemberS).Value)
		}
		return nil
	}
	errStop := errors.New("stop")
	batches := 0
	first := streams.NewReader(sc, arn, func(o *streams.Options) { o.Limit = 4; o.Save = save })
	err := first.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
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
	// No deadline: on a loaded machine DynamoDB Local has taken more than
	// 20 s to hand over the first records. The test waits for the records
	// or for Run to stop; the test binary's -timeout bounds a hang.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- streams.NewReader(sc, arn, func(o *streams.Options) { o.Poll = 20 * time.Millisecond }).
			Run(ctx, func(_ context.Context, recs []streams.Record) error {
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
		case err := <-done:
			t.Fatalf("Run stopped before it delivered the records: %v", err)
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
	rec, err := streams.RecordFromAPI(types.Record{
		EventID: aws.String("e1"), EventName: types.OperationTypeRemove,
		UserIdentity: &types.Identity{PrincipalId: aws.String("dynamodb.amazonaws.com"), Type: aws.String("Service")},
		Dynamodb: &types.StreamRecord{
			ApproximateCreationDateTime: &at, SequenceNumber: aws.String("123"),
			Keys:     map[string]types.AttributeValue{"PK": img["PK"]},
			OldImage: img,
		},
	})
	require.NoError(t, err)
	assert.Equal(t, streams.Record{
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
		UserIdentity: &streams.Identity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"},
	}, rec)

	_, err = streams.RecordFromAPI(types.Record{EventID: aws.String("e2")})
	assert.ErrorContains(t, err, "no dynamodb part")
}

// emptyStretch stands in front of DynamoDB Local's stream with what the
// service documents and Local never does: GetRecords "might take multiple
// calls to get to a portion of the shard that contains stream records".
// The first GetRecords of the first emptyFirst iterators it hands out
// answers no records and the same iterator; iterators in refuse answer
// its error.
type emptyStretch struct {
	streams.Client
	emptyFirst int
	issued     int
	fresh      map[string]bool
	refuse     map[string]error
	lastNext   string // the NextShardIterator last answered
}

func (c *emptyStretch) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	out, err := c.Client.GetShardIterator(ctx, in, optFns...)
	if err == nil {
		if c.issued++; c.issued <= c.emptyFirst {
			c.fresh[aws.ToString(out.ShardIterator)] = true
		}
	}
	return out, err
}

func (c *emptyStretch) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	it := aws.ToString(in.ShardIterator)
	if err := c.refuse[it]; err != nil {
		return nil, err
	}
	if c.fresh[it] {
		delete(c.fresh, it)
		c.lastNext = it
		return &dynamodbstreams.GetRecordsOutput{NextShardIterator: in.ShardIterator}, nil
	}
	out, err := c.Client.GetRecords(ctx, in, optFns...)
	if err == nil {
		c.lastNext = aws.ToString(out.NextShardIterator)
	}
	return out, err
}

// A Read that meets an empty stretch before a shard's records stops there,
// and the next Read goes on from the iterator it stopped at, not from a
// fresh one that would meet the same stretch again (every fresh iterator
// here starts with one; a reader that took one per Read would never see a
// record). A kept iterator that has expired is replaced by a fresh one
// from the checkpoint, with nothing lost or repeated.
func TestReaderGoesOnPastEmptyStretches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	notes, arn := noteTable(t)
	putNotes(t, notes, 0, 3)
	c := &emptyStretch{Client: ddblocal.Shared(t).StreamsClient(), emptyFirst: 1 << 30, fresh: map[string]bool{}, refuse: map[string]error{}}
	var ids []string
	handle := func(_ context.Context, recs []streams.Record) error {
		for _, r := range recs {
			ids = append(ids, r.NewImage["ID"].(*ddbtypes.AttributeValueMemberS).Value)
		}
		return nil
	}
	r := streams.NewReader(c, arn)
	require.NoError(t, r.Read(ctx, handle))
	assert.Empty(t, ids, "the first page of the shard is empty")
	require.NoError(t, r.Read(ctx, handle))
	assert.Equal(t, []string{"n000", "n001", "n002"}, ids)
	assert.Equal(t, 1, c.issued, "one iterator, kept between reads")

	// The iterator kept now (past n002) expires before the next Read.
	putNotes(t, notes, 3, 5)
	c.emptyFirst = c.issued // fresh iterators from here on start with records
	c.refuse[c.lastNext] = &types.ExpiredIteratorException{Message: aws.String("Iterator expired")}
	require.NoError(t, r.Read(ctx, handle))
	assert.Equal(t, []string{"n000", "n001", "n002", "n003", "n004"}, ids)
	assert.Equal(t, 2, c.issued, "a fresh iterator from the checkpoint replaced the expired one")

	// DynamoDB Local answers TrimmedDataAccessException for some kept
	// iterators: the same replacement.
	putNotes(t, notes, 5, 6)
	c.refuse[c.lastNext] = &types.TrimmedDataAccessException{Message: aws.String("past the oldest record")}
	require.NoError(t, r.Read(ctx, handle))
	assert.Equal(t, []string{"n000", "n001", "n002", "n003", "n004", "n005"}, ids)
	assert.Equal(t, 3, c.issued)

	// Fresh iterators refused every time, within the reader's bounded
	// retakes, are the reader's error: the records past the checkpoint are
	// gone from the stream, and the error says so and names the shard.
	putNotes(t, notes, 6, 7)
	trimmed := &types.TrimmedDataAccessException{Message: aws.String("trimmed")}
	c.refuse[c.lastNext] = trimmed
	c.emptyFirst = 0
	c.Client = refuseFresh{c.Client, c, trimmed}
	streams.NoRetakeWait(r)
	issued := c.issued
	err := r.Read(ctx, handle)
	require.ErrorAs(t, err, &trimmed)
	assert.ErrorContains(t, err, "records past the checkpoint were trimmed from the stream")
	assert.ErrorContains(t, err, "shard shardId-")
	assert.Equal(t, 10, c.issued-issued, "a bounded number of fresh iterators")
	assert.Len(t, ids, 6, "nothing handed on")
}

// refuseFresh makes every iterator it hands out refused with err by c.
type refuseFresh struct {
	streams.Client
	c   *emptyStretch
	err error
}

func (f refuseFresh) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	out, err := f.Client.GetShardIterator(ctx, in, optFns...)
	if err == nil {
		f.c.refuse[aws.ToString(out.ShardIterator)] = f.err
	}
	return out, err
}

// refuseFirstReads answers the first GetRecords of each of the first n
// iterators it hands out with err, as DynamoDB Local answers the first
// read of a fresh TRIM_HORIZON iterator on a loaded machine
// (TrimmedDataAccessException).
type refuseFirstReads struct {
	streams.Client
	n, issued int
	err       error
	refuse    map[string]bool
}

func (c *refuseFirstReads) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	out, err := c.Client.GetShardIterator(ctx, in, optFns...)
	if err == nil {
		if c.issued++; c.issued <= c.n {
			c.refuse[aws.ToString(out.ShardIterator)] = true
		}
	}
	return out, err
}

func (c *refuseFirstReads) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if it := aws.ToString(in.ShardIterator); c.refuse[it] {
		delete(c.refuse, it)
		return nil, c.err
	}
	return c.Client.GetRecords(ctx, in, optFns...)
}

// A fresh iterator whose first read the stream refuses as trimmed or
// expired (DynamoDB Local does so for a TRIM_HORIZON iterator on a loaded
// machine) is retaken from the checkpoint, with backoff, until one reads:
// at the start of the stream and past a checkpoint, every record is
// handed on once and in order.
func TestReaderRetakesRefusedFreshIterators(t *testing.T) {
	t.Parallel()
	for _, refusal := range []error{
		&types.TrimmedDataAccessException{Message: aws.String("The operation attempted to read past the oldest stream record in a shard.")},
		&types.ExpiredIteratorException{Message: aws.String("Iterator expired")},
	} {
		t.Run(fmt.Sprintf("%T", refusal), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			notes, arn := noteTable(t)
			putNotes(t, notes, 0, 5)
			var ids []string
			handle := func(_ context.Context, recs []streams.Record) error {
				for _, r := range recs {
					ids = append(ids, r.NewImage["ID"].(*ddbtypes.AttributeValueMemberS).Value)
				}
				return nil
			}
			c := &refuseFirstReads{Client: ddblocal.Shared(t).StreamsClient(), n: 3, err: refusal, refuse: map[string]bool{}}
			r := streams.NewReader(c, arn, func(o *streams.Options) { o.Limit = 2 })
			require.NoError(t, r.Read(ctx, handle))
			assert.Equal(t, []string{"n000", "n001", "n002", "n003", "n004"}, ids)
			assert.Equal(t, 4, c.issued, "three refused, the fourth read")

			// Past a checkpoint: a reader started from it, whose fresh
			// iterators are refused twice, hands on only the later records.
			putNotes(t, notes, 5, 7)
			ids = nil
			c = &refuseFirstReads{Client: ddblocal.Shared(t).StreamsClient(), n: 2, err: refusal, refuse: map[string]bool{}}
			require.NoError(t, streams.NewReader(c, arn, func(o *streams.Options) { o.From = r.Checkpoint() }).Read(ctx, handle))
			assert.Equal(t, []string{"n005", "n006"}, ids)
			assert.Equal(t, 3, c.issued)
		})
	}
}
