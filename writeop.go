package singletable

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// WriteOp is one typed write made by a repository ([Repo.PutOp],
// [Repo.DeleteOp]) for use in batches and migrations, where writes of
// several entities travel together. The item is rendered and validated
// when the op is made; a bad item makes an op whose Err is set, and the
// batch reports it without sending anything.
type WriteOp struct {
	table  *Table
	entity string
	put    map[string]types.AttributeValue // the item, for a put
	key    map[string]types.AttributeValue // the primary key, for a delete
	err    error
	// guarded, for an entity with unique fields, writes the op with its
	// guard items (a transaction, after reading the item) instead of in a
	// batch request.
	guarded func(ctx context.Context) error
}

// PutOp returns a put of v: the whole item, keys and indexes rendered.
// Managed timestamps are filled only when zero and the version is stored as
// given, so that a migration keeps what it copies; the put does not check
// the version. Like every write, it never replaces another entity's item:
// for an entity with unique fields, whose guard items a batch request
// cannot keep, the batch writes the op on its own as [Repo.Put] does
// (reading the item, claiming and releasing values in one transaction);
// for the others, the batch request replaces what is under the key.
func (r *Repo[T]) PutOp(v T) WriteOp {
	op := WriteOp{table: r.t, entity: r.e.name}
	r.e.stampNow(r.t, &v, true)
	item, _, err := r.e.encodeSized(r.t, &v)
	if err != nil {
		op.err = err
		return op
	}
	op.put = item // its key is in it: Key extracts it only when asked
	if len(r.e.guards.unique) > 0 {
		op.guarded = func(ctx context.Context) error {
			_, err := r.exec(ctx, "Put", func() ([]txItem, error) {
				w := v
				return r.putItems(ctx, &w, writeOptions{load: true})
			})
			return err
		}
	}
	return op
}

// DeleteOp returns a delete of the item with key's primary key. For an
// entity with unique fields, the batch deletes it on its own as
// [Repo.Delete] does, releasing its guard items.
func (r *Repo[T]) DeleteOp(key T) WriteOp {
	op := WriteOp{table: r.t, entity: r.e.name}
	op.key, op.err = r.e.key(r.t, key)
	if op.err == nil && len(r.e.guards.unique) > 0 {
		op.guarded = func(ctx context.Context) error {
			_, err := r.exec(ctx, "Delete", func() ([]txItem, error) {
				items, _, err := r.deleteItems(ctx, key, writeOptions{})
				return items, err
			})
			return err
		}
	}
	return op
}

// Table returns the table the op writes to.
func (op WriteOp) Table() *Table { return op.table }

// Entity returns the entity type the op writes.
func (op WriteOp) Entity() string { return op.entity }

// IsPut reports whether the op is a put (otherwise a delete).
func (op WriteOp) IsPut() bool { return op.put != nil }

// Item returns the rendered item of a put (nil for a delete). Do not modify it.
func (op WriteOp) Item() map[string]types.AttributeValue { return op.put }

// Key returns the primary key the op writes. Do not modify it.
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
