// Package streams turns a table's DynamoDB stream into typed change
// events, reads the stream locally, and releases the unique guards of
// items that time to live removed.
//
// [NewChanges] decodes stream records ([Record]) into [Change] values: the
// kind of change, the entity, and the old and new images as the entity's
// Go values, routed by entity type exactly as a [singletable.Collection]
// routes its items. [Changes.ReleaseExpiredGuards] frees the unique values
// of an item that DynamoDB's time to live deleted alone.
//
// [Reader] reads a stream with the [DynamoDB Streams API]: it walks the
// stream's shards (parents before their children, so the changes of one
// item arrive in order), hands each batch of records to a function, and
// keeps a checkpoint per shard so that a reader started again from the
// checkpoint continues where the last one stopped, without losing or
// repeating a record. It is meant for local use and tests, against
// DynamoDB Local or a real table; in production, a Lambda function (see
// the streams/lambdaevent module) or a Kinesis Client Library application
// reads the stream, and hands its records to the same [Changes]:
//
//	changes, _ := streams.NewChanges(table, []*singletable.Target{users.Target(), skills.Target()})
//	r := streams.NewReader(streamsClient, arn)
//	err := r.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
//		return changes.Handle(ctx, recs, func(ctx context.Context, ch streams.Change) error {
//			...
//		})
//	})
//
// [DynamoDB Streams API]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Operations_Amazon_DynamoDB_Streams.html
package streams

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/singletable-go/singletable/internal/backoff"
)

// Client is the part of *dynamodbstreams.Client the reader uses.
type Client interface {
	ListStreams(ctx context.Context, in *dynamodbstreams.ListStreamsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ Client = (*dynamodbstreams.Client)(nil)

// LatestARN returns the ARN of the newest stream of the table called
// table ([ListStreams]); an error when the table has none.
//
// [ListStreams]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_ListStreams.html
func LatestARN(ctx context.Context, c Client, table string) (string, error) {
	in := &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)}
	var arn string
	for {
		out, err := c.ListStreams(ctx, in)
		if err != nil {
			return "", fmt.Errorf("singletable/streams: list streams of %s: %w", table, err)
		}
		for _, s := range out.Streams {
			// Labels are ISO 8601 timestamps: the greatest is the newest.
			if arn == "" || aws.ToString(s.StreamLabel) > labelOf(arn, out.Streams) {
				arn = aws.ToString(s.StreamArn)
			}
		}
		if out.LastEvaluatedStreamArn == nil {
			break
		}
		in.ExclusiveStartStreamArn = out.LastEvaluatedStreamArn
	}
	if arn == "" {
		return "", fmt.Errorf("singletable/streams: table %s has no stream (enable one: CreateTableOptions.Stream)", table)
	}
	return arn, nil
}

func labelOf(arn string, streams []types.Stream) string {
	for _, s := range streams {
		if aws.ToString(s.StreamArn) == arn {
			return aws.ToString(s.StreamLabel)
		}
	}
	return ""
}

// Checkpoint is how far a reader has handed records on: per shard, the
// sequence number of the last record handled, and the shards read to
// their end. It marshals to JSON, to be kept between runs.
type Checkpoint struct {
	// Shards maps a shard ID to the sequence number of the last record
	// handled in it.
	Shards map[string]string `json:"shards,omitempty"`
	// Closed lists the shards read to their end.
	Closed []string `json:"closed,omitempty"`
}

func (c Checkpoint) clone() Checkpoint {
	return Checkpoint{Shards: maps.Clone(c.Shards), Closed: slices.Clone(c.Closed)}
}

func (c Checkpoint) closed(shard string) bool { return slices.Contains(c.Closed, shard) }

// Options tunes a [Reader].
type Options struct {
	// From is where to start: each shard after its sequence number in
	// From, shards From does not name from their oldest record (the trim
	// horizon). The zero Checkpoint reads the whole stream.
	From Checkpoint
	// Save, when set, is called with the new checkpoint after each batch
	// of records has been handled and after each shard is read to its
	// end: store it, and pass it as From to the next reader.
	Save func(ctx context.Context, cp Checkpoint) error
	// Limit is how many records each GetRecords request asks for; default
	// (0) DynamoDB's maximum, 1,000.
	Limit int32
	// Poll is how long [Reader.Run] waits between reads that found
	// nothing new; default one second.
	Poll time.Duration
}

// Reader reads one stream's records in order, shard by shard, keeping a
// [Checkpoint]. Make it with [NewReader]. A Reader is used by one
// goroutine at a time; [Reader.Checkpoint] may be called from any.
type Reader struct {
	c    Client
	arn  string
	opts Options

	mu sync.Mutex
	cp Checkpoint
	// next holds, per open shard, the iterator at which the last Read
	// stopped, so that the next Read goes on from there: DynamoDB may
	// answer an empty page before a shard's newest record, and an
	// iterator taken afresh from the checkpoint would meet the same empty
	// stretch every time. Iterators expire (after 15 minutes); an expired
	// one, or one DynamoDB refuses as trimmed, is replaced by a fresh one
	// from the checkpoint.
	next map[string]*string
	// retake paces and bounds the fresh iterators taken in a row when
	// the stream refuses them (see readShard).
	retake backoff.Policy
}

