package writeplan

import (
	"fmt"
	"math"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/model"
)

// Invalid is a mistake in an update the caller built, found before the
// network: the root package reports it as a validation error of Field, or
// when "" of the field the caller named.
type Invalid struct {
	Field  string
	Reason string
	Err    error
}

// Error is the reason, and the cause when there is one.
func (e *Invalid) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Unwrap returns the cause.
func (e *Invalid) Unwrap() error { return e.Err }

func invalid(format string, args ...any) *Invalid {
	return &Invalid{Reason: fmt.Sprintf(format, args...)}
}

// CheckActions refuses two actions on one field (set, removed, or changed
// by an operator), which DynamoDB does not allow, and an added number that
// does not encode.
func CheckActions(set, remove []*model.Field, ops []Op) error {
	acts := map[*model.Field]string{}
	act := func(what string, fs ...*model.Field) error {
		for _, f := range fs {
			if prev, ok := acts[f]; ok {
				return &Invalid{Field: f.Name, Reason: fmt.Sprintf("%s and %s in one update: DynamoDB allows one action per attribute", prev, what)}
			}
			acts[f] = what
		}
		return nil
	}
	if err := act("Set", set...); err != nil {
		return err
	}
	if err := act("Remove", remove...); err != nil {
		return err
	}
	for _, o := range ops {
		if err := act(o.Name, o.Field); err != nil {
			return err
		}
		if o.Kind == OpAdd {
			if _, err := attributevalue.Marshal(o.N); err != nil {
				return &Invalid{Field: o.Field.Name, Reason: "cannot encode", Err: err}
			}
		}
	}
	return nil
}

// ApplyRead applies the operators of ops on f to dst, its value read from
// item, as DynamoDB would (an update of entity). A stored attribute the
// operator does not take is refused: computing it in Go would rewrite
// another service's attribute in the field's shape (a set as a list).
func ApplyRead(entity string, ops []Op, f *model.Field, dst reflect.Value, item map[string]types.AttributeValue) error {
	stored, present := item[f.Attr]
	for _, o := range ops {
		if o.Field != f {
			continue
		}
		if !o.Takes(stored) {
			return fmt.Errorf("singletable: update %s: %s on %s, which the stored item holds as %s: DynamoDB's operator does not take it; nothing was written",
				entity, o.Name, f.Name, attrvalue.TypeText(stored))
		}
		if err := o.Apply(dst, present); err != nil {
			return &Invalid{Field: f.Name, Reason: o.Name, Err: err}
		}
	}
	return nil
}

// Encode encodes v, a value of f's type, as the field is stored (nil: no
// attribute).
type Encode func(f *model.Field, v reflect.Value) (types.AttributeValue, error)

// NewOp makes the operator the Update method op (Add, Subtract, Append,
// Prepend, Delete, SetIfNotExists) makes for field f from the method's
// arguments, or the *Invalid mistake found in the field or the arguments.
// enc encodes operands as the field is stored.
func NewOp(f *model.Field, op string, enc Encode, args ...any) (Op, error) {
	var arg any
	if len(args) > 0 {
		arg = args[0]
	}
	switch op {
	case "Add":
		if ft := derefOnce(f.Type); ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
			return elemsOp(f, op, OpAddSet, arg, enc)
		}
		return numberOp(f, op, arg, arg, enc)
	case "Subtract":
		neg, err := negate(arg)
		if err != nil {
			return Op{}, invalid("Subtract %v", err)
		}
		return numberOp(f, op, arg, neg, enc)
	case "Append":
		return listOp(f, op, OpAppend, args, enc)
	case "Prepend":
		return listOp(f, op, OpPrepend, args, enc)
	case "Delete":
		return elemsOp(f, op, OpDeleteSet, arg, enc)
	}
	v, err := Convert(f, op, arg)
	if err != nil {
		return Op{}, err
	}
	av, err := operand(f, op, v, enc)
	return Op{Field: f, Kind: OpIfNotExists, V: v, AV: av, Name: op}, err
}

