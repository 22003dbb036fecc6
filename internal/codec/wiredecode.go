package codec

import (
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Keep lists the attributes a direct read keeps as attribute values
// besides decoding them (keys, the entity type: what the library reads of
// an item besides its fields).
type Keep interface {
	Keeps(name []byte) bool
}

// KeepNames is a Keep of a few names.
type KeepNames []string

// Keeps reports whether name is one of k.
func (k KeepNames) Keeps(name []byte) bool {
	for _, n := range k {
		if n == string(name) {
			return true
		}
	}
	return false
}

// folded is an attribute whose name matches a field only ignoring case:
// decoded after the others, as Decode does.
type folded struct {
	field int
	name  string
	av    types.AttributeValue
}

// DecodeJSON reads an item from d (positioned at its object) into the
// struct at base, of the plan's type and zero or being filled, exactly as
// Decode decodes the item the SDK would make of the same JSON: the fields
// the fast path handles straight from the text, the others through their
// attribute value. The attributes keep names are also added to head.
//
// complete is as for decodeAtN. A field that does not decode is ferr (the
// item is read to its end, the rest of it not decoded); err is malformed
// JSON, after which d cannot go on.
func (p *Plan) DecodeJSON(d *JSON, base unsafe.Pointer, keep Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	if p.whole || p.self || p.dupNames {
		return p.decodeJSONItem(d, base, keep, head)
	}
	var (
		sc     scalar
		v      reflect.Value
		later  []folded
		hits   int
		extras = p.extras.Load()
	)
	if err := d.Begin('{'); err != nil {
		return false, nil, err
	}
	for first := true; ; {
		k, ok, err := d.NextKey(&first)
		if err != nil {
			return false, nil, err
		}
		if !ok {
			break
		}
		i, isField := p.exactField(k)
		if keep != nil && keep.Keeps(k) {
			name := d.copyString(k)
			if isField {
				name = p.fields[i].name
			}
			av, err := d.AV()
			if err != nil {
				return false, nil, err
			}
			head[name] = av
			if isField {
				hits++
				if ferr == nil {
					ferr = p.decodeJSONField(&p.fields[i], av, &v, base)
				}
			} else if j, ok := p.foldField(k, extras); ok {
				later = append(later, folded{j, name, av})
			}
			continue
		}
		if !isField {
			j, ok := p.foldField(k, extras)
			if !ok {
				if err := d.Skip(); err != nil {
					return false, nil, err
				}
				continue
			}
			name := d.copyString(k)
			av, err := d.AV()
			if err != nil {
				return false, nil, err
			}
			later = append(later, folded{j, name, av})
			continue
		}
		hits++
		av, fresh, err := d.scalarAV(&sc)
		if err != nil {
			return false, nil, err
		}
		f := &p.fields[i]
		if ferr != nil || f.fkind != fkNone && decodeFast(f, av, base) {
			continue
		}
		ferr = p.decodeJSONField(f, own(av, fresh), &v, base)
	}
	for _, x := range later {
		if ferr == nil {
			if e := p.decodeJSONField(&p.fields[x.field], x.av, &v, base); e != nil {
				ferr = fieldErr(x.name, x.av, p.fields[x.field].typ, e)
			}
		}
	}
	return hits == len(p.fields), ferr, nil
}

// decodeJSONField decodes av into field f; *v is the struct as a
// reflect.Value, made when first needed.
func (p *Plan) decodeJSONField(f *planField, av types.AttributeValue, v *reflect.Value, base unsafe.Pointer) error {
	if f.fkind != fkNone && decodeFast(f, av, base) {
		return nil
	}
	if !v.IsValid() {
		*v = reflect.NewAt(p.typ, base).Elem()
	}
	if err := p.decodeField(f, av, *v, base); err != nil {
		return fieldErr(f.name, av, f.typ, err)
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
func (p *Plan) decodeJSONItem(d *JSON, base unsafe.Pointer, keep Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
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
func UnmarshalJSON(d *JSON, t reflect.Type, ptr unsafe.Pointer, keep Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	if t.Kind() != reflect.Struct {
		item, err := d.Item()
		if err != nil {
			return false, nil, err
		}
		keepOf(item, keep, head)
		return false, decodeError(attributevalue.UnmarshalMap(item, reflect.NewAt(t, ptr).Interface())), nil
	}
	p := forValue(t)
	complete, ferr, err = p.DecodeJSON(d, ptr, keep, head)
	if p.whole || p.self {
		complete = false
	}
	return complete, decodeError(ferr), err
}

// keepOf adds item's attributes keep names to head.
func keepOf(item map[string]types.AttributeValue, keep Keep, head map[string]types.AttributeValue) {
	if keep == nil {
		return
	}
	for k, av := range item {
		if keep.Keeps([]byte(k)) {
			head[k] = av
		}
	}
}
