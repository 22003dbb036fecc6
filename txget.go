package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/wire"
)

// maxTxGetItems is DynamoDB's limit on the items of one TransactGetItems.
const maxTxGetItems = 100

// GetOp is one typed read made by [Repo.GetOp], for [TxGet] and
// [BatchGet]: the item's primary key, its [ReadOptions] and where to
// decode it. A bad key makes an op whose Err is set, reported before
// anything is sent.
type GetOp struct {
	table      *Table
	entity     string
	key        map[string]types.AttributeValue
	proj       *string           // ProjectionExpression, when Fields was given
	names      map[string]string // its ExpressionAttributeNames
	consistent bool
	err        error
	r          getter // the op's repository, which decodes into dest
	dest       any    // the *T given
}

// getter is what a GetOp reads its item with: its *Repo[T].
type getter interface {
	// got decodes the item read (item, nil or empty when there is none, or
	// the i-th of s when s is set: the direct wire path) into dest, and
	// reports whether it is an item of the op's entity; with later, it
	// returns the function that stores it instead (TxGet stores nothing
	// until every op has decoded).
	got(item map[string]types.AttributeValue, s wire.Feed, i int, dest any, later bool) (store func(), found bool, err error)
	feed() wire.Feed // a sink of the repository's items, heads typed
}

// GetOp returns a read of the item with key's primary key fields into
// dest, for [TxGet] and [BatchGet]. Key errors (as [Repo.Get]'s) and a nil
// dest are reported before any request. ConsistentRead changes nothing in
// TxGet, which always reads the latest committed items.
func (r *Repo[T]) GetOp(key T, dest *T, optFns ...func(*ReadOptions)) GetOp {
	op := GetOp{table: r.t, entity: r.e.name}
	if dest == nil {
		op.err = validationErr(r.e.name, "", "GetOp: dest is nil; pass a *%s to decode the item into", r.e.name)
		return op
	}
	o := readOpts(optFns)
	op.consistent = o.ConsistentRead
	op.key, op.err = r.e.key(r.t, key)
	if op.err != nil {
		return op
	}
	if len(o.Fields) > 0 {
		if op.proj, op.names, op.err = r.fieldsProjection(o.Fields); op.err != nil {
			return op
		}
	}
	op.r, op.dest = r, dest
	return op
}

func (r *Repo[T]) got(item map[string]types.AttributeValue, s wire.Feed, i int, dest any, later bool) (func(), bool, error) {
	var v T
	var err error
	found := s != nil && r.isMine(s.Got().Heads[i]) || s == nil && len(item) > 0 && r.isMine(item)
	switch ws, _ := s.(*wireSink[T]); {
	case found && ws != nil:
		v = ws.vals[i]
		err = r.e.wireRest(r.t, ws.Heads.Heads[i], &v, ws.Complete[i], ws.Errs[i])
	case found:
		v, err = r.e.decode(r.t, item)
	}
	if err != nil || !later {
		if err == nil {
			*dest.(*T) = v
		}
		return nil, found, err
	}
	w := v // v stays on the stack unless stored later
	return func() { *dest.(*T) = w }, found, nil
}

func (r *Repo[T]) feed() wire.Feed {
	return &wireSink[T]{Heads: wire.NewHeads(r.e.typ, r.e.wireKeep(r.t, nil, true))}
}

// Table returns the table the op reads from.
func (op GetOp) Table() *Table { return op.table }

// Entity returns the entity type the op reads.
func (op GetOp) Entity() string { return op.entity }

// Key returns the primary key the op reads (nil when it could not be
// rendered). Do not modify it.
func (op GetOp) Key() map[string]types.AttributeValue { return op.key }

// Err returns the error found while making the op, if any.
func (op GetOp) Err() error { return op.err }

