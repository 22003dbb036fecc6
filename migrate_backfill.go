package singletable

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// BackfillMigration returns a migration that brings every stored item of
// r's entity in line with the entity's current declaration: it scans the
// table for items of the entity type, renders their primary key and index
// attributes again, and rewrites the items whose attributes differ. Use it
// after adding an index (GSI1 on items that exist), changing a template,
// or adding a sparse predicate. Deploy the new declaration first, so that
// the application's own writes already render the new keys.
//
// A change of index attributes only is an UpdateItem that sets and removes
// just those attributes, on condition that the attributes they are
// rendered from still hold the values read. A change of primary key is one
// transaction: a put of the item at its new key (which must be free) and a
// delete of the old item on condition that every attribute read is
// unchanged (and that no attribute of T absent then has appeared). So a
// concurrent writer is never overwritten and no concurrent update is lost:
// when a condition fails, the item is read again and its rewrite planned
// anew. Attributes that T does not declare are carried over untouched.
//
// A re-key whose new key holds another item with different content fails
// that item with [ErrAlreadyExists] (two items that the new template maps
// to one key, or an item written there since) rather than lose either.
func BackfillMigration[T any](id string, r *Repo[T]) Migration {
	return Migration{ID: id, impl: &backfill[T]{r: r}}
}

type backfill[T any] struct{ r *Repo[T] }

// errStale: a conditional rewrite found the item changed since it was read.
var errStale = errors.New("singletable: item changed since it was read")

func (b *backfill[T]) kind() string { return "backfill" }

func (b *backfill[T]) source(ctx context.Context, t *Table) (scanSpec, error) {
	if b.r == nil {
		return scanSpec{}, validationErr("", "", "a backfill needs a repository")
	}
	if b.r.t.name != t.name {
		return scanSpec{}, validationErr(b.r.e.name, "", "backfill repository is bound to table %s, not %s", b.r.t.name, t.name)
	}
	spec := scanSpec{
		client: b.r.t.client,
		table:  b.r.t.name,
		filter: attrEq(b.r.t.opts.EntityTypeAttr, avS(b.r.e.name)),
	}
	return spec, spec.describe(ctx)
}

func (b *backfill[T]) what(w *rewrite) string {
	if w.keyChanged {
		return b.r.e.name + " re-key"
	}
	return b.r.e.name + " update"
}

// units is the capacity a rewrite consumes: an update is billed on the
// item's size; a transactional put and delete cost twice each.
func (b *backfill[T]) units(w *rewrite, old map[string]types.AttributeValue) int64 {
	if w.keyChanged {
		return 2 * (capacityUnits(w.newItem) + capacityUnits(old))
	}
	return capacityUnits(w.newItem)
}

