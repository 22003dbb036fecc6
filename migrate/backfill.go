package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/backoff"
)

// entityKind is what a backfill and a guard migration share: one entity's
// stored items, which the root package selects, reads, plans and writes
// through its write plan.
type entityKind struct {
	items  *singletable.StoredItems
	entity string // the entity type
	// unique counts the entity's Unique declarations.
	unique int
}

func newEntityKind(r Entity) entityKind {
	if r == nil {
		return entityKind{}
	}
	k := entityKind{items: r.StoredItems()}
	if k.items != nil {
		d := k.items.Describe()
		k.entity, k.unique = d.Type, len(d.Unique)
	}
	return k
}

// check refuses an entity missing, or bound to another table than t; what
// names the migration kind in the message.
func (k *entityKind) check(t *table, what string) error {
	if k.items == nil {
		return validationErr("", "", "a %s needs a repository", what)
	}
	if bound := k.items.Table().Name(); bound != t.name {
		return validationErr(k.entity, "", "%s repository is bound to table %s, not %s", what, bound, t.name)
	}
	return nil
}

// source is the scan of the entity's items.
func (k *entityKind) source(ctx context.Context, t *table) (scanSpec, error) {
	spec := scanSpec{client: t.client, table: t.name, entity: k.items}
	return spec, spec.describe(ctx)
}

// reread reads the item at key again; nil when it is gone or no longer of
// this entity.
func (k *entityKind) reread(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	item, err := k.items.Read(ctx, key)
	if err != nil || item == nil || !k.items.Owns(item) {
		return nil, err
	}
	return item, nil
}

// backfillKind brings the stored items of one entity in line with its
// current declaration.
type backfillKind struct{ entityKind }

func (b *backfillKind) name() string { return "backfill" }

func (b *backfillKind) check(t *table) error { return b.entityKind.check(t, "backfill") }

// what names the kind of a rewrite, for Report.Ops.
func (b *backfillKind) what(w *singletable.StoredChange) string {
	if w.Rekey {
		return b.entity + " re-key"
	}
	return b.entity + " update"
}

func (b *backfillKind) process(ctx context.Context, r *runner, p *scanPage) {
	for i, item := range p.items {
		w, err := b.items.Rewrite(item)
		switch {
		case err != nil:
			p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
			continue
		case w.Writes == 0:
			p.set(i, outSkipped)
			continue
		case r.o.DryRun:
			p.set(i, outWritten)
			p.wrote(b.what(w), 1, w.Units)
			continue
		}
		r.submit(ctx, p, func() { b.rewriteItem(ctx, r, p, i, r.t.keyOf(item), w) })
	}
}

// rewriteItem applies w to the item at key, re-reading and re-planning the
// item when it changed meanwhile, until the rewrite succeeds, is no longer
// needed, or the retry budget is spent. A rewrite planned again and a
// throttled one share that budget.
func (b *backfillKind) rewriteItem(ctx context.Context, r *runner, p *scanPage, i int, key map[string]types.AttributeValue, w *singletable.StoredChange) {
	r.retryItem(ctx, p, i, "backfill", func(ctx context.Context) error {
		if w == nil {
			cur, err := b.reread(ctx, key)
			if err == nil && cur != nil {
				w, err = b.items.Rewrite(cur)
			}
			switch {
			case err != nil && stopsRun(ctx, err):
				p.abort(err)
				return nil
			case err != nil:
				p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
				return nil
			case cur == nil || w.Writes == 0:
				p.set(i, outSkipped) // deleted, or already rewritten by its writer
				return nil
			}
		}
		if err := r.throttle(ctx, w.Units); err != nil {
			p.abort(err)
			return nil
		}
		err := w.Apply(ctx)
		switch {
		case err == nil:
			p.set(i, outWritten)
			p.wrote(b.what(w), 1, w.Units)
		case errors.Is(err, singletable.ErrConditionFailed):
			w = nil // changed since read: read it again
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

func (b *backfillKind) verify(ctx context.Context, t *table, o VerifyOptions) (*VerifyReport, error) {
	return verifyEach(ctx, t, o, b.name(), &b.entityKind, func(v *verifier, d Difference, item map[string]types.AttributeValue) error {
		w, err := b.items.Rewrite(item)
		switch {
		case err != nil:
			d.Kind, d.Attrs = "different", []string{err.Error()}
		case w.Writes > 0:
			d.Kind, d.Attrs = "stale", w.Attrs
		default:
			return nil
		}
		v.note(d)
		return nil
	})
}
