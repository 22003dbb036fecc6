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
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// What an entity offers migrations. Package migrate (the engine: runner,
// ledger, checkpoints, verification, and its CLI) runs a table's data
// migrations; from this package it needs only what an entity must
// provide: its stored items, raw, selected by a scan, read back, rendered
// again with the current declaration, and rewritten through the write
// plan like every other write (the ownership condition, the unique guards'
// owner condition, the classification of failed conditions). That is
// [StoredItems] and the [StoredChange]s it plans. A copy needs nothing
// more than [Repo.PutOp], [BatchWrite] and [Table.GetItems].

// MigrationLedgerType is the entity type of the items in which package
// migrate keeps a table's migration ledger, for readers of the table's
// stream and scans that skip them.
const MigrationLedgerType = "_Migration"

// StoredItems is one entity's stored items in one table, raw, as a
// migration reads and rewrites them: package migrate's backfill and
// unique guard migrations plan each item's change with [StoredItems.Rewrite]
// and [StoredItems.ClaimGuards] and apply it with [StoredChange.Apply],
// under the conditions of the write plan. [Repo.StoredItems] returns it.
type StoredItems struct {
	boundEntity
	// decode decodes a stored item into a new value of the entity's type
	// (addressable) and, when render is set, renders that value again.
	decode func(item map[string]types.AttributeValue, render bool) (reflect.Value, map[string]types.AttributeValue, error)
}

// StoredItems returns r's stored items, for package migrate (nil for a
// nil r).
func (r *Repo[T]) StoredItems() *StoredItems {
	if r == nil {
		return nil
	}
	return &StoredItems{boundEntity: r.boundEntity, decode: r.decodeStored}
}

// decodeStored is StoredItems.decode for T: the generic edge of the face.
func (r *Repo[T]) decodeStored(item map[string]types.AttributeValue, render bool) (reflect.Value, map[string]types.AttributeValue, error) {
	v, err := r.e.decode(r.t, item)
	rv := reflect.ValueOf(&v).Elem()
	if err != nil || !render {
		return rv, nil, err
	}
	rendered, err := r.e.encode(r.t, v)
	return rv, rendered, err
}

// Table returns the table the items are in.
func (s *StoredItems) Table() *Table { return s.t }

// Describe describes the entity, as [Repo.Describe] does.
func (s *StoredItems) Describe() EntityDescription { return s.e.describe(s.t.opts) }

// FilterScan sets in's filter expression (and its names and values) to the
// filter of the entity's queries: the entity type attribute naming it, or,
// for an entity matching keys ([Schema].MatchKeys), none. Of the items it
// keeps, those [StoredItems.Owns] refuses are not the entity's (untyped
// items of another key shape, which a filter cannot tell).
func (s *StoredItems) FilterScan(in *dynamodb.ScanInput) {
	var b expr.Builder
	in.FilterExpression = aws.String(s.e.typeFilter(&b, &s.t.opts))
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
}

// Owns reports whether item is the entity's: its entity type attribute
// names the entity, or it has none, the entity matches keys and the
// item's key parses with its templates.
func (s *StoredItems) Owns(item map[string]types.AttributeValue) bool { return s.isMine(item) }

