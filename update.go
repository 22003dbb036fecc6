package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// Update is a partial change to one item, built by [Repo.Update] and sent by
// [Update.Run] ([UpdateItem]). Builder methods record mistakes; Run reports
// them before sending anything.
//
// Every index key that depends on a changed field is recomputed in the same
// request: set again when all its fields are known and its predicate holds,
// removed when it stops applying. If a changed field feeds an index key whose
// other fields are neither in the key nor set by this update, Run returns a
// *KeyError naming them: pass them with [Update.Set] so the index cannot go
// stale.
//
// [UpdateItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
type Update[T any] struct {
	r      *Repo[T]
	key    T
	vals   T // holds the values of set fields
	set    []*fieldInfo
	remove []*fieldInfo
	add    []addOp
	cond   *expression.ConditionBuilder
	upsert bool
	errs   []error
	snap   *snapshot // set for an update that moves unique guards
	token  string    // client request token, for an idempotent update
}

type addOp struct {
	f *fieldInfo
	n any
}

// Update starts a partial update of the item with key's primary key. The
// item must exist unless [Update.Upsert] is called.
func (r *Repo[T]) Update(key T) *Update[T] {
	return &Update[T]{r: r, key: key}
}

func (u *Update[T]) fieldFor(name string, op string) *fieldInfo {
	f, err := u.r.e.field(name)
	if err != nil {
		u.errs = append(u.errs, err)
		return nil
	}
	if slices.Contains(u.r.e.pk.fields, f) || slices.Contains(u.r.e.sk.fields, f) {
		u.errs = append(u.errs, validationErr(u.r.e.name, name, "%s on a primary key field: change the key by deleting and creating the item", op))
		return nil
	}
	if u.r.e.guards.managed(f) {
		u.errs = append(u.errs, validationErr(u.r.e.name, name, "%s on a field the library manages (Version, CreatedAt or UpdatedAt)", op))
		return nil
	}
	return f
}

// setsOrRemoves reports whether the update sets or removes f.
func (u *Update[T]) setsOrRemoves(f *fieldInfo) bool {
	return slices.Contains(u.set, f) || slices.Contains(u.remove, f)
}

// Set sets field name to value. value must be assignable (or convertible)
// to the field's type; it is stored exactly as Put would store it, so a
// zero value of an omitempty field removes the attribute.
func (u *Update[T]) Set(name string, value any) *Update[T] {
	f := u.fieldFor(name, "Set")
	if f == nil {
		return u
	}
	dst := fieldByIndexAlloc(reflect.ValueOf(&u.vals).Elem(), f.index)
	var v reflect.Value
	if value == nil {
		v = reflect.Zero(f.typ)
	} else {
		v = reflect.ValueOf(value)
	}
	switch {
	case v.Type().AssignableTo(f.typ):
	case v.Type().ConvertibleTo(f.typ) && v.Kind() == f.typ.Kind():
		v = v.Convert(f.typ)
	case f.typ.Kind() == reflect.Pointer && v.Type().AssignableTo(f.typ.Elem()):
		p := reflect.New(f.typ.Elem())
		p.Elem().Set(v)
		v = p
	default:
		u.errs = append(u.errs, validationErr(u.r.e.name, name, "Set with a %s value; the field is %s", v.Type(), f.typ))
		return u
	}
	dst.Set(v)
	u.set = appendUnique(u.set, f)
	return u
}

// SetFrom sets the named fields to their values in v.
func (u *Update[T]) SetFrom(v T, names ...string) *Update[T] {
	src := reflect.ValueOf(&v).Elem()
	for _, name := range names {
		f := u.fieldFor(name, "SetFrom")
		if f == nil {
			continue
		}
		fv, ok := f.get(src)
		if !ok {
			fv = reflect.Zero(f.typ)
		}
		fieldByIndexAlloc(reflect.ValueOf(&u.vals).Elem(), f.index).Set(fv)
		u.set = appendUnique(u.set, f)
	}
	return u
}

// Add atomically adds n to a numeric field (DynamoDB's ADD; a missing
// attribute counts as 0). n must be an integer or float.
func (u *Update[T]) Add(name string, n any) *Update[T] {
	f := u.fieldFor(name, "Add")
	if f == nil {
		return u
	}
	switch reflect.ValueOf(n).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	default:
		u.errs = append(u.errs, validationErr(u.r.e.name, name, "Add takes a number, got %T", n))
		return u
	}
	u.add = append(u.add, addOp{f, n})
	return u
}