func derefOnce(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// numberOp is an ADD of n (shown to the caller as given) to f, after
// checking that f is a number that can hold it.
func numberOp(f *model.Field, op string, given, n any, enc Encode) (Op, error) {
	nv := reflect.ValueOf(n)
	if !codec.IsNumberKind(nv.Kind()) {
		return Op{}, invalid("%s takes a number, got %T", op, given)
	}
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch {
	case !codec.IsNumberKind(ft.Kind()):
		return Op{}, invalid("%s on a field of type %s; it takes a number field (or a set, for Add)", op, f.Type)
	case nv.CanFloat() && ft.Kind() != reflect.Float32 && ft.Kind() != reflect.Float64 && nv.Float() != math.Trunc(nv.Float()):
		return Op{}, invalid("%s of %v to an integer field", op, given)
	case overflows(nv, ft):
		return Op{}, invalid("%s of %v overflows %s", op, given, ft)
	case !storedAsNumber(f, enc):
		return Op{}, invalid("%s on a field not stored as a number", op)
	}
	return Op{Field: f, Kind: OpAdd, N: n, Name: op}, nil
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
func storedAsNumber(f *model.Field, enc Encode) bool {
	if f.OmitEmpty || f.Type.Kind() == reflect.Pointer {
		return true
	}
	av, err := enc(f, reflect.Zero(f.Type))
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
func listOp(f *model.Field, op string, kind OpKind, values []any, enc Encode) (Op, error) {
	ft := derefOnce(f.Type)
	if ft.Kind() != reflect.Slice && ft.Kind() != reflect.Array || ft.Elem().Kind() == reflect.Uint8 {
		return Op{}, invalid("%s on a field of type %s; it takes a list (a slice)", op, f.Type)
	}
	if len(values) == 0 {
		return Op{}, invalid("%s of nothing", op)
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
			return Op{}, invalid("%s of a %T value; the elements are %s", op, x, ft.Elem())
		}
		list = reflect.Append(list, ev)
	}
	if list.Len() == 0 {
		return Op{}, invalid("%s of nothing", op)
	}
	v, ok := asFieldType(list, f.Type)
	if !ok {
		return Op{}, invalid("%s on a field of type %s; it takes a list (a slice)", op, f.Type)
	}
	av, err := operand(f, op, v, enc)
	if err != nil {
		return Op{}, err
	}
	if _, isL := av.(*types.AttributeValueMemberL); !isL {
		return Op{}, invalid("%s on a field stored as %s, not a list; Add and Delete change a set", op, attrvalue.TypeText(av))
	}
	return Op{Field: f, Kind: kind, V: v, AV: av, Name: op}, nil
}

// elemsOp is an Add or Delete of elems to the set field f.
func elemsOp(f *model.Field, op string, kind OpKind, elems any, enc Encode) (Op, error) {
	ft := derefOnce(f.Type)
	if ft.Kind() != reflect.Slice || ft.Elem().Kind() == reflect.Uint8 {
		return Op{}, invalid("%s with elements on a field of type %s; it takes a set (a slice tagged stringset, numberset or binaryset, or a [][]byte)", op, f.Type)
	}
	set := reflect.MakeSlice(reflect.SliceOf(ft.Elem()), 0, 1)
	v := reflect.ValueOf(elems)
	switch {
	case !v.IsValid():
		return Op{}, invalid("%s of nothing", op)
	case (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) && v.Type().Elem() != reflect.TypeOf(byte(0)) || v.Type() == ft:
		for i := range v.Len() {
			ev, ok := convertTo(v.Index(i).Interface(), ft.Elem())
			if !ok {
				return Op{}, invalid("%s of a %s value; the elements are %s", op, v.Type(), ft.Elem())
			}
			set = reflect.Append(set, ev)
		}
	default:
		ev, ok := convertTo(elems, ft.Elem())
		if !ok {
			return Op{}, invalid("%s of a %T value; the elements are %s", op, elems, ft.Elem())
		}
		set = reflect.Append(set, ev)
	}
	if set.Len() == 0 {
		return Op{}, invalid("%s of no elements (DynamoDB has no empty sets)", op)
	}
	fv, _ := asFieldType(set, f.Type)
	av, err := operand(f, op, fv, enc)
	if err != nil {
		return Op{}, err
	}
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
	default:
		return Op{}, invalid("%s with elements on a field stored as %s, not a set; tag it stringset, numberset or binaryset (Append adds to a list)", op, attrvalue.TypeText(av))
	}
	return Op{Field: f, Kind: kind, V: fv, AV: av, Name: op}, nil
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
	base := derefOnce(t)
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

// Convert returns value as a value of f's type, as Update.Set (op) accepts
// it: assignable, convertible within its kind, or a value for a pointer
// field.
func Convert(f *model.Field, op string, value any) (reflect.Value, error) {
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
		return reflect.Value{}, invalid("%s with a %s value; the field is %s", op, v.Type(), f.Type)
	}
	return v, nil
}

// operand encodes v, a value of f's type, as the field is stored.
func operand(f *model.Field, op string, v reflect.Value, enc Encode) (types.AttributeValue, error) {
	av, err := enc(f, v)
	if err != nil {
		return nil, &Invalid{Reason: "cannot encode", Err: err}
	}
	if av == nil {
		return nil, invalid("%s of a value the field stores as no attribute (empty, with omitempty)", op)
	}
	if _, null := av.(*types.AttributeValueMemberNULL); null {
		return nil, invalid("%s of a value the field stores as NULL", op)
	}
	return av, nil
}
