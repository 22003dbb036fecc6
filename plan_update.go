package singletable

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The plan's update expression, written in a fixed order (build) so that a
// request's placeholders never change.

// updateExpr is the update expression of one request being written, with
// its effect (see plan_lost.go).
type updateExpr struct {
	b   expr.Builder
	ub  expr.Update
	eff writeplan.Effect
}

// set SETs attribute attr to av, or REMOVEs it when av is nil.
func (w *updateExpr) set(attr string, av types.AttributeValue) {
	if av == nil {
		w.ub.Remove(w.b.Name(attr))
		w.eff.Removed = append(w.eff.Removed, attr)
		return
	}
	w.ub.Set(w.b.Name(attr), w.b.Value(av))
	w.eff.Set[attr] = av
}

// valid reports the mistakes the builder recorded, and an update that
// changes nothing.
func (u *updateSpec) valid() error {
	if len(u.errs) > 0 {
		return errors.Join(u.errs...)
	}
	if len(u.set)+len(u.remove)+len(u.ops) == 0 {
		return validationErr(u.r.e.name, "", "update changes nothing")
	}
	return nil
}

// item is the update under key as a transaction item: x is what it expects
// (and read), mv the item after it, fromSnap the fields merged from x.Snap.
func (u *updateSpec) item(key map[string]types.AttributeValue, x *expectation, mv reflect.Value, fromSnap map[*model.Field]bool) (txItem, error) {
	up, eff, err := u.build(key, x, mv, fromSnap)
	if err != nil {
		return txItem{}, err
	}
	return txItem{table: u.r.t, key: key, size: itemsize.Of(key) + itemsize.Of(up.ExpressionAttributeValues),
		tw: types.TransactWriteItem{Update: up}, failed: x.failed, applied: eff.Applied}, nil
}

// build writes the update's request, with its effect.
func (u *updateSpec) build(key map[string]types.AttributeValue, x *expectation, mv reflect.Value, fromSnap map[*model.Field]bool) (*types.Update, writeplan.Effect, error) {
	r, e := u.r, u.r.e
	now := writeplan.StampTime(r.t.opts.Now())
	set, ops := u.splitOps(u.managedSets(x, mv, now), fromSnap)
	touched := map[*model.Field]bool{}
	for _, f := range slices.Concat(set, u.remove) {
		touched[f] = true
	}
	for _, o := range ops {
		touched[o.Field] = true
	}
	w := &updateExpr{eff: writeplan.Effect{Entity: e.name, TypeAttr: r.t.opts.EntityTypeAttr, Untyped: r.t.opts.OmitEntityType,
		Set: map[string]types.AttributeValue{}, Stamped: e.guards.updated != nil, Adds: slices.ContainsFunc(ops, writeplan.Op.Counts)}}
	if !r.t.opts.OmitEntityType {
		// An item another service wrote without it (MatchKeys) gets it.
		w.ub.Set(w.b.Name(r.t.opts.EntityTypeAttr), w.b.ValueS(e.name))
	}
	// An upsert sent without reading may create the item: it carries its
	// key fields, CreatedAt and every index key.
	blind := u.upsert && x.Snap == nil
	if blind {
		if err := u.writeKeyFields(w, mv, touched); err != nil {
			return nil, writeplan.Effect{}, err
		}
		if err := u.writeCreatedAt(w, now); err != nil {
			return nil, writeplan.Effect{}, err
		}
	}
	if err := u.writeFields(w, mv, set, ops); err != nil {
		return nil, writeplan.Effect{}, err
	}
	u.writeVersion(w, x)
	if err := u.writeIndexKeys(w, mv, touched, u.known(fromSnap), blind); err != nil {
		return nil, writeplan.Effect{}, err
	}
	if err := u.checkAggregates(mv, touched, fromSnap); err != nil {
		return nil, writeplan.Effect{}, err
	}
	cond := r.ownership(x.Intent).And(x.VersionCheck()).And(x.SnapshotCheck(r.t.opts.PartitionKey)).And(u.userCond())
	up, err := r.updateRequest(w, key, cond)
	return up, w.eff, err
}

