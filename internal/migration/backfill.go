package migration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/expr"
)

// Rewrite is how a stored item must change to match its entity's
// declaration.
type Rewrite struct {
	OldKey  map[string]types.AttributeValue
	NewItem map[string]types.AttributeValue // the item after the change
	Set     map[string]types.AttributeValue // managed attributes to set
	Remove  []string                        // managed attributes to remove
	// KeyChanged is set when the primary key changes (a re-key).
	KeyChanged bool
	// Guards are the unique guard items the item owns, which must follow
	// it to its new key.
	Guards []Guard
}

// Guard is one unique guard item: its key and the field it guards.
type Guard struct {
	Field string
	Key   map[string]types.AttributeValue
}

// Changed reports whether the item must be rewritten.
func (w *Rewrite) Changed() bool { return len(w.Set)+len(w.Remove) > 0 }

// Attrs returns the names of the attributes the rewrite changes: those
// it sets, sorted, then those it removes.
func (w *Rewrite) Attrs() []string {
	return append(slices.Sorted(maps.Keys(w.Set)), w.Remove...)
}

// ErrStale is what Backfill.Apply returns when a conditional rewrite found
// the item changed since it was read: the engine reads it again and plans
// its rewrite anew.
var ErrStale = errors.New("singletable: item changed since it was read")

// Backfill brings the stored items of one entity in line with its current
// declaration.
type Backfill struct {
	// Entity is the entity type; the scan selects its items.
	Entity string
	// Select picks the entity's items out of the scan.
	Select Selection
	// Plan renders item again with the current declaration.
	Plan func(item map[string]types.AttributeValue) (*Rewrite, error)
	// Reread reads the item at key consistently; nil when it is gone or no
	// longer of this entity.
	Reread func(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error)
	// Apply makes the rewrite w of item old: an update of its index
	// attributes, or a re-key. It returns ErrStale when old changed.
	Apply func(ctx context.Context, w *Rewrite, old map[string]types.AttributeValue) error
	// ConditionFailed is the sentinel of an item that kept changing until
	// the retry budget was spent.
	ConditionFailed error
}

// Name returns "backfill".
func (b *Backfill) Name() string { return "backfill" }

func (b *Backfill) source(ctx context.Context, t *Table) (scanSpec, error) {
	return entityScan(ctx, t, b.Entity, b.Select)
}

// Selection picks one entity's items out of a scan of the table.
type Selection struct {
	// Filter writes the scan's filter expression; nil keeps the items
	// whose entity type attribute names the entity.
	Filter func(b *expr.Builder) string
	// Owns, when set, decides on each item the filter kept: an item
	// without the entity type attribute is an entity's (one matching
	// keys) only when its key parses with the entity's templates, which a
	// filter cannot test. The items it refuses are not read.
	Owns func(item map[string]types.AttributeValue) bool
}

// entityScan is the scan of one entity's items: by the type attribute,
// or as sel says.
func entityScan(ctx context.Context, t *Table, entity string, sel Selection) (scanSpec, error) {
	spec := scanSpec{
		client: t.Client,
		table:  t.Name,
		filter: func(eb *expr.Builder) string { return eb.Holds(t.EntityTypeAttr, avS(entity)) },
		keep:   sel.Owns,
	}
	if sel.Filter != nil {
		spec.filter = sel.Filter
	}
	return spec, spec.describe(ctx)
}

func (b *Backfill) what(w *Rewrite) string {
	if w.KeyChanged {
		return b.Entity + " re-key"
	}
	return b.Entity + " update"
}

// units is the capacity a rewrite consumes: an update is billed on the
// item's size; a transactional put and delete cost twice each.
func (b *Backfill) units(w *Rewrite, old map[string]types.AttributeValue) int64 {
	if w.KeyChanged {
		return 2 * (capacityUnits(w.NewItem) + capacityUnits(old))
	}
	return capacityUnits(w.NewItem)
}

func (b *Backfill) process(ctx context.Context, r *runner, p *scanPage) {
	for i, item := range p.items {
		w, err := b.Plan(item)
		switch {
		case err != nil:
			p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
			continue
		case !w.Changed():
			p.set(i, outSkipped)
			continue
		case r.o.DryRun:
			p.set(i, outWritten)
			p.wrote(b.what(w), 1, b.units(w, item))
			continue
		}
		r.submit(ctx, p, func() { b.rewriteItem(ctx, r, p, i, item, w) })
	}
}

// rewriteItem applies w to item, re-reading and re-planning the item when
// it changed meanwhile, until the rewrite succeeds, is no longer needed,
// or the retry budget is spent. A rewrite planned again and a throttled
// one share that budget.
func (b *Backfill) rewriteItem(ctx context.Context, r *runner, p *scanPage, i int, item map[string]types.AttributeValue, w *Rewrite) {
	key := w.OldKey
	r.retryItem(ctx, p, i, "backfill", b.ConditionFailed, func(ctx context.Context) error {
		if w == nil {
			cur, err := b.Reread(ctx, key)
			if err == nil && cur != nil {
				w, err = b.Plan(cur)
			}
			switch {
			case err != nil && stopsRun(ctx, err):
				p.abort(err)
				return nil
			case err != nil:
				p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
				return nil
			case cur == nil || !w.Changed():
				p.set(i, outSkipped) // deleted, or already rewritten by its writer
				return nil
			}
			item = cur
		}
		units := b.units(w, item)
		if err := r.throttle(ctx, units); err != nil {
			p.abort(err)
			return nil
		}
		err := b.Apply(ctx, w, item)
		switch {
		case err == nil:
			p.set(i, outWritten)
			p.wrote(b.what(w), 1, units)
		case errors.Is(err, ErrStale):
			w = nil
			p.retry()
			return backoff.Again(err)
		case backoff.IsRetryableTx(err) && ctx.Err() == nil:
			return backoff.Again(err)
		case stopsRun(ctx, err):
			p.abort(err)
		default:
			p.fail(i, err)
		}
		return nil
	})
}
