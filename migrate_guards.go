package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/migration"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// UniqueGuardMigration returns a migration that gives every stored item of
// r's entity the unique guard items its [Schema].Unique declarations call
// for: the adoption of a table whose items another service wrote without
// guards, or that existed before a Unique was declared (or changed, e.g.
// to Hash). Deploy the declaration first, so that the application's own
// writes already claim their values.
//
// For each item it reads the guard of each unique value present
// (consistently) and:
//   - claims a missing guard;
//   - leaves a guard the item already holds;
//   - takes over a stale guard, whose owner no longer exists or no longer
//     holds the value (another service changed or deleted it);
//   - reports a value another stored item also holds: the item fails with
//     a *[DuplicateError] naming both items' keys, which matches
//     [ErrAlreadyExists]. The guard stays with the item that held it (the
//     first claimed, in scan order), so that no third item can take the
//     value meanwhile, but the migration picks no winner: it ends failed
//     ([MigrationError] lists the duplicates), and once each duplicate is
//     resolved (one item changed or deleted) it runs again from the start.
//
// The claims of an item are one transaction, conditioned on the item (and
// any owner read) still holding the values read and on each guard being as
// read, so a concurrent writer is never overridden: when a condition fails
// the item is read again and its claims planned anew. The migration is
// idempotent and resumable like a backfill; a run counts an item as
// written when it claimed a guard, skipped when it held them all, failed
// for a duplicate. [Migrator.Verify] lists the items lacking a guard
// ("missing") and the duplicates ("different") without writing.
func (r *Repo[T]) UniqueGuardMigration(id string) Migration {
	return Migration{ID: id, kind: "guards", engine: func(t *Table, _ BatchOptions) (migration.Kind, error) {
		if r == nil {
			return nil, validationErr("", "", "a guard migration needs a repository")
		}
		if r.t.name != t.name {
			return nil, validationErr(r.e.name, "", "guard migration repository is bound to table %s, not %s", r.t.name, t.name)
		}
		if len(r.e.guards.unique) == 0 {
			return nil, validationErr(r.e.name, "", "guard migration: the entity declares no Unique")
		}
		return &migration.Guards{
			Entity:          r.e.name,
			Select:          r.selection(),
			Plan:            r.planClaim,
			Reread:          r.reread,
			ConditionFailed: ErrConditionFailed,
		}, nil
	}}
}

// DuplicateError reports a value of a [Unique] declaration that two stored
// items hold, found by [Repo.UniqueGuardMigration]. It matches
// [ErrAlreadyExists]. It names the items by key, not the value, which may
// be personal data (an email).
type DuplicateError struct {
	// Entity is the entity type.
	Entity string
	// Fields are the Go fields of the Unique declaration.
	Fields []string
	// Key is the primary key of the item whose value could not be claimed.
	Key map[string]types.AttributeValue
	// Holder is the primary key of the item whose guard holds the value.
	Holder map[string]types.AttributeValue

	names keyNames
}

// Error names the entity, the fields and both items.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("singletable: %s %v: item %s holds the same value as item %s, which holds its guard; change or delete one of them, then run the migration again",
		e.Entity, e.Fields, e.names.text(e.Key), e.names.text(e.Holder))
}

// Is reports whether target is [ErrAlreadyExists].
func (e *DuplicateError) Is(target error) bool { return target == ErrAlreadyExists }

