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

// getter is a GetOp's *Repo[T]: got decodes into dest the item read (item,
// or the i-th key's of rd, the direct path), and reports whether it is the
// entity's; with later (TxGet) it returns the store. feed makes rd's sinks.
type getter interface {
	got(item map[string]types.AttributeValue, rd *wire.Readers, i int, dest any, later bool) (store func(), found bool, err error)
	feed() wire.Feed
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

func (r *Repo[T]) got(item map[string]types.AttributeValue, rd *wire.Readers, i int, dest any, later bool) (func(), bool, error) {
	var v T
	var err error
	s, i := rd.At(i)
	ws, _ := s.(*wireSink[T])
	if ws != nil {
		item = ws.Heads.Heads[i] // the head: what isMine reads
	}
	found := len(item) > 0 && r.isMine(item)
	switch {
	case found && ws != nil:
		v = ws.vals[i]
		err = r.e.wireRest(r.t, item, &v, ws.Complete[i], ws.Errs[i])
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
	rd := ops[0].table.readers(ctx, len(ops), func(i int) GetOp { return ops[i] })
	defer rd.Release()
	out, err := ops[0].table.api(ctx, "").TransactGetItems(rd.With(ctx, in, "", nil), in)
	if err != nil {
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) {
			return nil, txGetCancelled(ops, tce, err)
		}
		return nil, fmt.Errorf("singletable: read transaction: %w", err)
	}
	resp := out.Responses
	if len(resp) == 0 {
		// No item was retrieved, or the direct path decoded them (rd).
		resp = make([]types.ItemResponse, len(ops))
	}
	if len(resp) != len(ops) {
		return nil, fmt.Errorf("singletable: read transaction: DynamoDB returned %d responses for %d items", len(resp), len(ops))
	}
	found, stores := make([]bool, len(ops)), make([]func(), len(ops))
	var errs []error
	for i, op := range ops {
		store, ok, derr := op.r.got(resp[i].Item, rd, i, op.dest, true)
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
		in.TransactItems[i] = types.TransactGetItem{Get: &types.Get{TableName: &op.table.name, Key: op.key,
			ProjectionExpression: op.proj, ExpressionAttributeNames: op.names}}
	}
	return in, nil
}

// sameClient reports whether a and b send requests through the same
// client. Clients whose dynamic type is not comparable are the same only
// for the same table.
func sameClient(a, b *Table) bool {
	ta := reflect.TypeOf(a.client)
	return a == b || ta == reflect.TypeOf(b.client) && ta.Comparable() && a.client == b.client
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