// Read reads the item under key with a strongly consistent GetItem; nil
// when there is none.
func (s *StoredItems) Read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := s.t.api(ctx, s.e.name).GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("singletable: %s: read: %w", s.e.name, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// StoredChange is the write that brings one stored item in line with its
// entity's declaration, as [StoredItems.Rewrite] or
// [StoredItems.ClaimGuards] planned it from the item as read.
type StoredChange struct {
	// Writes counts the items Apply writes: for a rewrite 1 (0 when the
	// item is as the declaration renders it); for a claim, the guard items
	// it claims (missing ones, and stale ones taken over).
	Writes int
	// Attrs names what changes: for a rewrite, the managed attributes it
	// sets (sorted), then those it removes; for a claim, the Unique
	// declarations ("Email", "(TeamID, URL)") whose guard the item does not
	// hold.
	Attrs []string
	// Rekey is set when a rewrite moves the item to a new primary key.
	Rekey bool
	// Units is the write capacity Apply consumes (computed from item
	// sizes; a transaction counts twice).
	Units int64
	// Holder, for a claim, is the primary key of another item of the
	// entity that holds one of the item's unique values with its guard (a
	// duplicate, which the claim leaves where it is), and Taken names the
	// Go fields of that Unique; nil when there is none.
	Holder map[string]types.AttributeValue
	Taken  []string

	apply func(ctx context.Context) error
}

// Apply writes the change. It returns an error matching
// [ErrConditionFailed] when the item (or, for a claim, a guard or an
// owner read) changed since it was read: read it again and plan anew.
// For a re-key whose new key holds another item, or a guard held by
// another item, it returns an error matching [ErrAlreadyExists].
func (c *StoredChange) Apply(ctx context.Context) error {
	if c.apply == nil {
		return nil
	}
	return c.apply(ctx)
}

// errChanged is the error of a conditional write that found the item
// changed since it was read.
func errChanged(cause error) error {
	return wrapSentinel(ErrConditionFailed, "item changed since it was read", cause)
}

// rewrite is how a stored item must change to match its entity's
// declaration.
type rewrite struct {
	oldKey  map[string]types.AttributeValue
	newItem map[string]types.AttributeValue // the item after the change
	set     map[string]types.AttributeValue // managed attributes to set
	remove  []string                        // managed attributes to remove
	// keyChanged is set when the primary key changes (a re-key).
	keyChanged bool
	// guards are the unique guard items the item owns, which must follow
	// it to its new key.
	guards []guardMove
}

// guardMove is one unique guard item: its key and the unique it guards.
type guardMove struct {
	field string
	key   map[string]types.AttributeValue
}

// Rewrite decodes item, a stored item of the entity, renders it again with
// the current declaration and compares the managed attributes: the primary
// key, templated index keys and the attributes of multi-attribute index
// keys. Attributes the declaration does not manage, including ones the
// entity does not know, are kept as they are.
//
// Apply makes the change. A change of index attributes only is an
// UpdateItem that sets and removes just those attributes, on condition
// that the item is still the entity's and the attributes they are rendered
// from, and the ones it changes, still hold the values read. A change of
// primary key is one transaction: a put of the item at its new key (which
// must be free, the condition of a create), a delete of the old item on
// condition that every attribute read is unchanged (and that no attribute
// of the entity absent then has appeared), and the hand-over of its unique
// guard items. If the new key holds exactly the item the re-key would
// write, only the old item is deleted.
func (s *StoredItems) Rewrite(item map[string]types.AttributeValue) (*StoredChange, error) {
	e, t := s.e, s.t
	rv, rendered, err := s.decode(item, true)
	if err != nil {
		return nil, err
	}
	w := &rewrite{oldKey: t.primaryKeyOf(item), newItem: maps.Clone(item), set: map[string]types.AttributeValue{}}
	keys := []string{t.opts.PartitionKey, t.opts.SortKey}
	for _, a := range e.managedAttrs(t) {
		old, had := item[a]
		nv, has := rendered[a]
		switch {
		case has && (!had || !avEqual(old, nv)):
			w.set[a] = nv
			w.newItem[a] = nv
		case !has && had:
			w.remove = append(w.remove, a)
			delete(w.newItem, a)
		default:
			continue
		}
		if slices.Contains(keys, a) {
			w.keyChanged = true
		}
	}
	c := &StoredChange{Attrs: append(slices.Sorted(maps.Keys(w.set)), w.remove...), Rekey: w.keyChanged}
	if len(c.Attrs) == 0 {
		return c, nil
	}
	c.Writes = 1
	c.Units = itemsize.WriteUnits(w.newItem)
	if w.keyChanged {
		// A transactional put and delete cost twice each.
		c.Units = 2 * (c.Units + itemsize.WriteUnits(item))
		for _, u := range e.guards.unique {
			key, ok, err := s.guardKey(u, rv)
			if err != nil {
				return nil, err
			}
			if ok {
				w.guards = append(w.guards, guardMove{field: u.name, key: key})
			}
		}
	}
	c.apply = func(ctx context.Context) error {
		if w.keyChanged {
			return s.rekey(ctx, w, item)
		}
		return s.updateIndexAttrs(ctx, w, item)
	}
	return c, nil
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
func (s *StoredItems) updateIndexAttrs(ctx context.Context, w *rewrite, old map[string]types.AttributeValue) error {
	t := s.t
	var eb expr.Builder
	var u expr.Update
	changed := slices.Sorted(maps.Keys(w.set))
	for _, a := range changed {
		u.Set(eb.Name(a), eb.Value(w.set[a]))
	}
	for _, a := range w.remove {
		u.Remove(eb.Name(a))
	}
	update := u.String()
	watched := s.e.sourceAttrs()
	for _, a := range slices.Concat(changed, w.remove) {
		watched = appendAttr(watched, a)
	}
	var still []writeplan.Check
	for _, a := range watched {
		still = append(still, holds(a, old[a]))
	}
	cond, err := s.ownership(writeplan.ExistingItem).And(writeplan.Own(still...)).Write(&eb, nil)
	if err != nil {
		return err
	}
	_, err = t.api(ctx, s.e.name).UpdateItem(ctx, &dynamodb.UpdateItemInput{
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
			return errChanged(err)
		}
		return fmt.Errorf("singletable: backfill %s: update: %w", s.e.name, err)
	}
	return nil
}

// unchanged is the condition of a delete of the item old: it is the
// entity's existing item (the write plan's ownership condition), every
// attribute read holds its value, and no attribute of T that was absent
// exists.
func (s *StoredItems) unchanged(old map[string]types.AttributeValue) (writeplan.CondExpr, error) {
	var still []writeplan.Check
	for _, a := range slices.Sorted(maps.Keys(old)) {
		still = append(still, holds(a, old[a]))
	}
	for _, f := range s.e.fields {
		if _, ok := old[f.Attr]; !ok {
			still = append(still, holds(f.Attr, nil))
		}
	}
	return buildCondition(s.ownership(writeplan.ExistingItem).And(writeplan.Own(still...)), s.e.name, nil)
}

// rekey moves the item to its new primary key in one transaction: a put
// that must create the item (the write plan's condition of a create), a
// delete of the unchanged old item, and the hand-over of its unique guards.
func (s *StoredItems) rekey(ctx context.Context, w *rewrite, old map[string]types.AttributeValue) error {
	t := s.t
	if err := itemsize.Check(w.newItem); err != nil {
		return &ValidationError{Entity: s.e.name, Reason: "re-keyed item too large", Err: err}
	}
	put, err := buildCondition(s.ownership(writeplan.AbsentItem), s.e.name, nil)
	if err != nil {
		return err
	}
	del, err := s.unchanged(old)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                           &t.name,
			Item:                                w.newItem,
			ConditionExpression:                 put.Text,
			ExpressionAttributeNames:            put.Names,
			ExpressionAttributeValues:           put.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Delete: &types.Delete{
			TableName:                 &t.name,
			Key:                       w.oldKey,
			ConditionExpression:       del.Text,
			ExpressionAttributeNames:  del.Names,
			ExpressionAttributeValues: del.Values,
		}},
	}
	for _, g := range w.guards {
		item, err := s.moveGuard(g, w)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	_, err = t.api(ctx, s.e.name).TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("singletable: backfill %s: re-key: %w", s.e.name, err)
	}
	code := func(i int) string {
		if i < len(tce.CancellationReasons) {
			return aws.ToString(tce.CancellationReasons[i].Code)
		}
		return ""
	}
	switch {
	case code(1) == "ConditionalCheckFailed":
		return errChanged(err)
	case code(0) == "ConditionalCheckFailed":
		return s.occupied(ctx, w, old, tce.CancellationReasons[0].Item, err)
	}
	for i, g := range w.guards {
		if code(2+i) == "ConditionalCheckFailed" {
			return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: the unique guard of %s belongs to another item",
				s.e.name, t.keyText(w.oldKey), g.field), err)
		}
	}
	return fmt.Errorf("singletable: backfill %s: re-key: %w", s.e.name, err)
}

