package singletable

import (
	"fmt"
	"math"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/codec"
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
	u.operator(name, "Append", func(f *model.Field) (writeplan.Op, error) {
		return u.listOp(f, name, "Append", writeplan.OpAppend, values)
	})
	return u
}

// Prepend puts values before the elements of the list field name, as
// [Update.Append] puts them after.
func (u *Update[T]) Prepend(name string, values ...any) *Update[T] {
	u.operator(name, "Prepend", func(f *model.Field) (writeplan.Op, error) {
		return u.listOp(f, name, "Prepend", writeplan.OpPrepend, values)
	})
	return u
}

// Delete removes elems from the set field name (DynamoDB's DELETE; a
// missing attribute stays missing, and a set left empty is removed). elems
// is a value of the field's type, a slice of its elements, or one element.
// The field must be stored as a set: a slice tagged stringset, numberset
// or binaryset, or a [][]byte.
func (u *Update[T]) Delete(name string, elems any) *Update[T] {
	u.operator(name, "Delete", func(f *model.Field) (writeplan.Op, error) {
		return u.setOp(f, name, "Delete", writeplan.OpDeleteSet, elems)
	})
	return u
}

// SetIfNotExists sets field name to value only when the item has no such
// attribute (SET name = if_not_exists(name, value)). value is checked as
// [Update.Set] checks it; a value the field stores as no attribute (the
// zero value of an omitempty field) is a *ValidationError.
func (u *Update[T]) SetIfNotExists(name string, value any) *Update[T] {
	u.operator(name, "SetIfNotExists", func(f *model.Field) (writeplan.Op, error) {
		v, err := u.convert(f, name, "SetIfNotExists", value)
		if err != nil {
			return writeplan.Op{}, err
		}
		av, err := u.operand(f, name, "SetIfNotExists", v)
		return writeplan.Op{Field: f, Kind: writeplan.OpIfNotExists, V: v, AV: av, Name: "SetIfNotExists"}, err
	})
	return u
}

// Subtract atomically subtracts n from a numeric field: an ADD of -n, so a
// missing attribute counts as 0, as with [Update.Add]. An unsigned field
// can end below zero, which it cannot decode: guard such a subtraction
// with a condition ([Update.If]).
func (u *Update[T]) Subtract(name string, n any) *Update[T] {
	u.operator(name, "Subtract", func(f *model.Field) (writeplan.Op, error) {
		neg, err := negate(n)
		if err != nil {
			return writeplan.Op{}, validationErr(u.r.e.name, name, "Subtract %v", err)
		}
		return u.numberOp(f, name, "Subtract", n, neg)
	})
	return u
}

// operator records the operator that build makes for field name (op names
// the method), or the mistake found in the field or in making it.
func (u *updateSpec) operator(name, op string, build func(f *model.Field) (writeplan.Op, error)) {
	f := u.fieldFor(name, op)
	if f == nil {
		return
	}
	o, err := build(f)
	if err != nil {
		u.errs = append(u.errs, err)
		return
	}
	u.ops = append(u.ops, o)
}

// numberOp is an ADD of n (shown to the caller as given) to f, after
// checking that f is a number that can hold it.
func (u *updateSpec) numberOp(f *model.Field, name, op string, given, n any) (writeplan.Op, error) {
	e := u.r.e
	nv := reflect.ValueOf(n)
	if !codec.IsNumberKind(nv.Kind()) {
		return writeplan.Op{}, validationErr(e.name, name, "%s takes a number, got %T", op, given)
	}
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch {
	case !codec.IsNumberKind(ft.Kind()):
		return writeplan.Op{}, validationErr(e.name, name, "%s on a field of type %s; it takes a number field (or a set, for Add)", op, f.Type)
	case nv.CanFloat() && ft.Kind() != reflect.Float32 && ft.Kind() != reflect.Float64 && nv.Float() != math.Trunc(nv.Float()):
		return writeplan.Op{}, validationErr(e.name, name, "%s of %v to an integer field", op, given)
	case overflows(nv, ft):
		return writeplan.Op{}, validationErr(e.name, name, "%s of %v overflows %s", op, given, ft)
	case !e.storedAsNumber(f):
		return writeplan.Op{}, validationErr(e.name, name, "%s on a field not stored as a number", op)
	}
	return writeplan.Op{Field: f, Kind: writeplan.OpAdd, N: n, Name: op}, nil
}

