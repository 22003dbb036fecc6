package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
)

// Every write is first built as transaction items: the entity's own item
// with its condition, plus the guard items of its unique fields. A write of
// one item is sent as a single PutItem, UpdateItem or DeleteItem; a write
// with guard items as a TransactWriteItems. The same builders serve the
// Tx helpers, so a guarded write composes with others in one transaction.

// maxRaceRetries bounds how often a single guarded write re-reads the item
// after it changed between the read and the write.
const maxRaceRetries = 5

func writeOpts(opts []WriteOption) writeOptions {
	if len(opts) == 0 {
		return writeOptions{} // without options nothing escapes to the heap
	}
	return applyWriteOpts(opts)
}

func applyWriteOpts(opts []WriteOption) writeOptions {
	o := new(writeOptions)
	for _, fn := range opts {
		fn(o)
	}
	return *o
}

// createItems is Create as transaction items.
func (r *Repo[T]) createItems(v T) ([]txItem, error) {
	r.e.stampNow(r.t, &v, false)
	if r.e.guards.version != nil {
		rv := reflect.ValueOf(&v).Elem()
		r.e.setVersion(rv, 1)
	}
	item, size, err := r.e.encodeSized(r.t, &v)
	if err != nil {
		return nil, err
	}
	it, err := r.putTxItem(item, nil, size, check(r.notExists()), func(map[string]types.AttributeValue) error {
		return wrapSentinel(ErrAlreadyExists, "create "+r.e.name, nil)
	})
	if err != nil {
		return nil, err
	}
	it.applied = putApplied(item)
	if len(r.e.guards.unique) == 0 {
		return []txItem{it}, nil
	}
	it.key = r.t.primaryKeyOf(item)
	guards, err := r.guardSwaps(r.e.guards.unique, nil, &v, it.key)
	if err != nil {
		return nil, err
	}
	return append([]txItem{it}, guards...), nil
}

// putItems is Put as transaction items. For an entity with unique fields
// it reads the item first, to release the values it replaces.
func (r *Repo[T]) putItems(ctx context.Context, v T, o writeOptions) ([]txItem, error) {
	rv := reflect.ValueOf(&v).Elem()
	r.e.stampNow(r.t, &v, false)
	g := &r.e.guards
	var expected int64
	if g.version != nil {
		expected = r.e.versionOf(rv)
		r.e.setVersion(rv, expected+1)
	}
	item, size, err := r.e.encodeSized(r.t, &v)
	if err != nil {
		return nil, err
	}
	var key map[string]types.AttributeValue // made only when needed (see txItem.key)
	var cond condition
	var snap *snapshot
	if len(g.unique) > 0 {
		key = r.t.primaryKeyOf(item)
		s, err := r.readSnapshot(ctx, key, g.unique, false)
		if err != nil {
			return nil, err
		}
		snap = &s
		cond = cond.and(r.snapCond(s))
	}
	if g.version != nil {
		cond = cond.and(r.e.versionCond(expected))
	}
	if o.mustExist {
		cond = cond.and(check(r.exists()))
	}
	if o.cond != nil {
		cond = cond.and(userCond(*o.cond))
	}
	it, err := r.putTxItem(item, key, size, cond, func(old map[string]types.AttributeValue) error {
		what := "put " + r.e.name
		switch {
		case snap != nil && snap.changed(old):
			return raced(what)
		case g.version != nil && ((old == nil && expected != 0) || (old != nil && r.e.storedVersion(old) != expected)):
			return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", what, expected), nil)
		case o.mustExist && old == nil:
			return wrapSentinel(ErrNotFound, what, nil)
		}
		return wrapSentinel(ErrConditionFailed, what, nil)
	})
	if err != nil {
		return nil, err
	}
	it.applied = putApplied(item)
	items := []txItem{it}
	if snap != nil {
		oldV, err := r.snapValue(*snap)
		if err != nil {
			return nil, err
		}
		guards, err := r.guardSwaps(g.unique, oldV, &v, key)
		if err != nil {
			return nil, err
		}
		items = append(items, guards...)
	}
	return items, nil
}