// moveGuard hands a unique guard item over to the item's new key, on the
// write plan's condition for guard items: it belongs to the old key (or is
// missing, which the move repairs).
func (s *StoredItems) moveGuard(g guardMove, w *rewrite) (types.TransactWriteItem, error) {
	t := s.t
	var eb expr.Builder
	var u expr.Update
	u.Set(eb.Name(t.opts.EntityTypeAttr), eb.ValueS(UniqueGuardType))
	u.Set(eb.Name(guardOwnerPK), eb.Value(w.newItem[t.opts.PartitionKey]))
	if t.opts.SortKey != "" {
		u.Set(eb.Name(guardOwnerSK), eb.Value(w.newItem[t.opts.SortKey]))
	}
	update := u.String()
	cond, err := s.ownerCond(w.oldKey).Write(&eb, nil)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 &t.name,
		Key:                       g.key,
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
func (s *StoredItems) occupied(ctx context.Context, w *rewrite, old, there map[string]types.AttributeValue, cause error) error {
	t := s.t
	if len(there) == 0 {
		var err error
		if there, err = s.Read(ctx, t.primaryKeyOf(w.newItem)); err != nil {
			return err
		}
	}
	if len(there) == 0 {
		return errChanged(cause) // freed meanwhile: plan again
	}
	if !itemsEqual(there, w.newItem) {
		return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: another item is at the new key %s",
			s.e.name, t.keyText(w.oldKey), t.keyText(w.newItem)), cause)
	}
	del, err := s.unchanged(old)
	if err != nil {
		return err
	}
	_, err = t.api(ctx, s.e.name).DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &t.name,
		Key:                       w.oldKey,
		ConditionExpression:       del.Text,
		ExpressionAttributeNames:  del.Names,
		ExpressionAttributeValues: del.Values,
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return errChanged(err)
		}
		return fmt.Errorf("singletable: backfill %s: delete old key: %w", s.e.name, err)
	}
	return nil
}