// overflows reports whether the integer nv is out of the range of the
// integer type ft (a negative one, for an unsigned type, by its magnitude).
func overflows(nv reflect.Value, ft reflect.Type) bool {
	z := reflect.Zero(ft)
	switch {
	case nv.CanInt() && z.CanInt():
		return z.OverflowInt(nv.Int())
	case nv.CanUint() && z.CanInt():
		return nv.Uint() > math.MaxInt64 || z.OverflowInt(int64(nv.Uint()))
	case nv.CanInt() && z.CanUint():
		return z.OverflowUint(absInt(nv.Int()))
	case nv.CanUint() && z.CanUint():
		return z.OverflowUint(nv.Uint())
	}
	return false
}

// storedAsNumber reports whether the number field f is stored as a number
// (not, say, with the string tag option).
func (e *entityPlan) storedAsNumber(f *model.Field) bool {
	if f.OmitEmpty || f.Type.Kind() == reflect.Pointer {
		return true
	}
	probe := reflect.New(e.typ).Elem()
	fieldByIndexAlloc(probe, f.Index).Set(reflect.Zero(f.Type))
	av, err := e.marshalFieldPlain(f, probe)
	_, isN := av.(*types.AttributeValueMemberN)
	return err != nil || av == nil || isN
}

func absInt(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// negate returns -n for a Go number n.
func negate(n any) (any, error) {
	v := reflect.ValueOf(n)
	switch {
	case !v.IsValid() || !codec.IsNumberKind(v.Kind()):
		return nil, fmt.Errorf("takes a number, got %T", n)
	case v.CanInt():
		if v.Int() == math.MinInt64 {
			return nil, fmt.Errorf("of %v overflows", n)
		}
		return -v.Int(), nil
	case v.CanUint():
		if v.Uint() > math.MaxInt64 {
			return nil, fmt.Errorf("of %v overflows", n)
		}
		return -int64(v.Uint()), nil
	}
	return -v.Float(), nil
}

// listOp is an Append or Prepend of values to the list field f.
func (u *updateSpec) listOp(f *model.Field, name, op string, kind writeplan.OpKind, values []any) (writeplan.Op, error) {
	e := u.r.e
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.Slice && ft.Kind() != reflect.Array || ft.Elem().Kind() == reflect.Uint8 {
		return writeplan.Op{}, validationErr(e.name, name, "%s on a field of type %s; it takes a list (a slice)", op, f.Type)
	}
	if len(values) == 0 {
		return writeplan.Op{}, validationErr(e.name, name, "%s of nothing", op)
	}
	list := reflect.MakeSlice(reflect.SliceOf(ft.Elem()), 0, len(values))
	if len(values) == 1 {
		if v := reflect.ValueOf(values[0]); v.IsValid() && (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) && v.Type().Elem() == ft.Elem() {
			for i := range v.Len() {
				list = reflect.Append(list, v.Index(i))
			}
			values = nil
		}
	}
	for _, x := range values {
		ev, ok := convertTo(x, ft.Elem())
		if !ok {
			return writeplan.Op{}, validationErr(e.name, name, "%s of a %T value; the elements are %s", op, x, ft.Elem())
		}
		list = reflect.Append(list, ev)
	}
	if list.Len() == 0 {
		return writeplan.Op{}, validationErr(e.name, name, "%s of nothing", op)
	}
	v, ok := asFieldType(list, f.Type)
	if !ok {
		return writeplan.Op{}, validationErr(e.name, name, "%s on a field of type %s; it takes a list (a slice)", op, f.Type)
	}
	av, err := u.operand(f, name, op, v)
	if err != nil {
		return writeplan.Op{}, err
	}
	if _, isL := av.(*types.AttributeValueMemberL); !isL {
		return writeplan.Op{}, validationErr(e.name, name, "%s on a field stored as %s, not a list; Add and Delete change a set", op, attrvalue.TypeText(av))
	}
	return writeplan.Op{Field: f, Kind: kind, V: v, AV: av, Name: op}, nil
}

// setOp is an Add or Delete of elems to the set field f.
func (u *updateSpec) setOp(f *model.Field, name, op string, kind writeplan.OpKind, elems any) (writeplan.Op, error) {
	e := u.r.e
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.Slice || ft.Elem().Kind() == reflect.Uint8 {
		return writeplan.Op{}, validationErr(e.name, name, "%s with elements on a field of type %s; it takes a set (a slice tagged stringset, numberset or binaryset, or a [][]byte)", op, f.Type)
	}
	set := reflect.MakeSlice(reflect.SliceOf(ft.Elem()), 0, 1)
	v := reflect.ValueOf(elems)
	switch {
	case !v.IsValid():
		return writeplan.Op{}, validationErr(e.name, name, "%s of nothing", op)
	case (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) && v.Type().Elem() != reflect.TypeOf(byte(0)) || v.Type() == ft:
		for i := range v.Len() {
			ev, ok := convertTo(v.Index(i).Interface(), ft.Elem())
			if !ok {
				return writeplan.Op{}, validationErr(e.name, name, "%s of a %s value; the elements are %s", op, v.Type(), ft.Elem())
			}
			set = reflect.Append(set, ev)
		}
	default:
		ev, ok := convertTo(elems, ft.Elem())
		if !ok {
			return writeplan.Op{}, validationErr(e.name, name, "%s of a %T value; the elements are %s", op, elems, ft.Elem())
		}
		set = reflect.Append(set, ev)
	}
	if set.Len() == 0 {
		return writeplan.Op{}, validationErr(e.name, name, "%s of no elements (DynamoDB has no empty sets)", op)
	}
	fv, _ := asFieldType(set, f.Type)
	av, err := u.operand(f, name, op, fv)
	if err != nil {
		return writeplan.Op{}, err
	}
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
	default:
		return writeplan.Op{}, validationErr(e.name, name, "%s with elements on a field stored as %s, not a set; tag it stringset, numberset or binaryset (Append adds to a list)", op, attrvalue.TypeText(av))
	}
	return writeplan.Op{Field: f, Kind: kind, V: fv, AV: av, Name: op}, nil
}

