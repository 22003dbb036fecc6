package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// Update is a partial change to one item, built by [Repo.Update] and sent by
// [Update.Run] ([UpdateItem]). Builder methods record mistakes; Run reports
// them before sending anything.
//
// Every index key that depends on a changed field is recomputed in the same
// request: set again when all its fields are known and its predicate holds,
// removed when it stops applying. The fields of such a key that the update
// neither sets nor has in its key (CreatedAt included) are read from the
// stored item first, and the update is conditioned on them being as read,
// so a concurrent change is never undone and the key never goes stale; the
// caller need not resupply them.
//
// The read is the default, not an option: without it the only safe
// answers are a *KeyError (the caller resupplies values it read earlier,
// which undoes a concurrent change of them: a lost update) or a stale
// index. Its cost is one strongly consistent GetItem of just those
// attributes (1 read unit for an item up to 4 KB), only for an update that
// changes part of an index key without giving the rest; an update that
// gives every field of the keys it touches, or touches none, is one
// UpdateItem. A change between the read and the write fails the
// condition, and the update is read and built again a bounded number of
// times (5 attempts, 5 to 100 ms apart) before reporting
// [ErrVersionConflict] (nothing applied). An update that cannot read
// ([Update.Idempotent]) is refused with one *[KeyError] listing every
// missing field of every affected index.
//
// Besides [Update.Set] and [Update.Remove], operators change a field from
// its stored value: [Update.Add] (numbers and sets), [Update.Subtract],
// [Update.Append], [Update.Prepend], [Update.Delete] (from sets) and
// [Update.SetIfNotExists]. Each is checked against the field's Go type
// before the network. One update changes an attribute by one action.
//
// [UpdateItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
type Update[T any] struct {
	updateSpec
	r    *Repo[T]
	key  T
	vals T // holds the values of set fields
}

// updateSpec is what an Update says, apart from its key and values: the
// part that does not depend on T, compiled once rather than once per
// entity type. Its r is the repository's boundEntity.
type updateSpec struct {
	r      *boundEntity
	set    []*model.Field
	remove []*model.Field
	ops    []fieldOp // Add, Subtract, Append, Prepend, Delete, SetIfNotExists
	cond   *expression.ConditionBuilder
	upsert bool
	errs   []error
	token  string // client request token, for an idempotent update
	// readLists makes Append and Prepend read their fields and SET the
	// result: the retry of an update whose list_append met a NULL.
	readLists bool
}

// Update starts a partial update of the item with key's primary key. The
// item must exist unless [Update.Upsert] is called.
func (r *Repo[T]) Update(key T) *Update[T] {
	return &Update[T]{updateSpec: updateSpec{r: &r.boundEntity}, r: r, key: key}
}

func (u *updateSpec) fieldFor(name string, op string) *model.Field {
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

// setsOrRemoves reports whether the update sets or removes f (not by an
// operator).
func (u *updateSpec) setsOrRemoves(f *model.Field) bool {
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
	v, ok := u.convert(f, name, "Set", value)
	if !ok {
		return u
	}
	fieldByIndexAlloc(reflect.ValueOf(&u.vals).Elem(), f.Index).Set(v)
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
		fv, ok := f.Get(src)
		if !ok {
			fv = reflect.Zero(f.Type)
		}
		fieldByIndexAlloc(reflect.ValueOf(&u.vals).Elem(), f.Index).Set(fv)
		u.set = appendUnique(u.set, f)
	}
	return u
}

// Add atomically adds v to a field (DynamoDB's ADD):
//
//   - to a number field, the number v (a missing attribute counts as 0);
//     a float to an integer field, or a value the field's type cannot
//     hold, is a *ValidationError;
//   - to a set field (a slice tagged stringset, numberset or binaryset, or
//     a [][]byte), the elements of v: a value of the field's type, a
//     slice of its elements, or one element. A missing attribute counts
//     as the empty set.
//
// Any other field (a list among them: see [Update.Append]) is a
// *ValidationError before the network.
func (u *Update[T]) Add(name string, v any) *Update[T] {
	f := u.fieldFor(name, "Add")
	if f == nil {
		return u
	}
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
		u.setOp(f, name, "Add", opAddSet, v)
		return u
	}
	u.numberOp(f, name, "Add", v, v)
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
// Name fields by their Go names, as [Query.Filter] describes (a stored
// attribute name is accepted too; any other name is a *ValidationError
// before the update is sent).
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
// Run reads the item back afterwards. Its request must not depend on what
// is stored, so Run refuses, before the network, an idempotent update
// that would read the item first: one that moves a unique value, or an
// upsert that does not set every index key field, with a *ValidationError;
// one that changes part of an index key without setting the rest of it
// with a *KeyError naming every missing field (see [Update]). A versioned
// entity's version is added to, not read (see [Schema].Version).
//
// [TransactWriteItems]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
func (u *Update[T]) Idempotent(token string) *Update[T] {
	if token == "" || len(token) > 36 {
		u.errs = append(u.errs, validationErr(u.r.e.name, "", "Idempotent: the token must be 1 to 36 characters"))
	}
	u.token = token
	return u
}

