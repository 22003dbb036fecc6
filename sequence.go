package singletable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/sequence"
)

// SequenceType is the entity type stored on sequence counter items.
const SequenceType = "singletable.Sequence"

// SequenceOptions tunes a [Sequence].
type SequenceOptions struct {
	// MaxAttempts bounds how many times [Sequence.Append] runs its
	// transaction when other appenders take the number first; default 100.
	MaxAttempts int
	// Backoff paces those attempts; the zero value means 5ms doubling up to
	// 250ms, with full jitter.
	Backoff Backoff
	// Highest, when set, returns the highest number already used in the
	// data (an adopted sequence); it is called only while the counter item
	// does not exist, and numbering continues after it.
	Highest func(ctx context.Context) (int64, error)
}

// Sequence allocates gap-free numbers 1, 2, 3, … inside transactions, for
// logs where no number may be skipped or used twice. The counter is one
// item (partition key "SEQ#<name>") holding the last number allocated.
//
// [Sequence.Next] returns an op for [Tx] setting the counter to n+1 on
// condition that it is still n ([ErrVersionConflict] otherwise);
// [Sequence.Append] retries until it wins. Appends serialise on one item.
type Sequence struct {
	t    *Table
	name string
	c    *sequence.Counter
	opts SequenceOptions
}

// NewSequence returns the sequence called name in table t.
func NewSequence(t *Table, name string, optFns ...func(*SequenceOptions)) *Sequence {
	s := &Sequence{t: t, name: name}
	for _, fn := range optFns {
		fn(&s.opts)
	}
	s.c = sequence.New(t.name, name, t.opts.PartitionKey, t.opts.SortKey, t.opts.EntityTypeAttr, SequenceType)
	return s
}

// Name returns the sequence's name.
func (s *Sequence) Name() string { return s.name }

// Current returns the last number allocated (0 before the first), read
// strongly consistent.
func (s *Sequence) Current(ctx context.Context) (int64, error) {
	n, _, err := s.current(ctx, s.t.api(ctx, ""))
	return n, err
}

// current reads the counter through client: its value and whether the
// counter exists.
func (s *Sequence) current(ctx context.Context, client Client) (int64, bool, error) {
	out, err := client.GetItem(ctx, s.c.Get())
	if err != nil {
		return 0, false, fmt.Errorf("singletable: sequence %s: %w", s.name, err)
	}
	n, exists, err := s.c.Value(out.Item)
	if err != nil {
		err = fmt.Errorf("singletable: sequence %s: %w", s.name, err)
	}
	return n, exists, err
}

// StartAfter makes the sequence continue after n: a counter below n (or
// absent) is set to n; one at n or beyond is left as it is. It returns the
// counter afterwards, and is safe beside concurrent appenders.
func (s *Sequence) StartAfter(ctx context.Context, n int64) (int64, error) {
	if n < 0 {
		return 0, validationErr(SequenceType, s.name, "StartAfter needs a number >= 0, got %d", n)
	}
	up := s.c.StartAfter(n)
	_, err := s.t.api(ctx, "").UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: up.TableName, Key: up.Key,
		UpdateExpression: up.UpdateExpression, ConditionExpression: up.ConditionExpression,
		ExpressionAttributeNames: up.ExpressionAttributeNames, ExpressionAttributeValues: up.ExpressionAttributeValues})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return n, nil
	case errors.As(err, &ccf):
		return s.Current(ctx) // at n or beyond already
	}
	return 0, fmt.Errorf("singletable: sequence %s: start after %d: %w", s.name, n, err)
}

// Next reads the counter now and returns the next number with the op that
// claims it, to commit with [Tx] together with the writes that use it. If
// another transaction claimed it first, Tx fails matching
// [ErrVersionConflict], to be run again ([Sequence.Append] does that). On
// error the op carries it too.
func (s *Sequence) Next(ctx context.Context) (int64, WriteOp, error) {
	return s.Reserve(ctx, 1)
}

