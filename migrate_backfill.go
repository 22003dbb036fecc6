package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/migration"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The generic edge of migrations: what the engine (internal/migration)
// needs of an entity and a repository, handed over as function values.
// A backfill renders an entity's stored items again and rewrites them
// with conditions taken from the write plan (ownership, the unique guards'
// owner condition); a copy writes its transform's ops with the batch
// writer and reads them back for verification.

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
func (r *Repo[T]) BackfillMigration(id string) Migration {
	return Migration{ID: id, kind: "backfill", engine: func(t *Table, _ BatchOptions) (migration.Kind, error) {
		if r == nil {
			return nil, validationErr("", "", "a backfill needs a repository")
		}
		if r.t.name != t.name {
			return nil, validationErr(r.e.name, "", "backfill repository is bound to table %s, not %s", r.t.name, t.name)
		}
		return &migration.Backfill{
			Entity:          r.e.name,
			Select:          r.selection(),
			Plan:            r.planRewrite,
			Reread:          r.reread,
			Apply:           r.applyRewrite,
			ConditionFailed: ErrConditionFailed,
		}, nil
	}}
}

// managedAttrs returns the attributes the declaration renders rather than
// the struct: the primary key, templated index keys, and the attributes of
// multi-attribute index keys (stored in their key form: see
// IndexSchema.PartitionAttrs).
func (e *entityDef) managedAttrs(t *Table) []string {
	out := []string{t.opts.PartitionKey}
	if e.sk.defined() && t.opts.SortKey != "" {
		out = append(out, t.opts.SortKey)
	}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				out = appendAttr(out, f.Attr)
			}
			continue
		}
		out = appendAttr(out, p.pkAttr)
		if p.skAttr != "" {
			out = appendAttr(out, p.skAttr)
		}
	}
	return out
}

// sourceAttrs returns the attributes the managed attributes are rendered
// from: the key template fields, index template and predicate fields.
func (e *entityDef) sourceAttrs() []string {
	var out []string
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
		out = appendAttr(out, f.Attr)
	}
	for _, p := range e.indexes {
		for _, f := range p.deps {
			out = appendAttr(out, f.Attr)
		}
	}
	return out
}

func appendAttr(s []string, a string) []string {
	if a == "" || slices.Contains(s, a) {
		return s
	}
	return append(s, a)
}

// planRewrite decodes item, renders it again with the current declaration
// and compares the managed attributes. Attributes the declaration does not
// manage, including ones T does not know, are kept as they are.
func (r *Repo[T]) planRewrite(item map[string]types.AttributeValue) (*migration.Rewrite, error) {
	e, t := r.e, r.t
	v, err := e.decode(t, item)
	if err != nil {
		return nil, err
	}
	rendered, err := e.encode(t, v)
	if err != nil {
		return nil, err
	}
	w := &migration.Rewrite{OldKey: t.primaryKeyOf(item), NewItem: maps.Clone(item), Set: map[string]types.AttributeValue{}}
	keys := []string{t.opts.PartitionKey, t.opts.SortKey}
	for _, a := range e.managedAttrs(t) {
		old, had := item[a]
		nv, has := rendered[a]
		switch {
		case has && (!had || !avEqual(old, nv)):
			w.Set[a] = nv
			w.NewItem[a] = nv
		case !has && had:
			w.Remove = append(w.Remove, a)
			delete(w.NewItem, a)
		default:
			continue
		}
		if slices.Contains(keys, a) {
			w.KeyChanged = true
		}
	}
	if w.KeyChanged {
		rv := reflect.ValueOf(&v).Elem()
		for _, u := range e.guards.unique {
			key, ok, err := r.guardKey(u, rv)
			if err != nil {
				return nil, err
			}
			if ok {
				w.Guards = append(w.Guards, migration.Guard{Field: u.name, Key: key})
			}
		}
	}
	return w, nil
}

// reread reads the item at key consistently; nil when it is gone or is no
// longer of this entity.
func (r *boundEntity) reread(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := migrationClient{r.t}.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("singletable: backfill %s: read: %w", r.e.name, err)
	}
	if len(out.Item) == 0 || !r.isMine(out.Item) {
		return nil, nil
	}
	return out.Item, nil
}

// applyRewrite makes the rewrite w of the item old: an update of its
// index attributes, or a re-key.
func (r *boundEntity) applyRewrite(ctx context.Context, w *migration.Rewrite, old map[string]types.AttributeValue) error {
	if w.KeyChanged {
		return r.rekey(ctx, w, old)
	}
	return r.updateIndexAttrs(ctx, w, old)
}

