package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/smithy-go"

	"github.com/singletable-go/singletable/internal/backoff"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// Update is a partial change to one item, built by [Repo.Update] and sent by
// [Update.Run] ([UpdateItem]). Builder methods record mistakes; Run reports
// them before sending anything.
//
// Every index key that depends on a changed field is recomputed in the same
// request, its other fields read first when needed (the update conditioned
// on them as read). See docs/single-table-design.md, "Reads and writes".
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
// entity type. Its r is the repository's repo.
type updateSpec struct {
	r      *repo
	set    []*model.Field
	remove []*model.Field
	ops    []writeplan.Op // Add, Subtract, Append, Prepend, Delete, SetIfNotExists
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
	return &Update[T]{updateSpec: updateSpec{r: &r.repo}, r: r, key: key}
}

func (u *updateSpec) fieldFor(name string, op string) *model.Field {
	f, err := u.r.e.field(name)
	if err != nil {
		u.errs = append(u.errs, err)
		return nil
	}
	if u.r.e.inPrimaryKey(f) {
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
	v, err := writeplan.Convert(f, "Set", value)
	if err != nil {
		u.errs = append(u.errs, u.r.e.invalid(name, err))
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

// Add atomically adds v to a field (DynamoDB's ADD): to a number field, the
// number v (a missing attribute counts as 0); to a set field (a slice
// tagged stringset, numberset or binaryset, or a [][]byte), the elements of
// v: a value of the field's type, a slice of its elements, or one element.
// A value the field cannot hold, or any other field (a list: see
// [Update.Append]), is a *ValidationError before the network.
func (u *Update[T]) Add(name string, v any) *Update[T] {
	u.operator(name, "Add", v)
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

// Idempotent makes Run apply the update at most once for token (1 to 36
// characters, derived from the request being handled), sent as a one-item
// transaction's client request token. An idempotent update that would read
// the item first is refused before the network. See docs/reliability.md.
func (u *Update[T]) Idempotent(token string) *Update[T] {
	if token == "" || len(token) > 36 {
		u.errs = append(u.errs, validationErr(u.r.e.name, "", "Idempotent: the token must be 1 to 36 characters"))
	}
	u.token = token
	return u
}

// Upsert lets the update create the item when it does not exist, as a
// Create of the key and the values the update sets (managed fields and
// index keys included). Unless the update gives every field of every index
// key, Run reads the item first to tell the two cases apart.
func (u *Update[T]) Upsert() *Update[T] {
	u.upsert = true
	return u
}

// clone returns a copy of u that later changes to u do not reach; the set
// fields are copied into a fresh vals, which would otherwise share the
// structs its embedded pointers point to.
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
// [ErrVersionConflict] when the key's non-zero version is not the stored
// one. The next version is stored and UpdatedAt set on every update.
//
// When the item afterwards does not decode, the update was applied: Run
// returns an error wrapping the codec's, not a *ValidationError.
func (u *Update[T]) Run(ctx context.Context) (T, error) {
	var zero T
	res, err := u.r.execToken(ctx, "Update", u.token, u.countsOnce(), func() ([]txItem, error) { return u.txItems(ctx, false) })
	if err != nil && u.listOnNull(err) {
		// list_append cannot take a list stored as NULL: read, append in
		// Go and set the result, conditioned on the field as read.
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
		// Applied: read it back, retrying throttles and 5xx (a read is
		// safe to repeat); an error left must not read as a refusal.
		var v T
		err := backoff.Default.Do(ctx, nil, nil, func(ctx context.Context) (err error) { v, err = u.r.Get(ctx, u.key, consistentRead); return err })
		if errors.Is(err, ErrNotFound) && InPreview(ctx) {
			return zero, nil // the read-back of a previewed transaction: nothing was written
		}
		if derr := appliedDecodeErr("update", u.r.e.name, err); err == nil || derr != err {
			return v, derr
		}
		return v, fmt.Errorf("singletable: update %s was applied, but reading the item back failed: %w", u.r.e.name, err)
	}
	v, err := u.r.e.decode(u.r.t, attrs)
	return v, appliedDecodeErr("update", u.r.e.name, err)
}

// appliedDecodeErr is the error of a write applied but whose item does not
// decode: the codec's error wrapped, not a *ValidationError (nothing sent).
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
	if u.readLists || u.token != "" || !slices.ContainsFunc(u.ops, func(o writeplan.Op) bool { return o.Kind == writeplan.OpAppend || o.Kind == writeplan.OpPrepend }) {
		return false
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" &&
		strings.Contains(ae.ErrorMessage(), "incorrect data type")
}

// countsOnce reports whether the update is sent as a one-item transaction
// under a drawn token ([Schema.ExactlyOnceCounters]): a repeat of one of
// its operators would apply it again.
func (u *updateSpec) countsOnce() bool {
	return u.r.e.once && slices.ContainsFunc(u.ops, writeplan.Op.Counts)
}

// operates reports whether an operator of the update changes f.
func (u *updateSpec) operates(f *model.Field) bool {
	return slices.ContainsFunc(u.ops, func(o writeplan.Op) bool { return o.Field == f })
}