// Reserve returns the first of k consecutive numbers and the op that
// claims first, first+1, …, first+k-1. See [Sequence.Next].
func (s *Sequence) Reserve(ctx context.Context, k int) (int64, WriteOp, error) {
	op := WriteOp{table: s.t, entity: SequenceType, kind: "Sequence"}
	if k < 1 {
		op.err = validationErr(SequenceType, s.name, "Reserve needs a positive count, got %d", k)
		return 0, op, op.err
	}
	cur, exists, err := s.current(ctx, s.t.planAPI(ctx, ""))
	if err == nil && !exists && s.opts.Highest != nil {
		if cur, err = s.opts.Highest(planReads(ctx)); err == nil && cur < 0 {
			err = validationErr(SequenceType, s.name, "Highest returned %d; a sequence starts after a number >= 0", cur)
		} else if err != nil {
			err = fmt.Errorf("singletable: sequence %s: Highest: %w", s.name, err)
		}
	}
	if err != nil {
		op.err = err
		return 0, op, err
	}
	what := fmt.Sprintf("sequence %s: number %d was taken by another transaction", s.name, cur+1)
	it := txItem{table: s.t, key: s.c.Key, size: itemsize.Of(s.c.Key) + 16,
		tw:     types.TransactWriteItem{Update: s.c.Claim(cur, exists, k)},
		failed: func(map[string]types.AttributeValue) error { return wrapSentinel(ErrVersionConflict, what, nil) },
	}
	op.src = opFunc(func(context.Context, bool) ([]txItem, error) { return []txItem{it}, nil })
	return cur + 1, op, nil
}

// Append allocates the next number, lets fn return the writes that use it,
// and commits the number's op and those writes in one transaction,
// retrying the whole while other appenders take the number first. It
// returns the number allocated. fn may run several times: it should only
// make ops. An error from fn, or a failure of another op, is returned as
// it is. A transaction whose outcome is unknown is sent again with the
// same client request token, never rebuilt under another number.
func (s *Sequence) Append(ctx context.Context, fn func(n int64) ([]WriteOp, error)) (int64, error) {
	p := backoff.Policy{Base: 5 * time.Millisecond, Max: 250 * time.Millisecond, Attempts: 100}.
		With(s.opts.Backoff.Base, s.opts.Backoff.Max, s.opts.MaxAttempts)
	var in *dynamodb.TransactWriteItemsInput
	var tx *txn
	var log *attemptLog // the attempts of in, with its token
	var n int64
	// Each try sends the transaction once; only what Again marks is retried.
	never := func(error) bool { return false }
	err := p.Do(ctx, nil, never, func(ctx context.Context) error {
		var err error
		if in == nil {
			// A new transaction: read the counter and let fn make its writes.
			var seq WriteOp
			if n, seq, err = s.Next(ctx); err != nil {
				return err
			}
			ops, err := fn(n)
			if err != nil {
				return err
			}
			if tx, in, err = prepareTx(ctx, append([]WriteOp{seq}, ops...), ""); err != nil {
				return err
			}
			log = &attemptLog{}
		}
		_, err = s.t.api(ctx, "").TransactWriteItems(ctx, in, log.option())
		if err == nil {
			return nil
		}
		retry := ctx.Err() == nil && retryableTx(err)
		err = tx.outcome(err, log)
		var te *TransactionError
		switch {
		case retry, errors.As(err, &te) && te.MaybeApplied:
			// Throttled, in conflict, or perhaps committed: the same
			// request with the same token again.
		case s.lost(err):
			in = nil // the number was taken: start over with the next one
		default:
			return err
		}
		return backoff.Again(err)
	})
	var ie *backoff.InterruptedError
	switch {
	case err == nil:
		return n, nil
	case errors.As(err, &ie):
		return 0, fmt.Errorf("singletable: sequence %s: %w", s.name, err)
	}
	return 0, err
}

// lost reports whether err is a transaction cancelled because the
// sequence's number was taken or its item locked: running it again helps.
func (s *Sequence) lost(err error) bool {
	var te *TransactionError
	if !errors.As(err, &te) {
		return false
	}
	for _, r := range te.Reasons {
		if r.Op == "Sequence" && (r.Code == "ConditionalCheckFailed" || r.Code == "TransactionConflict") {
			return true
		}
	}
	return false
}
