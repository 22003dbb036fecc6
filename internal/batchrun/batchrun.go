// Package batchrun is how the root package's batches run: the rounds that
// keep the order of writes to one key, the grouping of ops by client, the
// bounded concurrency of their requests, and the BatchWriteItem request of
// one chunk.
package batchrun

import (
	"context"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxWrite is DynamoDB's limit of write requests in one BatchWriteItem.
const MaxWrite = 25

// Rounds splits n ops into rounds: the k-th op on a key (id(i)) goes to
// round k. Batches of distinct keys, the common case, make one round
// holding every op, in order. hash is id's hash, which saves comparisons
// among few ops.
func Rounds[K comparable](n int, id func(i int) K, hash func(K) uint64) [][]int {
	round := make([]int, n) // round of each op
	rounds := 1
	if n <= 2*MaxWrite {
		// Few ops: comparing with the keys before (hash first) is cheaper
		// than a map.
		var arr [2 * MaxWrite]K
		var sums [2 * MaxWrite]uint64
		ids := arr[:n]
		for i := range n {
			ids[i] = id(i)
			sums[i] = hash(ids[i])
			for j := i - 1; j >= 0; j-- {
				if sums[j] == sums[i] && ids[j] == ids[i] {
					round[i] = round[j] + 1
					rounds = max(rounds, round[i]+1)
					break
				}
			}
		}
	} else {
		seen := make(map[K]int, n) // ops so far on each key
		for i := range n {
			k := id(i)
			round[i] = seen[k]
			seen[k]++
			rounds = max(rounds, round[i]+1)
		}
	}
	byRound := make([][]int, rounds)
	if rounds == 1 {
		for i := range round {
			round[i] = i // reused as the list of every op
		}
		byRound[0] = round
		return byRound
	}
	for i, r := range round {
		byRound[r] = append(byRound[r], i)
	}
	return byRound
}

// Group splits indexes by key(i), keys going together when same says so,
// keeping input order inside each group.
func Group[K comparable](idx []int, key func(int) K, same func(a, b K) bool) [][]int {
	if len(idx) == 0 || !slices.ContainsFunc(idx, func(i int) bool { return key(i) != key(idx[0]) }) {
		return [][]int{idx} // one key, the common case: one group, the input itself
	}
	var groups [][]int
	for _, i := range idx {
		j := slices.IndexFunc(groups, func(g []int) bool { return same(key(g[0]), key(i)) })
		if j < 0 {
			j, groups = len(groups), append(groups, nil)
		}
		groups[j] = append(groups[j], i)
	}
	return groups
}

// Run calls fn for each chunk with at most n running at once.
func Run(ctx context.Context, n int, chunks [][]int, fn func(context.Context, []int)) {
	if len(chunks) == 1 || n <= 1 {
		for _, c := range chunks {
			fn(ctx, c)
		}
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for _, c := range chunks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(ctx, c)
		}()
	}
	wg.Wait()
}

// WriteRequest builds the BatchWriteItemInput of n ops, op(k) giving the
// k-th one's table and either the item it puts or the key it deletes: one
// block of write requests (and one of put and of delete requests) for all
// of them, cut into one slice per table in the order of the ops.
func WriteRequest(n int, op func(k int) (table string, put, key map[string]types.AttributeValue)) *dynamodb.BatchWriteItemInput {
	type tableReqs struct {
		name   string
		n, off int
	}
	var one [1]tableReqs
	tables := one[:0]
	nPut := 0
	for k := range n {
		name, put, _ := op(k)
		if put != nil {
			nPut++
		}
		j := 0
		for j < len(tables) && tables[j].name != name {
			j++
		}
		if j == len(tables) {
			tables = append(tables, tableReqs{name: name})
		}
		tables[j].n++
	}
	off := 0
	for j := range tables {
		tables[j].off = off
		off += tables[j].n
	}
	reqs := make([]types.WriteRequest, n)
	var puts []types.PutRequest
	var dels []types.DeleteRequest
	if nPut > 0 {
		puts = make([]types.PutRequest, 0, nPut)
	}
	if nPut < n {
		dels = make([]types.DeleteRequest, 0, n-nPut)
	}
	fill := make([]int, len(tables)) // requests placed per table
	if len(tables) == 1 {
		fill = nil
	}
	for k := range n {
		name, put, key := op(k)
		at := k
		if fill != nil {
			j := 0
			for tables[j].name != name {
				j++
			}
			at = tables[j].off + fill[j]
			fill[j]++
		}
		if put != nil {
			puts = append(puts, types.PutRequest{Item: put})
			reqs[at].PutRequest = &puts[len(puts)-1]
		} else {
			dels = append(dels, types.DeleteRequest{Key: key})
			reqs[at].DeleteRequest = &dels[len(dels)-1]
		}
	}
	in := &dynamodb.BatchWriteItemInput{RequestItems: make(map[string][]types.WriteRequest, len(tables))}
	for _, t := range tables {
		in.RequestItems[t.name] = reqs[t.off : t.off+t.n : t.off+t.n]
	}
	return in
}
