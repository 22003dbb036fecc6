package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// isPut reports whether op, a put or a delete, is a put: it has an item.
func isPut(op singletable.WriteOp) bool { return op.Item() != nil }

// opKind names what op writes: "User put", "User delete".
func opKind(op singletable.WriteOp) string {
	if isPut(op) {
		return op.Entity() + " put"
	}
	return op.Entity() + " delete"
}

// opUnits is the write capacity op consumes.
func opUnits(op singletable.WriteOp) int64 {
	if isPut(op) {
		return itemsize.WriteUnits(op.Item())
	}
	return 1
}

// copyKind scans another table and writes what transform makes of each
// item through the batch writer (one request at a time: the engine's
// writers say how many are in flight), and reads them back with the
// batch reader.
type copyKind struct {
	src       Source
	transform Transform
}

func (c *copyKind) name() string { return "copy" }

func (c *copyKind) check(*table) error {
	if c.src.Table == "" || c.transform == nil {
		return validationErr("", "Source", "a copy needs a source table and a transform")
	}
	return nil
}

func (c *copyKind) source(ctx context.Context, t *table) (scanSpec, error) {
	client := c.src.Client
	if client == nil {
		client = t.client
	}
	spec := scanSpec{client: client, table: c.src.Table}
	return spec, spec.describe(ctx)
}

// ops transforms one source item, refusing invalid ops.
func (c *copyKind) ops(item map[string]types.AttributeValue) ([]singletable.WriteOp, error) {
	ops, err := c.transform(item)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.Table() == nil {
			return nil, validationErr("", "", "transform returned a zero WriteOp: make ops with Repo.PutOp or Repo.DeleteOp")
		}
		if op.Err() != nil {
			return nil, op.Err()
		}
		if op.Key() == nil {
			return nil, validationErr(op.Entity(), "", "transform returned an op that is neither a put nor a delete: a copy writes Repo.PutOp and Repo.DeleteOp ops")
		}
	}
	return ops, nil
}

// batchSize is the most ops one batch write request takes.
const batchSize = 25

func (c *copyKind) process(ctx context.Context, r *runner, p *scanPage) {
	var batch []singletable.WriteOp
	var owners []int
	flush := func() {
		ops, own := batch, owners
		batch, owners = nil, nil
		r.submit(ctx, p, func() { c.write(ctx, r, p, ops, own) })
	}
	for i, item := range p.items {
		ops, err := c.ops(item)
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
			if len(batch) == batchSize {
				flush()
			}
		}
	}
	if len(batch) > 0 {
		flush()
	}
}

// write sends one batch of ops (owners[k] is the page item op k came
// from) and records the outcome of each op's item.
func (c *copyKind) write(ctx context.Context, r *runner, p *scanPage, ops []singletable.WriteOp, owners []int) {
	var units int64
	for _, op := range ops {
		units += opUnits(op)
	}
	if err := r.throttle(ctx, units); err != nil {
		p.abort(err)
		return
	}
	failed, err := writeBatch(ctx, r.o.Batch, ops)
	if err != nil {
		if failed == nil {
			p.abort(err)
			return
		}
		for _, ferr := range failed {
			if stopsRun(ctx, ferr) {
				p.abort(ferr)
				return
			}
		}
		if len(ops) > 1 && rejectedWhole(failed, len(ops)) {
			// DynamoDB rejected the request as a whole (one bad item makes
			// a ValidationException for all 25): send the ops one by one
			// so that only the culprits fail.
			failed = map[int]error{}
			for k, op := range ops {
				if _, err := writeBatch(ctx, r.o.Batch, []singletable.WriteOp{op}); err != nil {
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

// writeBatch sends up to batchSize ops as one batch write, retrying
// unprocessed items. err is nil when every op was applied; otherwise
// failed maps the index of each op that was not to why, or is nil when
// err is not about single ops (then the run stops).
func writeBatch(ctx context.Context, o singletable.BatchOptions, ops []singletable.WriteOp) (failed map[int]error, err error) {
	err = singletable.BatchWrite(ctx, ops, func(b *singletable.BatchOptions) {
		*b = o
		b.Concurrency = 1
	})
	var be *singletable.BatchError
	if err == nil || !errors.As(err, &be) {
		return nil, err
	}
	failed = make(map[int]error, len(be.Failed))
	for _, f := range be.Failed {
		failed[f.Index] = f.Err
	}
	if !be.Sent {
		// Refused before anything was sent (an op a batch cannot carry,
		// such as a put with WriteOptions): write the others.
		var rest []singletable.WriteOp
		var at []int
		for i, op := range ops {
			if _, bad := failed[i]; !bad {
				rest, at = append(rest, op), append(at, i)
			}
		}
		if len(rest) > 0 {
			more, err := writeBatch(ctx, o, rest)
			if err != nil && more == nil {
				return nil, err
			}
			for k, ferr := range more {
				failed[at[k]] = ferr
			}
		}
	}
	return failed, err
}

// rejectedWhole reports whether every one of n ops failed with the same
// error other than an unprocessed item: the request itself was refused.
func rejectedWhole(failed map[int]error, n int) bool {
	if len(failed) != n {
		return false
	}
	first := failed[0]
	for _, err := range failed {
		if err != first || errors.Is(err, singletable.ErrUnprocessed) {
			return false
		}
	}
	return true
}