// Remove removes the named fields' attributes from the item.
func (u *Update[T]) Remove(names ...string) *Update[T] {
	for _, name := range names {
		if f := u.fieldFor(name, "Remove"); f != nil {
			u.remove = appendUnique(u.remove, f)
		}
	}
	return u
}

// If adds a condition; when it does not hold Run returns [ErrConditionFailed].
func (u *Update[T]) If(cond expression.ConditionBuilder) *Update[T] {
	if u.cond != nil {
		c := u.cond.And(cond)
		u.cond = &c
	} else {
		u.cond = &cond
	}
	return u
}

// Idempotent makes Run apply the update at most once for token: it is sent
// as a one-item [TransactWriteItems] with token as the client request
// token, and a repeat with the same token and the same update within
// DynamoDB's 10-minute idempotency window succeeds without applying it
// again. Use it for increments ([Update.Add]) that a caller may retry after
// a timeout or lost response, when a double count would be wrong: derive
// the token from the request being handled (a message id, an order id), at
// most 36 characters. The library's own retries reuse the token too.
//
// Without a token, an ADD retried after a lost response (by the caller or
// the SDK's retryer) can be applied twice. The other way to make an
// increment safe to retry is a condition on the value read:
// Add("Count", 1).If(expression.Name("Count").Equal(expression.Value(read)))
// fails with ErrConditionFailed once applied, however late the retry; it
// suits a single writer, since concurrent writers also make it fail.
//
// The idempotent form costs a transaction (twice the write capacity) and
// Run reads the item back afterwards.
//
// [TransactWriteItems]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
func (u *Update[T]) Idempotent(token string) *Update[T] {
	if token == "" || len(token) > 36 {
		u.errs = append(u.errs, validationErr(u.r.e.name, "", "Idempotent: the token must be 1 to 36 characters"))
	}
	u.token = token
	return u
}

// Upsert lets the update create the item when it does not exist.
func (u *Update[T]) Upsert() *Update[T] {
	u.upsert = true
	return u
}

func appendUnique(s []*fieldInfo, f *fieldInfo) []*fieldInfo {
	if slices.Contains(s, f) {
		return s
	}
	return append(s, f)
}

// Run sends the update and returns the item as it is afterwards. It returns
// [ErrNotFound] when the item does not exist (without Upsert),
// [ErrConditionFailed] when an [Update.If] condition fails, and
// [ErrVersionConflict] when the key's version (for a versioned entity, when
// non-zero) is not the stored one. The version is incremented and
// UpdatedAt set on every update.
//
// An update that sets or removes a unique field reads the item first and
// swaps the guards in one transaction (retrying if the item changes in
// between); the item it returns is then read back afterwards.
//
// When an attempt was applied without an answer and the retry fails its
// condition, Run succeeds if the item shows this update: every set and
// removed attribute as the update made them and, when it checked one, the
// next version. An update with an ADD counts as shown only through the
// managed UpdatedAt timestamp it stored; without one its retry after a
// lost response may double-apply (no condition) or report
// ErrVersionConflict for an increment it made (versioned): use
// [Update.Idempotent] for counters.
func (u *Update[T]) Run(ctx context.Context) (T, error) {
	var zero T
	res, err := u.r.execToken(ctx, "update", u.token, func() ([]txItem, error) { return u.txItems(ctx) })
	if err != nil {
		return zero, err
	}
	attrs := res.attrs
	if attrs == nil {
		return u.r.Get(ctx, u.key, ConsistentRead())
	}
	return u.r.e.decode(attrs)
}

