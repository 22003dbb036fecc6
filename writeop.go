package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// WriteOp is one typed write made by a repository ([Repo.PutOp],
// [Repo.CreateOp], [Repo.DeleteOp], [Repo.CheckOp], [Update.Op]) or a
// sequence ([Sequence.Next]), to send with others: [Tx] commits ops of any
// entities and tables all or nothing, [BatchWrite] sends puts and deletes
// without conditions, and migrations' transforms return them.
//
// A put renders and validates its item, and a delete its key, when the op
// is made; a bad one makes an op whose Err is set, reported by Tx or
// BatchWrite before anything is sent. The rest of an op (its conditions,
// the reads some writes need) is made when Tx commits it, with Tx's
// context: values the op's value points to (slices, maps, pointers) are
// read then, so do not change them before Tx returns.
type WriteOp struct {
	table  *Table
	entity string
	kind   string                          // Put, Create, Delete, Update, Check or Sequence
	put    map[string]types.AttributeValue // the item of a put, as a batch writes it
	key    map[string]types.AttributeValue // the primary key of a delete
	err    error
	// cond marks a put or delete with [WriteOptions]: a condition that a
	// batch request cannot carry.
	cond bool
	// own, for an entity with unique fields, makes a batch write the op
	// on its own with its guard items, as the single write does.
	own *boundEntity
	// items makes the op's transaction items with ctx. batch is set when a
	// batch writes the op on its own (own): a put then stores the managed
	// timestamps and the version as the batch request would.
	items func(ctx context.Context, batch bool) ([]txItem, error)
}

// PutOp returns a put of v: like [Repo.Put] in a [Tx] ([WriteOptions]
// apply, the version is checked, guards are swapped). In a [BatchWrite],
// which carries no condition (a put with WriteOptions is refused there),
// the item rendered when the op is made is written whole: managed
// timestamps are filled only when zero and the version is stored as given
// and not checked, so that a migration keeps what it copies. Like every
// write, it never replaces another entity's item: for an entity with unique
// fields, whose guard items a batch request cannot keep, the batch writes
// the op on its own as Put does (reading the item, claiming and releasing
// values in one transaction); for the others, the batch request replaces
// what is under the key.
func (r *Repo[T]) PutOp(v T, optFns ...func(*WriteOptions)) WriteOp {
	o := writeOpts(optFns)
	op := r.op("Put", func(ctx context.Context, batch bool) ([]txItem, error) {
		w, o := v, o
		o.load = batch
		return r.putItems(ctx, &w, o)
	})
	op.cond = o.If.IsSet() || o.MustExist
	w := v
	r.e.stampNow(r.t, &w, true)
	op.put, _, op.err = r.e.encodeSized(r.t, &w) // its key is in it: Key extracts it only when asked
	return op
}

// CreateOp returns a create of v, which fails with [ErrAlreadyExists] when
// an item with its key exists (like [Repo.Create]), for a [Tx].
func (r *Repo[T]) CreateOp(v T, optFns ...func(*WriteOptions)) WriteOp {
	o := writeOpts(optFns)
	return r.op("Create", func(context.Context, bool) ([]txItem, error) {
		w := v
		return r.createOpItems(&w, o)
	})
}

// DeleteOp returns a delete of the item with key's primary key: like
// [Repo.Delete] in a [Tx] ([WriteOptions] apply, guard items are released).
// In a [BatchWrite], which refuses one with WriteOptions, an entity with
// unique fields has the op deleted on its own as Delete does.
func (r *Repo[T]) DeleteOp(key T, optFns ...func(*WriteOptions)) WriteOp {
	o := writeOpts(optFns)
	op := r.op("Delete", func(ctx context.Context, _ bool) ([]txItem, error) {
		items, _, err := r.deleteItems(ctx, key, o)
		return items, err
	})
	op.cond = o.If.IsSet() || o.MustExist
	op.key, op.err = r.e.key(r.t, key)
	return op
}

// CheckOp returns a condition on the item with key's primary key that a
// [Tx] requires without writing it; it fails with [ErrConditionFailed] (or
// [ErrNotFound] when the item does not exist and the condition needed it);
// an item of another entity under the key fails it, as it fails the
// entity's writes. Name fields in cond by their Go names, as [Query.Filter]
// describes; an unknown name fails the transaction with a *ValidationError
// before anything is sent.
func (r *Repo[T]) CheckOp(key T, cond expression.ConditionBuilder) WriteOp {
	return r.op("Check", func(context.Context, bool) ([]txItem, error) { return r.checkItems(key, cond) })
}

