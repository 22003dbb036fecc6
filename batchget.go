package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
)

// BatchGetOptions tunes [Repo.BatchGet]. The zero value means the
// defaults.
type BatchGetOptions struct {
	// ConsistentRead asks for strongly consistent reads of every key.
	ConsistentRead bool
	// Fields limits the reads to the named Go fields, as for [Repo.Get].
	Fields []string
	// Concurrency is how many requests may be in flight at once; default 4.
	Concurrency int
	// MaxAttempts is how many times one key is tried, the first try
	// included, before it is reported as failed; default 10.
	MaxAttempts int
	// Backoff paces the retries of unprocessed keys and throttled
	// requests; the zero value means 25ms doubling up to 2s.
	Backoff Backoff
}

// BatchGet reads the items with keys' primary keys ([BatchGetItem]) and
// returns the items found, in the order of keys; a key with no item of
// this entity is left out (the same result shape as [Query.Collect]). A
// key given twice is read once and its item returned at each position.
//
// Keys are checked first: a key that cannot be rendered makes a
// *BatchError (Sent false) listing the bad keys, and nothing is sent.
// Requests carry up to 100 distinct keys, at most Concurrency in flight;
// UnprocessedKeys and throttled requests are retried with backoff. If
// some keys still cannot be read, the result holds the items that were
// read and the *BatchError lists the keys whose state is unknown (their
// items are not in the result: do not read them as missing).
//
// [BatchGetItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
func (r *Repo[T]) BatchGet(ctx context.Context, keys []T, optFns ...func(*BatchGetOptions)) ([]T, error) {
	o := applyOpts(optFns)
	out := make([]T, 0, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	var bad []BatchFailure
	rendered := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		key, err := r.e.key(r.t, k)
		if err != nil {
			bad = append(bad, BatchFailure{Index: i, Entity: r.e.name, Err: err})
			continue
		}
		rendered[i] = key
	}
	if len(bad) > 0 {
		return nil, &BatchError{Op: "BatchGetItem", Failed: bad}
	}
	ka := types.KeysAndAttributes{}
	if o.ConsistentRead {
		ka.ConsistentRead = aws.Bool(true)
	}
	if len(o.Fields) > 0 {
		// The key too: getItems matches the items read to the keys.
		var err error
		if ka.ProjectionExpression, ka.ExpressionAttributeNames, err = r.fieldsProjection(o.Fields, r.t.primaryKeyAttrs()...); err != nil {
			return nil, err
		}
	}

	items, errs := r.t.getItems(ctx, newBatchRun(o.Backoff, o.MaxAttempts, o.Concurrency), ka, rendered)
	var failed []BatchFailure
	for i, item := range items {
		err := errs[i]
		if err == nil && item != nil && r.isMine(item) { // another entity's item under this key is not ours to return
			var v T
			if v, err = r.e.decode(r.t, item); err == nil {
				out = append(out, v)
			}
		}
		if err != nil {
			failed = append(failed, BatchFailure{Index: i, Entity: r.e.name, Key: rendered[i], Err: err})
		}
	}
	if len(failed) == 0 {
		return out, nil
	}
	return out, &BatchError{Op: "BatchGetItem", Sent: true, Failed: failed}
}

// getItems reads the items under keys, primary keys of t, with
// BatchGetItem: requests of up to 100 distinct keys (a key given twice is
// read once), each with ka's projection and consistency, at most
// o.Concurrency in flight. UnprocessedKeys and throttled requests are
// retried with o's backoff, each key at most o.MaxAttempts times.
//
// items[i] is the item under keys[i] (nil when there is none) and errs[i]
// is why keys[i] could not be read (nil when it was): ErrUnprocessed when
// the retry budget ran out, or the request's error.
//
// It is the one BatchGetItem engine: [Repo.BatchGet] is a typed face on
// it, and migration checks read through it.
func (t *Table) getItems(ctx context.Context, o batchRun, ka types.KeysAndAttributes, keys []map[string]types.AttributeValue) (items []map[string]types.AttributeValue, errs []error) {
	g := &batchGet{t: t, ka: ka, policy: o.policy, index: make(map[itemID]int, len(keys))}
	at := make([]int, len(keys)) // keys[i] is g.keys[at[i]]
	for i, k := range keys {
		id := t.itemID(k)
		u, ok := g.index[id]
		if !ok {
			u = len(g.keys)
			g.index[id] = u
			g.keys = append(g.keys, k)
		}
		at[i] = u
	}
	g.items = make([]map[string]types.AttributeValue, len(g.keys))
	g.errs = make([]error, len(g.keys))
	var chunks [][]int
	for start := 0; start < len(g.keys); start += maxBatchGet {
		end := min(start+maxBatchGet, len(g.keys))
		c := make([]int, 0, end-start)
		for u := start; u < end; u++ {
			c = append(c, u)
		}
		chunks = append(chunks, c)
	}
	runBounded(ctx, o.concurrency, chunks, g.chunk)
	if len(g.keys) == len(keys) {
		return g.items, g.errs // no key given twice: at is the identity
	}
	items = make([]map[string]types.AttributeValue, len(keys))
	errs = make([]error, len(keys))
	for i, u := range at {
		items[i], errs[i] = g.items[u], g.errs[u]
	}
	return items, errs
}

// batchGet is one getItems call. Each distinct key belongs to one chunk,
// so the chunks, running concurrently, write disjoint entries of items
// and errs.
type batchGet struct {
	t      *Table
	ka     types.KeysAndAttributes
	policy backoff.Policy
	keys   []map[string]types.AttributeValue // distinct keys
	index  map[itemID]int                    // key id → position in keys
	items  []map[string]types.AttributeValue // items[u]: the item under keys[u]
	errs   []error                           // errs[u]: why keys[u] could not be read
}

// chunk reads the keys at pending (positions in g.keys) until they are
// all processed or the retry budget is spent; what is left then fails.
func (g *batchGet) chunk(ctx context.Context, pending []int) {
	client, table := g.t.api(ctx, ""), g.t.name
	err := sendUntilDone(ctx, g.policy, "BatchGetItem", func(ctx context.Context) (bool, error) {
		ka := g.ka
		ka.Keys = make([]map[string]types.AttributeValue, len(pending))
		for j, u := range pending {
			ka.Keys[j] = g.keys[u]
		}
		out, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{table: ka},
		})
		if err != nil {
			return false, err
		}
		for _, item := range out.Responses[table] {
			if u, ok := g.index[g.t.itemID(item)]; ok {
				g.items[u] = item
			}
		}
		next := pending[:0:0]
		for _, k := range out.UnprocessedKeys[table].Keys {
			if u, ok := g.index[g.t.itemID(k)]; ok {
				next = append(next, u)
			}
		}
		pending = next
		return len(pending) > 0, nil
	})
	if err != nil {
		for _, u := range pending {
			g.errs[u] = err
		}
	}
}
