// Package batchread reads items back through a repository in the tests of
// several packages (the root's, package migrate's): the items of many
// keys with one BatchGet, in the order of the keys.
package batchread

import (
	"context"

	"github.com/singletable-go/singletable"
)

// Get reads keys of r with one BatchGet, each op with read's options, and
// returns the items found in the order of keys (a key without an item of
// r's entity is left out).
func Get[T any](ctx context.Context, r *singletable.Repo[T], keys []T, read []func(*singletable.ReadOptions), optFns ...func(*singletable.BatchOptions)) ([]T, error) {
	dst := make([]T, len(keys))
	ops := make([]singletable.GetOp, len(keys))
	for i, k := range keys {
		ops[i] = r.GetOp(k, &dst[i], read...)
	}
	found, err := singletable.BatchGet(ctx, ops, optFns...)
	out := make([]T, 0, len(keys))
	for i, ok := range found {
		if ok {
			out = append(out, dst[i])
		}
	}
	return out, err
}
