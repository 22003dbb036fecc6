package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/backoff"
)

// guardsKind claims the unique guard items of an entity's stored items:
// the adoption of a table whose items were written without them (by
// another service, or before the declaration).
type guardsKind struct{ entityKind }

func (g *guardsKind) name() string { return "guards" }

func (g *guardsKind) check(t *table) error {
	if err := g.entityKind.check(t, "guard migration"); err != nil {
		return err
	}
	if g.unique == 0 {
		return validationErr(g.entity, "", "guard migration: the entity declares no Unique")
	}
	return nil
}

// duplicate is the error of the claim c of the item at key when another
// item holds one of its values, nil otherwise.
func (g *guardsKind) duplicate(t *table, key map[string]types.AttributeValue, c *singletable.StoredChange) error {
	if c.Holder == nil {
		return nil
	}
	return &DuplicateError{Entity: g.entity, Fields: c.Taken, Key: key, Holder: c.Holder, pk: t.pk, sk: t.sk}
}

// process claims the guards of every item of the page; planning reads, so
// it runs on the writers (in a dry run too, which then writes nothing).
func (g *guardsKind) process(ctx context.Context, r *runner, p *scanPage) {
	for i, item := range p.items {
		r.submit(ctx, p, func() { g.claimItem(ctx, r, p, i, item) })
	}
}

// claimItem plans and applies the claims of item, reading it again and
// planning anew when it (or a guard) changed meanwhile, until the claims
// are made or the retry budget is spent.
func (g *guardsKind) claimItem(ctx context.Context, r *runner, p *scanPage, i int, item map[string]types.AttributeValue) {
	key := r.t.keyOf(item)
	r.retryItem(ctx, p, i, "guards", func(ctx context.Context) error {
		if item == nil {
			cur, err := g.reread(ctx, key)
			switch {
			case err != nil && stopsRun(ctx, err):
				p.abort(err)
				return nil
			case err != nil:
				p.fail(i, fmt.Errorf("singletable: guards %s: %w", r.mig.ID, err))
				return nil
			case cur == nil:
				p.set(i, outSkipped) // deleted meanwhile: nothing to guard
				return nil
			}
			item = cur
		}
		c, err := g.items.ClaimGuards(ctx, item)
		switch {
		case err != nil && stopsRun(ctx, err):
			p.abort(err)
			return nil
		case err != nil:
			p.fail(i, fmt.Errorf("singletable: guards %s: %w", r.mig.ID, err))
			return nil
		}
		if c.Writes > 0 && !r.o.DryRun {
			if err := r.throttle(ctx, c.Units); err != nil {
				p.abort(err)
				return nil
			}
			err := c.Apply(ctx)
			switch {
			case errors.Is(err, singletable.ErrConditionFailed): // changed since read
				item = nil
				p.retry()
				return backoff.Again(err)
			case err != nil && backoff.IsRetryableTx(err) && ctx.Err() == nil:
				return backoff.Again(err)
			case err != nil && stopsRun(ctx, err):
				p.abort(err)
				return nil
			case err != nil:
				p.fail(i, err)
				return nil
			}
		}
		if c.Writes > 0 {
			p.wrote(g.entity+" guard", int64(c.Writes), c.Units)
		}
		switch dup := g.duplicate(r.t, key, c); {
		case dup != nil:
			p.fail(i, dup)
		case c.Writes > 0:
			p.set(i, outWritten)
		default:
			p.set(i, outSkipped)
		}
		return nil
	})
}

// verify lists the items that lack a guard, as "missing" differences
// naming the uniques, and duplicates as "different" ones.
func (g *guardsKind) verify(ctx context.Context, t *table, o VerifyOptions) (*VerifyReport, error) {
	return verifyEach(ctx, t, o, g.name(), &g.entityKind, func(v *verifier, d Difference, item map[string]types.AttributeValue) error {
		c, err := g.items.ClaimGuards(ctx, item)
		switch {
		case err != nil && stopsRun(ctx, err):
			return err
		case err != nil:
			d.Kind, d.Attrs = "different", []string{err.Error()}
		case c.Holder != nil:
			d.Kind, d.Attrs = "different", []string{g.duplicate(t, d.Key, c).Error()}
		case len(c.Attrs) > 0:
			d.Kind, d.Attrs = "missing", c.Attrs
		default:
			return nil
		}
		v.note(d)
		return nil
	})
}
