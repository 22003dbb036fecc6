package singletable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/batchrun"
	"github.com/singletable-go/singletable/internal/redact"
	"github.com/singletable-go/singletable/internal/wire"
)

// DynamoDB's per-request limits for batches.
const (
	maxBatchWrite = batchrun.MaxWrite
	maxBatchGet   = 100
)

// BatchOptions tunes [BatchWrite] and [BatchGet]. The zero value means
// the defaults.
type BatchOptions struct {
	// Concurrency is how many requests may be in flight at once; default 4.
	Concurrency int
	// MaxAttempts is how many times one op is tried, the first try
	// included, before it is reported as failed; default 10.
	MaxAttempts int
	// Backoff paces the retries of unprocessed items or keys and of
	// throttled requests; the zero value means 25ms doubling up to 2s.
	Backoff Backoff
}

// Backoff describes exponential backoff with full jitter: the delay before
// retry n (from 0) is uniform in [0, min(Max, Base·2ⁿ)).
type Backoff struct {
	// Base is the ceiling of the first retry's delay; default 25ms. A
	// negative Base means no delay at all (for tests).
	Base time.Duration
	// Max caps the ceiling; default 2s.
	Max time.Duration
}

// batchRun is how a batch sends its requests: the retry policy of each
// item and how many requests may be in flight.
type batchRun struct {
	policy      backoff.Policy
	concurrency int
}

func (o BatchOptions) run() batchRun {
	return batchRun{policy: backoff.Default.With(o.Backoff.Base, o.Backoff.Max, o.MaxAttempts), concurrency: cmp.Or(max(o.Concurrency, 0), 4)}
}

// BatchFailure is one op or key of a batch that did not succeed.
type BatchFailure struct {
	// Index is the op's (or key's) position in the caller's input.
	Index int
	// Entity is the entity type of the op or key.
	Entity string
	// Key is the item's primary key, as rendered (nil when it could not be
	// rendered).
	Key map[string]types.AttributeValue
	// Err says why: the op's own validation error (nothing was sent), the
	// request's error, [ErrUnprocessed], or the context's error.
	Err error
}

// BatchError reports, item by item, what a batch could not do. Every op
// or key given to the batch either succeeded or is listed in Failed, in
// input order: nothing is dropped. Unwrap exposes the distinct causes, so
// errors.Is(err, ErrUnprocessed) and errors.As(err, &validationErr) work.
type BatchError struct {
	// Op is the DynamoDB operation: "BatchWriteItem" or "BatchGetItem".
	Op string
	// Sent is false when validation failed and no request was sent.
	Sent bool
	// Failed lists the failed ops or keys in input order.
	Failed []BatchFailure
}

// Error lists the number of failures and the first few.
func (e *BatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "singletable: %s: %d failed", e.Op, len(e.Failed))
	if !e.Sent {
		b.WriteString(" validation, nothing sent")
	}
	for i, f := range e.Failed {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Failed)-i)
			break
		}
		fmt.Fprintf(&b, "; #%d %s: %v", f.Index, f.Entity, f.Err)
	}
	return b.String()
}

// Unwrap returns the distinct errors of the failures.
func (e *BatchError) Unwrap() []error {
	var out []error
	seen := map[error]bool{}
	for _, f := range e.Failed {
		if f.Err != nil && !seen[f.Err] {
			seen[f.Err] = true
			out = append(out, f.Err)
		}
	}
	return out
}

// BatchWrite writes ops (puts and deletes, of any entities and tables)
// with [BatchWriteItem], in requests of up to 25 ops. It returns nil when
// every op was applied, and otherwise a *BatchError listing each op that
// was not. If any op carries an error or options a batch cannot carry
// (send those with [Tx]), nothing is sent. Unprocessed items and throttled
// requests are retried, each op at most MaxAttempts times, then fail with
// [ErrUnprocessed]. Ops on one key are applied in the order given; an op
// of an entity with unique fields is a transaction with its guards.
//
// [BatchWriteItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
func BatchWrite(ctx context.Context, ops []WriteOp, optFns ...func(*BatchOptions)) error {
	if len(ops) == 0 {
		return nil
	}
	var bad []BatchFailure
	for i, op := range ops {
		switch {
		case op.table == nil:
			bad = append(bad, BatchFailure{Index: i, Err: validationErr("", "", "zero WriteOp: make ops with Repo.PutOp or Repo.DeleteOp")})
		case op.err != nil:
			bad = append(bad, BatchFailure{Index: i, Entity: op.entity, Key: op.Key(), Err: op.err})
		case op.kind != "Put" && op.kind != "Delete" || op.cond:
			what := op.kind
			if op.cond {
				what = "conditional " + what
			}
			bad = append(bad, BatchFailure{Index: i, Entity: op.entity, Key: op.Key(), Err: validationErr(op.entity, "",
				"batch op %d is a %s, which BatchWriteItem cannot carry (only puts and deletes without WriteOptions); send it with Tx", i, what)})
		}
	}
	if len(bad) > 0 {
		return &BatchError{Op: "BatchWriteItem", Failed: bad}
	}

	run := applyOpts(optFns).run()
	b := &batchWriter{ops: ops, policy: run.policy}
	for _, round := range writeRounds(ops) {
		var chunks [][]int
		plain := round
		if slices.ContainsFunc(round, func(i int) bool { return ops[i].own != nil }) {
			// Ops of entities with unique fields run one by one, each
			// with its guards.
			plain = nil
			for _, i := range round {
				if ops[i].own != nil {
					chunks = append(chunks, []int{i})
				} else {
					plain = append(plain, i)
				}
			}
		}
		for _, g := range batchrun.Group(plain, func(i int) *Table { return ops[i].table }, sameClient) {
			for len(g) > 0 {
				n := min(len(g), maxBatchWrite)
				chunks = append(chunks, g[:n:n])
				g = g[n:]
			}
		}
		runBounded(ctx, run.concurrency, chunks, b.send)
	}
	return sentErr("BatchWriteItem", b.failed)
}