// build validates the update and assembles the UpdateItem request, with
// what it changes (to recognise it applied after a lost response).
func (u *Update[T]) build() (*dynamodb.UpdateItemInput, updateEffect, error) {
	if len(u.errs) > 0 {
		return nil, updateEffect{}, errors.Join(u.errs...)
	}
	r, e := u.r, u.r.e
	key, err := e.key(r.t, u.key)
	if err != nil {
		return nil, updateEffect{}, err
	}
	if len(u.set)+len(u.remove)+len(u.add) == 0 {
		return nil, updateEffect{}, validationErr(e.name, "", "update changes nothing")
	}
	g := &e.guards
	now := r.t.opts.Now()
	set := u.set
	// merged holds every value known after the update: the key fields from
	// key, and the set fields (removed fields stay zero).
	merged := u.vals
	mv := reflect.ValueOf(&merged).Elem()
	kv := reflect.ValueOf(&u.key).Elem()
	if g.updated != nil {
		// UpdatedAt is set like any field, so index keys built from it follow.
		e.stamp(mv, now, false)
		set = append(slices.Clone(set), g.updated)
	}
	known := map[*fieldInfo]bool{}
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
		if fv, ok := f.get(kv); ok {
			fieldByIndexAlloc(mv, f.index).Set(fv)
		}
		known[f] = true
	}
	for _, f := range set {
		known[f] = true
	}
	for _, f := range u.remove {
		known[f] = true
	}
	touched := map[*fieldInfo]bool{}
	for _, f := range slices.Concat(set, u.remove) {
		touched[f] = true
	}
	for _, a := range u.add {
		touched[a.f] = true
	}

	var b expr.Builder
	var ub expr.Update
	ub.Set(b.Name(r.t.opts.EntityTypeAttr), b.ValueS(e.name))
	if u.upsert {
		// A created item must carry its key fields like any other item.
		for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
			av, err := e.marshalFieldPlain(f, mv)
			if err != nil {
				return nil, updateEffect{}, err
			}
			if av != nil && !touched[f] {
				ub.Set(b.Name(f.attr), b.Value(av))
			}
		}
	}
	multiAttr := map[*fieldInfo]bool{}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				multiAttr[f] = true
			}
		}
	}
	eff := updateEffect{entity: e.name, typeAttr: r.t.opts.EntityTypeAttr, set: map[string]types.AttributeValue{},
		stamped: g.updated != nil, adds: len(u.add) > 0}
	setAV := func(f *fieldInfo, av types.AttributeValue) {
		if av == nil {
			ub.Remove(b.Name(f.attr))
			eff.removed = append(eff.removed, f.attr)
			return
		}
		ub.Set(b.Name(f.attr), b.Value(av))
		eff.set[f.attr] = av
	}
	for _, f := range set {
		var av types.AttributeValue
		if f == g.ttl {
			setAV(f, ttlValue(f, mv))
			continue
		}
		if multiAttr[f] {
			if !f.present(mv) {
				setAV(f, nil)
				continue
			}
			av, err = e.marshalField(f, mv)
		} else {
			av, err = e.marshalFieldPlain(f, mv)
		}
		if err != nil {
			return nil, eff, &ValidationError{Entity: e.name, Field: f.name, Reason: "cannot encode", Err: err}
		}
		setAV(f, av)
	}
	for _, f := range u.remove {
		setAV(f, nil)
	}
	for _, a := range u.add {
		n, err := attributevalue.Marshal(a.n)
		if err != nil {
			return nil, eff, &ValidationError{Entity: e.name, Field: a.f.name, Reason: "cannot encode", Err: err}
		}
		ub.Add(b.Name(a.f.attr), b.Value(n))
	}
	if g.version != nil {
		ub.Add(b.Name(g.version.attr), b.Value(&types.AttributeValueMemberN{Value: "1"}))
		if v := e.versionOf(kv); v != 0 {
			eff.versionAttr, eff.version = g.version.attr, v+1
		}
	}
	if g.created != nil && u.upsert {
		var stamped T
		sv := reflect.ValueOf(&stamped).Elem()
		e.stamp(sv, now, false)
		av, err := e.marshalFieldPlain(g.created, sv)
		if err != nil {
			return nil, updateEffect{}, &ValidationError{Entity: e.name, Field: g.created.name, Reason: "cannot encode", Err: err}
		}
		ub.SetIfNotExists(b.Name(g.created.attr), b.Value(av))
	}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				for _, a := range u.add {
					if a.f == f {
						return nil, updateEffect{}, &KeyError{Entity: e.name, Index: p.name, Key: f.attr, Missing: []string{f.name},
							Err: errors.New("Add on a multi-attribute key attribute cannot keep the index key canonical; use Set")}
					}
				}
			}
			continue
		}
		anyTouched := false
		var missing []string
		for _, f := range p.deps {
			if touched[f] {
				anyTouched = true
			}
			if !known[f] {
				missing = append(missing, f.name)
			}
		}
		if !anyTouched && !(u.upsert && len(missing) == 0) {
			continue
		}
		if len(missing) > 0 {
			return nil, updateEffect{}, &KeyError{Entity: e.name, Index: p.name, Key: p.pkAttr, Missing: missing,
				Err: errors.New("the update changes a field of this index's key; set the missing fields too so the index key can be recomputed")}
		}
		pk, sk, ok, err := p.render(e, merged, mv)
		if err != nil {
			return nil, updateEffect{}, err
		}
		if ok {
			ub.Set(b.Name(p.pkAttr), b.ValueS(pk))
			if p.skAttr != "" {
				ub.Set(b.Name(p.skAttr), b.ValueS(sk))
			}
		} else {
			ub.Remove(b.Name(p.pkAttr))
			if p.skAttr != "" {
				ub.Remove(b.Name(p.skAttr))
			}
		}
	}

	// The condition: the item exists and is this entity's (unless this is
	// an upsert), the version is the one read, then the caller's and the
	// unique guards' conditions, which the SDK's builder writes.
	var cond condition
	if !u.upsert {
		cond = check(r.exists(), r.isEntity())
	}
	if g.version != nil {
		if v := e.versionOf(kv); v != 0 {
			cond = cond.and(e.versionCond(v))
		}
	}
	if u.cond != nil {
		cond = cond.and(userCond(*u.cond))
	}
	if u.snap != nil {
		cond = cond.and(r.snapCond(*u.snap))
	}
	condText, err := cond.write(&b)
	if err != nil {
		return nil, updateEffect{}, &ValidationError{Entity: e.name, Reason: "bad update condition", Err: err}
	}
	update := ub.String()
	in := &dynamodb.UpdateItemInput{
		TableName:                 &r.t.name,
		Key:                       key,
		UpdateExpression:          &update,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	}
	hasCond := condText != ""
	if hasCond {
		in.ConditionExpression = &condText
	}
	if err := checkExprLimits(e.name, exprParts{kinds: []string{"update", "condition"},
		exprs: []*string{in.UpdateExpression, in.ConditionExpression}, update: in.UpdateExpression,
		names: in.ExpressionAttributeNames, values: in.ExpressionAttributeValues}); err != nil {
		return nil, eff, err
	}
	if hasCond {
		// Tells "missing item" from "condition false" from "stale version".
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return in, eff, nil
}

