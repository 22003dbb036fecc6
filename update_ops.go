package singletable

import (
	"cmp"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The update operators besides Set and Remove change a field from its
// stored value in DynamoDB's own expression (ADD, DELETE, list_append,
// if_not_exists), so concurrent operators on one item all count. When an
// index key, its When predicate or a unique guard depends on the field,
// the update reads the field, applies the operator in Go, and SETs the
// result conditioned on the value read, so the key never goes stale.

// Append appends values to the list field name (a slice or array stored as
// a DynamoDB list): SET name = list_append(name, values), a missing
// attribute or a NULL counting as an empty list (a NULL costs a read, and
// an Idempotent update, which may not read, gets DynamoDB's refusal). Each
// value must be assignable or convertible to the element type; a single
// value of the field's own type appends its elements. A field stored as a
// set is a *ValidationError: use [Update.Add].
func (u *Update[T]) Append(name string, values ...any) *Update[T] {
	u.operator(name, "Append", values...)
	return u
}

// Prepend puts values before the elements of the list field name, as
// [Update.Append] puts them after.
func (u *Update[T]) Prepend(name string, values ...any) *Update[T] {
	u.operator(name, "Prepend", values...)
	return u
}

// Delete removes elems from the set field name (DynamoDB's DELETE; a
// missing attribute stays missing, and a set left empty is removed). elems
// is a value of the field's type, a slice of its elements, or one element.
// The field must be stored as a set: a slice tagged stringset, numberset
// or binaryset, or a [][]byte.
func (u *Update[T]) Delete(name string, elems any) *Update[T] {
	u.operator(name, "Delete", elems)
	return u
}

// SetIfNotExists sets field name to value only when the item has no such
// attribute (SET name = if_not_exists(name, value)). value is checked as
// [Update.Set] checks it; a value the field stores as no attribute (the
// zero value of an omitempty field) is a *ValidationError.
func (u *Update[T]) SetIfNotExists(name string, value any) *Update[T] {
	u.operator(name, "SetIfNotExists", value)
	return u
}

// Subtract atomically subtracts n from a numeric field: an ADD of -n, so a
// missing attribute counts as 0, as with [Update.Add]. An unsigned field
// can end below zero, which it cannot decode: guard such a subtraction
// with a condition ([Update.If]).
func (u *Update[T]) Subtract(name string, n any) *Update[T] {
	u.operator(name, "Subtract", n)
	return u
}

// operator records the operator the method op makes for field name from
// its arguments (writeplan.NewOp), or the mistake found in the field or in
// making it.
func (u *updateSpec) operator(name, op string, args ...any) {
	f := u.fieldFor(name, op)
	if f == nil {
		return
	}
	o, err := writeplan.NewOp(f, op, u.r.e.encodeValue, args...)
	if err != nil {
		u.errs = append(u.errs, u.r.e.invalid(name, err))
		return
	}
	u.ops = append(u.ops, o)
}

// encodeValue encodes v, a value of f's type, as the field is stored.
func (e *entityPlan) encodeValue(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	ov := reflect.New(e.typ).Elem()
	fieldByIndexAlloc(ov, f.Index).Set(v)
	return e.marshalFieldPlain(f, ov)
}

// invalid is the *ValidationError of a mistake (a *writeplan.Invalid) in
// an update, of the field the caller named name unless it names another.
func (e *entityPlan) invalid(name string, err error) error {
	if inv, ok := err.(*writeplan.Invalid); ok {
		return &ValidationError{Entity: e.name, Field: cmp.Or(inv.Field, name), Reason: inv.Reason, Err: inv.Err}
	}
	return err
}