// ClaimGuards reads the guard items of item's unique values (consistently)
// and plans the transaction that claims the missing ones and takes over
// the stale ones (whose owner no longer exists or no longer holds the
// value); a guard the item holds is left alone, and one another stored
// item of the entity holds with the same value is a duplicate, reported
// in Holder and Taken and left where it is. The claims are conditioned on
// the item (and any owner read) still holding the values read and on each
// guard being as read, so Apply never overrides a concurrent writer.
func (s *StoredItems) ClaimGuards(ctx context.Context, item map[string]types.AttributeValue) (*StoredChange, error) {
	t := s.t
	rv, _, err := s.decode(item, false)
	if err != nil {
		return nil, err
	}
	owner := t.primaryKeyOf(item)
	c := &StoredChange{}
	var claims []types.TransactWriteItem
	holders := map[itemID]bool{}
	watched := uniqueFields(s.e.guards.unique)
	for _, u := range s.e.guards.unique {
		key, ok, err := s.guardKey(u, rv)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // an absent value claims nothing
		}
		g, err := s.Read(ctx, key)
		if err != nil {
			return nil, err
		}
		if len(g) > 0 && s.ownerIs(g, owner) {
			continue // held already
		}
		c.Attrs = append(c.Attrs, u.name)
		var cond writeplan.Condition
		if len(g) == 0 {
			cond = writeplan.Own(s.notExists())
		} else {
			holder, hold, dup, err := s.guardHolder(ctx, u, g, key)
			if err != nil {
				return nil, err
			} else if dup {
				if c.Holder == nil {
					c.Holder, c.Taken = holder, u.fieldNames()
				}
				continue
			}
			cond = writeplan.Own(s.ownedBy(holder))
			if id := t.itemID(holder); !holders[id] {
				holders[id] = true
				check, err := s.stillAsRead(holder, hold, watched)
				if err != nil {
					return nil, err
				}
				claims = append(claims, check)
			}
		}
		ce, err := buildCondition(cond, s.e.name, nil)
		if err != nil {
			return nil, err
		}
		gi := s.guardItem(key, owner)
		claims = append(claims, types.TransactWriteItem{Put: &types.Put{
			TableName: &t.name, Item: gi,
			ConditionExpression: ce.Text, ExpressionAttributeNames: ce.Names, ExpressionAttributeValues: ce.Values,
		}})
		c.Writes++
	}
	if c.Writes == 0 {
		return c, nil
	}
	// The item itself must still hold what was read.
	self, err := s.stillAsRead(owner, item, watched)
	if err != nil {
		return nil, err
	}
	claims = append([]types.TransactWriteItem{self}, claims...)
	c.Units = 2 * int64(len(claims)) // a guard item or a check: 1 unit, twice in a transaction
	c.apply = func(ctx context.Context) error {
		_, err := t.api(ctx, "").TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: claims})
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			for _, reason := range tce.CancellationReasons {
				if aws.ToString(reason.Code) == "ConditionalCheckFailed" {
					return errChanged(err)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("singletable: guards %s: claim: %w", s.e.name, err)
		}
		return nil
	}
	return c, nil
}