// convertTo returns x as a value of type t when it is assignable, or
// convertible within the same kind (a named string type to string).
func convertTo(x any, t reflect.Type) (reflect.Value, bool) {
	v := reflect.ValueOf(x)
	switch {
	case !v.IsValid():
		return reflect.Value{}, false
	case v.Type().AssignableTo(t):
		n := reflect.New(t).Elem()
		n.Set(v)
		return n, true
	case v.Type().ConvertibleTo(t) && (v.Kind() == t.Kind() || codec.IsNumberKind(v.Kind()) && codec.IsNumberKind(t.Kind()) && !v.CanFloat()):
		if v.CanInt() && reflect.Zero(t).CanInt() && reflect.Zero(t).OverflowInt(v.Int()) {
			return reflect.Value{}, false
		}
		return v.Convert(t), true
	}
	return reflect.Value{}, false
}

// asFieldType returns the slice s as a value of type t: the same slice
// type, an array of it, or a pointer to either.
func asFieldType(s reflect.Value, t reflect.Type) (reflect.Value, bool) {
	base := t
	if t.Kind() == reflect.Pointer {
		base = t.Elem()
	}
	out := reflect.New(base).Elem()
	switch base.Kind() {
	case reflect.Slice:
		out.Set(s.Convert(base))
	case reflect.Array:
		if s.Len() > base.Len() {
			return reflect.Value{}, false
		}
		reflect.Copy(out, s)
	default:
		return reflect.Value{}, false
	}
	if t.Kind() == reflect.Pointer {
		return out.Addr(), true
	}
	return out, true
}

// convert returns value as a value of f's type, as Set accepts it:
// assignable, convertible within its kind, or a value for a pointer field.
func (u *updateSpec) convert(f *model.Field, name, op string, value any) (reflect.Value, error) {
	var v reflect.Value
	if value == nil {
		v = reflect.Zero(f.Type)
	} else {
		v = reflect.ValueOf(value)
	}
	switch {
	case v.Type().AssignableTo(f.Type):
	case v.Type().ConvertibleTo(f.Type) && v.Kind() == f.Type.Kind():
		v = v.Convert(f.Type)
	case f.Type.Kind() == reflect.Pointer && v.Type().AssignableTo(f.Type.Elem()):
		p := reflect.New(f.Type.Elem())
		p.Elem().Set(v)
		v = p
	default:
		return reflect.Value{}, validationErr(u.r.e.name, name, "%s with a %s value; the field is %s", op, v.Type(), f.Type)
	}
	return v, nil
}

// operand encodes v, a value of f's type, as the field is stored.
func (u *updateSpec) operand(f *model.Field, name, op string, v reflect.Value) (types.AttributeValue, error) {
	ov := reflect.New(u.r.e.typ).Elem()
	fieldByIndexAlloc(ov, f.Index).Set(v)
	av, err := u.r.e.marshalFieldPlain(f, ov)
	if err != nil {
		return nil, &ValidationError{Entity: u.r.e.name, Field: name, Reason: "cannot encode", Err: err}
	}
	if av == nil {
		return nil, validationErr(u.r.e.name, name, "%s of a value the field stores as no attribute (empty, with omitempty)", op)
	}
	if _, null := av.(*types.AttributeValueMemberNULL); null {
		return nil, validationErr(u.r.e.name, name, "%s of a value the field stores as NULL", op)
	}
	return av, nil
}