func (b *backfill[T]) process(ctx context.Context, r *runner, p *scanPage) {
	for i, item := range p.items {
		w, err := b.r.e.planRewrite(b.r.t, item)
		switch {
		case err != nil:
			p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
			continue
		case !w.changed():
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
func (b *backfill[T]) rewriteItem(ctx context.Context, r *runner, p *scanPage, i int, item map[string]types.AttributeValue, w *rewrite) {
	policy := backoff.Default
	key := w.oldKey
	// Each try records the item's outcome itself, unless it asks for
	// another try; so Do's error is only a budget spent or a wait cut short.
	never := func(error) bool { return false }
	err := policy.Do(ctx, nil, never, func(ctx context.Context) error {
		if w == nil {
			cur, err := b.reread(ctx, key)
			if err == nil && cur != nil {
				w, err = b.r.e.planRewrite(b.r.t, cur)
			}
			switch {
			case err != nil && stopsRun(ctx, err):
				p.abort(err)
				return nil
			case err != nil:
				p.fail(i, fmt.Errorf("singletable: backfill %s: %w", r.mig.ID, err))
				return nil
			case cur == nil || !w.changed():
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
		var err error
		if w.keyChanged {
			err = b.rekey(ctx, w, item)
		} else {
			err = b.update(ctx, w, item)
		}
		switch {
		case err == nil:
			p.set(i, outWritten)
			p.wrote(b.what(w), 1, units)
		case errors.Is(err, errStale):
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
	switch {
	case err == nil:
	case stopsRun(ctx, err):
		p.abort(err)
	default:
		p.fail(i, wrapSentinel(ErrConditionFailed, fmt.Sprintf("backfill %s: item still changing after %d attempts", r.mig.ID, max(policy.Attempts, 1)), err))
	}
}

// reread reads the item at key consistently; nil when it is gone or is no
// longer of this entity.
func (b *backfill[T]) reread(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := b.r.t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &b.r.t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("singletable: backfill %s: read: %w", b.r.e.name, err)
	}
	if len(out.Item) == 0 || !b.r.isMine(out.Item) {
		return nil, nil
	}
	return out.Item, nil
}

// update sets and removes the changed index attributes, provided the
// attributes they are rendered from, and the ones it changes, still hold
// the values read.
func (b *backfill[T]) update(ctx context.Context, w *rewrite, old map[string]types.AttributeValue) error {
	t := b.r.t
	var eb expr.Builder
	var u expr.Update
	for _, a := range sortedKeys(w.set) {
		u.Set(eb.Name(a), eb.Value(w.set[a]))
	}
	for _, a := range w.remove {
		u.Remove(eb.Name(a))
	}
	update := u.String()
	conds := []string{
		expr.AttributeExists(eb.Name(t.opts.PartitionKey)),
		eb.Holds(t.opts.EntityTypeAttr, avS(b.r.e.name)),
	}
	watched := b.r.e.sourceAttrs()
	for _, a := range slices.Concat(sortedKeys(w.set), w.remove) {
		watched = appendAttr(watched, a)
	}
	for _, a := range watched {
		conds = append(conds, eb.Holds(a, old[a]))
	}
	cond := expr.And(conds...)
	_, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       w.oldKey,
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  eb.Names(),
		ExpressionAttributeValues: eb.Values(),
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return errStale
		}
		return fmt.Errorf("singletable: backfill %s: update: %w", b.r.e.name, err)
	}
	return nil
}

// unchanged is the condition that the item still is old: every attribute
// read holds its value, and no attribute of T that was absent exists.
func (b *backfill[T]) unchanged(eb *expr.Builder, old map[string]types.AttributeValue) string {
	var conds []string
	for _, a := range sortedKeys(old) {
		conds = append(conds, eb.Holds(a, old[a]))
	}
	for _, a := range b.r.e.fieldAttrs() {
		if _, ok := old[a]; !ok {
			conds = append(conds, eb.Holds(a, nil))
		}
	}
	return expr.And(conds...)
}

// rekey moves the item to its new primary key in one transaction.
func (b *backfill[T]) rekey(ctx context.Context, w *rewrite, old map[string]types.AttributeValue) error {
	t := b.r.t
	if err := itemsize.Check(w.newItem); err != nil {
		return &ValidationError{Entity: b.r.e.name, Reason: "re-keyed item too large", Err: err}
	}
	var pb, db expr.Builder
	putCond := expr.AttributeNotExists(pb.Name(t.opts.PartitionKey))
	delCond := b.unchanged(&db, old)
	items := []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                           &t.name,
			Item:                                w.newItem,
			ConditionExpression:                 &putCond,
			ExpressionAttributeNames:            pb.Names(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Delete: &types.Delete{
			TableName:                 &t.name,
			Key:                       w.oldKey,
			ConditionExpression:       &delCond,
			ExpressionAttributeNames:  db.Names(),
			ExpressionAttributeValues: db.Values(),
		}},
	}
	for _, g := range w.guards {
		items = append(items, b.moveGuard(g, w))
	}
	_, err := t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("singletable: backfill %s: re-key: %w", b.r.e.name, err)
	}
	code := func(i int) string {
		if i < len(tce.CancellationReasons) {
			return aws.ToString(tce.CancellationReasons[i].Code)
		}
		return ""
	}
	switch {
	case code(1) == "ConditionalCheckFailed":
		return errStale
	case code(0) == "ConditionalCheckFailed":
		return b.occupied(ctx, w, old, tce.CancellationReasons[0].Item, err)
	}
	for i, g := range w.guards {
		if code(2+i) == "ConditionalCheckFailed" {
			return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: the unique guard of %s belongs to another item",
				b.r.e.name, t.keyText(w.oldKey), g.field), err)
		}
	}
	return fmt.Errorf("singletable: backfill %s: re-key: %w", b.r.e.name, err)
}

// moveGuard hands a unique guard item over to the item's new key: it must
// belong to the old key (or be missing, which the move repairs).
func (b *backfill[T]) moveGuard(g guardRef, w *rewrite) types.TransactWriteItem {
	t := b.r.t
	var eb expr.Builder
	var u expr.Update
	u.Set(eb.Name(t.opts.EntityTypeAttr), eb.ValueS(UniqueGuardType))
	u.Set(eb.Name(guardOwnerPK), eb.Value(w.newItem[t.opts.PartitionKey]))
	was := []string{eb.Holds(guardOwnerPK, w.oldKey[t.opts.PartitionKey])}
	if t.opts.SortKey != "" {
		u.Set(eb.Name(guardOwnerSK), eb.Value(w.newItem[t.opts.SortKey]))
		was = append(was, eb.Holds(guardOwnerSK, w.oldKey[t.opts.SortKey]))
	}
	update := u.String()
	cond := expr.Or(expr.AttributeNotExists(eb.Name(t.opts.PartitionKey)), expr.And(was...))
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &t.name,
		Key:                       g.key,
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  eb.Names(),
		ExpressionAttributeValues: eb.Values(),
	}}
}

// occupied handles a re-key whose new key is taken. If the item there is
// exactly the one the re-key would write, the move was already made (by
// the application writing the new key): the old item is deleted, on the
// same condition. Otherwise the item fails with ErrAlreadyExists.
func (b *backfill[T]) occupied(ctx context.Context, w *rewrite, old, there map[string]types.AttributeValue, cause error) error {
	t := b.r.t
	if len(there) == 0 {
		out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: t.primaryKeyOf(w.newItem), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("singletable: backfill %s: read new key: %w", b.r.e.name, err)
		}
		there = out.Item
	}
	if len(there) == 0 {
		return errStale // freed meanwhile: plan again
	}
	if !itemsEqual(there, w.newItem) {
		return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: another item is at the new key %s",
			b.r.e.name, t.keyText(w.oldKey), t.keyText(w.newItem)), cause)
	}
	var db expr.Builder
	cond := b.unchanged(&db, old)
	_, err := t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &t.name,
		Key:                       w.oldKey,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  db.Names(),
		ExpressionAttributeValues: db.Values(),
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return errStale
		}
		return fmt.Errorf("singletable: backfill %s: delete old key: %w", b.r.e.name, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
