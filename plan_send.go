package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// Every write is first built as transaction items: the entity's own item
// with its condition, plus the guard items of its unique fields. A write of
// one item is sent as a single PutItem, UpdateItem or DeleteItem; a write
// with guard items as a TransactWriteItems. The same builders serve the
// Tx helpers, so a guarded write composes with others in one transaction.

// racePolicy paces how often a write is built again (re-reading the item)
// after the item changed between the library's read and the write.
var racePolicy = backoff.Policy{Base: 5 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 5}

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

// createItems is Create as transaction items (x says which operation it
// serves: Create, or an Upsert that found no item).
func (r *Repo[T]) createItems(v *T, x expectation, extra writeplan.Condition) ([]txItem, error) {
	r.e.stampNow(r.t, v, false)
	if r.e.guards.version != nil {
		r.e.setVersion(reflect.ValueOf(v).Elem(), 1)
	}
	item, size, err := r.e.encodeSized(r.t, v)
	if err != nil {
		return nil, err
	}
	it, err := r.putTxItem(item, nil, size, r.ownership(writeplan.AbsentItem).And(extra), x.failed)
	if err != nil {
		return nil, err
	}
	it.applied = putApplied(item)
	if len(r.e.guards.unique) == 0 {
		return []txItem{it}, nil
	}
	it.key = r.t.primaryKeyOf(item)
	guards, err := r.guardSwaps(r.e.guards.unique, reflect.Value{}, reflect.ValueOf(v).Elem(), it.key)
	if err != nil {
		return nil, err
	}
	return append([]txItem{it}, guards...), nil
}

