package singletable

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Transform maps one raw item of a copy's source table to the writes it
// becomes in the target: usually one put made with [Repo.PutOp], none to
// skip the item, several to split it into entities.
//
// A transform must be deterministic (the same item gives the same ops) and
// safe for concurrent use: a resumed or repeated run transforms items
// again and must write the same content, and [Migrator.Verify] compares
// the table with the transform's output.
type Transform func(item map[string]types.AttributeValue) ([]WriteOp, error)

// TransformAs returns a [Transform] that decodes each raw item into S with
// the SDK's attributevalue.UnmarshalMap (so `dynamodbav` tags apply) and
// passes it to fn. A decoding error fails the item.
func TransformAs[S any](fn func(S) ([]WriteOp, error)) Transform {
	return func(item map[string]types.AttributeValue) ([]WriteOp, error) {
		var s S
		if err := attributevalue.UnmarshalMap(item, &s); err != nil {
			return nil, fmt.Errorf("singletable: transform: decode source item: %w", err)
		}
		return fn(s)
	}
}

// CopySource names the table a copy migration reads.
type CopySource struct {
	// Table is the source table's name. Its key schema can be anything.
	Table string
	// Client reaches the source table; nil means the migrator's table's
	// client.
	Client Client
}

// CopyMigration returns a migration that scans src and writes what
// transform makes of each item, with batch writes ([BatchWrite]) whose
// unprocessed items are retried with backoff. See [Migrator.Run] for the
// options (segments, writers, rate limit, dry run, progress) and
// [MigrationCounts] for how items are counted.
func CopyMigration(id string, src CopySource, transform Transform) Migration {
	return Migration{ID: id, impl: &copyMigration{src: src, transform: transform}}
}

type copyMigration struct {
	src       CopySource
	transform Transform
}

func (c *copyMigration) kind() string { return "copy" }

func (c *copyMigration) source(ctx context.Context, t *Table) (scanSpec, error) {
	if c.src.Table == "" || c.transform == nil {
		return scanSpec{}, validationErr("", "CopySource", "a copy needs a source table and a transform")
	}
	spec := scanSpec{client: c.src.Client, table: c.src.Table}
	if spec.client == nil {
		spec.client = t.client
	}
	return spec, spec.describe(ctx)
}

// apply runs the transform on one item, catching invalid ops.
func (c *copyMigration) apply(item map[string]types.AttributeValue) ([]WriteOp, error) {
	ops, err := c.transform(item)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.table == nil {
			return nil, validationErr("", "", "transform returned a zero WriteOp: make ops with Repo.PutOp or Repo.DeleteOp")
		}
		if op.err != nil {
			return nil, op.err
		}
	}
	return ops, nil
}

func opKind(op WriteOp) string {
	if op.put != nil {
		return op.entity + " put"
	}
	return op.entity + " delete"
}

func opUnits(op WriteOp) int64 {
	if op.put != nil {
		return capacityUnits(op.put)
	}
	return 1
}

func (c *copyMigration) process(ctx context.Context, r *runner, p *scanPage) {
	var batch []WriteOp
	var owners []int
	flush := func() {
		ops, own := batch, owners
		batch, owners = nil, nil
		r.submit(ctx, p, func() { c.write(ctx, r, p, ops, own) })
	}
	for i, item := range p.items {
		ops, err := c.apply(item)
		switch {
		case err != nil:
			p.fail(i, fmt.Errorf("singletable: migration %s: transform: %w", r.mig.ID, err))
			continue
		case len(ops) == 0:
			p.set(i, outSkipped)
			continue
		}
		p.set(i, outWritten)
		if r.o.DryRun {
			for _, op := range ops {
				p.wrote(opKind(op), 1, opUnits(op))
			}
			continue
		}
		for _, op := range ops {
			batch = append(batch, op)
			owners = append(owners, i)
			if len(batch) == maxBatchWrite {
				flush()
			}
		}
	}
	if len(batch) > 0 {
		flush()
	}
}

// write sends one batch of up to 25 ops (owners[k] is the page item op k
// came from) and records the outcome of each op's item.
func (c *copyMigration) write(ctx context.Context, r *runner, p *scanPage, ops []WriteOp, owners []int) {
	var units int64
	for _, op := range ops {
		units += opUnits(op)
	}
	if err := r.throttle(ctx, units); err != nil {
		p.abort(err)
		return
	}
	bo := r.o.Batch
	bo.Concurrency = 1
	err := batchWrite(ctx, bo, ops)
	failed := map[int]error{}
	if err != nil {
		var be *BatchError
		if !errors.As(err, &be) {
			p.abort(err)
			return
		}
		for _, f := range be.Failed {
			if stopsRun(ctx, f.Err) {
				p.abort(f.Err)
				return
			}
			failed[f.Index] = f.Err
		}
		if len(ops) > 1 && rejectedWhole(be, len(ops)) {
			// DynamoDB rejected the request as a whole (one bad item makes
			// a ValidationException for all 25): send the ops one by one
			// so that only the culprits fail.
			failed = map[int]error{}
			for k, op := range ops {
				if err := batchWrite(ctx, bo, []WriteOp{op}); err != nil {
					if stopsRun(ctx, err) {
						p.abort(err)
						return
					}
					failed[k] = err
				}
			}
		}
	}
	for k, op := range ops {
		if err, bad := failed[k]; bad {
			p.fail(owners[k], fmt.Errorf("singletable: migration %s: write %s: %w", r.mig.ID, opKind(op), err))
			continue
		}
		p.wrote(opKind(op), 1, opUnits(op))
	}
}

// rejectedWhole reports whether every one of n ops failed with the same
// error other than ErrUnprocessed: the request itself was refused.
func rejectedWhole(be *BatchError, n int) bool {
	if len(be.Failed) != n {
		return false
	}
	first := be.Failed[0].Err
	for _, f := range be.Failed {
		if f.Err != first || errors.Is(f.Err, ErrUnprocessed) {
			return false
		}
	}
	return true
}
