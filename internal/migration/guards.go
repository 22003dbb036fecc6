package migration

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
)

// Claim is what adopting one item's unique guards comes to.
type Claim struct {
	// Writes counts the guard items the claim writes (missing guards, and
	// stale ones taken over); 0 when the item holds all its guards.
	Writes int
	// Units is the capacity the claim's transaction consumes.
	Units int64
	// Duplicate, when not nil, is the error of a value another item
	// already holds: the item fails with it, after the other claims.
	Duplicate error
	// Apply writes the claims (nil when Writes is 0); it returns ErrStale
	// when the item, or a guard or an owner read, changed meanwhile.
	Apply func(ctx context.Context) error
	// Missing names the uniques whose guard the item lacks, for Verify.
	Missing []string
}

// Guards claims the unique guard items of an entity's stored items: the
// adoption of a table whose items were written without them (by another
// service, or before the declaration).
type Guards struct {
	// Entity is the entity type; the scan selects its items.
	Entity string
	// Select picks the entity's items out of the scan.
	Select Selection
	// Plan reads the guards of item and decides what to claim.
	Plan func(ctx context.Context, item map[string]types.AttributeValue) (*Claim, error)
	// Reread reads the item at key consistently; nil when it is gone or no
	// longer of this entity.
	Reread func(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error)
	// ConditionFailed is the sentinel of an item that kept changing until
	// the retry budget was spent.
	ConditionFailed error
}

// Name returns "guards".
func (g *Guards) Name() string { return "guards" }

func (g *Guards) source(ctx context.Context, t *Table) (scanSpec, error) {
	return entityScan(ctx, t, g.Entity, g.Select)
}

// process claims the guards of every item of the page; planning reads, so
// it runs on the writers (in a dry run too, which then writes nothing).
func (g *Guards) process(ctx context.Context, r *runner, p *scanPage) {
	for i, item := range p.items {
		r.submit(ctx, p, func() { g.claimItem(ctx, r, p, i, item) })
	}
}

// claimItem plans and applies the claims of item, reading it again and
// planning anew when it (or a guard) changed meanwhile, until the claims
// are made or the retry budget is spent.
func (g *Guards) claimItem(ctx context.Context, r *runner, p *scanPage, i int, item map[string]types.AttributeValue) {
	key := r.t.KeyOf(item)
	r.retryItem(ctx, p, i, "guards", g.ConditionFailed, func(ctx context.Context) error {
		if item == nil {
			cur, err := g.Reread(ctx, key)
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
		c, err := g.Plan(ctx, item)
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
			case errors.Is(err, ErrStale):
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
			p.wrote(g.Entity+" guard", int64(c.Writes), c.Units)
		}
		switch {
		case c.Duplicate != nil:
			p.fail(i, c.Duplicate)
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
func (g *Guards) verify(ctx context.Context, t *Table, o VerifyOptions) (*VerifyReport, error) {
	return verifyEach(ctx, t, o, g.Name(), g.Entity, g.Select, func(v *verifier, d Difference, item map[string]types.AttributeValue) error {
		c, err := g.Plan(ctx, item)
		switch {
		case err != nil && stopsRun(ctx, err):
			return err
		case err != nil:
			d.Kind, d.Attrs = "different", []string{err.Error()}
		case c.Duplicate != nil:
			d.Kind, d.Attrs = "different", []string{c.Duplicate.Error()}
		case len(c.Missing) > 0:
			d.Kind, d.Attrs = "missing", c.Missing
		default:
			return nil
		}
		v.note(d)
		return nil
	})
}
