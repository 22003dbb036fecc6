package singletable

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The write plan (docs/architecture.md): this file holds each write's path
// through the steps, each in a plan_*.go file named for it. Generic code
// only encodes or decodes T; the T-free core is internal/writeplan.

// createItems is Create as transaction items (x: Create, or an Upsert that
// found no item; extra is ANDed to its condition).
func (r *Repo[T]) createItems(v *T, x expectation, extra writeplan.Condition) ([]txItem, error) {
	rv := reflect.ValueOf(v).Elem()
	r.e.stampNow(r.t, v, false)
	if r.e.guards.version != nil {
		r.e.setVersion(rv, 1)
	}
	item, size, err := r.e.encodeSized(r.t, v)
	if err != nil {
		return nil, err
	}
	var key map[string]types.AttributeValue // made only when needed (see txItem.key)
	if len(r.e.guards.unique) > 0 {
		key = r.t.primaryKeyOf(item)
	}
	it, err := r.putItem(item, key, size, r.owner(writeplan.AbsentItem).And(extra), &x)
	if err != nil {
		return nil, err
	}
	return r.withGuards(it, r.e.guards.unique, nil, rv, nil)
}

// putItems is Put as transaction items. It reads the item first to release
// the unique values it replaces, or to learn the stored version.
func (r *Repo[T]) putItems(ctx context.Context, v *T, o writeOptions) ([]txItem, error) {
	rv := reflect.ValueOf(v).Elem()
	r.e.stampNow(r.t, v, o.load)
	x := r.expect("Put", o.intent())
	reads := uniqueFields(r.e.guards.unique)
	if !o.load {
		reads = r.readFields(reads, rv)
	}
	var key map[string]types.AttributeValue // made only when needed (see txItem.key)
	if len(reads) > 0 {
		// Bad values are refused before the read, not after it.
		if _, _, err := r.e.encodeSized(r.t, v); err != nil {
			return nil, err
		}
		var err error
		if key, err = r.readPut(ctx, &x, rv, reads); err != nil {
			return nil, err
		}
	}
	if !o.load {
		r.versioning(&x, rv, x.Snap)
	}
	item, size, err := r.e.encodeSized(r.t, v)
	if err != nil {
		return nil, err
	}
	cond := r.owner(x.Intent).And(x.SnapshotCheck(r.t.opts.PartitionKey)).And(x.VersionCheck()).And(userCheck(o.If))
	it, err := r.putItem(item, key, size, cond, &x)
	if err != nil {
		return nil, err
	}
	return r.withGuards(it, r.e.guards.unique, x.Snap, rv, r.heldBy(ctx, it.key))
}

// putItem is the put of item (key and size as putTxItem takes them) on
// cond, whose failure x classifies.
func (r *repo) putItem(item, key map[string]types.AttributeValue, size int, cond writeplan.Condition, x *expectation) (txItem, error) {
	it, err := r.putTxItem(item, key, size, cond, x.failed)
	if err != nil {
		return txItem{}, err
	}
	it.applied = writeplan.PutApplied(item)
	return it, nil
}

// deleteItems is Delete as transaction items, and the item it read first
// (an entity with unique fields', to release its values).
func (r *Repo[T]) deleteItems(ctx context.Context, key T, o writeOptions) ([]txItem, *writeplan.Snapshot, error) {
	k, err := r.e.key(r.t, key)
	if err != nil {
		return nil, nil, err
	}
	it, x, err := r.deleteItem(ctx, k, reflect.ValueOf(&key).Elem(), o)
	if err != nil {
		return nil, nil, err
	}
	items, err := r.withGuards(it, r.e.guards.unique, x.Snap, reflect.Value{}, nil)
	if err != nil {
		return nil, nil, err
	}
	return items, x.Snap, nil
}

// deleteItem is the delete of the item under k (kv its key as a struct
// value), and what it expects.
func (r *repo) deleteItem(ctx context.Context, k map[string]types.AttributeValue, kv reflect.Value, o writeOptions) (txItem, *expectation, error) {
	x := r.expect("Delete", o.intent())
	r.deleteVersion(&x, kv)
	us := r.e.guards.unique
	var err error
	if x.Snap, err = r.readBefore(ctx, k, uniqueFields(us), len(us) > 0); err != nil {
		return txItem{}, nil, err
	}
	cond := r.owner(x.Intent).And(x.VersionCheck()).And(userCheck(o.If)).And(x.SnapshotCheck(r.t.opts.PartitionKey))
	ce, err := buildCondition(cond, r.e.name, r.condNames(k))
	if err != nil {
		return txItem{}, nil, err
	}
	it := r.deleteTxItem(k, ce)
	it.failed, it.applied = x.failed, writeplan.DeleteApplied
	return it, &x, nil
}

