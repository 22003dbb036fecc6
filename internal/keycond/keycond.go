// Package keycond builds a Query's sort key condition from the key's
// compiled template (or its multi-attribute fields) and the values the
// caller gave. On a rendered key a condition on one field is a range of
// rendered keys, whose bounds rest on rendered keys comparing as their
// field tuples (internal/keys/order.go); on a multi-attribute key it is
// one comparison per attribute. It knows nothing of entities or of the
// root's errors: what cannot be sent is an *Error the caller names.
package keycond

import (
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// Kind is what a sort condition tests.
type Kind int

// The kinds of sort condition.
const (
	None       Kind = iota // none: on a rendered key, its constant prefix, if any
	Cmp                    // the named field compared with Cond.Op
	Between                // low <= the named field <= high
	BeginsWith             // the named field starts with Cond.Prefix
)

// Cond is a sort key condition on the N-th field of the key (counting
// from 1): the fields before it equal the key value's, it is tested.
type Cond struct {
	Kind   Kind
	Op     string // Cmp's: expr.OpEq, OpLt, OpLe, OpGt or OpGe
	N      int
	Prefix string // BeginsWith's
}

// Key is a sort key: rendered into the attribute Attr from Tpl, whose
// placeholders Places the Fields fill (Fields[i] fills Places[i]); or,
// Tpl nil, a multi-attribute key, each of Fields its own attribute whose
// value Value gives (its errors are returned as they are).
type Key struct {
	Attr   string
	Tpl    *keys.Template
	Fields []*model.Field
	Places []*keys.Part
	Value  func(f *model.Field, v reflect.Value) (types.AttributeValue, error)
}

// Limit is DynamoDB's limit on the bytes of a sort key value.
const Limit = 1024

// Error is a condition that cannot be sent: on the key attribute Attr, a
// value that does not render (Err is a *keys.RenderError) or is over
// Limit; or a test the field Field cannot take (Reason).
type Error struct {
	Attr, Field, Reason string
	Err                 error
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return e.Field + ": " + e.Reason
	}
	return e.Attr + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Sort returns the conditions on the sort key k: on a rendered key one
// (none without a condition when the template has no constant prefix),
// on a multi-attribute key equalities on the fields before the N-th and
// the test of the N-th. kv holds the values, hv Between's upper one. An
// upper bound longer than a sort key can be is clamped to one DynamoDB
// accepts that matches the same keys; empty reports a range holding no key.
func Sort(k Key, c Cond, kv, hv reflect.Value) (conds []expr.KeyCond, empty bool, err error) {
	if k.Tpl == nil {
		conds, err = k.multi(c, kv, hv)
	} else {
		var kc *expr.KeyCond
		if kc, empty, err = k.rendered(c, kv, hv); kc != nil {
			conds = []expr.KeyCond{*kc}
		}
	}
	if err != nil || len(conds) == 0 {
		return nil, empty, err
	}
	clampUpper(&conds[len(conds)-1])
	field := ""
	if c.N > 0 {
		field = k.Fields[c.N-1].Name
	}
	return conds, false, checkSize(conds, field)
}

// Shape is the condition on a rendered sort key without a sort
// condition: the keys starting with the template's constant prefix (nil
// when it has none).
func (k Key) Shape() *expr.KeyCond {
	cp := k.Tpl.ConstantPrefix()
	switch {
	case k.Tpl.Raw == "" || cp == "":
		return nil
	case len(k.Fields) == 0:
		return expr.KeyCmp(k.Attr, expr.OpEq, cp)
	}
	return expr.KeyCmp(k.Attr, expr.OpBeginsWith, cp)
}

// Equal is the equality of each of fields, a multi-attribute key's, with
// its value in v.
func Equal(fields []*model.Field, value func(*model.Field, reflect.Value) (types.AttributeValue, error), v reflect.Value) ([]expr.KeyCond, error) {
	conds := make([]expr.KeyCond, 0, len(fields))
	for _, f := range fields {
		av, err := value(f, v)
		if err != nil {
			return nil, err
		}
		conds = append(conds, expr.KeyCond{Attr: f.Attr, Op: expr.OpEq, V1: av})
	}
	return conds, nil
}

// multi is Sort on a multi-attribute key.
func (k Key) multi(c Cond, kv, hv reflect.Value) ([]expr.KeyCond, error) {
	if c.Kind == None {
		return nil, nil
	}
	conds, err := Equal(k.Fields[:c.N-1], k.Value, kv)
	if err != nil {
		return nil, err
	}
	last := k.Fields[c.N-1]
	if c.Kind == BeginsWith {
		if !storedAsString(last) {
			return nil, &Error{Field: last.Name, Reason: "BeginsWith needs a string attribute"}
		}
		return append(conds, *expr.KeyCmp(last.Attr, expr.OpBeginsWith, c.Prefix)), nil
	}
	av, err := k.Value(last, kv)
	if err != nil {
		return nil, err
	}
	kc := expr.KeyCond{Attr: last.Attr, Op: c.Op, V1: av}
	if c.Kind == Between {
		if kc.V2, err = k.Value(last, hv); err != nil {
			return nil, err
		}
		kc.Op = expr.OpBetween
	}
	return append(conds, kc), nil
}

// storedAsString reports whether a multi-attribute key field is stored
// as a string (S): a string, or a time not stored as epoch numbers.
func storedAsString(f *model.Field) bool {
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.String || t == model.TimeType && !f.Form.Number()
}

// rendered is Sort on a rendered key: one condition, nil for none.
func (k Key) rendered(c Cond, kv, hv reflect.Value) (*expr.KeyCond, bool, error) {
	if c.Kind == None {
		return k.Shape(), false, nil
	}
	r, err := k.sortRange(c.N, kv)
	if err != nil {
		return nil, false, err
	}
	switch c.Kind {
	case BeginsWith:
		return r.beginsWith(c.Prefix)
	case Between:
		lo, err := r.encode(kv)
		if err != nil {
			return nil, false, err
		}
		hi, err := r.encode(hv)
		if err != nil {
			return nil, false, err
		}
		return r.between(r.prefix+lo, r.eqHigh(hi))
	}
	E, err := r.encode(kv)
	if err != nil {
		return nil, false, err
	}
	if c.Op == expr.OpEq && c.N == len(k.Fields) {
		return expr.KeyCmp(k.Attr, expr.OpEq, r.prefix+E+r.lit), false, nil // the whole key: lit ends it
	}
	return r.compare(c.Op, E)
}

// sortRange is a sort condition on a rendered sort key.
type sortRange struct {
	attr   string
	prefix string       // the rendered key up to the last named field's value
	lit    string       // the literal after that value ("" at the end of the template)
	last   *model.Field // the last named field
	place  *keys.Part   // its placeholder
}

// sortRange renders the prefix of a condition on k's n-th field from kv.
func (k Key) sortRange(n int, kv reflect.Value) (sortRange, error) {
	r := sortRange{attr: k.Attr, last: k.Fields[n-1], place: k.Places[n-1], lit: k.Tpl.LiteralAfter(n - 1)}
	b, err := k.Tpl.AppendPrefix(nil, k.Fields, kv, n-1)
	if err != nil {
		return r, &Error{Attr: k.Attr, Err: err}
	}
	r.prefix = string(b)
	return r, nil
}

// fail is the *Error of the last named field's value.
func (r sortRange) fail(err error) error {
	return &Error{Attr: r.attr, Err: &keys.RenderError{Field: r.last.Name, Err: err}}
}

// encode renders the last named field's value in v.
func (r sortRange) encode(v reflect.Value) (string, error) {
	if !r.last.Present(v) {
		return "", &Error{Attr: r.attr, Err: &keys.RenderError{Missing: []string{r.last.Name}}}
	}
	fv, _ := r.last.Get(v)
	b, err := r.place.AppendValue(nil, fv)
	if err != nil {
		return "", r.fail(err)
	}
	return string(b), nil
}

// eqHigh is the highest key whose last named field's value is E.
func (r sortRange) eqHigh(E string) string {
	if r.lit == "" {
		return r.prefix + E
	}
	return r.prefix + E + r.lit + keys.AboveAll
}

// between is the condition lo <= key <= hi; empty when lo > hi.
func (r sortRange) between(lo, hi string) (*expr.KeyCond, bool, error) {
	if lo > hi {
		return nil, true, nil
	}
	c := expr.KeyCmp(r.attr, expr.OpBetween, lo)
	c.V2 = &types.AttributeValueMemberS{Value: hi}
	return c, false, nil
}

// beginsWith is the condition "the last named field starts with prefix".
func (r sortRange) beginsWith(prefix string) (*expr.KeyCond, bool, error) {
	if k := r.last.Type.Kind(); r.place.Format == nil && k != reflect.String && !(k == reflect.Pointer && r.last.Type.Elem().Kind() == reflect.String) {
		return nil, false, &Error{Field: r.last.Name, Reason: fmt.Sprintf("BeginsWith needs a string field or a placeholder with a format, not %s", r.last.Type)}
	}
	if prefix == "" && r.prefix == "" {
		return nil, false, nil
	}
	b, err := r.place.AppendPrefix([]byte(r.prefix), prefix)
	if err != nil {
		return nil, false, r.fail(err)
	}
	return expr.KeyCmp(r.attr, expr.OpBeginsWith, string(b)), false, nil
}

// compare is the condition "the last named field op E" (E rendered); Eq
// is a prefix match, the sort key having fields after the last named one.
func (r sortRange) compare(op, E string) (*expr.KeyCond, bool, error) {
	P, L := r.prefix, r.lit
	switch op {
	case expr.OpEq:
		return expr.KeyCmp(r.attr, expr.OpBeginsWith, P+E+L), false, nil
	case expr.OpGe:
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpGe, E), false, nil
		}
		return r.between(P+E, P+keys.AboveAll)
	case expr.OpGt:
		// Escaped values continue with bytes from '%' up and delimiters
		// are below it: E+"%" is above E and at or below anything longer.
		above := E + "%"
		if r.place.Format != nil {
			above = keys.FormattedAbove(E, L)
		}
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpGe, above), false, nil
		}
		return r.between(P+above, P+keys.AboveAll)
	case expr.OpLe:
		if P == "" {
			return expr.KeyCmp(r.attr, expr.OpLe, r.eqHigh(E)), false, nil
		}
		return r.between(P, r.eqHigh(E))
	}
	switch {
	case P == "":
		return expr.KeyCmp(r.attr, expr.OpLt, E), false, nil
	case r.place.Format != nil:
		return r.between(P, P+keys.FormattedBelow(E))
	}
	return r.between(P, P+keys.Predecessor(E)+keys.AboveAll)
}