// Upsert lets the update create the item when it does not exist. An upsert
// that finds no item is a Create of the key and the values the update
// sets (added amounts included): the new item carries its managed fields
// and every index key a Put of it would. Unless the update gives every
// field of every index key (and a version or unique values make no read
// necessary), Run reads the item first to tell the two cases apart.
func (u *Update[T]) Upsert() *Update[T] {
	u.upsert = true
	return u
}

// clone returns a copy of u that later changes to u do not reach. A copy
// of u.vals would share the structs its embedded pointers point to (a
// field promoted from an embedded *Base), so the set fields are copied
// into fresh ones.
func (u *Update[T]) clone() *Update[T] {
	c := *u
	c.set, c.remove, c.ops, c.errs = slices.Clip(u.set), slices.Clip(u.remove), slices.Clip(u.ops), slices.Clip(u.errs)
	var zero T
	c.vals = zero
	src, dst := reflect.ValueOf(&u.vals).Elem(), reflect.ValueOf(&c.vals).Elem()
	for _, f := range c.set {
		if fv, ok := f.Get(src); ok {
			fieldByIndexAlloc(dst, f.Index).Set(fv)
		}
	}
	return &c
}

func appendUnique(s []*model.Field, f *model.Field) []*model.Field {
	if slices.Contains(s, f) {
		return s
	}
	return append(s, f)
}

// Run sends the update and returns the item as it is afterwards. It returns
// [ErrNotFound] when the item does not exist (without Upsert),
// [ErrConditionFailed] when an [Update.If] condition fails, and
// [ErrVersionConflict] when the key's version (for a versioned entity, when
// non-zero) is not the stored one. The next version is stored and
// UpdatedAt set on every update (see [Schema].Version for version 0).
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
//
// When the item afterwards does not decode (another service stored an
// attribute in a shape the field cannot hold), the update was applied: Run
// returns an error wrapping the codec's, not the *ValidationError of a
// refused request, so that the caller does not send it again.
func (u *Update[T]) Run(ctx context.Context) (T, error) {
	var zero T
	res, err := u.r.execToken(ctx, "Update", u.token, func() ([]txItem, error) { return u.txItems(ctx, false) })
	if err != nil && u.listOnNull(err) {
		// A list stored as NULL (a nil slice saved without omitempty):
		// list_append cannot take it, so the update reads the field,
		// appends in Go, and sets the result on condition that the field
		// is still what it read.
		c := u.clone()
		c.readLists = true
		return c.Run(ctx)
	}
	if err != nil {
		return zero, err
	}
	attrs := res.attrs
	switch {
	case res.noItem:
		return zero, nil // previewed: nothing was sent, nothing came back
	case attrs == nil:
		v, err := u.r.Get(ctx, u.key, consistentRead)
		return v, appliedDecodeErr("update", u.r.e.name, err)
	}
	v, err := u.r.e.decode(u.r.t, attrs)
	return v, appliedDecodeErr("update", u.r.e.name, err)
}

// appliedDecodeErr is the error of a write that was applied but whose item
// (as it returned it, or read back) does not decode: another service
// stored an attribute in a shape the field cannot hold. It wraps the
// codec's error, not the *ValidationError a read returns, which would say
// that nothing was sent: a caller must not retry an applied write. Other
// errors pass unchanged.
func appliedDecodeErr(op, entity string, err error) error {
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Reason != reasonDecode {
		return err
	}
	return fmt.Errorf("singletable: %s %s was applied, but the item does not decode: %w", op, entity, ve.Err)
}

