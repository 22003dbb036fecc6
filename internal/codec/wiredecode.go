package codec

import (
	"reflect"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Keep lists the attributes a direct read keeps in an item's head
// besides decoding them (keys, the entity type: what the library reads of
// an item besides its fields): Values as attribute values, Present only
// as there (the value Here), and Lazy as attribute values only when the
// item is not complete (the index keys its missing fields are filled
// from): a complete item's are read past, never copied.
type Keep struct {
	Values, Present, Lazy []string

	byField atomic.Pointer[keepFields] // keeps of a plan's fields
}

// keepHow is what a Keep keeps of an attribute.
type keepHow uint8

const (
	keepNone keepHow = iota
	keepValue
	keepPresent
	keepLazy
)

// kept is what a Keep keeps of an attribute: how, and its index in the
// list of that name (Values, Present or Lazy).
type kept struct {
	how keepHow
	at  int
}

// keepFields is what a Keep keeps of each field of plan, and the names a
// read with both knows.
type keepFields struct {
	plan  *Plan
	at    []kept
	names *keyNames
}

// maxLazy is how many Lazy attributes a read records the place of; any
// further one is kept as a value.
const maxLazy = 8

// fields returns what k keeps of p's fields; nil when k is.
func (k *Keep) fields(p *Plan) *keepFields {
	if k == nil {
		return nil
	}
	if f := k.byField.Load(); f != nil && f.plan == p {
		return f
	}
	f := &keepFields{plan: p, at: make([]kept, len(p.fields))}
	for i := range p.fields {
		f.at[i] = k.keeps([]byte(p.fields[i].name))
	}
	f.names = newKeyNames(p, k, f.at)
	k.byField.Store(f)
	return f
}

// Here stands in a head for an attribute of Keep.Present.
var Here types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}

// keeps returns what k keeps of name.
func (k *Keep) keeps(name []byte) kept {
	if k == nil {
		return kept{}
	}
	for i, n := range k.Values {
		if n == string(name) {
			return kept{keepValue, i}
		}
	}
	for i, n := range k.Present {
		if n == string(name) {
			return kept{keepPresent, i}
		}
	}
	for i, n := range k.Lazy {
		if n == string(name) {
			if i >= maxLazy {
				return kept{keepValue, len(k.Values) + i}
			}
			return kept{keepLazy, i}
		}
	}
	return kept{}
}

// name is the name of an attribute k keeps as a value.
func (k *Keep) name(x kept) string {
	if x.at >= len(k.Values) {
		return k.Lazy[x.at-len(k.Values)]
	}
	return k.Values[x.at]
}

// Size is how many attributes k keeps at most, but for Lazy.
func (k *Keep) Size() int { return len(k.Values) + len(k.Present) }

// folded is an attribute whose name matches a field only ignoring case:
// decoded after the others, as Decode does.
type folded struct {
	field int
	name  string
	av    types.AttributeValue
}

// scalarFast decodes an S, N or BOOL straight from the text into a field
// of a fast shape, as decodeFast would decode its attribute value; false
// (d unchanged) for what it does not handle.
func (d *JSON) scalarFast(f *planField, base unsafe.Pointer) bool {
	if base == nil {
		return false
	}
	switch f.fkind {
	case fkString, fkInt64, fkInt32, fkInt16, fkInt8, fkUint64, fkUint32, fkUint16, fkUint8, fkFloat64, fkFloat32, fkBool, fkTime:
	default:
		return false
	}
	i, depth := d.i, d.depth
	kind, err := d.avKind()
	if err == nil && d.scalarInto(f, kind, base) && d.avEnd() == nil {
		return true
	}
	d.i, d.depth = i, depth
	return false
}

// scalarInto reads the value of an attribute value of kind into f.
func (d *JSON) scalarInto(f *planField, kind string, base unsafe.Pointer) bool {
	var av types.AttributeValue
	switch {
	case kind == "BOOL" && f.fkind == fkBool:
		b, err := d.Bool()
		if err != nil {
			return false
		}
		d.sc.b.Value = b
		av = &d.sc.b
	case kind == "S" && f.fkind == fkString, kind == "S" && f.fkind == fkTime:
		s, err := d.String()
		if err != nil {
			return false
		}
		d.sc.s.Value = s
		av = &d.sc.s
	case kind == "N" && f.fkind != fkTime && f.fkind != fkBool, kind == "S" && f.asString && f.fkind != fkTime && f.fkind != fkBool:
		raw, esc, err := d.rawString()
		if err != nil || esc {
			return false
		}
		// Numbers are parsed where they are, not copied (unless a string
		// field keeps them).
		t := unsafe.String(unsafe.SliceData(raw), len(raw))
		if f.fkind == fkString {
			t = d.copyString(raw)
		}
		if kind == "N" {
			d.sc.n.Value = t
			av = &d.sc.n
		} else {
			d.sc.s.Value = t
			av = &d.sc.s
		}
	default:
		return false
	}
	return decodeFast(f, av, base)
}