// putItems is Put as transaction items. It reads the item first when the
// entity has unique fields (to release the values it replaces) or the
// caller gave no version (to learn the stored one).
func (r *Repo[T]) putItems(ctx context.Context, v *T, o writeOptions) ([]txItem, error) {
	rv := reflect.ValueOf(v).Elem()
	r.e.stampNow(r.t, v, o.load)
	g := &r.e.guards
	x := r.expect("Put", writeplan.AnyItem)
	if o.MustExist {
		x.Intent = writeplan.ExistingItem
	}
	reads := uniqueFields(g.unique)
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
		if key, err = r.e.key(r.t, *v); err != nil {
			return nil, err
		}
		if x.Snap, err = r.readBefore(ctx, key, reads, false); err != nil {
			return nil, err
		}
		if err := x.refuse(x.Snap); err != nil {
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
	cond := r.ownership(x.Intent)
	if x.Snap != nil {
		cond = cond.And(x.Snap.Cond(r.t.opts.PartitionKey))
	}
	if x.VersionAttr != "" {
		cond = cond.And(r.e.versionCond(x.Version))
	}
	if o.If.IsSet() {
		cond = cond.And(writeplan.User(o.If))
	}
	it, err := r.putTxItem(item, key, size, cond, x.failed)
	if err != nil {
		return nil, err
	}
	it.applied = putApplied(item)
	items := []txItem{it}
	if len(g.unique) > 0 {
		oldV, err := r.snapValue(*x.Snap)
		if err != nil {
			return nil, err
		}
		guards, err := r.guardSwaps(g.unique, reflect.ValueOf(oldV).Elem(), reflect.ValueOf(v).Elem(), key)
		if err != nil {
			return nil, err
		}
		items = append(items, guards...)
	}
	return items, nil
}

// deleteItems is Delete as transaction items. For an entity with unique
// fields it reads the item first (returned as snap), to release its values.
func (r *Repo[T]) deleteItems(ctx context.Context, key T, o writeOptions) ([]txItem, *writeplan.Snapshot, error) {
	k, err := r.e.key(r.t, key)
	if err != nil {
		return nil, nil, err
	}
	g := &r.e.guards
	x := r.expect("Delete", writeplan.AnyItem)
	if o.MustExist {
		x.Intent = writeplan.ExistingItem
	}
	var cond writeplan.Condition
	if g.version != nil {
		// A delete writes no version: it checks the caller's, if any.
		if v := r.e.versionOf(reflect.ValueOf(&key).Elem()); v != 0 {
			// The version read proves the item was there: if it is gone,
			// the delete finds nothing (ErrNotFound).
			x.Intent = writeplan.ExistingItem
			x.VersionAttr, x.Version = g.version.Attr, v
			cond = cond.And(r.e.versionCond(v))
		}
	}
	cond = r.ownership(x.Intent).And(cond)
	if o.If.IsSet() {
		cond = cond.And(writeplan.User(o.If))
	}
	if x.Snap, err = r.readBefore(ctx, k, uniqueFields(g.unique), len(g.unique) > 0); err != nil {
		return nil, nil, err
	}
	if x.Snap != nil {
		cond = cond.And(x.Snap.Cond(r.t.opts.PartitionKey))
	}
	ce, err := buildCondition(cond, r.e.name, r.condNames())
	if err != nil {
		return nil, nil, err
	}
	it := txItem{table: r.t, key: k, size: itemsize.Of(k),
		tw: types.TransactWriteItem{Delete: &types.Delete{
			TableName:                           &r.t.name,
			Key:                                 k,
			ConditionExpression:                 ce.Text,
			ExpressionAttributeNames:            ce.Names,
			ExpressionAttributeValues:           ce.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		failed:  x.failed,
		applied: deleteApplied,
	}
	items := []txItem{it}
	if x.Snap != nil {
		oldV, err := r.snapValue(*x.Snap)
		if err != nil {
			return nil, nil, err
		}
		guards, err := r.guardSwaps(g.unique, reflect.ValueOf(oldV).Elem(), reflect.Value{}, k)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, guards...)
	}
	return items, x.Snap, nil
}

// txItems is the update as transaction items. An update reads the item
// first when it moves unique guards, when the caller gave no version, when
// an index key it changes needs fields it does not give, and when it is an
// upsert (which creates the item, like Create, when there is none).
//
// An update sent in a transaction (inTx, or Idempotent) whose caller gave
// no version adds 1 to the version instead of reading it, since the
// transaction's token makes the ADD apply once: the request then does not
// depend on a read, and no race can make it fail. An Idempotent update
// must not read at all: a repeat with its token must be the same request.
func (u *Update[T]) txItems(ctx context.Context, inTx bool) ([]txItem, error) {
	if len(u.errs) > 0 {
		return nil, errors.Join(u.errs...)
	}
	r := u.r
	if len(u.set)+len(u.remove)+len(u.ops) == 0 {
		return nil, validationErr(r.e.name, "", "update changes nothing")
	}
	key, err := r.e.key(r.t, u.key)
	if err != nil {
		return nil, err
	}
	if err := u.check(reflect.ValueOf(&u.vals).Elem(), key); err != nil {
		return nil, err // bad values are refused before any read
	}
	var moved []*uniquePlan // the uniques the update moves
	for _, g := range r.e.guards.unique {
		if slices.ContainsFunc(g.fields, func(f *model.Field) bool { return u.setsOrRemoves(f) || u.operates(f) }) {
			moved = append(moved, g)
		}
	}
	x := r.expect("Update", writeplan.ExistingItem)
	if u.upsert {
		x.Intent = writeplan.AnyItem
	}
	kv := reflect.ValueOf(&u.key).Elem()
	x.AddVersion = r.e.guards.version != nil && r.versionIn(kv) == 0 && (inTx || u.token != "") && !r.e.versionInIndex()
	reads := uniqueFields(moved) // all of a moved tuple: its guard key needs every value
	if !x.AddVersion {
		reads = r.readFields(reads, kv)
	}
	reads = append(reads[:len(reads):len(reads)], u.indexReads()...)
	if u.readLists {
		for _, o := range u.ops {
			if o.kind == opAppend || o.kind == opPrepend {
				reads = appendUnique(reads, o.f)
			}
		}
	}
	// An upsert that gives every field of every index key can be sent
	// without reading: whether it creates or updates, the keys it writes
	// are the ones a Put of the item would.
	whole := u.upsert && (len(reads) > 0 || !u.givesEveryIndex())
	if needs := u.indexNeeds(); u.token != "" && len(needs) > 0 {
		return nil, unknownKeyFields(r.e.name, needs, "an Idempotent update cannot read them from the stored item (a repeat with its token must be the same request); set them too")
	}
	if u.token != "" && (len(reads) > 0 || whole) {
		return nil, validationErr(r.e.name, "", "Idempotent: this update must read the item first (%s), so a repeat with the token would not be the same request",
			u.readReason(reads, whole))
	}
	if x.Snap, err = r.readBefore(ctx, key, reads, whole); err != nil {
		return nil, err
	}
	if err := x.refuse(x.Snap); err != nil {
		return nil, err
	}
	if x.Snap != nil {
		if x.Snap.Item == nil {
			// An upsert of a missing item is a Create of what the update
			// sets, so the new item is whole: index keys included.
			if kver := r.versionIn(kv); kver != 0 {
				return nil, wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read but there is no item", x.What(), kver), nil)
			}
			v, _, err := u.merged(nil)
			if err != nil {
				return nil, err
			}
			vv := reflect.ValueOf(&v).Elem()
			for _, o := range u.ops {
				if err := o.apply(fieldByIndexAlloc(vv, o.f.Index), false); err != nil {
					return nil, &ValidationError{Entity: r.e.name, Field: o.f.Name, Reason: o.name, Err: err}
				}
			}
			x.Intent = writeplan.AbsentItem
			var cond writeplan.Condition
			if u.cond != nil {
				cond = writeplan.User(*u.cond)
			}
			return r.createItems(&v, x, cond)
		}
		if u.upsert {
			// The item is there: the update must find it still there.
			x.Intent = writeplan.ExistingItem
		}
	}
	in, eff, after, err := u.build(key, &x)
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
		tw: types.TransactWriteItem{Update: up}, failed: x.failed, applied: eff.applied}}
	if len(moved) > 0 {
		oldV, err := r.snapValue(*x.Snap)
		if err != nil {
			return nil, err
		}
		// The unique values after the update: set, removed (zero), or
		// the stored value plus the amount added.
		guards, err := r.guardSwaps(moved, reflect.ValueOf(oldV).Elem(), reflect.ValueOf(&after).Elem(), in.Key)
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
	// noItem is set when a single UpdateItem was answered without the
	// new item, which only a Table.Preview does.
	noItem bool
}

// exec runs a write: one item as a single request, several as a
// transaction. A guarded write that raced with another writer is built
// again (re-reading the item).
func (r *boundEntity) exec(ctx context.Context, kind string, build func() ([]txItem, error)) (execResult, error) {
	return r.execToken(ctx, kind, "", build)
}

// execToken is exec, sent as a transaction with the given client request
// token when token is not empty (even for one item).
func (r *boundEntity) execToken(ctx context.Context, kind, token string, build func() ([]txItem, error)) (execResult, error) {
	var res execResult
	var foreign []itemID // guards found held by another item: not released
	err := racePolicy.Do(ctx, nil, func(err error) bool {
		// A retry rebuilds the request, which a fixed token would refuse.
		var re *raceError
		var fg *foreignGuardError
		return token == "" && (errors.As(err, &re) || errors.As(err, &fg))
	}, func(ctx context.Context) error {
		items, err := build()
		if err != nil {
			return err
		}
		items = withoutReleases(items, foreign)
		if len(items) > 1 || token != "" {
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
	tx := &Txn{t: t}
	tx.add(items, kind, entity, nil)
	in, err := tx.request(ctx, token)
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
		_, err = t.api(ctx, entity).PutItem(ctx, &dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item,
			ConditionExpression: p.ConditionExpression, ExpressionAttributeNames: p.ExpressionAttributeNames,
			ExpressionAttributeValues:           p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure,
		}, opt...)
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
			if log.maybeApplied.Load() && it.applied != nil && kind != "Create" {
				// The lost attempt may have applied and been overwritten
				// since: the failed condition proves nothing.
				return res, wrapSentinel(ErrMaybeApplied, fmt.Sprintf("%s %s: the retry found: %s", strings.ToLower(kind), entity, strings.TrimPrefix(failed.Error(), "singletable: ")), err)
			}
			return res, withCause(failed, err)
		}
		return res, fmt.Errorf("singletable: %s %s: %w", strings.ToLower(kind), entity, redactAPI(err))
	}
	return res, nil
}