// splitOps splits the update's operators: one on a field read before
// (fromSnap) was applied in Go (merge) and is SET, added to set; the
// others are returned, to be written as DynamoDB's own.
func (u *updateSpec) splitOps(set []*model.Field, fromSnap map[*model.Field]bool) ([]*model.Field, []writeplan.Op) {
	var ops []writeplan.Op
	for _, o := range u.ops {
		if fromSnap[o.Field] {
			set = appendUnique(set, o.Field)
		} else {
			ops = append(ops, o)
		}
	}
	return set, ops
}

// checkAggregates refuses an update whose multi-attribute index keys, as
// far as it knows them (the fields it sets and those it read), are
// together over DynamoDB's limits (indexPlan.checkAggregate).
func (u *updateSpec) checkAggregates(mv reflect.Value, touched, fromSnap map[*model.Field]bool) error {
	e := u.r.e
	for _, p := range e.indexes {
		item := map[string]types.AttributeValue{}
		for _, f := range slices.Concat(p.partition, p.sort) {
			if p.multi && (touched[f] || fromSnap[f]) && f.Present(mv) {
				if av, err := e.marshalKeyAttr(f, mv); err == nil {
					item[f.Attr] = av
				}
			}
		}
		if err := p.checkAggregate(e.name, item); len(item) > 0 && err != nil {
			return err
		}
	}
	return nil
}

// writeFields writes the fields the update sets (their values in mv), the
// ones it removes, and its operators into w. A KeyOnly field is written
// only into the keys that hold it (writeIndexKeys).
func (u *updateSpec) writeFields(w *updateExpr, mv reflect.Value, set []*model.Field, ops []writeplan.Op) error {
	e := u.r.e
	for _, f := range set {
		av, err := u.setValue(f, mv)
		if err != nil {
			return err
		}
		if !f.KeyOnly {
			w.set(f.Attr, av)
		}
	}
	for _, f := range u.remove {
		if !f.KeyOnly {
			w.set(f.Attr, nil)
		}
	}
	for _, o := range ops {
		if e.inMultiKey(o.Field) {
			return &KeyError{Entity: e.name, Key: o.Field.Attr, Missing: []string{o.Field.Name},
				Err: fmt.Errorf("%s on a multi-attribute key attribute cannot keep the index key canonical; use Set", o.Name)}
		}
		if err := o.Write(&w.b, &w.ub); err != nil {
			return &ValidationError{Entity: e.name, Field: o.Field.Name, Reason: "cannot encode", Err: err}
		}
	}
	return nil
}

// setValue is the value an update stores for f, set in mv (nil removes
// it). A multi-attribute index's key attribute is removed when absent
// (DynamoDB refuses an empty key attribute).
func (u *updateSpec) setValue(f *model.Field, mv reflect.Value) (types.AttributeValue, error) {
	e := u.r.e
	if f == e.guards.ttl {
		return ttlValue(f, mv), nil
	}
	if e.inMultiKey(f) && !f.Present(mv) {
		return nil, nil
	}
	return u.encodeSet(f, mv)
}

// encodeSet encodes f's value in v, a multi-attribute index's key attribute
// with the key attribute's checks.
func (u *updateSpec) encodeSet(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	e := u.r.e
	marshal := e.marshalFieldPlain
	if e.inMultiKey(f) {
		marshal = e.marshalField
	}
	av, err := marshal(f, v)
	var ke *KeyError
	if errors.As(err, &ke) {
		return nil, ke
	}
	if err != nil {
		return nil, &ValidationError{Entity: e.name, Field: f.Name, Reason: "cannot encode", Err: err}
	}
	return av, nil
}