// holds is the check that attribute a holds av, or is absent when av is
// nil.
func holds(a string, av types.AttributeValue) writeplan.Check {
	if av == nil {
		return writeplan.AttrNotExists(a)
	}
	return writeplan.AttrEq(a, av)
}

// updateIndexAttrs sets and removes the changed index attributes of an
// existing item of the entity (the write plan's ownership condition),
// provided the attributes they are rendered from, and the ones it changes,
// still hold the values read.
func (r *boundEntity) updateIndexAttrs(ctx context.Context, w *migration.Rewrite, old map[string]types.AttributeValue) error {
	t := r.t
	var eb expr.Builder
	var u expr.Update
	changed := slices.Sorted(maps.Keys(w.Set))
	for _, a := range changed {
		u.Set(eb.Name(a), eb.Value(w.Set[a]))
	}
	for _, a := range w.Remove {
		u.Remove(eb.Name(a))
	}
	update := u.String()
	watched := r.e.sourceAttrs()
	for _, a := range slices.Concat(changed, w.Remove) {
		watched = appendAttr(watched, a)
	}
	var still []writeplan.Check
	for _, a := range watched {
		still = append(still, holds(a, old[a]))
	}
	cond, err := r.ownership(writeplan.ExistingItem).And(writeplan.Own(still...)).Write(&eb, nil)
	if err != nil {
		return err
	}
	_, err = migrationClient{t}.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       w.OldKey,
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  eb.Names(),
		ExpressionAttributeValues: eb.Values(),
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return migration.ErrStale
		}
		return fmt.Errorf("singletable: backfill %s: update: %w", r.e.name, err)
	}
	return nil
}

// unchanged is the condition of a delete of the item old: it is the
// entity's existing item (the write plan's ownership condition), every
// attribute read holds its value, and no attribute of T that was absent
// exists.
func (r *boundEntity) unchanged(old map[string]types.AttributeValue) (writeplan.CondExpr, error) {
	var still []writeplan.Check
	for _, a := range slices.Sorted(maps.Keys(old)) {
		still = append(still, holds(a, old[a]))
	}
	for _, f := range r.e.fields {
		if _, ok := old[f.Attr]; !ok {
			still = append(still, holds(f.Attr, nil))
		}
	}
	return buildCondition(r.ownership(writeplan.ExistingItem).And(writeplan.Own(still...)), r.e.name, nil)
}

// rekey moves the item to its new primary key in one transaction: a put
// that must create the item (the write plan's condition of a create), a
// delete of the unchanged old item, and the hand-over of its unique guards.
func (r *boundEntity) rekey(ctx context.Context, w *migration.Rewrite, old map[string]types.AttributeValue) error {
	t := r.t
	if err := itemsize.Check(w.NewItem); err != nil {
		return &ValidationError{Entity: r.e.name, Reason: "re-keyed item too large", Err: err}
	}
	put, err := buildCondition(r.ownership(writeplan.AbsentItem), r.e.name, nil)
	if err != nil {
		return err
	}
	del, err := r.unchanged(old)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                           &t.name,
			Item:                                w.NewItem,
			ConditionExpression:                 put.Text,
			ExpressionAttributeNames:            put.Names,
			ExpressionAttributeValues:           put.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Delete: &types.Delete{
			TableName:                 &t.name,
			Key:                       w.OldKey,
			ConditionExpression:       del.Text,
			ExpressionAttributeNames:  del.Names,
			ExpressionAttributeValues: del.Values,
		}},
	}
	for _, g := range w.Guards {
		item, err := r.moveGuard(g, w)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	_, err = migrationClient{t}.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("singletable: backfill %s: re-key: %w", r.e.name, err)
	}
	code := func(i int) string {
		if i < len(tce.CancellationReasons) {
			return aws.ToString(tce.CancellationReasons[i].Code)
		}
		return ""
	}
	switch {
	case code(1) == "ConditionalCheckFailed":
		return migration.ErrStale
	case code(0) == "ConditionalCheckFailed":
		return r.occupied(ctx, w, old, tce.CancellationReasons[0].Item, err)
	}
	for i, g := range w.Guards {
		if code(2+i) == "ConditionalCheckFailed" {
			return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: the unique guard of %s belongs to another item",
				r.e.name, t.keyText(w.OldKey), g.Field), err)
		}
	}
	return fmt.Errorf("singletable: backfill %s: re-key: %w", r.e.name, err)
}

