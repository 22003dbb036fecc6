package singletable_test

import (
	"context"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// modelCollect is the model's read of a query's items, repeated after an
// injected fault (reads are safe to repeat): Collect, or, with the
// clients on the direct wire path (ddblocal.Wire: make test's wire run,
// make test-wire), page by page, three items a page, each from the last
// page's cursor and each repeated alone, so that pages, their cursors and
// the faults on them (truncated bodies and CRC32 mismatches included)
// run on the path, which iterators (All, Collect) do not take.
func modelCollect[T any](ctx context.Context, q *singletable.Query[T]) ([]T, error) {
	if !ddblocal.Wire() {
		var vs []T
		var err error
		for range 20 {
			if vs, err = q.Collect(ctx); err == nil {
				break
			}
		}
		return vs, err
	}
	var out []T
	for cursor := ""; ; {
		var p singletable.Page[T]
		var err error
		for range 20 {
			if p, err = q.Limit(3).After(cursor).Page(ctx); err == nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if cursor = p.Cursor; cursor == "" {
			return out, nil
		}
	}
}
