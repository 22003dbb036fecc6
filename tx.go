package singletable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/redact"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// DynamoDB's limits for TransactWriteItems.
const (
	maxTxItems = 100
	maxTxBytes = 4 << 20
)

// TxOptions tunes [Tx].
type TxOptions struct {
	// ClientRequestToken makes the transaction idempotent: DynamoDB applies
	// a transaction with a given token at most once in 10 minutes. By
	// default each call of Tx uses a random token for all of its attempts;
	// set it to retry a transaction across processes.
	ClientRequestToken string
	// MaxAttempts is how many times a throttled, transiently failed or
	// conflict-cancelled transaction is tried; default 5.
	MaxAttempts int
	// Backoff paces those retries; the zero value means 25ms doubling up
	// to 2s.
	Backoff Backoff
}

// txn is one write transaction being built: the ops given to [Tx] made
// into transaction items, with what explains a failure.
type txn struct {
	t     *Table // the first op's: the request goes through its client
	ops   []txOp
	items []txItem
	errs  []error
}

// txOp is one recorded op: the caller's unit, which may expand
// into several items (the entity's item and its guards).
type txOp struct {
	kind   string // Put, Create, Update, Delete, Check
	entity string
	key    map[string]types.AttributeValue
}

// txItem is one TransactWriteItem with what is needed to explain its
// failure.
type txItem struct {
	op    int    // index into txn.ops
	guard string // "" for the op's own item, else what the guard item guards
	// release marks the release of a unique guard (see guardDelete).
	release bool
	table   *Table
	// key is the primary key of the item written. A put sent alone needs
	// none, so putTxItem may leave it nil; txn.add fills it in.
	key  map[string]types.AttributeValue
	tw   types.TransactWriteItem
	size int
	// failed turns a ConditionalCheckFailed into the op's sentinel error,
	// given the item as it was (nil when it did not exist).
	failed func(old map[string]types.AttributeValue) error
	// applied, when set, reports whether the item as it is now (nil when
	// absent) shows this write done: a sent-alone write that failed its
	// condition after an attempt without an answer succeeded unseen.
	applied func(cur map[string]types.AttributeValue) bool
}

// Tx commits ops in one [TransactWriteItems] request, all or nothing,
// across entities and tables reached through the first op's client. An
// empty ops sends nothing. More than 100 items (guards count), more than
// 4 MB or two writes to one item is a *ValidationError before sending; a
// cancelled transaction is a *TransactionError naming the failing op and
// matching its sentinel with errors.Is.
//
// [TransactWriteItems]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
func Tx(ctx context.Context, ops []WriteOp, optFns ...func(*TxOptions)) error {
	o := applyOpts(optFns)
	tx, in, err := prepareTx(ctx, ops, o.ClientRequestToken)
	if err != nil || in == nil {
		return err
	}
	return tx.commit(ctx, in, o)
}

// prepareTx makes the transaction items of ops, in order, checks them and
// builds the request (nil when there is nothing to write).
func prepareTx(ctx context.Context, ops []WriteOp, token string) (*txn, *dynamodb.TransactWriteItemsInput, error) {
	tx := &txn{}
	for i := range ops {
		op := &ops[i]
		if tx.t == nil {
			tx.t = op.table
		}
		switch {
		case op.err != nil:
			tx.fail(op.kind, op.entity, op.err)
		case op.src == nil:
			tx.fail(op.kind, op.entity, validationErr("", "", "zero WriteOp: make ops with a Repo's PutOp, CreateOp, DeleteOp or CheckOp, or an Update's Op"))
		default:
			items, err := op.src.opItems(ctx, false)
			tx.add(items, op.kind, op.entity, err)
		}
	}
	in, err := tx.request(token)
	return tx, in, err
}

// request validates the transaction's items and builds the request.
func (tx *txn) request(token string) (*dynamodb.TransactWriteItemsInput, error) {
	if len(tx.errs) > 0 {
		return nil, errors.Join(tx.errs...)
	}
	if len(tx.items) == 0 {
		return nil, nil
	}
	if len(tx.items) > maxTxItems {
		return nil, validationErr("", "", "transaction has %d items (%d ops and their guard items); DynamoDB allows %d", len(tx.items), len(tx.ops), maxTxItems)
	}
	total := 0
	seen := make(map[itemID]int, len(tx.items))
	for i, it := range tx.items {
		total += it.size
		id := it.table.itemID(it.key)
		if j, dup := seen[id]; dup {
			return nil, validationErr(tx.ops[it.op].entity, "", "transaction writes item %s twice (op %d%s and op %d%s); DynamoDB allows one operation per item",
				it.table.keyText(it.key), tx.items[j].op, guardText(tx.items[j].guard), it.op, guardText(it.guard))
		}
		seen[id] = i
	}
	if total > maxTxBytes {
		return nil, validationErr("", "", "transaction is %d bytes; DynamoDB allows %d", total, maxTxBytes)
	}
	if token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	in := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token),
		TransactItems: make([]types.TransactWriteItem, len(tx.items))}
	for i, it := range tx.items {
		in.TransactItems[i] = it.tw
	}
	return in, nil
}