// deleteTxItem is the transaction item deleting the item under key on ce,
// which asks for the item as it was when the condition fails.
func (r *repo) deleteTxItem(key map[string]types.AttributeValue, ce writeplan.CondExpr) txItem {
	return txItem{table: r.t, key: key, size: itemsize.Of(key), tw: types.TransactWriteItem{Delete: &types.Delete{
		TableName: &r.t.name, Key: key,
		ConditionExpression: ce.Text, ExpressionAttributeNames: ce.Names, ExpressionAttributeValues: ce.Values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}}
}

// txItems is the update as transaction items (inTx: sent in a transaction;
// see addsVersion). What it reads first is updateReads'; an upsert that
// finds no item is a Create.
func (u *Update[T]) txItems(ctx context.Context, inTx bool) ([]txItem, error) {
	if err := u.valid(); err != nil {
		return nil, err
	}
	key, err := u.r.e.key(u.r.t, u.key)
	if err != nil {
		return nil, err
	}
	kv := reflect.ValueOf(&u.key).Elem()
	x, moved, err := u.prepare(ctx, key, kv, reflect.ValueOf(&u.vals).Elem(), inTx)
	if err != nil {
		return nil, err
	}
	if x.Snap != nil && x.Snap.Item == nil {
		v, _, err := u.merged(nil)
		if err == nil {
			err = u.asCreate(x, kv, reflect.ValueOf(&v).Elem())
		}
		if err != nil {
			return nil, err
		}
		return u.r.createItems(&v, *x, u.userCond())
	}
	merged, fromSnap, err := u.merged(x.Snap)
	if err != nil {
		return nil, err
	}
	mv := reflect.ValueOf(&merged).Elem()
	it, err := u.item(key, x, mv, fromSnap)
	if err != nil {
		return nil, err
	}
	return u.r.withGuards(it, moved, x.Snap, mv, u.r.heldBy(ctx, it.key))
}

// prepare is an update's plan up to its values: it checks vals before
// anything is read, decides what the update under key (kv as a struct
// value) expects and reads, and reads it (x.Snap). moved lists the uniques
// it moves.
func (u *updateSpec) prepare(ctx context.Context, key map[string]types.AttributeValue, kv, vals reflect.Value, inTx bool) (x *expectation, moved []*uniquePlan, err error) {
	if err := u.check(vals, key); err != nil {
		return nil, nil, err
	}
	moved = u.movedUniques()
	x = &expectation{}
	*x = u.r.expect("Update", writeplan.ExistingItem)
	if u.upsert {
		x.Intent = writeplan.AnyItem
	}
	x.AddVersion = u.addsVersion(kv, inTx)
	reads, whole := u.updateReads(moved, kv, x.AddVersion)
	if err := u.refuseReads(reads, whole); err != nil {
		return nil, nil, err
	}
	if x.Snap, err = u.r.readBefore(ctx, key, reads, whole); err != nil {
		return nil, nil, err
	}
	if err := x.refuse(x.Snap); err != nil {
		return nil, nil, err
	}
	if u.upsert && x.Snap != nil && x.Snap.Item != nil {
		// The item is there: the update must find it still there.
		x.Intent = writeplan.ExistingItem
	}
	return x, moved, nil
}

// asCreate turns an upsert that found no item into a Create of vv, the
// values it sets with its key (its operators applied to zero values).
func (u *updateSpec) asCreate(x *expectation, kv, vv reflect.Value) error {
	if kver := u.r.versionIn(kv); kver != 0 {
		return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read but there is no item", x.What(), kver), nil)
	}
	for _, o := range u.ops {
		if err := o.Apply(fieldByIndexAlloc(vv, o.Field.Index), false); err != nil {
			return &ValidationError{Entity: u.r.e.name, Field: o.Field.Name, Reason: o.Name, Err: err}
		}
	}
	x.Intent = writeplan.AbsentItem
	return nil
}

// writeOpts applies optFns to the zero WriteOptions.
func writeOpts(optFns []func(*WriteOptions)) writeOptions {
	if len(optFns) == 0 {
		return writeOptions{} // without options nothing escapes to the heap
	}
	return writeOptions{WriteOptions: applyOpts(optFns)}
}

// readOpts applies optFns to the zero ReadOptions.
func readOpts(optFns []func(*ReadOptions)) ReadOptions {
	if len(optFns) == 0 {
		return ReadOptions{}
	}
	return applyOpts(optFns)
}

// applyOpts applies optFns, in order, to the zero value of O.
func applyOpts[O any](optFns []func(*O)) O {
	o := new(O)
	for _, fn := range optFns {
		fn(o)
	}
	return *o
}