// planClaim reads the guards of item's unique values and plans the
// transaction that claims the missing and stale ones.
func (r *Repo[T]) planClaim(ctx context.Context, item map[string]types.AttributeValue) (*migration.Claim, error) {
	t := r.t
	v, err := r.e.decode(r.t, item)
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(&v).Elem()
	owner := t.primaryKeyOf(item)
	c := &migration.Claim{}
	var claims []types.TransactWriteItem
	holders := map[itemID]bool{}
	watched := uniqueFields(r.e.guards.unique)
	for _, u := range r.e.guards.unique {
		key, ok, err := r.guardKey(u, rv)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // an absent value claims nothing
		}
		g, err := r.readItem(ctx, key)
		if err != nil {
			return nil, err
		}
		if len(g) > 0 && r.ownerIs(g, owner) {
			continue // held already
		}
		c.Missing = append(c.Missing, u.name)
		var cond writeplan.Condition
		if len(g) == 0 {
			cond = writeplan.Own(r.notExists())
		} else {
			// The guard names another owner: a duplicate if that item
			// holds the value too, else stale.
			if s, _ := g[t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); s == nil || s.Value != UniqueGuardType {
				return nil, fmt.Errorf("the item at guard key %s is not a unique guard", t.keyText(key))
			}
			holder := map[string]types.AttributeValue{t.opts.PartitionKey: g[guardOwnerPK]}
			if t.opts.SortKey != "" {
				holder[t.opts.SortKey] = g[guardOwnerSK]
			}
			hold, err := r.readItem(ctx, holder)
			if err != nil {
				return nil, err
			}
			if dup, err := r.holdsValue(u, hold, key); err != nil {
				return nil, err
			} else if dup {
				if c.Duplicate == nil {
					c.Duplicate = &DuplicateError{Entity: r.e.name, Fields: u.fieldNames(), Key: owner, Holder: holder, names: t.keyNames()}
				}
				continue
			}
			cond = writeplan.Own(r.ownedBy(holder))
			if id := t.itemID(holder); !holders[id] {
				holders[id] = true
				check, err := r.stillAsRead(holder, hold, watched)
				if err != nil {
					return nil, err
				}
				claims = append(claims, check)
			}
		}
		ce, err := buildCondition(cond, r.e.name, nil)
		if err != nil {
			return nil, err
		}
		gi := r.guardItem(key, owner)
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
	self, err := r.stillAsRead(owner, item, watched)
	if err != nil {
		return nil, err
	}
	claims = append([]types.TransactWriteItem{self}, claims...)
	c.Units = 2 * int64(len(claims)) // a guard item or a check: 1 unit, twice in a transaction
	c.Apply = func(ctx context.Context) error {
		_, err := t.api(ctx, "").TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: claims})
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			for _, reason := range tce.CancellationReasons {
				if aws.ToString(reason.Code) == "ConditionalCheckFailed" {
					return migration.ErrStale
				}
			}
		}
		if err != nil {
			return fmt.Errorf("singletable: guards %s: claim: %w", r.e.name, err)
		}
		return nil
	}
	return c, nil
}

// readItem reads the item under key consistently (nil when none).
func (r *boundEntity) readItem(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := r.t.api(ctx, r.e.name).GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("singletable: guards %s: read: %w", r.e.name, err)
	}
	return out.Item, nil
}

// ownerIs reports whether the guard item g belongs to owner.
func (r *boundEntity) ownerIs(g, owner map[string]types.AttributeValue) bool {
	if !avEqual(g[guardOwnerPK], owner[r.t.opts.PartitionKey]) {
		return false
	}
	return r.t.opts.SortKey == "" || avEqual(g[guardOwnerSK], owner[r.t.opts.SortKey])
}

// holdsValue reports whether hold, an item read, is of this entity and
// holds the value whose guard is under key.
func (r *Repo[T]) holdsValue(u *uniquePlan, hold, key map[string]types.AttributeValue) (bool, error) {
	if len(hold) == 0 || !r.isMine(hold) {
		return false, nil
	}
	hv, err := r.e.decode(r.t, hold)
	if err != nil {
		return false, err
	}
	hk, ok, err := r.guardKey(u, reflect.ValueOf(&hv).Elem())
	if err != nil || !ok {
		return false, err
	}
	return r.t.itemID(hk) == r.t.itemID(key), nil
}

// stillAsRead is the transaction's check that the item under key is as
// read: absent if it was, else of the same type and with the attributes
// of fields unchanged.
func (r *boundEntity) stillAsRead(key, read map[string]types.AttributeValue, fields []*model.Field) (types.TransactWriteItem, error) {
	t := r.t
	var cond writeplan.Condition
	if len(read) == 0 {
		cond = writeplan.Own(r.notExists())
	} else {
		still := []writeplan.Check{writeplan.AttrExists(t.opts.PartitionKey), holds(t.opts.EntityTypeAttr, read[t.opts.EntityTypeAttr])}
		for _, f := range fields {
			still = append(still, holds(f.Attr, read[f.Attr]))
		}
		cond = writeplan.Own(still...)
	}
	ce, err := buildCondition(cond, r.e.name, nil)
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