func guardText(g string) string {
	if g == "" {
		return ""
	}
	return " (" + g + ")"
}

func (tx *txn) commit(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o TxOptions) error {
	p := backoff.Policy{Base: backoff.Default.Base, Max: backoff.Default.Max, Attempts: 5}.
		With(o.Backoff.Base, o.Backoff.Max, o.MaxAttempts)
	log := &attemptLog{}
	err := p.Do(ctx, nil, func(err error) bool { return ctx.Err() == nil && retryableTx(err) }, func(ctx context.Context) error {
		_, err := tx.t.api(ctx, tx.entity()).TransactWriteItems(ctx, in, log.option())
		return err
	})
	return tx.outcome(err, log)
}

// retryableTx reports whether sending the same transaction again, with the
// same token, may succeed: throttling, a transient error, a conflict with
// another transaction, or an earlier attempt still in progress.
func retryableTx(err error) bool { return backoff.IsRetryableTx(err) || inProgress(err) }

// outcome turns the last error of a transaction's attempts, logged in log,
// into the error to return.
func (tx *txn) outcome(err error, log *attemptLog) error {
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		te := tx.cancelled(tce, err)
		// A retry with the token of an applied transaction succeeds, so a
		// failed condition proves nothing was applied; a conflict or
		// throttling cancellation after an unanswered attempt does not.
		te.MaybeApplied = log.maybeApplied.Load() && !te.conditionFailed()
		return te
	}
	return fmt.Errorf("singletable: transaction: %w", redact.API(err))
}

// inProgress reports a TransactionInProgressException: an earlier attempt
// with the same token is still running, so trying again is safe.
func inProgress(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "TransactionInProgressException"
}

func (tx *txn) cancelled(tce *types.TransactionCanceledException, err error) *TransactionError {
	te := &TransactionError{Cause: err}
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" || code == "None" || i >= len(tx.items) {
			continue
		}
		it := tx.items[i]
		op := tx.ops[it.op]
		reason := TxReason{Index: it.op, Op: op.kind, Entity: op.entity, Key: it.key, keys: it.table.keyNames(),
			Guard: it.guard, Code: code, Message: aws.ToString(r.Message)}
		if code == "ConditionalCheckFailed" && it.failed != nil {
			old := r.Item
			if len(old) == 0 {
				old = nil
			}
			reason.Err = it.failed(old)
		}
		te.Reasons = append(te.Reasons, reason)
	}
	if len(te.Reasons) > 0 {
		te.TxReason = te.Reasons[0]
	} else {
		te.Index = -1
	}
	return te
}

// entity is the entity of every op of tx, or "" when they are of
// several, for the Observe hook.
func (tx *txn) entity() string {
	if len(tx.ops) == 0 || slices.ContainsFunc(tx.ops, func(op txOp) bool { return op.entity != tx.ops[0].entity }) {
		return ""
	}
	return tx.ops[0].entity
}

func (tx *txn) fail(kind, entity string, err error) {
	tx.errs = append(tx.errs, fmt.Errorf("singletable: transaction op %d (%s %s): %w", len(tx.ops), kind, entity, err))
	tx.ops = append(tx.ops, txOp{kind: kind, entity: entity})
}

func (tx *txn) add(items []txItem, kind, entity string, err error) {
	if err != nil {
		tx.fail(kind, entity, err)
		return
	}
	for i := range items {
		it := &items[i]
		if !sameClient(it.table, tx.t) {
			// The request goes through tx.t's client, with its credentials
			// and endpoint: a table reached through another one is refused.
			tx.fail(kind, entity, validationErr(entity, "", "table %q goes through another client than the first op's table %q; one transaction goes through one client",
				it.table.name, tx.t.name))
			return
		}
		if it.key == nil && it.tw.Put != nil {
			it.key = it.table.primaryKeyOf(it.tw.Put.Item)
		}
	}
	tx.ops = append(tx.ops, txOp{kind: kind, entity: entity, key: items[0].key})
	for _, it := range items {
		it.op = len(tx.ops) - 1
		tx.items = append(tx.items, it)
	}
}

// putTxItem makes the transaction item putting item, whose primary key is
// key (nil to leave it to txn.add) and whose size is size (as
// [Entity.encodeSized] measured it), under cond (which may be empty).
func (r *repo) putTxItem(item, key map[string]types.AttributeValue, size int, cond writeplan.Condition, failed func(old map[string]types.AttributeValue) error) (txItem, error) {
	put := &types.Put{TableName: &r.t.name, Item: item}
	if !cond.Empty() {
		ce, err := r.buildCond(cond, item)
		if err != nil {
			return txItem{}, err
		}
		put.ConditionExpression = ce.Text
		put.ExpressionAttributeNames = ce.Names
		put.ExpressionAttributeValues = ce.Values
		put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return txItem{table: r.t, key: key, size: size,
		tw: types.TransactWriteItem{Put: put}, failed: failed}, nil
}