// updateRequest is the update request under key: w's expression on cond.
func (r *repo) updateRequest(w *updateExpr, key map[string]types.AttributeValue, cond writeplan.Condition) (*types.Update, error) {
	e := r.e
	condText, err := cond.Write(&w.b, r.condNames(key))
	if err != nil {
		return nil, condErr(e.name, "bad update condition", err)
	}
	update := w.ub.String()
	up := &types.Update{TableName: &r.t.name, Key: key, UpdateExpression: &update,
		ExpressionAttributeNames: w.b.Names(), ExpressionAttributeValues: w.b.Values()}
	if condText != "" {
		up.ConditionExpression = &condText
		// Tells "missing item" from "condition false" from "stale version".
		up.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	if err := checkExprLimits(e.name, exprParts{kinds: []string{"update", "condition"},
		exprs: []*string{up.UpdateExpression, up.ConditionExpression}, update: up.UpdateExpression,
		names: up.ExpressionAttributeNames, values: up.ExpressionAttributeValues}); err != nil {
		return nil, err
	}
	return up, nil
}

// merged returns the item's values as the update leaves them, as far as
// known (see merge), and the fields merged from the snapshot s.
func (u *Update[T]) merged(s *writeplan.Snapshot) (merged T, fromSnap map[*model.Field]bool, err error) {
	merged = u.vals
	var ov reflect.Value
	if s != nil && s.Item != nil {
		old, err := u.r.e.decode(u.r.t, s.Item)
		if err != nil {
			return merged, nil, u.unreadKey(err)
		}
		ov = reflect.ValueOf(&old).Elem()
	}
	fromSnap, err = u.merge(reflect.ValueOf(&merged).Elem(), reflect.ValueOf(&u.key).Elem(), ov, s)
	return merged, fromSnap, err
}

// unreadKey is the error of an update whose read item does not decode: a
// stored key that does not parse is a *KeyError naming the fields it
// holds, which the update cannot recompute index keys from.
func (u *updateSpec) unreadKey(err error) error {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return err
	}
	k := &KeyError{Entity: ke.Entity, Index: ke.Index, Key: ke.Key,
		Err: fmt.Errorf("the stored key does not parse, so the update cannot read these fields from it to recompute the index keys; nothing was written: %w", ke.Err)}
	_ = u.r.e.eachKey(&u.r.t.opts, func(r keyRef) error {
		if r.name == ke.Key {
			k.Missing = r.ck.tpl.Fields()
		}
		return nil
	})
	return k
}

// merge completes mv, the values the update sets, into the item as the
// update leaves it, as far as known: the key fields and version of kv,
// and the other fields read (from ov, s's item; the zero Value when none),
// with the operators applied. It returns the fields merged from s.
func (u *updateSpec) merge(mv, kv, ov reflect.Value, s *writeplan.Snapshot) (map[*model.Field]bool, error) {
	e := u.r.e
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields, []*model.Field{e.guards.version}) {
		if f == nil {
			continue
		}
		if fv, ok := f.Get(kv); ok {
			fieldByIndexAlloc(mv, f.Index).Set(fv)
		}
	}
	fromSnap := map[*model.Field]bool{}
	if !ov.IsValid() {
		return fromSnap, nil
	}
	for _, f := range s.Fields {
		if f == e.guards.version || u.setsOrRemoves(f) {
			continue
		}
		fv, ok := f.Get(ov)
		if !ok {
			continue
		}
		dst := fieldByIndexAlloc(mv, f.Index)
		dst.Set(fv)
		if err := writeplan.ApplyRead(e.name, u.ops, f, dst, s.Item); err != nil {
			return nil, e.invalid("", err)
		}
		fromSnap[f] = true
	}
	return fromSnap, nil
}

// check refuses bad values the update sets and adds before it reads or
// sends anything.
func (u *updateSpec) check(vv reflect.Value, key map[string]types.AttributeValue) error {
	e := u.r.e
	// The item after the update holds at least its key and the values set.
	size := itemsize.Of(key)
	for _, f := range u.set {
		if f == e.guards.ttl || f.KeyOnly {
			continue
		}
		av, err := u.encodeSet(f, vv)
		if err != nil {
			return err
		}
		if av != nil {
			n, _ := itemsize.Attr(f.Attr, av)
			size += n
		}
	}
	if size > itemsize.MaxItemBytes {
		return &ValidationError{Entity: e.name, Reason: "item too large", Err: &itemsize.TooLargeError{Size: size, Max: itemsize.MaxItemBytes}}
	}
	return e.invalid("", writeplan.CheckActions(u.set, u.remove, u.ops))
}