// clampUpper rewrites an upper bound longer than a sort key can be into one
// DynamoDB accepts that matches the same keys (keys.ClampBound).
func clampUpper(c *expr.KeyCond) {
	long := func(av types.AttributeValue) (string, bool) {
		if s, ok := av.(*types.AttributeValueMemberS); ok && len(s.Value) > Limit {
			return s.Value, true
		}
		return "", false
	}
	switch c.Op {
	case expr.OpBetween:
		if u, ok := long(c.V2); ok {
			c.V2 = &types.AttributeValueMemberS{Value: keys.ClampBound(u, Limit)}
		}
	case expr.OpLe, expr.OpLt:
		if u, ok := long(c.V1); ok {
			c.Op, c.V1 = expr.OpLe, &types.AttributeValueMemberS{Value: keys.ClampBound(u, Limit)}
		}
	}
}

// checkSize refuses a condition value over Limit, on field.
func checkSize(conds []expr.KeyCond, field string) error {
	for _, c := range conds {
		for _, av := range []types.AttributeValue{c.V1, c.V2} {
			n := 0
			switch x := av.(type) {
			case *types.AttributeValueMemberS:
				n = len(x.Value)
			case *types.AttributeValueMemberB:
				n = len(x.Value)
			}
			if n > Limit {
				return &Error{Attr: c.Attr, Err: fmt.Errorf("sort key condition value on %s is %d bytes, over DynamoDB's %d-byte limit", field, n, Limit)}
			}
		}
	}
	return nil
}
