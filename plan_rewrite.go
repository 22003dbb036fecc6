package singletable

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The plan's rewrite of a stored item, for package migrate through
// [StoredItems]. Any failed condition but a taken key or guard means the
// item changed since it was read.

// rewrite is how a stored item must change to match its entity's
// declaration.
type rewrite struct {
	old        map[string]types.AttributeValue // the item as read
	oldKey     map[string]types.AttributeValue
	newItem    map[string]types.AttributeValue // the item after the change
	set        map[string]types.AttributeValue // managed attributes to set
	remove     []string                        // managed attributes to remove
	keyChanged bool                            // a re-key
	guards     []guardMove                     // the item's guards, which follow it to its new key
}

// guardMove is one unique guard item: its key and the unique it guards.
type guardMove struct {
	field string
	key   map[string]types.AttributeValue
}

// errChanged is the error of a conditional write that found the item
// changed since it was read.
func errChanged(cause error) error {
	return wrapSentinel(ErrConditionFailed, "item changed since it was read", cause)
}

// changedSince is the failed of a rewrite's transaction items.
func changedSince(map[string]types.AttributeValue) error { return errChanged(nil) }

// errOccupied marks a re-key whose new key holds an item (see occupied).
var errOccupied = errors.New("singletable: the new key holds an item")

// planRewrite is StoredItems.Rewrite.
func (s *StoredItems) planRewrite(item map[string]types.AttributeValue) (*StoredChange, error) {
	t := s.t
	rv, rendered, err := s.decode(item, true)
	if err != nil {
		return nil, err
	}
	w := &rewrite{old: item, oldKey: t.primaryKeyOf(item), newItem: maps.Clone(item), set: map[string]types.AttributeValue{}}
	for _, a := range s.e.managedAttrs(t) {
		old, had := item[a]
		nv, has := rendered[a]
		switch {
		case has && (!had || !attrvalue.Equal(old, nv)):
			w.set[a] = nv
			w.newItem[a] = nv
		case !has && had:
			w.remove = append(w.remove, a)
			delete(w.newItem, a)
		default:
			continue
		}
		w.keyChanged = w.keyChanged || a == t.opts.PartitionKey || a == t.opts.SortKey
	}
	c := &StoredChange{Attrs: append(slices.Sorted(maps.Keys(w.set)), w.remove...), Rekey: w.keyChanged}
	if len(c.Attrs) == 0 {
		return c, nil
	}
	c.Writes = 1
	c.Units = itemsize.WriteUnits(w.newItem)
	if !w.keyChanged {
		c.apply = func(ctx context.Context) error { return s.send(ctx, "Backfill", s.indexUpdate(w)) }
		return c, nil
	}
	// A transactional put and delete cost twice each.
	c.Units = 2 * (c.Units + itemsize.WriteUnits(item))
	for _, u := range s.e.guards.unique {
		key, ok, err := s.guardKey(u, rv)
		if err != nil {
			return nil, err
		}
		if ok {
			w.guards = append(w.guards, guardMove{field: u.name, key: key})
		}
	}
	c.apply = func(ctx context.Context) error { return s.rekey(ctx, w) }
	return c, nil
}

// send writes the items build makes as one write.
func (s *StoredItems) send(ctx context.Context, kind string, build func() ([]txItem, error)) error {
	_, err := s.exec(ctx, kind, build)
	return err
}

// managedAttrs returns the attributes the declaration renders rather than
// the struct: the primary key, index keys (multi-attribute ones' in their
// key form).
func (e *entityPlan) managedAttrs(t *Table) []string {
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
		out = appendAttr(appendAttr(out, p.pkAttr), p.skAttr)
	}
	return out
}

