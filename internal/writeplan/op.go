package writeplan

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
)

// OpKind is what an update operator does to its field.
type OpKind uint8

const (
	OpAdd         OpKind = iota // ADD a number (Add, Subtract)
	OpAddSet                    // ADD elements to a set
	OpDeleteSet                 // DELETE elements from a set
	OpAppend                    // SET list_append(field, operand)
	OpPrepend                   // SET list_append(operand, field)
	OpIfNotExists               // SET if_not_exists(field, operand)
)

// Op is one update operator on one field, besides Set and Remove: it
// changes the field from its stored value, in DynamoDB's own expression
// (Write), or, when an index key or a guard depends on the field, in Go
// from the value read (Takes, Apply).
type Op struct {
	Field *model.Field
	Kind  OpKind
	N     any                  // OpAdd: the number added (negated by Subtract)
	V     reflect.Value        // the other kinds: the operand as a value of the field's type
	AV    types.AttributeValue // the other kinds: the operand as stored
	Name  string               // the method, for errors
}

// Counts reports whether applying o twice differs from applying it once:
// an ADD of a number or a list append leaves no trace of its own, so a
// retry after a lost response could apply it again (see Update.Run).
func (o Op) Counts() bool {
	return o.Kind == OpAdd || o.Kind == OpAppend || o.Kind == OpPrepend
}

// Takes reports whether av, the stored attribute o changes (nil when
// absent), is of a type DynamoDB's operator takes, so that applying o in
// Go to the value read computes what DynamoDB would: a number for ADD, a
// set of the operand's type for set ADD and DELETE, a list for
// list_append (or a NULL, which Append and Prepend read as an empty
// list). if_not_exists takes anything.
func (o Op) Takes(av types.AttributeValue) bool {
	if av == nil {
		return true
	}
	switch o.Kind {
	case OpAdd:
		_, ok := av.(*types.AttributeValueMemberN)
		return ok
	case OpAddSet, OpDeleteSet:
		return reflect.TypeOf(av) == reflect.TypeOf(o.AV)
	case OpAppend, OpPrepend:
		switch av.(type) {
		case *types.AttributeValueMemberL, *types.AttributeValueMemberNULL:
			return true
		}
		return false
	}
	return true
}

// Apply applies o to dst, the field's value as read (present says whether
// the item had the attribute), as DynamoDB would.
func (o Op) Apply(dst reflect.Value, present bool) error {
	if o.Kind == OpAdd {
		return addTo(dst, o.N)
	}
	if o.Kind == OpIfNotExists {
		if !present {
			dst.Set(o.V)
		}
		return nil
	}
	ptr := dst.Kind() == reflect.Pointer
	cur := dst
	if ptr {
		if dst.IsNil() {
			cur = reflect.Zero(dst.Type().Elem())
		} else {
			cur = dst.Elem()
		}
	}
	arg := o.V
	if arg.Kind() == reflect.Pointer {
		arg = arg.Elem()
	}
	if cur.Kind() == reflect.Array {
		return fmt.Errorf("%s on an array field cannot be computed in Go; use a slice", o.Name)
	}
	var res reflect.Value
	switch o.Kind {
	case OpAppend:
		res = reflect.AppendSlice(reflect.AppendSlice(reflect.MakeSlice(cur.Type(), 0, cur.Len()+arg.Len()), cur), arg)
	case OpPrepend:
		res = reflect.AppendSlice(reflect.AppendSlice(reflect.MakeSlice(cur.Type(), 0, cur.Len()+arg.Len()), arg), cur)
	case OpAddSet:
		res = reflect.AppendSlice(reflect.MakeSlice(cur.Type(), 0, cur.Len()+arg.Len()), cur)
		for i := range arg.Len() {
			if !sliceHas(res, arg.Index(i)) {
				res = reflect.Append(res, arg.Index(i))
			}
		}
	case OpDeleteSet:
		res = reflect.MakeSlice(cur.Type(), 0, cur.Len())
		for i := range cur.Len() {
			if !sliceHas(arg, cur.Index(i)) {
				res = reflect.Append(res, cur.Index(i))
			}
		}
		if res.Len() == 0 {
			dst.Set(reflect.Zero(dst.Type())) // DynamoDB removes an emptied set
			return nil
		}
	}
	if ptr {
		p := reflect.New(res.Type())
		p.Elem().Set(res)
		res = p
	}
	dst.Set(res)
	return nil
}

// sliceHas reports whether s has an element equal to x (bytes compared by
// content, numbers by value).
func sliceHas(s, x reflect.Value) bool {
	for i := range s.Len() {
		e := s.Index(i)
		if b, ok := x.Interface().([]byte); ok {
			if eb, ok := e.Interface().([]byte); ok && bytes.Equal(b, eb) {
				return true
			}
			continue
		}
		if e.Equal(x) {
			return true
		}
	}
	return false
}

// Write writes o into the update expression ub. Its operand value goes out
// as encoded; an added number as attributevalue encodes it.
func (o Op) Write(b *expr.Builder, ub *expr.Update) error {
	name := b.Name(o.Field.Attr)
	switch o.Kind {
	case OpAdd:
		n, err := attributevalue.Marshal(o.N)
		if err != nil {
			return err
		}
		ub.Add(name, b.Value(n))
	case OpAddSet:
		ub.Add(name, b.Value(o.AV))
	case OpDeleteSet:
		ub.Delete(name, b.Value(o.AV))
	case OpIfNotExists:
		ub.SetIfNotExists(name, b.Value(o.AV))
	case OpAppend, OpPrepend:
		cur := expr.IfNotExists(name, b.Value(&types.AttributeValueMemberL{Value: []types.AttributeValue{}}))
		if o.Kind == OpAppend {
			ub.Set(name, expr.ListAppend(cur, b.Value(o.AV)))
		} else {
			ub.Set(name, expr.ListAppend(b.Value(o.AV), cur))
		}
	}
	return nil
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