// guardHolder reads the owner of the guard g under key, which names
// another owner than the item: a duplicate (dup) if that owner, hold as
// read, holds the value too, else the guard is stale.
func (s *StoredItems) guardHolder(ctx context.Context, u *uniquePlan, g, key map[string]types.AttributeValue) (holder, hold map[string]types.AttributeValue, dup bool, err error) {
	t := s.t
	if gt, _ := g[t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); gt == nil || gt.Value != UniqueGuardType {
		return nil, nil, false, fmt.Errorf("the item at guard key %s is not a unique guard", t.keyText(key))
	}
	holder = map[string]types.AttributeValue{t.opts.PartitionKey: g[guardOwnerPK]}
	if t.opts.SortKey != "" {
		holder[t.opts.SortKey] = g[guardOwnerSK]
	}
	if hold, err = s.Read(ctx, holder); err != nil {
		return nil, nil, false, err
	}
	dup, err = s.holdsValue(u, hold, key)
	return holder, hold, dup, err
}

// holdsValue reports whether hold, an item read, is of this entity and
// holds the value whose guard is under key.
func (s *StoredItems) holdsValue(u *uniquePlan, hold, key map[string]types.AttributeValue) (bool, error) {
	if len(hold) == 0 || !s.isMine(hold) {
		return false, nil
	}
	hv, _, err := s.decode(hold, false)
	if err != nil {
		return false, err
	}
	hk, ok, err := s.guardKey(u, hv)
	if err != nil || !ok {
		return false, err
	}
	return s.t.itemID(hk) == s.t.itemID(key), nil
}

// stillAsRead is the transaction's check that the item under key is as
// read: absent if it was, else of the same type and with the attributes
// of fields unchanged.
func (s *StoredItems) stillAsRead(key, read map[string]types.AttributeValue, fields []*model.Field) (types.TransactWriteItem, error) {
	t := s.t
	var cond writeplan.Condition
	if len(read) == 0 {
		cond = writeplan.Own(s.notExists())
	} else {
		still := []writeplan.Check{writeplan.AttrExists(t.opts.PartitionKey), holds(t.opts.EntityTypeAttr, read[t.opts.EntityTypeAttr])}
		for _, f := range fields {
			still = append(still, holds(f.Attr, read[f.Attr]))
		}
		cond = writeplan.Own(still...)
	}
	ce, err := buildCondition(cond, s.e.name, nil)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &t.name, Key: key,
		ConditionExpression: ce.Text, ExpressionAttributeNames: ce.Names, ExpressionAttributeValues: ce.Values,
	}}, nil
}

// fieldNames lists the Go names of u's fields.
func (u *uniquePlan) fieldNames() []string {
	out := make([]string, len(u.fields))
	for i, f := range u.fields {
		out[i] = f.Name
	}
	return out
}

// GetItems reads the raw items under keys, primary keys of t, with
// strongly consistent [BatchGetItem] requests sent one at a time through
// the batch reader of [Repo.BatchGet] (unprocessed keys and throttled
// requests retried with backoff): items[i] is the item under keys[i], nil
// when there is none. It returns the first key's error when some keys
// could not be read. Package migrate verifies a copy with it.
//
// [BatchGetItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
func (t *Table) GetItems(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	read := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	items, errs := t.getItems(ctx, BatchOptions{Concurrency: 1}.run(), read, keys)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}