// sourceAttrs returns the attributes the managed attributes are rendered
// from: the key template fields, index template and predicate fields.
func (e *entityPlan) sourceAttrs() []string {
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

// indexUpdate is the build of a rewrite of index attributes only (see
// [StoredItems.Rewrite]).
func (s *StoredItems) indexUpdate(w *rewrite) func() ([]txItem, error) {
	return func() ([]txItem, error) {
		x := &updateExpr{eff: writeplan.Effect{Set: map[string]types.AttributeValue{}}}
		changed := slices.Sorted(maps.Keys(w.set))
		for _, a := range changed {
			x.set(a, w.set[a])
		}
		for _, a := range w.remove {
			x.set(a, nil)
		}
		watched := s.e.sourceAttrs()
		for _, a := range slices.Concat(changed, w.remove) {
			watched = appendAttr(watched, a)
		}
		up, err := s.updateRequest(x, w.oldKey, s.ownership(writeplan.ExistingItem).And(writeplan.AsRead(w.old, watched)))
		if err != nil {
			return nil, err
		}
		return []txItem{{table: s.t, key: w.oldKey, tw: types.TransactWriteItem{Update: up}, failed: changedSince}}, nil
	}
}

// unchangedDelete is the delete of the item old under key, on condition
// that it is the entity's item and every attribute of it or of the entity
// is as read.
func (s *StoredItems) unchangedDelete(key, old map[string]types.AttributeValue) (txItem, error) {
	attrs := slices.Sorted(maps.Keys(old))
	for _, f := range s.e.fields {
		attrs = appendAttr(attrs, f.Attr)
	}
	ce, err := buildCondition(s.ownership(writeplan.ExistingItem).And(writeplan.AsRead(old, attrs)), s.e.name, nil)
	if err != nil {
		return txItem{}, err
	}
	it := s.deleteTxItem(key, ce)
	it.failed = changedSince
	return it, nil
}

// rekey moves the item to its new primary key (see [StoredItems.Rewrite]).
// A guard is handed over on condition that it belongs to the old key, or
// is missing, which the move repairs.
func (s *StoredItems) rekey(ctx context.Context, w *rewrite) error {
	t := s.t
	if err := itemsize.Check(w.newItem); err != nil {
		return &ValidationError{Entity: s.e.name, Reason: "re-keyed item too large", Err: err}
	}
	var there map[string]types.AttributeValue
	err := s.send(ctx, "Backfill", func() ([]txItem, error) {
		del, err := s.unchangedDelete(w.oldKey, w.old)
		if err != nil {
			return nil, err
		}
		put, err := s.putTxItem(w.newItem, t.primaryKeyOf(w.newItem), itemsize.Of(w.newItem), s.ownership(writeplan.AbsentItem),
			func(old map[string]types.AttributeValue) error { there = old; return errOccupied })
		if err != nil {
			return nil, err
		}
		items := []txItem{del, put}
		for _, g := range w.guards {
			gi := t.guards().Item(g.key, w.newItem)
			what := fmt.Sprintf("backfill %s: re-key %s: the unique guard of %s belongs to another item", s.e.name, t.keyText(w.oldKey), g.field)
			it, err := s.putTxItem(gi, g.key, itemsize.Of(gi), t.guards().OwnerCond(w.oldKey),
				func(map[string]types.AttributeValue) error { return wrapSentinel(ErrAlreadyExists, what, nil) })
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		return items, nil
	})
	if errors.Is(err, errOccupied) {
		return s.occupied(ctx, w, there, err)
	}
	return err
}

// occupied handles a re-key whose new key is taken: if the item there is
// exactly the one the re-key would write, the move was already made and
// the old item is deleted, on the same condition; else ErrAlreadyExists.
func (s *StoredItems) occupied(ctx context.Context, w *rewrite, there map[string]types.AttributeValue, cause error) error {
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
	if !attrvalue.ItemsEqual(there, w.newItem) {
		return wrapSentinel(ErrAlreadyExists, fmt.Sprintf("backfill %s: re-key %s: another item is at the new key %s",
			s.e.name, t.keyText(w.oldKey), t.keyText(w.newItem)), cause)
	}
	return s.send(ctx, "Backfill", func() ([]txItem, error) {
		del, err := s.unchangedDelete(w.oldKey, w.old)
		return []txItem{del}, err
	})
}

// planClaims is StoredItems.ClaimGuards.
func (s *StoredItems) planClaims(ctx context.Context, item map[string]types.AttributeValue) (*StoredChange, error) {
	rv, _, err := s.decode(item, false)
	if err != nil {
		return nil, err
	}
	owner := s.t.primaryKeyOf(item)
	c := &StoredChange{}
	var claims []txItem
	holders := map[itemID]bool{}
	var watched []string
	for _, f := range uniqueFields(s.e.guards.unique) {
		watched = append(watched, f.Attr)
	}
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
		if len(g) > 0 && s.t.guards().OwnerIs(g, owner) {
			continue // held already
		}
		c.Attrs = append(c.Attrs, u.name)
		cond := writeplan.Own(s.notExists())
		if len(g) > 0 {
			holder, hold, dup, err := s.guardHolder(ctx, u, g, key)
			if err != nil {
				return nil, err
			} else if dup {
				if c.Holder == nil {
					c.Holder, c.Taken = holder, slices.Clone(u.names)
				}
				continue
			}
			cond = writeplan.Own(s.ownedBy(holder))
			if id := s.t.itemID(holder); !holders[id] {
				holders[id] = true
				check, err := s.checkAsRead(holder, hold, watched)
				if err != nil {
					return nil, err
				}
				claims = append(claims, check)
			}
		}
		gi := s.t.guards().Item(key, owner)
		claim, err := s.putTxItem(gi, key, itemsize.Of(gi), cond, changedSince)
		if err != nil {
			return nil, err
		}
		claims = append(claims, claim)
		c.Writes++
	}
	if c.Writes == 0 {
		return c, nil
	}
	// The item itself must still hold what was read.
	self, err := s.checkAsRead(owner, item, watched)
	if err != nil {
		return nil, err
	}
	claims = append([]txItem{self}, claims...)
	c.Units = 2 * int64(len(claims)) // a guard item or a check: 1 unit, twice in a transaction
	c.apply = func(ctx context.Context) error {
		return s.send(ctx, "Guards", func() ([]txItem, error) { return claims, nil })
	}
	return c, nil
}

// guardHolder reads the owner of the guard g under key (not the item): a
// duplicate (dup) if that owner, hold as read, holds the value too.
func (s *StoredItems) guardHolder(ctx context.Context, u *uniquePlan, g, key map[string]types.AttributeValue) (holder, hold map[string]types.AttributeValue, dup bool, err error) {
	t := s.t
	if gt, _ := g[t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); gt == nil || gt.Value != UniqueGuardType {
		return nil, nil, false, fmt.Errorf("the item at guard key %s is not a unique guard", t.keyText(key))
	}
	holder = t.guards().Owner(g)
	if hold, err = s.Read(ctx, holder); err != nil || len(hold) == 0 || !s.isMine(hold) {
		return holder, hold, false, err
	}
	// A duplicate: the holder, of this entity, holds the value under key.
	hv, _, err := s.decode(hold, false)
	if err != nil {
		return nil, nil, false, err
	}
	hk, ok, err := s.guardKey(u, hv)
	return holder, hold, ok && t.itemID(hk) == t.itemID(key), err
}

// checkAsRead is the transaction's check that the item under key is as
// read: absent if it was, else of the same type and with the attributes
// attrs unchanged.
func (s *StoredItems) checkAsRead(key, read map[string]types.AttributeValue, attrs []string) (txItem, error) {
	t := s.t
	cond := writeplan.Own(s.notExists())
	if len(read) > 0 {
		cond = writeplan.Own(writeplan.AttrExists(t.opts.PartitionKey)).And(writeplan.AsRead(read, append([]string{t.opts.EntityTypeAttr}, attrs...)))
	}
	ce, err := buildCondition(cond, s.e.name, nil)
	return s.checkTxItem(key, ce, changedSince), err
}
