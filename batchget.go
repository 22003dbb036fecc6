package singletable

import (
	"context"
	"maps"
	"slices"

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
		keys := make([]map[string]types.AttributeValue, len(g.ops))
		for j, i := range g.ops {
			keys[j] = ops[i].key
		}
		rd := g.t.readers(ctx, len(keys), func(j int) GetOp { return ops[g.ops[j]] })
		items, errs := g.t.getItems(ctx, run, g.ka, keys, rd)
		for j, i := range g.ops {
			err := errs[j]
			if err == nil {
				_, found[i], err = ops[i].r.got(items[j], rd, j, ops[i].dest, false)
			}
			if err != nil {
				failed = append(failed, BatchFailure{Index: i, Entity: ops[i].entity, Key: ops[i].key, Err: err})
			}
		}
		rd.Release()
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
			j, groups = len(groups), append(groups, g)
		}
		groups[j].ops = append(groups[j].ops, i)
	}
	return groups
}

// getItems reads the items under keys, primary keys of t, with ka's
// projection and consistency: items[i] is the item under keys[i] (nil when
// there is none) and errs[i] why keys[i] could not be read. With rd (the
// direct path), rd decodes the items instead.
func (t *Table) getItems(ctx context.Context, o batchRun, ka types.KeysAndAttributes, keys []map[string]types.AttributeValue, rd *wire.Readers) (items []map[string]types.AttributeValue, errs []error) {
	g := &batchGet{t: t, ka: ka, policy: o.policy, index: make(map[itemID]int, len(keys)), rd: rd}
	at := make([]int, len(keys)) // keys[i] is g.keys[at[i]]
	for i, k := range keys {
		id := t.itemID(k)
		u, ok := g.index[id]
		if !ok {
			u, g.keys = len(g.keys), append(g.keys, k)
			g.index[id] = u
		}
		at[i] = u
	}
	g.items, g.errs = make([]map[string]types.AttributeValue, len(g.keys)), make([]error, len(g.keys))
	rd.Keys(at, len(g.keys))
	var chunks [][]int
	for u := range g.keys {
		if u%maxBatchGet == 0 {
			chunks = append(chunks, make([]int, 0, min(maxBatchGet, len(g.keys)-u)))
		}
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], u)
	}
	runBounded(ctx, o.concurrency, chunks, g.chunk)
	if len(g.keys) == len(keys) {
		return g.items, g.errs // no key given twice: at is the identity
	}
	items, errs = make([]map[string]types.AttributeValue, len(keys)), make([]error, len(keys))
	for i, u := range at {
		items[i], errs[i] = g.items[u], g.errs[u]
	}
	return items, errs
}

// readers is the direct path's of n ops (op(i)), nil off the path.
func (t *Table) readers(ctx context.Context, n int, op func(i int) GetOp) *wire.Readers {
	return wire.NewReaders(t.direct(ctx), n,
		func(i int) any { return op(i).r }, func(r any) wire.Feed { return r.(getter).feed() })
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
	rd     *wire.Readers                     // the direct path's
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
		out, err := client.BatchGetItem(g.rd.With(ctx, in, table, func(head map[string]types.AttributeValue) (int, bool) {
			u, ok := g.index[g.t.itemID(head)]
			return u, ok
		}), in)
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