// listOnNull reports whether err is DynamoDB's refusal of a list_append
// whose list is not a list (a NULL): the update appends or prepends, has
// not read its lists yet, and may read (an Idempotent update may not).
func (u *updateSpec) listOnNull(err error) bool {
	if u.readLists || u.token != "" || !slices.ContainsFunc(u.ops, func(o fieldOp) bool { return o.kind == opAppend || o.kind == opPrepend }) {
		return false
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
		strings.Contains(ae.ErrorMessage(), "incorrect data type")
}

// build assembles the UpdateItem request of the update under key, with
// what it changes (to recognise it applied after a lost response). x says
// what the update expects and holds what was read before it (x.Snap).
func (u *Update[T]) build(key map[string]types.AttributeValue, x *expectation) (in *dynamodb.UpdateItemInput, eff updateEffect, after T, err error) {
	// merged holds every value known after the update: the key fields,
	// the set fields (removed fields stay zero), the managed fields, and
	// the fields read before the update.
	merged, fromSnap, err := u.merged(x.Snap)
	if err != nil {
		return nil, updateEffect{}, after, err
	}
	in, eff, err = u.updateSpec.build(key, x, reflect.ValueOf(&merged).Elem(), fromSnap)
	return in, eff, merged, err
}

// build is [Update.build] past merging: mv is the merged item (an
// addressable T), fromSnap the fields merged from the snapshot.
func (u *updateSpec) build(key map[string]types.AttributeValue, x *expectation, mv reflect.Value, fromSnap map[*model.Field]bool) (in *dynamodb.UpdateItemInput, eff updateEffect, err error) {
	r, e := u.r, u.r.e
	g := &e.guards
	now := stampTime(r.t.opts.Now())
	touched := map[*model.Field]bool{}
	set := slices.Clone(u.set)
	if g.updated != nil {
		// UpdatedAt is set like any field, so index keys built from it
		// follow. CreatedAt is not: an update is not the item's first
		// write, and a key holding it is rendered from the stored value
		// (an item without one, another service's, keeps none).
		e.stampField(mv, g.updated, now, false)
		set = append(set, g.updated)
	}
	if g.version != nil && !x.AddVersion {
		r.versioning(x, mv, x.Snap)
		set = append(set, g.version)
	}
	var ops []fieldOp
	for _, o := range u.ops {
		if fromSnap[o.f] {
			// Read before the update because an index key or a guard
			// depends on it: set to the result, so that the key is exact.
			set = appendUnique(set, o.f)
		} else {
			ops = append(ops, o)
		}
	}
	for _, f := range slices.Concat(set, u.remove) {
		touched[f] = true
	}
	counts := false
	for _, o := range ops {
		touched[o.f] = true
		counts = counts || o.counts()
	}

	var b expr.Builder
	var ub expr.Update
	if !r.t.opts.OmitEntityType {
		// An item another service wrote without it (MatchKeys) gets it.
		ub.Set(b.Name(r.t.opts.EntityTypeAttr), b.ValueS(e.name))
	}
	// An upsert sent without reading may create the item: it carries its
	// key fields and CreatedAt like any item, and every index key.
	blind := u.upsert && x.Snap == nil
	if blind {
		for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
			av, err := e.marshalFieldPlain(f, mv)
			if err != nil {
				return nil, updateEffect{}, err
			}
			if av != nil && !touched[f] && !containsField(e.foreign.keyOnly, f) {
				ub.Set(b.Name(f.Attr), b.Value(av))
			}
		}
		if g.created != nil {
			sv := reflect.New(e.typ).Elem()
			e.stamp(sv, now, false)
			av, err := e.marshalFieldPlain(g.created, sv)
			if err != nil {
				return nil, updateEffect{}, &ValidationError{Entity: e.name, Field: g.created.Name, Reason: "cannot encode", Err: err}
			}
			ub.SetIfNotExists(b.Name(g.created.Attr), b.Value(av))
		}
	}
	multiAttr := map[*model.Field]bool{}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				multiAttr[f] = true
			}
		}
	}
	eff = updateEffect{entity: e.name, typeAttr: r.t.opts.EntityTypeAttr, untyped: r.t.opts.OmitEntityType, set: map[string]types.AttributeValue{},
		stamped: g.updated != nil, adds: counts}
	setAV := func(f *model.Field, av types.AttributeValue) {
		if av == nil {
			ub.Remove(b.Name(f.Attr))
			eff.removed = append(eff.removed, f.Attr)
			return
		}
		ub.Set(b.Name(f.Attr), b.Value(av))
		eff.set[f.Attr] = av
	}
	for _, f := range set {
		var av types.AttributeValue
		if f == g.ttl {
			setAV(f, ttlValue(f, mv))
			continue
		}
		if multiAttr[f] {
			if !f.Present(mv) {
				setAV(f, nil)
				continue
			}
			av, err = e.marshalField(f, mv)
		} else {
			av, err = e.marshalFieldPlain(f, mv)
		}
		var ke *KeyError
		if errors.As(err, &ke) {
			return nil, eff, ke
		}
		if err != nil {
			return nil, eff, &ValidationError{Entity: e.name, Field: f.Name, Reason: "cannot encode", Err: err}
		}
		setAV(f, av)
	}
	for _, f := range u.remove {
		setAV(f, nil)
	}
	for _, o := range ops {
		if multiAttr[o.f] {
			return nil, updateEffect{}, &KeyError{Entity: e.name, Key: o.f.Attr, Missing: []string{o.f.Name},
				Err: fmt.Errorf("%s on a multi-attribute key attribute cannot keep the index key canonical; use Set", o.name)}
		}
		if err := o.write(&b, &ub); err != nil {
			return nil, eff, &ValidationError{Entity: e.name, Field: o.f.Name, Reason: "cannot encode", Err: err}
		}
	}
	switch {
	case x.AddVersion:
		ub.Add(b.Name(g.version.Attr), b.Value(&types.AttributeValueMemberN{Value: "1"}))
	case g.version != nil:
		eff.versionAttr, eff.version = g.version.Attr, x.Version+1
	}
	known := u.known(fromSnap)
	var rerender []*indexPlan
	var unknown []indexNeed
	for _, p := range e.indexes {
		if p.multi {
			continue
		}
		anyTouched := false
		n := indexNeed{index: p.name}
		for _, f := range p.deps {
			anyTouched = anyTouched || touched[f]
			if !known[f] {
				n.fields = append(n.fields, f)
			}
		}
		if !anyTouched && !blind {
			continue
		}
		if len(n.fields) > 0 {
			unknown = append(unknown, n)
		}
		rerender = append(rerender, p)
	}
	if len(unknown) > 0 {
		// readFields reads every field a touched index needs, so this is
		// a bug, not a caller's mistake; never write a stale key.
		return nil, updateEffect{}, unknownKeyFields(e.name, unknown, "the update changes part of these keys but the other fields are unknown")
	}
	for _, p := range rerender {
		pk, sk, ok, err := p.render(e, mv)
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

	// The condition: the item is this entity's, the version is the one
	// read, the fields read are as read, then the caller's conditions.
	cond := r.ownership(x.Intent)
	if x.VersionAttr != "" {
		cond = cond.And(e.versionCond(x.Version))
	}
	if x.Snap != nil {
		cond = cond.And(x.Snap.Cond(r.t.opts.PartitionKey))
	}
	if u.cond != nil {
		cond = cond.And(writeplan.User(*u.cond))
	}
	condText, err := cond.Write(&b, r.condNames())
	if err != nil {
		return nil, updateEffect{}, condErr(e.name, "bad update condition", err)
	}
	update := ub.String()
	in = &dynamodb.UpdateItemInput{
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

// merged returns the item's values as the update leaves them, as far as
// known: the key fields, the set fields (removed ones zero), the values
// read before the update for the other fields it read (fromSnap lists
// them), with the operators applied to those it changes.
func (u *Update[T]) merged(s *writeplan.Snapshot) (merged T, fromSnap map[*model.Field]bool, err error) {
	e := u.r.e
	merged = u.vals
	mv := reflect.ValueOf(&merged).Elem()
	kv := reflect.ValueOf(&u.key).Elem()
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
		if fv, ok := f.Get(kv); ok {
			fieldByIndexAlloc(mv, f.Index).Set(fv)
		}
	}
	if g := &e.guards; g.version != nil {
		if fv, ok := g.version.Get(kv); ok {
			fieldByIndexAlloc(mv, g.version.Index).Set(fv)
		}
	}
	fromSnap = map[*model.Field]bool{}
	if s == nil || s.Item == nil {
		return merged, fromSnap, nil
	}
	old, err := e.decode(u.r.t, s.Item)
	if err != nil {
		return merged, nil, err
	}
	ov := reflect.ValueOf(&old).Elem()
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
		stored, present := s.Item[f.Attr]
		for _, o := range u.ops {
			if o.f == f {
				if !o.takes(stored) {
					// Computing it in Go would rewrite another
					// service's attribute in the field's shape (a set
					// as a list, a text as a number).
					return merged, nil, fmt.Errorf("singletable: update %s: %s on %s, which the stored item holds as %s: DynamoDB's operator does not take it; nothing was written",
						e.name, o.name, f.Name, avKind(stored))
				}
				if err := o.apply(dst, present); err != nil {
					return merged, nil, &ValidationError{Entity: e.name, Field: f.Name, Reason: o.name, Err: err}
				}
			}
		}
		fromSnap[f] = true
	}
	return merged, fromSnap, nil
}

