package migration

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Op is one write a copy's transform made, as the engine sees it.
type Op struct {
	// Entity is the entity type the op writes.
	Entity string
	// Put is the item a put writes; nil for a delete.
	Put map[string]types.AttributeValue
	// Key is the item's primary key in its table, and KeyAttrs names that
	// table's key attributes (partition key first).
	Key      map[string]types.AttributeValue
	KeyAttrs []string
	// Ref is the root's op, handed back to Write and Read.
	Ref any
}

func (op Op) kind() string {
	if op.Put != nil {
		return op.Entity + " put"
	}
	return op.Entity + " delete"
}

func (op Op) units() int64 {
	if op.Put != nil {
		return capacityUnits(op.Put)
	}
	return 1
}

// Copy scans another table and writes what Transform makes of each item.
type Copy struct {
	// Source is the scanned table, reached through Client.
	Source string
	Client Client
	// Transform turns one source item into ops, refusing invalid ones.
	Transform func(item map[string]types.AttributeValue) ([]Op, error)
	// Write sends up to BatchSize ops as one batch write, retrying
	// unprocessed items. err is nil when every op was applied; otherwise
	// failed maps the index of each op that was not to why, or is nil when
	// err is not about single ops (then the run stops).
	Write func(ctx context.Context, ops []Op) (failed map[int]error, err error)
	// Read reads the items at the ops' keys (consistently), nil where
	// there is none.
	Read func(ctx context.Context, ops []Op) ([]map[string]types.AttributeValue, error)
	// BatchSize is the most ops Write takes at once.
	BatchSize int
	// Unprocessed is the error of an op the batch writer still had
	// unprocessed after its retries.
	Unprocessed error
}

// Name returns "copy".
func (c *Copy) Name() string { return "copy" }

func (c *Copy) source(ctx context.Context, _ *Table) (scanSpec, error) {
	spec := scanSpec{client: c.Client, table: c.Source}
	return spec, spec.describe(ctx)
}

func (c *Copy) process(ctx context.Context, r *runner, p *scanPage) {
	var batch []Op
	var owners []int
	flush := func() {
		ops, own := batch, owners
		batch, owners = nil, nil
		r.submit(ctx, p, func() { c.write(ctx, r, p, ops, own) })
	}
	for i, item := range p.items {
		ops, err := c.Transform(item)
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
				p.wrote(op.kind(), 1, op.units())
			}
			continue
		}
		for _, op := range ops {
			batch = append(batch, op)
			owners = append(owners, i)
			if len(batch) == c.BatchSize {
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
func (c *Copy) write(ctx context.Context, r *runner, p *scanPage, ops []Op, owners []int) {
	var units int64
	for _, op := range ops {
		units += op.units()
	}
	if err := r.throttle(ctx, units); err != nil {
		p.abort(err)
		return
	}
	failed, err := c.Write(ctx, ops)
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
		if len(ops) > 1 && c.rejectedWhole(failed, len(ops)) {
			// DynamoDB rejected the request as a whole (one bad item makes
			// a ValidationException for all 25): send the ops one by one
			// so that only the culprits fail.
			failed = map[int]error{}
			for k, op := range ops {
				if _, err := c.Write(ctx, []Op{op}); err != nil {
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
			p.fail(owners[k], fmt.Errorf("singletable: migration %s: write %s: %w", r.mig.ID, op.kind(), err))
			continue
		}
		p.wrote(op.kind(), 1, op.units())
	}
}

// rejectedWhole reports whether every one of n ops failed with the same
// error other than an unprocessed item: the request itself was refused.
func (c *Copy) rejectedWhole(failed map[int]error, n int) bool {
	if len(failed) != n {
		return false
	}
	first := failed[0]
	for _, err := range failed {
		if err != first || errors.Is(err, c.Unprocessed) {
			return false
		}
	}
	return true
}