// writeRounds splits ops into rounds: the n-th op on a key goes to round
// n (batchrun.Rounds).
func writeRounds(ops []WriteOp) [][]int {
	return batchrun.Rounds(len(ops), func(i int) itemID { return ops[i].table.itemID(ops[i].keyed()) },
		func(id itemID) uint64 { return maphash.String(batchSeed, id.pk) ^ maphash.String(batchSeed, id.sk) })
}

// batchSeed seeds the key hashes of writeRounds.
var batchSeed = maphash.MakeSeed()

type batchWriter struct {
	ops    []WriteOp
	policy backoff.Policy

	mu     sync.Mutex
	failed []BatchFailure
}

func (b *batchWriter) fail(idx []int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, i := range idx {
		op := b.ops[i]
		b.failed = append(b.failed, BatchFailure{Index: i, Entity: op.entity, Key: op.Key(), Err: err})
	}
}

// send writes one chunk: a guarded op alone, or a request of plain ops.
func (b *batchWriter) send(ctx context.Context, idx []int) {
	if op := &b.ops[idx[0]]; op.own != nil {
		_, err := op.own.exec(ctx, op.kind, func() ([]txItem, error) { return op.src.opItems(ctx, true) })
		if err != nil {
			b.fail(idx, err)
		}
		return
	}
	b.chunk(ctx, idx)
}

// chunk sends one request's ops (all through the same client) until they
// are all processed or the retry budget is spent; what is left then fails
// item by item.
func (b *batchWriter) chunk(ctx context.Context, pending []int) {
	client := b.ops[pending[0]].table.api(ctx, "")
	err := sendUntilDone(ctx, b.policy, "BatchWriteItem", func(ctx context.Context) (bool, error) {
		in := b.request(pending)
		out, err := client.BatchWriteItem(wire.Write(ctx, in, b.ops[pending[0]].table.wire), in)
		if err != nil {
			return false, err
		}
		pending = b.unprocessed(pending, out.UnprocessedItems)
		return len(pending) > 0, nil
	})
	if err != nil {
		b.fail(pending, err)
	}
}

// sendUntilDone calls send, which sends one request of a batch and reports
// whether work is left, with policy p until nothing is left, retrying
// throttled requests too. It returns nil, ErrUnprocessed when the budget
// ran out, or why the request failed.
func sendUntilDone(ctx context.Context, p backoff.Policy, api string, send func(context.Context) (left bool, err error)) error {
	err := p.Do(ctx, nil, backoff.IsRetryable, func(ctx context.Context) error {
		left, err := send(ctx)
		if err == nil && left {
			return backoff.Again(nil)
		}
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backoff.ErrWorkLeft):
		return wrapSentinel(ErrUnprocessed, fmt.Sprintf("%s, after %d attempts", api, max(p.Attempts, 1)), nil)
	}
	return fmt.Errorf("singletable: %s: %w", api, redact.API(err))
}

// unprocessed maps what came back unprocessed to the pending ops, by table
// and key.
func (b *batchWriter) unprocessed(pending []int, items map[string][]types.WriteRequest) []int {
	if len(items) == 0 {
		return nil
	}
	left := make(map[itemID]bool)
	for table, reqs := range items {
		t := b.tableIn(pending, table)
		if t == nil {
			continue
		}
		for _, wr := range reqs {
			var key map[string]types.AttributeValue
			switch {
			case wr.PutRequest != nil:
				key = wr.PutRequest.Item
			case wr.DeleteRequest != nil:
				key = wr.DeleteRequest.Key
			}
			left[t.itemID(key)] = true
		}
	}
	next := pending[:0:0]
	for _, i := range pending {
		op := &b.ops[i]
		if left[op.table.itemID(op.keyed())] {
			next = append(next, i)
		}
	}
	return next
}

// request builds the BatchWriteItemInput of the pending ops.
func (b *batchWriter) request(pending []int) *dynamodb.BatchWriteItemInput {
	return batchrun.WriteRequest(len(pending), func(k int) (string, map[string]types.AttributeValue, map[string]types.AttributeValue) {
		op := &b.ops[pending[k]]
		return op.table.name, op.put, op.key
	})
}

// tableIn returns the table of a pending op that has the given name.
func (b *batchWriter) tableIn(pending []int, table string) *Table {
	for _, i := range pending {
		if t := b.ops[i].table; t.name == table {
			return t
		}
	}
	return nil
}

// runBounded calls fn for each chunk with at most n running at once.
var runBounded = batchrun.Run

// sentErr is the error of a batch whose requests were sent: nil, or a
// *BatchError listing failed in input order.
func sentErr(op string, failed []BatchFailure) error {
	if len(failed) == 0 {
		return nil
	}
	slices.SortStableFunc(failed, func(a, b BatchFailure) int { return a.Index - b.Index })
	return &BatchError{Op: op, Sent: true, Failed: failed}
}