// NewReader returns a reader of the stream with ARN arn (see
// [LatestARN]).
func NewReader(c Client, arn string, optFns ...func(*Options)) *Reader {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	return &Reader{c: c, arn: arn, opts: o, cp: o.From.clone(), retake: backoff.Default}
}

// Checkpoint returns a copy of the reader's checkpoint: every record up
// to it has been handled.
func (r *Reader) Checkpoint() Checkpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cp.clone()
}

// Read hands every record the stream holds now, past the checkpoint, to
// fn, in batches (one GetRecords response each, never empty), and
// returns when every shard is read to its end or, for a shard still
// open, to a response with no records: its newest record, or an empty
// stretch DynamoDB answers before it, which the next Read goes on
// past. Within a shard records come in order; a
// child shard is read after its parent is finished. The checkpoint
// advances past a batch only when fn returns nil: when fn fails, Read
// returns its error and the batch is handed on again by the next Read
// (of this reader or of one started from its checkpoint).
func (r *Reader) Read(ctx context.Context, fn func(context.Context, []Record) error) error {
	shards, err := r.shards(ctx)
	if err != nil {
		return err
	}
	done := map[string]bool{} // shards read as far as they go in this call
	for {
		s, ok := nextShard(shards, done, r.Checkpoint())
		if !ok {
			return nil
		}
		if err := r.readShard(ctx, s, fn); err != nil {
			return err
		}
		done[aws.ToString(s.ShardId)] = true
	}
}

// nextShard returns the first shard of shards to read next: not done in
// this call, not read to its end (closed in cp), and whose parent is
// either not listed (trimmed from the stream) or read to its end, so that
// a child's records never come before its parent's. ok is false when no
// shard is left to read.
func nextShard(shards []types.Shard, done map[string]bool, cp Checkpoint) (s types.Shard, ok bool) {
	listed := make(map[string]bool, len(shards))
	for _, s := range shards {
		listed[aws.ToString(s.ShardId)] = true
	}
	for _, s := range shards {
		id := aws.ToString(s.ShardId)
		if done[id] || cp.closed(id) {
			continue
		}
		if p := aws.ToString(s.ParentShardId); p != "" && listed[p] && !cp.closed(p) {
			continue // the parent's records come first
		}
		return s, true
	}
	return types.Shard{}, false
}

// Run reads the stream until ctx is done, calling [Reader.Read] and then
// waiting Options.Poll before the next. It returns fn's error, a request's
// error, or ctx's error once ctx is done.
func (r *Reader) Run(ctx context.Context, fn func(context.Context, []Record) error) error {
	for {
		if err := r.Read(ctx, fn); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.opts.Poll):
		}
	}
}

// shards lists the stream's shards ([DescribeStream]), oldest first.
//
// [DescribeStream]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_DescribeStream.html
func (r *Reader) shards(ctx context.Context) ([]types.Shard, error) {
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.arn)}
	var shards []types.Shard
	for {
		out, err := r.c.DescribeStream(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("singletable/streams: describe stream %s: %w", r.arn, err)
		}
		if out.StreamDescription == nil {
			return nil, fmt.Errorf("singletable/streams: describe stream %s: no description", r.arn)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return shards, nil
		}
		in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId
	}
}