// TxGet reads the items of ops in one [TransactGetItems] request: a
// serializable snapshot across entities and tables reached through the
// same client.
//
// found has one entry per op, in order; an op not found (or holding
// another entity's item) has its dest set to the zero value. On any error
// no dest is modified. More than 100 ops or two ops on one item is a
// *ValidationError; a cancelled transaction is a *TransactionError naming
// each refused op, and TxGet can simply be called again.
//
// [TransactGetItems]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactGetItems.html
func TxGet(ctx context.Context, ops []GetOp) (found []bool, err error) {
	if len(ops) == 0 {
		return []bool{}, nil // nothing to read, as for Tx and BatchGet
	}
	in, err := txGetRequest(ops)
	if err != nil {
		return nil, err
	}
	c := ops[0].table.api(ctx, "")
	b := txBatch(c, ops)
	if b != nil {
		defer b.Release()
		ctx = wire.With(ctx, in, b)
	}
	out, err := c.TransactGetItems(ctx, in)
	if err != nil {
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			return nil, txGetCancelled(ops, tce, err)
		}
		return nil, fmt.Errorf("singletable: read transaction: %w", err)
	}
	resp := out.Responses
	if len(resp) == 0 || b != nil && b.Filled {
		// No item was retrieved (every op is not found), or the direct path read them.
		resp = make([]types.ItemResponse, len(ops))
	}
	if len(resp) != len(ops) {
		return nil, fmt.Errorf("singletable: read transaction: DynamoDB returned %d responses for %d items", len(resp), len(ops))
	}
	found = make([]bool, len(ops))
	stores, direct := make([]func(), len(ops)), make([]wired, len(ops))
	for _, it := range b.Direct() {
		direct[it.Key] = wired{b.Feeds[it.Feed], it.Item}
	}
	var errs []error
	for i, op := range ops {
		store, ok, derr := op.r.got(resp[i].Item, direct[i].s, direct[i].i, op.dest, true)
		if derr != nil {
			errs = append(errs, fmt.Errorf("singletable: read transaction op %d (Get %s %s): %w", i, op.entity, op.table.keyText(op.key), derr))
			continue
		}
		stores[i], found[i] = store, ok
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, store := range stores {
		store()
	}
	return found, nil
}

// txGetRequest validates ops and builds the request.
func txGetRequest(ops []GetOp) (*dynamodb.TransactGetItemsInput, error) {
	var errs []error
	for i, op := range ops {
		switch {
		case op.table == nil:
			errs = append(errs, validationErr("", "", "read transaction op %d was not made by Repo.GetOp", i))
		case op.err != nil:
			errs = append(errs, fmt.Errorf("singletable: read transaction op %d (Get %s): %w", i, op.entity, op.err))
		case op.table.client == nil:
			errs = append(errs, validationErr(op.entity, "", "read transaction op %d: table %q has no client", i, op.table.name))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(ops) > maxTxGetItems {
		return nil, validationErr("", "", "read transaction has %d ops; DynamoDB allows %d", len(ops), maxTxGetItems)
	}
	first := ops[0].table
	seen := make(map[itemID]int, len(ops))
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(ops))}
	for i, op := range ops {
		if !sameClient(first, op.table) {
			return nil, validationErr(op.entity, "", "read transaction op %d reads table %q through another client than op 0 (table %q); one transaction goes through one client",
				i, op.table.name, first.name)
		}
		id := op.table.itemID(op.key)
		if j, dup := seen[id]; dup {
			return nil, validationErr(op.entity, "", "read transaction reads item %s of table %q twice (op %d and op %d); DynamoDB allows one operation per item",
				op.table.keyText(op.key), op.table.name, j, i)
		}
		seen[id] = i
		in.TransactItems[i] = types.TransactGetItem{Get: &types.Get{
			TableName:                &op.table.name,
			Key:                      op.key,
			ProjectionExpression:     op.proj,
			ExpressionAttributeNames: op.names,
		}}
	}
	return in, nil
}

// txBatch returns the sink of TxGet's request through c on the direct
// path, nil when it does not take it.
func txBatch(c Client, ops []GetOp) *wire.Batch {
	if t := ops[0].table; !t.wire || c != t.client {
		return nil
	}
	b := &wire.Batch{ByPos: make([]int, len(ops))}
	var rs []getter
	for i, op := range ops {
		b.ByPos[i] = feedOf(&rs, op.r)
	}
	for _, r := range rs {
		b.Feeds = append(b.Feeds, r.feed())
	}
	return b
}

// sameClient reports whether a and b send requests through the same
// client. Clients whose dynamic type is not comparable are the same only
// for the same table.
func sameClient(a, b *Table) bool {
	if a == b {
		return true
	}
	ta, tb := reflect.TypeOf(a.client), reflect.TypeOf(b.client)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a.client == b.client
}

// txGetCancelled explains a cancelled read transaction as a
// *TransactionError, each op being its own single item, with the mapping
// the write transactions use.
func txGetCancelled(ops []GetOp, tce *types.TransactionCanceledException, err error) *TransactionError {
	tx := &txn{ops: make([]txOp, len(ops)), items: make([]txItem, len(ops))}
	for i, op := range ops {
		tx.ops[i] = txOp{kind: "Get", entity: op.entity, key: op.key}
		tx.items[i] = txItem{op: i, table: op.table, key: op.key}
	}
	return tx.cancelled(tce, err)
}