// Op returns the update as an op for a [Tx], with its conditions: the item
// must exist unless u is an upsert. Changes made to u after Op are not
// part of the op.
func (u *Update[T]) Op() WriteOp {
	c := u.clone()
	return u.r.op("Update", func(ctx context.Context, _ bool) ([]txItem, error) { return c.txItems(ctx, true) })
}

// op makes an op of kind whose transaction items items makes.
func (r *Repo[T]) op(kind string, items func(ctx context.Context, batch bool) ([]txItem, error)) WriteOp {
	op := WriteOp{table: r.t, entity: r.e.name, kind: kind, items: items}
	if len(r.e.guards.unique) > 0 {
		op.own = &r.boundEntity
	}
	return op
}

// plainPut is an unconditional put of item, whose primary key is key, in
// a batch or a transaction.
func plainPut(t *Table, entity string, item, key map[string]types.AttributeValue) WriteOp {
	it := txItem{table: t, key: key, size: itemsize.Of(item), tw: types.TransactWriteItem{Put: &types.Put{TableName: &t.name, Item: item}}}
	return WriteOp{table: t, entity: entity, kind: "Put", put: item, key: key,
		items: func(context.Context, bool) ([]txItem, error) { return []txItem{it}, nil }}
}

// createOpItems is Create with options as transaction items.
func (r *Repo[T]) createOpItems(v *T, o writeOptions) ([]txItem, error) {
	if o.MustExist {
		return nil, validationErr(r.e.name, "", "Create with MustExist: a create writes only an item that does not exist")
	}
	var cond writeplan.Condition
	if o.If.IsSet() {
		cond = writeplan.User(o.If)
	}
	return r.createItems(v, r.expect("Create", writeplan.AbsentItem), cond)
}

// checkItems is CheckOp as transaction items.
func (r *Repo[T]) checkItems(key T, cond expression.ConditionBuilder) ([]txItem, error) {
	k, err := r.e.key(r.t, key)
	if err != nil {
		return nil, err
	}
	// Like every op of the entity, a check is on its item (or on its
	// absence), never on another entity's under the same key.
	ce, err := buildCondition(r.ownership(writeplan.AnyItem).And(writeplan.User(cond)), r.e.name, r.condNames())
	if err != nil {
		return nil, err
	}
	it := txItem{table: r.t, key: k, size: itemsize.Of(k),
		tw: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                           &r.t.name,
			Key:                                 k,
			ConditionExpression:                 ce.Text,
			ExpressionAttributeNames:            ce.Names,
			ExpressionAttributeValues:           ce.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		failed: func(old map[string]types.AttributeValue) error {
			if old == nil {
				return ErrNotFound
			}
			if !r.isMine(old) {
				return wrapSentinel(ErrConditionFailed, "check "+r.e.name+": the item under this key is another entity's", nil)
			}
			return ErrConditionFailed
		},
	}
	return []txItem{it}, nil
}

// Table returns the table the op writes to.
func (op WriteOp) Table() *Table { return op.table }

// Entity returns the entity type the op writes.
func (op WriteOp) Entity() string { return op.entity }

// Item returns the rendered item of a put, as a batch writes it (nil for
// the other ops). Do not modify it.
func (op WriteOp) Item() map[string]types.AttributeValue { return op.put }

// Key returns the primary key of a put or delete (nil for the other ops,
// whose items are made when a transaction commits). Do not modify it.
func (op WriteOp) Key() map[string]types.AttributeValue {
	if op.key == nil && op.put != nil {
		return op.table.primaryKeyOf(op.put)
	}
	return op.key
}

// keyed returns a map holding the op's primary key attributes: the key of
// a delete, the item of a put (for itemID, which reads only the keys).
func (op *WriteOp) keyed() map[string]types.AttributeValue {
	if op.put != nil {
		return op.put
	}
	return op.key
}

// Err returns the error found while making the op, if any.
func (op WriteOp) Err() error { return op.err }