// conditionError says what a failed condition of the update means, given
// the item as it was (nil when it did not exist).
func (u *Update[T]) conditionError(old map[string]types.AttributeValue) error {
	what := "update " + u.r.e.name
	e := u.r.e
	switch {
	case u.snap != nil && u.snap.changed(old):
		return raced(what)
	case !u.upsert && (old == nil || !u.r.isMine(old)):
		return wrapSentinel(ErrNotFound, what, nil)
	}
	if e.guards.version != nil {
		if v := e.versionOf(reflect.ValueOf(&u.key).Elem()); v != 0 && (old == nil || e.storedVersion(old) != v) {
			return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", what, v), nil)
		}
	}
	return wrapSentinel(ErrConditionFailed, what, nil)
}

// updateEffect is what an update makes visible in the item: the attributes
// it sets and removes, and the version it stores when it checks one.
type updateEffect struct {
	entity, typeAttr string
	set              map[string]types.AttributeValue
	removed          []string
	versionAttr      string
	version          int64 // the version stored; 0 when the update checks none
	stamped          bool  // set includes the managed UpdatedAt, unique to this call
	adds             bool  // the update ADDs to a field besides the version
}

// applied reports whether cur, the item as it is now, shows the update
// applied. An ADD leaves no trace of its own (two increments of a counter
// from the same version leave the same item), so an update with one counts
// as applied only when it also stores a managed UpdatedAt timestamp made
// for this call.
func (ef updateEffect) applied(cur map[string]types.AttributeValue) bool {
	if cur == nil {
		return false
	}
	if t, ok := cur[ef.typeAttr].(*types.AttributeValueMemberS); !ok || t.Value != ef.entity {
		return false
	}
	if ef.adds && !ef.stamped {
		return false
	}
	if !ef.stamped && ef.version == 0 && len(ef.set)+len(ef.removed) == 0 {
		return false
	}
	for a, av := range ef.set {
		if c, ok := cur[a]; !ok || !avEqual(c, av) {
			return false
		}
	}
	for _, a := range ef.removed {
		if _, ok := cur[a]; ok {
			return false
		}
	}
	if ef.version != 0 {
		n, ok := cur[ef.versionAttr].(*types.AttributeValueMemberN)
		if !ok || !numEqual(n.Value, strconv.FormatInt(ef.version, 10)) {
			return false
		}
	}
	return true
}
