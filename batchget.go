package singletable

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/wire"
)

// BatchGet reads the items of ops ([BatchGetItem]), of any entities and
// tables, into their dests. found has one entry per op, in order; an op not
// found (or holding another entity's item) has its dest set to the zero
// value. If any op carries an error nothing is sent. Ops still unread
// after retries are listed in the returned *BatchError: their dests are
// untouched and found is false for them (do not read them as missing).
//
// Results keep the positions of the keys: nothing is left out or
// reordered, so reading n keys into a slice of n is
//
//	got := make([]T, len(keys))
//	ops := make([]singletable.GetOp, len(keys))
//	for i, k := range keys {
//		ops[i] = repo.GetOp(k, &got[i])
//	}
//	found, err := singletable.BatchGet(ctx, ops) // found[i]: whether got[i] was read
//
// [BatchGetItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
func BatchGet(ctx context.Context, ops []GetOp, optFns ...func(*BatchOptions)) (found []bool, err error) {
	found = make([]bool, len(ops))
	var bad []BatchFailure
	for i, op := range ops {
		switch {
		case op.table == nil:
			bad = append(bad, BatchFailure{Index: i, Err: validationErr("", "", "zero GetOp: make ops with Repo.GetOp")})
		case op.err != nil:
			bad = append(bad, BatchFailure{Index: i, Entity: op.entity, Key: op.key, Err: op.err})
		}
	}
	if len(bad) > 0 {
		return nil, &BatchError{Op: "BatchGetItem", Failed: bad}
	}
	run := applyOpts(optFns).run()
	var failed []BatchFailure
	for _, g := range getGroups(ops) {
		keys, readers := make([]map[string]types.AttributeValue, len(g.ops)), make([]getter, len(g.ops))
		for j, i := range g.ops {
			keys[j], readers[j] = ops[i].key, ops[i].r
		}
		r := g.t.readKeys(ctx, run, g.ka, keys, readers)
		for j, i := range g.ops {
			err := r.errs[j]
			if err == nil {
				_, found[i], err = ops[i].r.got(r.items[j], r.wired[j].s, r.wired[j].i, ops[i].dest, false)
			}
			if err != nil {
				failed = append(failed, BatchFailure{Index: i, Entity: ops[i].entity, Key: ops[i].key, Err: err})
			}
		}
		r.release()
	}
	return found, sentErr("BatchGetItem", failed)
}

// getGroup is the ops of a BatchGet that one table reads with the same
// projection and consistency.
type getGroup struct {
	t   *Table
	ka  types.KeysAndAttributes
	ops []int
}

// getGroups groups ops by table and read options, in the order of their
// first op.
func getGroups(ops []GetOp) []getGroup {
	var groups []getGroup
	for i, op := range ops {
		j := slices.IndexFunc(groups, func(g getGroup) bool {
			return g.t == op.table && aws.ToBool(g.ka.ConsistentRead) == op.consistent &&
				aws.ToString(g.ka.ProjectionExpression) == aws.ToString(op.proj) && maps.Equal(g.ka.ExpressionAttributeNames, op.names)
		})
		if j < 0 {
			g := getGroup{t: op.table, ka: types.KeysAndAttributes{ProjectionExpression: op.proj, ExpressionAttributeNames: op.names}}
			if op.consistent {
				g.ka.ConsistentRead = aws.Bool(true)
			}
			j = len(groups)
			groups = append(groups, g)
		}
		groups[j].ops = append(groups[j].ops, i)
	}
	return groups
}

// getItems reads the items under keys, primary keys of t, with ka's
// projection and consistency: items[i] is the item under keys[i] (nil when
// there is none) and errs[i] why keys[i] could not be read.
func (t *Table) getItems(ctx context.Context, o batchRun, ka types.KeysAndAttributes, keys []map[string]types.AttributeValue) (items []map[string]types.AttributeValue, errs []error) {
	g := t.readKeys(ctx, o, ka, keys, nil)
	return g.items, g.errs
}

// readKeys is getItems, on the direct wire path where readers (the
// getter of each key's op) and the client allow: wired[i] then holds
// keys[i]'s item. Release hands back what the direct path kept.
func (t *Table) readKeys(ctx context.Context, o batchRun, ka types.KeysAndAttributes, keys []map[string]types.AttributeValue, readers []getter) *batchGet {
	g := &batchGet{t: t, ka: ka, policy: o.policy, index: make(map[itemID]int, len(keys)), wired: make([]wired, len(keys)),
		keys: make([]map[string]types.AttributeValue, 0, len(keys))}
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
	g.route(readers, at)
	var chunks [][]int
	for u := range g.keys {
		if u%maxBatchGet == 0 {
			chunks = append(chunks, make([]int, 0, min(maxBatchGet, len(g.keys)-u)))
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], u)
	}
	runBounded(ctx, o.concurrency, chunks, g.chunk)
	if len(g.keys) == len(keys) {
		return g // no key given twice: at is the identity
	}
	items, errs := g.items, g.errs
	g.items, g.errs = make([]map[string]types.AttributeValue, len(keys)), make([]error, len(keys))
	for i, u := range at {
		g.items[i], g.errs[i] = items[u], errs[u]
	}
	return g
}

// route sets, for the direct path, the feeds of readers (each getter
// once) and the readers of each distinct key.
func (g *batchGet) route(readers []getter, at []int) {
	if len(readers) == 0 || !g.t.wire {
		return
	}
	g.routes = make([][]wire.Reader, len(g.keys))
	flat := make([]wire.Reader, len(at))
	for i, u := range at {
		if flat[i] = (wire.Reader{Key: i, Feed: feedOf(&g.feeds, readers[i])}); g.routes[u] == nil {
			g.routes[u] = flat[i : i+1 : i+1]
		} else {
			g.routes[u] = append(g.routes[u], flat[i])
		}
	}
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

	feeds   []getter        // the direct path's: each reader once
	routes  [][]wire.Reader // routes[u]: the keys given under keys[u], read by feeds[Feed]
	wired   []wired         // wired[i]: where the direct path put the item of the i-th key given
	mu      sync.Mutex
	batches []*wire.Batch // the direct path's sinks, to release
}

// feedOf returns r's position in *rs, added when missing.
func feedOf(rs *[]getter, r getter) int {
	f := slices.Index(*rs, r)
	if f < 0 {
		f, *rs = len(*rs), append(*rs, r)
	}
	return f
}

// wired is the i-th item of s, a direct read's.
type wired struct {
	s wire.Feed
	i int
}

// batch returns the sink of a request through c on the direct path, nil
// when it does not take it.
func (g *batchGet) batch(c Client) *wire.Batch {
	if g.routes == nil || c != g.t.client {
		return nil
	}
	b := &wire.Batch{Table: g.t.name, Feeds: make([]wire.Feed, len(g.feeds)),
		Route: func(head map[string]types.AttributeValue) []wire.Reader {
			if u, ok := g.index[g.t.itemID(head)]; ok {
				return g.routes[u]
			}
			return nil
		}}
	for f, r := range g.feeds {
		b.Feeds[f] = r.feed()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.batches = append(g.batches, b)
	return b
}

// release hands back the direct path's sinks.
func (g *batchGet) release() {
	for _, b := range g.batches {
		b.Release()
	}
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
		in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: ka}}
		b := g.batch(client)
		if b != nil {
			ctx = wire.With(ctx, in, b)
		}
		out, err := client.BatchGetItem(ctx, in)
		if err != nil {
			return false, err
		}
		for _, it := range b.Direct() {
			g.wired[it.Key] = wired{b.Feeds[it.Feed], it.Item}
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