// listFast decodes an L into a nil []string field, an M into a nil
// map[string]string field, straight from the text when decodeFast would
// decode them; false (d unchanged) otherwise.
func (d *JSON) listFast(f *planField, base unsafe.Pointer) bool {
	if base == nil || f.fkind != fkStrings && f.fkind != fkStringMap {
		return false
	}
	i, depth := d.i, d.depth
	kind, err := d.avKind()
	switch {
	case err != nil:
	case kind == "L" && f.fkind == fkStrings && *(*[]string)(unsafe.Add(base, f.off)) == nil:
		if d.stringsFast((*[]string)(unsafe.Add(base, f.off))) && d.avEnd() == nil {
			return true
		}
	case kind == "M" && f.fkind == fkStringMap && *(*map[string]string)(unsafe.Add(base, f.off)) == nil:
		if d.stringMapFast((*map[string]string)(unsafe.Add(base, f.off))) && d.avEnd() == nil {
			return true
		}
	}
	d.i, d.depth = i, depth
	return false
}

// decodeJSONField decodes av, the value of attribute name, into field f
// (an error names the attribute); *v is the struct as a
// reflect.Value, made when first needed.
func (p *Plan) decodeJSONField(f *planField, name string, av types.AttributeValue, v *reflect.Value, base unsafe.Pointer) error {
	if f.fkind != fkNone && decodeFast(f, av, base) {
		return nil
	}
	if !v.IsValid() {
		*v = reflect.NewAt(p.typ, base).Elem()
	}
	if err := p.decodeField(f, av, *v, base); err != nil {
		return fieldErr(name, av, f.typ, err)
	}
	return nil
}

// exactField finds the field named k.
func (p *Plan) exactField(k []byte) (int, bool) {
	s := unsafe.String(unsafe.SliceData(k), len(k)) // not kept
	if p.exact != nil {
		return p.exact.find(s)
	}
	i, ok := p.byName[s]
	return i, ok
}

// foldField finds the field k names ignoring case, k not a field's exact
// name; extras are names known to match none.
func (p *Plan) foldField(k []byte, extras *[]string) (int, bool) {
	s := unsafe.String(unsafe.SliceData(k), len(k)) // not kept
	if extras != nil {
		for _, x := range *extras {
			if x == s {
				return 0, false
			}
		}
	}
	i, ok := p.fold(s)
	if !ok {
		p.learnExtras([]string{s}) // cloned there
	}
	return i, ok
}

// decodeJSONItem is DecodeJSON through the whole item, for the plans Decode
// does not decode field by field.
func (p *Plan) decodeJSONItem(d *JSON, base unsafe.Pointer, keep *Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	item, err := d.Item()
	if err != nil {
		return false, nil, err
	}
	hits := 0
	keepOf(item, keep, head)
	for i := range p.fields {
		if _, ok := item[p.fields[i].name]; ok {
			hits++
		}
	}
	return hits == len(p.fields), p.Decode(item, reflect.NewAt(p.typ, base).Elem()), nil
}

// UnmarshalJSON is UnmarshalInPlaceComplete of the item read from d into
// the value of type t at ptr (zero, on the heap), keeping the attributes
// keep names in head (see DecodeJSON). ferr is as UnmarshalInPlaceComplete
// returns it; err is malformed JSON.
func UnmarshalJSON(d *JSON, t reflect.Type, p *Plan, ptr unsafe.Pointer, keep *Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	if p == nil {
		item, err := d.Item()
		if err != nil {
			return false, nil, err
		}
		keepOf(item, keep, head)
		return false, decodeError(attributevalue.UnmarshalMap(item, reflect.NewAt(t, ptr).Interface())), nil
	}
	complete, ferr, err = p.DecodeJSON(d, ptr, keep, head)
	if p.whole || p.self {
		complete = false
	}
	return complete, decodeError(ferr), err
}

// StructPlan is the plan UnmarshalJSON takes for a value of type t: nil
// unless t is a struct.
func StructPlan(t reflect.Type) *Plan {
	if t.Kind() != reflect.Struct {
		return nil
	}
	return forValue(t)
}

// keepOf adds item's attributes keep names to head.
func keepOf(item map[string]types.AttributeValue, keep *Keep, head map[string]types.AttributeValue) {
	for k, av := range item {
		switch keep.keeps([]byte(k)).how {
		case keepValue, keepLazy:
			head[k] = av
		case keepPresent:
			head[k] = Here
		}
	}
}
