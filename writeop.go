package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// WriteOp is one typed write ([Repo.PutOp], [Repo.CreateOp],
// [Repo.DeleteOp], [Repo.CheckOp], [Update.Op], [Sequence.Next]) sent with
// others by [Tx] or [BatchWrite]. A put renders its item, and a delete its
// key, when the op is made (a bad one sets Err); the rest is made when Tx
// commits, so do not change what the op's value points to before then.
type WriteOp struct {
	table  *Table
	entity string
	kind   string                          // Put, Create, Delete, Update, Check or Sequence
	put    map[string]types.AttributeValue // the item of a put, as a batch writes it
	key    map[string]types.AttributeValue // the primary key of a delete
	err    error
	cond   bool  // a put or delete with [WriteOptions], which a batch cannot carry
	own    *repo // an entity with unique fields': a batch writes it on its own
	src    opSource
}

// opSource makes an op's transaction items with ctx; batch is set when a
// batch writes the op on its own (WriteOp.own).
type opSource interface {
	opItems(ctx context.Context, batch bool) ([]txItem, error)
}

// opFunc is an opSource written as a function.
type opFunc func(ctx context.Context, batch bool) ([]txItem, error)

func (f opFunc) opItems(ctx context.Context, batch bool) ([]txItem, error) { return f(ctx, batch) }

// writeSrc is a put, create or delete's opSource: one allocation per op.
type writeSrc[T any] struct {
	r    *Repo[T]
	kind string
	v    T // the value (a key for a delete)
	w    T // a put's value as the batch writes it
	o    writeOptions
}

func (s *writeSrc[T]) opItems(ctx context.Context, batch bool) ([]txItem, error) {
	w := s.v // each build starts from the caller's value
	switch s.kind {
	case "Put":
		o := s.o
		o.load = batch
		return s.r.putItems(ctx, &w, o)
	case "Create":
		return s.r.createOpItems(&w, s.o)
	}
	items, _, err := s.r.deleteItems(ctx, s.v, s.o)
	return items, err
}

// PutOp returns a put of v: like [Repo.Put] in a [Tx]. A [BatchWrite]
// (which refuses WriteOptions) writes the item rendered when the op is
// made, whole: managed timestamps filled only when zero, the version
// stored as given and not checked, so that a migration keeps what it
// copies; an entity with unique fields' op is written on its own as Put.
func (r *Repo[T]) PutOp(v T, optFns ...func(*WriteOptions)) WriteOp {
	src := &writeSrc[T]{r: r, kind: "Put", v: v, w: v, o: writeOpts(optFns)}
	op := r.op("Put", src)
	op.cond = src.o.If.IsSet() || src.o.MustExist
	r.e.stampNow(r.t, &src.w, true)
	op.put, _, op.err = r.e.encodeSized(r.t, &src.w) // its key is in it: Key extracts it only when asked
	return op
}

// CreateOp returns a create of v, which fails with [ErrAlreadyExists] when
// an item with its key exists (like [Repo.Create]), for a [Tx].
func (r *Repo[T]) CreateOp(v T, optFns ...func(*WriteOptions)) WriteOp {
	return r.op("Create", &writeSrc[T]{r: r, kind: "Create", v: v, o: writeOpts(optFns)})
}

// DeleteOp returns a delete of the item with key's primary key, like
// [Repo.Delete] ([WriteOptions] apply in a [Tx]; a [BatchWrite] refuses
// them and deletes an entity with unique fields' item on its own).
func (r *Repo[T]) DeleteOp(key T, optFns ...func(*WriteOptions)) WriteOp {
	src := &writeSrc[T]{r: r, kind: "Delete", v: key, o: writeOpts(optFns)}
	op := r.op("Delete", src)
	op.cond = src.o.If.IsSet() || src.o.MustExist
	op.key, op.err = r.e.key(r.t, key)
	return op
}

// CheckOp returns a condition on the item with key's primary key that a
// [Tx] requires without writing it; it fails with [ErrConditionFailed] (or
// [ErrNotFound] when the item does not exist), as does another entity's
// item under the key. Name fields in cond by their Go names, as
// [Query.Filter] describes.
func (r *Repo[T]) CheckOp(key T, cond expression.ConditionBuilder) WriteOp {
	return r.op("Check", opFunc(func(context.Context, bool) ([]txItem, error) { return r.checkItems(key, cond) }))
}

// Op returns the update as an op for a [Tx], with its conditions: the item
// must exist unless u is an upsert. Changes made to u after Op are not
// part of the op.
func (u *Update[T]) Op() WriteOp {
	c := u.clone()
	return u.r.op("Update", opFunc(func(ctx context.Context, _ bool) ([]txItem, error) { return c.txItems(ctx, true) }))
}

// op makes an op of kind whose transaction items src makes.
func (r *Repo[T]) op(kind string, src opSource) WriteOp {
	op := WriteOp{table: r.t, entity: r.e.name, kind: kind, src: src}
	if len(r.e.guards.unique) > 0 {
		op.own = &r.repo
	}
	return op
}

// plainPut is an unconditional put of item, whose primary key is key, in
// a batch or a transaction.
func plainPut(t *Table, entity string, item, key map[string]types.AttributeValue) WriteOp {
	it := txItem{table: t, key: key, size: itemsize.Of(item), tw: types.TransactWriteItem{Put: &types.Put{TableName: &t.name, Item: item}}}
	return WriteOp{table: t, entity: entity, kind: "Put", put: item, key: key,
		src: opFunc(func(context.Context, bool) ([]txItem, error) { return []txItem{it}, nil })}
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
	ce, err := buildCondition(r.ownership(writeplan.AnyItem).And(writeplan.User(cond)), r.e.name, r.condNames(k))
	if err != nil {
		return nil, err
	}
	it := r.checkTxItem(k, ce, func(old map[string]types.AttributeValue) error {
		if old == nil {
			return ErrNotFound
		}
		if !r.isMine(old) {
			return wrapSentinel(ErrConditionFailed, "check "+r.e.name+": the item under this key is another entity's", nil)
		}
		return ErrConditionFailed
	})
	it.tw.ConditionCheck.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return []txItem{it}, nil
}

// checkTxItem is the transaction item checking ce on the item under key.
func (r *repo) checkTxItem(key map[string]types.AttributeValue, ce writeplan.CondExpr, failed func(map[string]types.AttributeValue) error) txItem {
	return txItem{table: r.t, key: key, size: itemsize.Of(key), failed: failed,
		tw: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &r.t.name, Key: key,
			ConditionExpression: ce.Text, ExpressionAttributeNames: ce.Names, ExpressionAttributeValues: ce.Values}}}
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

// keyed returns a map holding the op's primary key attributes (for itemID).
func (op *WriteOp) keyed() map[string]types.AttributeValue {
	if op.put != nil {
		return op.put
	}
	return op.key
}

// Err returns the error found while making the op, if any.
func (op WriteOp) Err() error { return op.err }