// deleteItems is Delete as transaction items. For an entity with unique
// fields it reads the item first (returned as snap), to release its values.
func (r *Repo[T]) deleteItems(ctx context.Context, key T, o writeOptions) ([]txItem, *snapshot, error) {
	k, err := r.e.key(r.t, key)
	if err != nil {
		return nil, nil, err
	}
	g := &r.e.guards
	cond := r.deleteCond(o)
	var expected int64
	if g.version != nil {
		if expected = r.e.versionOf(reflect.ValueOf(&key).Elem()); expected != 0 {
			cond = cond.and(r.e.versionCond(expected))
		}
	}
	var snap *snapshot
	if len(g.unique) > 0 {
		s, err := r.readSnapshot(ctx, k, g.unique, true)
		if err != nil {
			return nil, nil, err
		}
		snap = &s
		cond = cond.and(r.snapCond(s))
	}
	ce, err := cond.build(r.e.name)
	if err != nil {
		return nil, nil, err
	}
	what := "delete " + r.e.name
	it := txItem{table: r.t, key: k, size: itemsize.Of(k),
		tw: types.TransactWriteItem{Delete: &types.Delete{
			TableName:                           &r.t.name,
			Key:                                 k,
			ConditionExpression:                 ce.text,
			ExpressionAttributeNames:            ce.names,
			ExpressionAttributeValues:           ce.values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		failed: func(old map[string]types.AttributeValue) error {
			switch {
			case snap != nil && snap.changed(old):
				return raced(what)
			case old == nil:
				return wrapSentinel(ErrNotFound, what, nil)
			case !r.isMine(old):
				return wrapSentinel(ErrConditionFailed, what+": the item under this key is another entity's", nil)
			case expected != 0 && r.e.storedVersion(old) != expected:
				return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", what, expected), nil)
			}
			return wrapSentinel(ErrConditionFailed, what, nil)
		},
		applied: deleteApplied,
	}
	items := []txItem{it}
	if snap != nil {
		oldV, err := r.snapValue(*snap)
		if err != nil {
			return nil, nil, err
		}
		guards, err := r.guardSwaps(g.unique, oldV, nil, k)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, guards...)
	}
	return items, snap, nil
}

// txItems is the update as transaction items. An update that sets or
// removes unique fields reads the item first, to swap their guards.
func (u *Update[T]) txItems(ctx context.Context) ([]txItem, error) {
	r := u.r
	var touched []*fieldInfo
	for _, f := range r.e.guards.unique {
		if u.setsOrRemoves(f) {
			touched = append(touched, f)
		}
	}
	c := u
	var snap *snapshot
	if len(touched) > 0 {
		if len(u.errs) > 0 {
			return nil, errors.Join(u.errs...)
		}
		k, err := r.e.key(r.t, u.key)
		if err != nil {
			return nil, err
		}
		s, err := r.readSnapshot(ctx, k, touched, false)
		if err != nil {
			return nil, err
		}
		if (s.item == nil || !r.isMine(s.item)) && !u.upsert {
			return nil, wrapSentinel(ErrNotFound, "update "+r.e.name, nil)
		}
		snap = &s
		cp := *u
		cp.snap = snap
		c = &cp
	}
	in, eff, err := c.build()
	if err != nil {
		return nil, err
	}
	up := &types.Update{
		TableName:                           in.TableName,
		Key:                                 in.Key,
		UpdateExpression:                    in.UpdateExpression,
		ConditionExpression:                 in.ConditionExpression,
		ExpressionAttributeNames:            in.ExpressionAttributeNames,
		ExpressionAttributeValues:           in.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: in.ReturnValuesOnConditionCheckFailure,
	}
	items := []txItem{{table: r.t, key: in.Key, size: itemsize.Of(in.Key) + itemsize.Of(in.ExpressionAttributeValues),
		tw: types.TransactWriteItem{Update: up}, failed: c.conditionError, applied: eff.applied}}
	if snap != nil {
		oldV, err := r.snapValue(*snap)
		if err != nil {
			return nil, err
		}
		newV := u.vals // set fields hold their new values, removed ones are zero
		guards, err := r.guardSwaps(touched, oldV, &newV, in.Key)
		if err != nil {
			return nil, err
		}
		items = append(items, guards...)
	}
	return items, nil
}

// execResult is what a write returns.
type execResult struct {
	// attrs are the attributes a single DeleteItem (old item) or
	// UpdateItem (new item) returned; nil after a transaction.
	attrs map[string]types.AttributeValue
	// unseen is set when an attempt whose response was lost applied the
	// write and a retry found it done (see retrysafe.go); attrs then hold
	// the item as it is now (nil after a delete).
	unseen bool
}

// exec runs a write: one item as a single request, several as a
// transaction. A guarded write that raced with another writer is built
// again (re-reading the item).
func (r *Repo[T]) exec(ctx context.Context, kind string, build func() ([]txItem, error)) (execResult, error) {
	return r.execToken(ctx, kind, "", build)
}

// execToken is exec, sent as a transaction with the given client request
// token when token is not empty (even for one item).
func (r *Repo[T]) execToken(ctx context.Context, kind, token string, build func() ([]txItem, error)) (execResult, error) {
	for attempt := 1; ; attempt++ {
		items, err := build()
		if err != nil {
			return execResult{}, err
		}
		var res execResult
		if len(items) > 1 || token != "" {
			err = r.t.execTx(ctx, kind, r.e.name, items, token)
		} else {
			res, err = r.t.execItem(ctx, kind, r.e.name, items[0])
		}
		var re *raceError
		// A retry rebuilds the request, which a fixed token would refuse.
		if errors.As(err, &re) && token == "" && attempt < maxRaceRetries && ctx.Err() == nil {
			continue
		}
		return res, err
	}
}

// execTx sends the items of one write as a transaction.
func (t *Table) execTx(ctx context.Context, kind, entity string, items []txItem, token string) error {
	tx := &Txn{ctx: ctx, t: t}
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

// execItem sends one item as a single PutItem, DeleteItem or UpdateItem.
// When an attempt may have been applied without an answer and the request
// ends with a failed condition (or a delete that found nothing), the item
// as it is now decides whether the write is in fact done (see
// retrysafe.go).
func (t *Table) execItem(ctx context.Context, kind, entity string, it txItem) (execResult, error) {
	var res execResult
	var err error
	// The log and the options slice passed to the client share one
	// allocation.
	call := &struct {
		log  attemptLog
		opts [1]func(*dynamodb.Options)
	}{}
	log := &call.log
	call.opts[0] = log.option()
	opt := call.opts[:]
	switch {
	case it.tw.Put != nil:
		p := it.tw.Put
		_, err = t.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item,
			ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
			ExpressionAttributeValues:           p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure,
		}, opt...)
	case it.tw.Delete != nil:
		d := it.tw.Delete
		var out *dynamodb.DeleteItemOutput
		out, err = t.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
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
		out, err = t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
			ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
			ExpressionAttributeValues:           u.ExpressionAttributeValues,
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: u.ReturnValuesOnConditionCheckFailure,
		}, opt...)
		if err == nil {
			res.attrs = out.Attributes
		}
	default:
		return res, validationErr(entity, "", "%s: nothing to write", kind)
	}
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && it.failed != nil {
			old := ccf.Item
			if len(old) == 0 {
				old = nil
			}
			if log.maybeApplied.Load() && it.applied != nil && it.applied(old) {
				// An earlier attempt of this call applied the write; this
				// retry's condition failed on the state that attempt made.
				if it.tw.Update != nil {
					res.attrs = old
				}
				res.unseen = true
				return res, nil
			}
			failed := it.failed(old)
			if log.maybeApplied.Load() && it.applied != nil && kind != "create" {
				// The lost attempt may have applied and been overwritten
				// since: the failed condition proves nothing.
				return res, wrapSentinel(ErrMaybeApplied, fmt.Sprintf("%s %s: the retry found: %s", kind, entity, strings.TrimPrefix(failed.Error(), "singletable: ")), err)
			}
			return res, withCause(failed, err)
		}
		return res, fmt.Errorf("singletable: %s %s: %w", kind, entity, redactAPI(err))
	}
	return res, nil
}