// moveGuard hands a unique guard item over to the item's new key, on the
// write plan's condition for guard items: it belongs to the old key (or is
// missing, which the move repairs).
func (r *boundEntity) moveGuard(g migration.Guard, w *migration.Rewrite) (types.TransactWriteItem, error) {
	t := r.t
	var eb expr.Builder
	var u expr.Update
	u.Set(eb.Name(t.opts.EntityTypeAttr), eb.ValueS(UniqueGuardType))
	u.Set(eb.Name(guardOwnerPK), eb.Value(w.NewItem[t.opts.PartitionKey]))
	if t.opts.SortKey != "" {
		u.Set(eb.Name(guardOwnerSK), eb.Value(w.NewItem[t.opts.SortKey]))
	}
	update := u.String()
	cond, err := r.ownerCond(w.OldKey).Write(&eb, nil)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &t.name,
		Key:                       g.Key,
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  eb.Names(),
		ExpressionAttributeValues: eb.Values(),
	}}, nil
}

// occupied handles a re-key whose new key is taken. If the item there is
// exactly the one the re-key would write, the move was already made (by
// the application writing the new key): the old item is deleted, on the
// same condition. Otherwise the item fails with ErrAlreadyExists.
func (r *boundEntity) occupied(ctx context.Context, w *migration.Rewrite, old, there map[string]types.AttributeValue, cause error) error {
	t := r.t
	if len(there) == 0 {
		out, err := migrationClient{t}.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: t.primaryKeyOf(w.NewItem), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("singletable: backfill %s: read new key: %w", r.e.name, err)
		}
		there = out.Item
	}
	if len(there) == 0 {
		return migration.ErrStale // freed meanwhile: plan again
	}
	if !itemsEqual(there, w.NewItem) {
		return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: another item is at the new key %s",
			r.e.name, t.keyText(w.OldKey), t.keyText(w.NewItem)), cause)
	}
	del, err := r.unchanged(old)
	if err != nil {
		return err
	}
	_, err = migrationClient{t}.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &t.name,
		Key:                       w.OldKey,
		ConditionExpression:       del.Text,
		ExpressionAttributeNames:  del.Names,
		ExpressionAttributeValues: del.Values,
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return migration.ErrStale
		}
		return fmt.Errorf("singletable: backfill %s: delete old key: %w", r.e.name, err)
	}
	return nil
}

// copyEngine is a copy as the engine runs it on t: the transform's ops go
// through the batch writer (one request at a time: the engine's writers
// say how many are in flight) and are read back with the batch reader.
func copyEngine(t *Table, src CopySource, transform Transform, batch BatchOptions) *migration.Copy {
	client := src.Client
	if client == nil {
		client = migrationClient{t}
	}
	batch.Concurrency = 1
	return &migration.Copy{
		Source:      src.Table,
		Client:      client,
		BatchSize:   maxBatchWrite,
		Unprocessed: ErrUnprocessed,
		Transform: func(item map[string]types.AttributeValue) ([]migration.Op, error) {
			ops, err := transform(item)
			if err != nil {
				return nil, err
			}
			out := make([]migration.Op, len(ops))
			for i, op := range ops {
				if op.table == nil {
					return nil, validationErr("", "", "transform returned a zero WriteOp: make ops with Repo.PutOp or Repo.DeleteOp")
				}
				if op.err != nil {
					return nil, op.err
				}
				out[i] = migration.Op{Entity: op.entity, Put: op.put, Key: op.Key(), KeyAttrs: op.table.primaryKeyAttrs(), Ref: op}
			}
			return out, nil
		},
		Write: func(ctx context.Context, ops []migration.Op) (map[int]error, error) {
			wops := make([]WriteOp, len(ops))
			for i, op := range ops {
				wops[i] = op.Ref.(WriteOp)
			}
			err := BatchWrite(ctx, wops, func(o *BatchOptions) { *o = batch })
			var be *BatchError
			if err == nil || !errors.As(err, &be) {
				return nil, err
			}
			failed := make(map[int]error, len(be.Failed))
			for _, f := range be.Failed {
				failed[f.Index] = f.Err
			}
			return failed, err
		},
		Read: readOps,
	}
}

// readOps reads the items at the ops' keys, consistently, one request at a
// time per table.
func readOps(ctx context.Context, ops []migration.Op) ([]map[string]types.AttributeValue, error) {
	byTable := map[*Table][]int{}
	for i, op := range ops {
		t := op.Ref.(WriteOp).table
		byTable[t] = append(byTable[t], i)
	}
	out := make([]map[string]types.AttributeValue, len(ops))
	read := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	for t, idx := range byTable {
		keys := make([]map[string]types.AttributeValue, len(idx))
		for k, i := range idx {
			keys[k] = ops[i].Key
		}
		got, errs := t.getItems(ctx, BatchOptions{Concurrency: 1}.run(), read, keys)
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		for k, i := range idx {
			out[i] = got[k]
		}
	}
	return out, nil
}
