package singletable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/redact"
	"github.com/singletable-go/singletable/internal/wire"
)

// The plan's last step, sending: a write of one item goes as a single
// PutItem, UpdateItem or DeleteItem; one with guard items, a caller's
// token or an exactly-once counter, as a TransactWriteItems. The same
// items serve the transaction forms.

// racePolicy paces how often a write that raced is built again.
var racePolicy = backoff.Policy{Base: 5 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 5}

// execResult is what a write returns.
type execResult struct {
	// attrs are the attributes a single DeleteItem (old item) or
	// UpdateItem (new item) returned; nil after a transaction.
	attrs map[string]types.AttributeValue
	// unseen is set when a lost attempt applied the write (plan_lost.go);
	// attrs then hold the item as it is now (nil after a delete).
	unseen bool
	// noItem: a single UpdateItem answered without the new item (Preview).
	noItem bool
}

// exec runs a write: one item as a single request, several as a
// transaction; one that raced is built again.
func (r *repo) exec(ctx context.Context, kind string, build func() ([]txItem, error)) (execResult, error) {
	return r.execToken(ctx, kind, "", false, build)
}

// execToken is exec, sent as a transaction even for one item when token
// (the caller's client request token) is not empty or oneTx is set. Without
// a caller's token, each attempt's transaction carries a token drawn for
// it (txn.request), which the SDK's and commit's retries of that attempt
// reuse.
func (r *repo) execToken(ctx context.Context, kind, token string, oneTx bool, build func() ([]txItem, error)) (execResult, error) {
	var res execResult
	var foreign []itemID // guards found held by another item: not released
	err := racePolicy.Do(ctx, nil, func(err error) bool {
		// A retry rebuilds the request, which a fixed token would refuse;
		// a drawn token is drawn again, the raced attempt having been
		// answered (its outcome is known: not applied).
		var re *raceError
		var fg *foreignGuardError
		return token == "" && (errors.As(err, &re) || errors.As(err, &fg))
	}, func(ctx context.Context) error {
		items, err := build()
		if err != nil {
			return err
		}
		items = withoutReleases(items, foreign)
		if len(items) > 1 || token != "" || oneTx {
			err := r.t.execTx(ctx, kind, r.e.name, items, token)
			var fg *foreignGuardError
			if errors.As(err, &fg) {
				foreign = append(foreign, fg.guard)
			}
			return err
		}
		res, err = r.t.execItem(ctx, kind, r.e.name, items[0])
		return err
	})
	var ie *backoff.InterruptedError
	if errors.As(err, &ie) {
		err = ie.Last // the context ended while waiting: report what raced
	}
	return res, err
}

// execTx sends the items of one write as a transaction.
func (t *Table) execTx(ctx context.Context, kind, entity string, items []txItem, token string) error {
	tx := &txn{t: t}
	tx.add(items, kind, entity, nil)
	in, err := tx.request(token)
	if err != nil {
		return err
	}
	err = tx.commit(ctx, in, TxOptions{})
	var te *TransactionError
	if errors.As(err, &te) && te.TxReason.Err != nil {
		// A single write reports its own failure, not a transaction's.
		return withCause(te.TxReason.Err, te.Cause)
	}
	return err
}

// execItem sends one item as a single PutItem, DeleteItem or UpdateItem
// (a lost response's retry is judged as plan_lost.go says).
func (t *Table) execItem(ctx context.Context, kind, entity string, it txItem) (execResult, error) {
	var res execResult
	var err error
	// The log, the options slice and a put's input share one allocation.
	call := &struct {
		log  attemptLog
		opts [1]func(*dynamodb.Options)
		put  dynamodb.PutItemInput
	}{}
	log := &call.log
	call.opts[0] = log.option()
	opt := call.opts[:]
	switch {
	case it.tw.Put != nil:
		p := it.tw.Put
		in := &call.put
		*in = dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item,
			ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
			ExpressionAttributeValues:           p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure,
		}
		_, err = t.api(ctx, entity).PutItem(wire.Write(ctx, in, t.wire), in, opt...)
	case it.tw.Delete != nil:
		d := it.tw.Delete
		var out *dynamodb.DeleteItemOutput
		out, err = t.api(ctx, entity).DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: d.TableName, Key: d.Key,
			ConditionExpression: d.ConditionExpression, ExpressionAttributeNames: d.ExpressionAttributeNames,
			ExpressionAttributeValues:           d.ExpressionAttributeValues,
			ReturnValues:                        types.ReturnValueAllOld,
			ReturnValuesOnConditionCheckFailure: d.ReturnValuesOnConditionCheckFailure,
		}, opt...)
		if err == nil {
			res.attrs = out.Attributes
			// Nothing deleted by this attempt: an earlier one may have.
			res.unseen = len(out.Attributes) == 0 && log.maybeApplied.Load()
		}
	case it.tw.Update != nil:
		u := it.tw.Update
		var out *dynamodb.UpdateItemOutput
		out, err = t.api(ctx, entity).UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
			ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
			ExpressionAttributeValues:           u.ExpressionAttributeValues,
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: u.ReturnValuesOnConditionCheckFailure,
		}, opt...)
		if err == nil {
			res.attrs, res.noItem = out.Attributes, len(out.Attributes) == 0
		}
	default:
		return res, validationErr(entity, "", "%s: nothing to write", strings.ToLower(kind))
	}
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && it.failed != nil {
			return conditionFailed(kind, entity, it, log.maybeApplied.Load(), ccf.Item, err)
		}
		return res, fmt.Errorf("singletable: %s %s: %w", strings.ToLower(kind), entity, redact.API(err))
	}
	return res, nil
}