// known is the set of fields whose values after the update are known.
func (u *updateSpec) known(fromSnap map[*model.Field]bool) map[*model.Field]bool {
	e := u.r.e
	known := map[*model.Field]bool{}
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields, u.set, u.remove) {
		known[f] = true
	}
	for f := range fromSnap {
		known[f] = true
	}
	for _, f := range []*model.Field{e.guards.updated, e.guards.version} {
		if f != nil {
			known[f] = true // stamped, or the next version
		}
	}
	return known
}

// indexReads lists the fields an update must read because an index key it
// changes depends on them and the update does not give them: the other
// fields of a touched templated index, and the fields an operator changes
// in any index (the result is only known from the stored value).
func (u *updateSpec) indexReads() []*model.Field {
	var out []*model.Field
	for _, n := range u.indexNeeds() {
		for _, f := range n.fields {
			out = appendUnique(out, f)
		}
	}
	return out
}

// indexNeed is what one index needs read: the fields of its key the update
// changes part of and does not give.
type indexNeed struct {
	index  string
	fields []*model.Field
}

// indexNeeds lists, per index, the fields indexReads reads for it.
func (u *updateSpec) indexNeeds() []indexNeed {
	e := u.r.e
	g := &e.guards
	touched := func(f *model.Field) bool {
		if u.setsOrRemoves(f) || (f != nil && (f == g.updated || f == g.version)) {
			return true
		}
		return u.operates(f)
	}
	given := map[*model.Field]bool{}
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields, u.set, u.remove) {
		given[f] = true
	}
	if g.updated != nil {
		given[g.updated] = true
	}
	var out []indexNeed
	for _, p := range e.indexes {
		n := indexNeed{index: p.name}
		for _, f := range p.deps {
			switch {
			case p.multi && u.operates(f):
				n.fields = append(n.fields, f)
			case !p.multi && !given[f] && f != g.version && slices.ContainsFunc(p.deps, touched):
				n.fields = append(n.fields, f)
			}
		}
		if len(n.fields) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// unknownKeyFields is the one *KeyError of an update that changes part of
// the keys of indexes without knowing the rest: it names every index and
// every missing field, and why.
func unknownKeyFields(entity string, needs []indexNeed, why string) *KeyError {
	ke := &KeyError{Entity: entity}
	var names, per []string
	for _, n := range needs {
		names = append(names, n.index)
		var fs []string
		for _, f := range n.fields {
			fs = append(fs, f.Name)
			if !slices.Contains(ke.Missing, f.Name) {
				ke.Missing = append(ke.Missing, f.Name)
			}
		}
		per = append(per, n.index+" needs "+strings.Join(fs, ", "))
	}
	ke.Index = strings.Join(names, ", ")
	ke.Err = errors.New(strings.Join(per, "; ") + ": " + why)
	return ke
}

// givesEveryIndex reports whether the update gives every field of every
// index key of the entity (key fields, set and removed fields, UpdatedAt).
func (u *updateSpec) givesEveryIndex() bool {
	known := u.known(nil)
	for _, p := range u.r.e.indexes {
		for _, f := range p.deps {
			if !known[f] {
				return false
			}
		}
	}
	return true
}

// operates reports whether an operator of the update changes f.
func (u *updateSpec) operates(f *model.Field) bool {
	return slices.ContainsFunc(u.ops, func(o fieldOp) bool { return o.f == f })
}

// check encodes the values the update sets and adds, so that bad values
// are refused before the update reads or sends anything.
func (u *updateSpec) check(vv reflect.Value, key map[string]types.AttributeValue) error {
	e := u.r.e
	// The item after the update holds at least its key and the values set:
	// past 400 KB, DynamoDB would refuse it.
	size := itemsize.Of(key)
	for _, f := range u.set {
		if f == e.guards.ttl {
			continue
		}
		marshal := e.marshalFieldPlain
		for _, p := range e.indexes {
			if p.multi && slices.Contains(p.deps, f) {
				marshal = e.marshalField // with the key attribute's checks
			}
		}
		av, err := marshal(f, vv)
		var ke *KeyError
		if errors.As(err, &ke) {
			return ke
		}
		if err != nil {
			return &ValidationError{Entity: e.name, Field: f.Name, Reason: "cannot encode", Err: err}
		}
		if av != nil {
			n, _ := itemsize.Attr(f.Attr, av)
			size += n
		}
	}
	if size > itemsize.MaxItemBytes {
		return &ValidationError{Entity: e.name, Reason: "item too large", Err: &itemsize.TooLargeError{Size: size, Max: itemsize.MaxItemBytes}}
	}
	// DynamoDB allows one action per attribute in an update expression.
	acts := map[*model.Field]string{}
	act := func(f *model.Field, what string) error {
		if prev, ok := acts[f]; ok {
			return validationErr(e.name, f.Name, "%s and %s in one update: DynamoDB allows one action per attribute", prev, what)
		}
		acts[f] = what
		return nil
	}
	for _, f := range u.set {
		if err := act(f, "Set"); err != nil {
			return err
		}
	}
	for _, f := range u.remove {
		if err := act(f, "Remove"); err != nil {
			return err
		}
	}
	for _, o := range u.ops {
		if err := act(o.f, o.name); err != nil {
			return err
		}
		if o.kind == opAdd {
			if _, err := attributevalue.Marshal(o.n); err != nil {
				return &ValidationError{Entity: e.name, Field: o.f.Name, Reason: "cannot encode", Err: err}
			}
		}
	}
	return nil
}

// readReason says why an update reads the item first.
func (u *updateSpec) readReason(reads []*model.Field, whole bool) string {
	var names []string
	for _, f := range reads {
		names = append(names, f.Name)
	}
	switch {
	case len(names) > 0:
		return "to learn " + strings.Join(names, ", ") + "; set them, or give the version"
	case whole:
		return "an upsert that does not set every index key field"
	}
	return ""
}

// addTo adds the number n to the numeric value dst.
func addTo(dst reflect.Value, n any) error {
	nv := reflect.ValueOf(n)
	if dst.Kind() == reflect.Pointer {
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		dst = dst.Elem()
	}
	switch {
	case dst.CanInt() && nv.CanInt():
		dst.SetInt(dst.Int() + nv.Int())
	case dst.CanInt() && nv.CanUint():
		dst.SetInt(dst.Int() + int64(nv.Uint()))
	case dst.CanUint() && nv.CanUint():
		dst.SetUint(dst.Uint() + nv.Uint())
	case dst.CanUint() && nv.CanInt():
		dst.SetUint(uint64(int64(dst.Uint()) + nv.Int()))
	case dst.CanFloat() && nv.CanFloat():
		dst.SetFloat(dst.Float() + nv.Float())
	case dst.CanFloat() && nv.CanInt():
		dst.SetFloat(dst.Float() + float64(nv.Int()))
	case dst.CanFloat() && nv.CanUint():
		dst.SetFloat(dst.Float() + float64(nv.Uint()))
	default:
		return fmt.Errorf("cannot add %T to a %s field", n, dst.Type())
	}
	return nil
}

// updateEffect is what an update makes visible in the item: the attributes
// it sets and removes, and the version it stores when it checks one.
type updateEffect struct {
	entity, typeAttr string
	untyped          bool // the update writes no entity type (OmitEntityType)
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
	if t, ok := cur[ef.typeAttr].(*types.AttributeValueMemberS); ef.untyped {
		if _, has := cur[ef.typeAttr]; has {
			return false
		}
	} else if !ok || t.Value != ef.entity {
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