// readShard hands on the records of one shard past the checkpoint.
//
// An iterator the stream refuses as expired or trimmed is replaced by a
// fresh one from the checkpoint, which neither skips nor repeats a record:
// a kept iterator may have expired (after 15 minutes), and DynamoDB Local
// refuses some iterators as pointing before the oldest record, kept ones
// from a shard's empty start and, on a loaded machine, the first read of
// a fresh one. Fresh iterators refused in a row are retaken with backoff
// (r.retake); when every one is refused, the records past the checkpoint
// are gone from the stream, and the error says so.
func (r *Reader) readShard(ctx context.Context, s types.Shard, fn func(context.Context, []Record) error) error {
	id := aws.ToString(s.ShardId)
	closedShard := s.SequenceNumberRange != nil && s.SequenceNumberRange.EndingSequenceNumber != nil
	r.mu.Lock()
	iter := r.next[id]
	delete(r.next, id) // kept again only where this read stops cleanly
	r.mu.Unlock()
	retake := iter == nil // take a fresh iterator from the checkpoint
	fresh := false        // iter is fresh from the checkpoint, not yet read
	refused := 0          // fresh iterators refused in a row
	for {
		if retake {
			if refused > 0 {
				if err := sleep(ctx, r.retake.Delay(refused-1, nil)); err != nil {
					return err
				}
			}
			it, err := r.iterator(ctx, id)
			if stale(err) {
				if refused++; refused >= r.retake.Attempts {
					return r.trimmed(id, refused, err)
				}
				continue
			}
			if err != nil {
				return err
			}
			iter, retake, fresh = it, false, true
		}
		if iter == nil {
			break // no next iterator: the shard is closed and read to its end
		}
		rin := &dynamodbstreams.GetRecordsInput{ShardIterator: iter}
		if r.opts.Limit > 0 {
			rin.Limit = aws.Int32(r.opts.Limit)
		}
		out, err := r.c.GetRecords(ctx, rin)
		if stale(err) {
			if fresh {
				if refused++; refused >= r.retake.Attempts {
					return r.trimmed(id, refused, err)
				}
			}
			retake = true
			continue
		}
		if err != nil {
			return fmt.Errorf("singletable/streams: get records of %s: %w", id, err)
		}
		fresh, refused = false, 0
		iter = out.NextShardIterator
		if len(out.Records) > 0 {
			recs := make([]Record, len(out.Records))
			for i, rec := range out.Records {
				if recs[i], err = RecordFromAPI(rec); err != nil {
					return err
				}
			}
			if err := fn(ctx, recs); err != nil {
				return err
			}
			if err := r.advance(ctx, func(cp *Checkpoint) {
				if cp.Shards == nil {
					cp.Shards = map[string]string{}
				}
				cp.Shards[id] = recs[len(recs)-1].SequenceNumber
			}); err != nil {
				return err
			}
			continue
		}
		if iter != nil && !closedShard {
			r.mu.Lock()
			if r.next == nil {
				r.next = map[string]*string{}
			}
			r.next[id] = iter
			r.mu.Unlock()
			return nil // an open shard, read to its newest record or to an empty stretch
		}
	}
	return r.advance(ctx, func(cp *Checkpoint) { cp.Closed = append(cp.Closed, id) })
}

// stale reports whether err refuses an iterator that a fresh one from the
// checkpoint may replace: it has expired, or it points before the oldest
// record.
func stale(err error) bool {
	var expired *types.ExpiredIteratorException
	var trimmed *types.TrimmedDataAccessException
	return errors.As(err, &expired) || errors.As(err, &trimmed)
}

// trimmed is the error of a shard whose fresh iterators the stream
// refused n times in a row with err.
func (r *Reader) trimmed(id string, n int, err error) error {
	from := "from its oldest record"
	if seq := r.Checkpoint().Shards[id]; seq != "" {
		from = "after sequence number " + seq
	}
	return fmt.Errorf("singletable/streams: shard %s: the stream refused %d fresh iterators %s in a row: its records past the checkpoint were trimmed from the stream: %w", id, n, from, err)
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// iterator returns a new iterator of shard id just past the checkpoint,
// or at its oldest record when the checkpoint does not name it.
func (r *Reader) iterator(ctx context.Context, id string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(r.arn), ShardId: aws.String(id), ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
	if seq := r.Checkpoint().Shards[id]; seq != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(seq)
	}
	it, err := r.c.GetShardIterator(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("singletable/streams: shard iterator of %s: %w", id, err)
	}
	return it.ShardIterator, nil
}

// advance changes the checkpoint and saves it.
func (r *Reader) advance(ctx context.Context, change func(*Checkpoint)) error {
	r.mu.Lock()
	change(&r.cp)
	cp := r.cp.clone()
	r.mu.Unlock()
	if r.opts.Save != nil {
		if err := r.opts.Save(ctx, cp); err != nil {
			return fmt.Errorf("singletable/streams: save checkpoint: %w", err)
		}
	}
	return nil
}

// RecordFromAPI converts a record of the DynamoDB Streams API into the
// library's form, its attribute values into the dynamodb package's.
func RecordFromAPI(rec types.Record) (Record, error) {
	out := Record{EventID: aws.ToString(rec.EventID), EventName: string(rec.EventName)}
	if u := rec.UserIdentity; u != nil {
		out.UserIdentity = &Identity{PrincipalID: aws.ToString(u.PrincipalId), Type: aws.ToString(u.Type)}
	}
	d := rec.Dynamodb
	if d == nil {
		return out, errors.New("singletable/streams: record " + out.EventID + " has no dynamodb part")
	}
	out.SequenceNumber = aws.ToString(d.SequenceNumber)
	if d.ApproximateCreationDateTime != nil {
		out.ApproximateCreationDateTime = *d.ApproximateCreationDateTime
	}
	var err error
	if out.Keys, err = convert(d.Keys); err != nil {
		return out, fmt.Errorf("singletable/streams: record %s keys: %w", out.EventID, err)
	}
	if out.OldImage, err = convert(d.OldImage); err != nil {
		return out, fmt.Errorf("singletable/streams: record %s old image: %w", out.EventID, err)
	}
	if out.NewImage, err = convert(d.NewImage); err != nil {
		return out, fmt.Errorf("singletable/streams: record %s new image: %w", out.EventID, err)
	}
	return out, nil
}

// convert turns a streams attribute map into the dynamodb package's
// (nil stays nil: no image).
func convert(m map[string]types.AttributeValue) (map[string]ddbtypes.AttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	return attributevalue.FromDynamoDBStreamsMap(m)
}
