package codec

import (
	"encoding/binary"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DecodeJSON reads an item from d (positioned at its object) into the
// struct at base, of the plan's type and zero or being filled, exactly as
// Decode decodes the item the SDK would make of the same JSON: the fields
// the fast path handles straight from the text, the others through their
// attribute value. The attributes keep names are also added to head (its
// Lazy ones only when the item is not complete).
//
// A key with the text of a name the read knows (a field's, one keep
// names) is taken as read by comparing the text with the names of its
// first letter (keyNames), without being scanned, hashed and looked up.
//
// complete is as for decodeAtN. A field that does not decode is ferr (the
// item is read to its end, the rest of it not decoded); err is malformed
// JSON, after which d cannot go on.
func (p *Plan) DecodeJSON(d *JSON, base unsafe.Pointer, keep *Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	if p.whole || p.self || p.dupNames {
		return p.decodeJSONItem(d, base, keep, head)
	}
	r := itemRead{p: p, d: d, base: base, keep: keep, head: head, extras: p.extras.Load(), kf: keep.fields(p)}
	if err := d.Begin('{'); err != nil {
		return false, nil, err
	}
	for first := true; ; {
		if more, err := d.nextMember(&first); !more || err != nil {
			if err != nil {
				return false, nil, err
			}
			break
		}
		var e error
		if s := r.kf.match(d); s != nil {
			e = r.member(s, nil)
		} else {
			k, err := d.key()
			if err != nil {
				return false, nil, err
			}
			s := r.resolve(k)
			e = r.member(&s, k)
		}
		if e != nil {
			return false, nil, e
		}
	}
	return r.end()
}

// itemRead is the state of one DecodeJSON.
type itemRead struct {
	p            *Plan
	d            *JSON
	base         unsafe.Pointer
	keep         *Keep
	kf           *keepFields
	head         map[string]types.AttributeValue
	extras       *[]string
	v            reflect.Value
	later        []folded
	hits, ferrAt int
	ferr         error
	present      uint64
	lazy         [maxLazy]int // where each Lazy attribute's value is, plus one
}

// slot is what a read does with an attribute: decode field (-1: none),
// keep it as kept says, or decode it into field fold (-1: none) later.
type slot struct {
	name        string // in keyNames: the name, whose JSON text it is
	field, fold int
	kept        kept
	text        string // in keyNames: name":
	head, mask  uint64 // the first 8 bytes of text and which are text's
}

// keyNames are the slots of the names a read knows, by their first byte
// (ASCII): the fields' and those keep names, whose text is their name.
type keyNames [128][]slot

// newKeyNames returns p's and k's names (at being k.fields(p)).
func newKeyNames(p *Plan, k *Keep, at []kept) *keyNames {
	var names keyNames
	add := func(s slot) {
		if !literalName([]byte(s.name)) || s.name == "" || s.name[0] >= 128 {
			return
		}
		s.text = s.name + `":`
		var w [8]byte
		n := copy(w[:], s.text)
		s.head, s.mask = binary.LittleEndian.Uint64(w[:]), ^uint64(0)>>(64-8*n)
		names[s.name[0]] = append(names[s.name[0]], s)
	}
	for i, f := range p.fields {
		if j, _ := p.exactField([]byte(f.name)); j == i {
			add(slot{name: f.name, field: i, fold: -1, kept: at[i]})
		}
	}
	for _, list := range [][]string{k.Values, k.Present, k.Lazy} {
		for _, name := range list {
			if _, isField := p.exactField([]byte(name)); !isField {
				fold, ok := p.fold(name)
				if !ok {
					fold = -1
				}
				add(slot{name: name, field: -1, fold: fold, kept: k.keeps([]byte(name))})
			}
		}
	}
	return &names
}

// match reads a key whose text is one of kf's names and returns its slot;
// nil, d unchanged, for any other.
func (kf *keepFields) match(d *JSON) *slot {
	b := d.b[d.i:]
	if kf == nil || len(b) < 9 || b[0] != '"' || b[1] >= 128 {
		return nil
	}
	v, ss := binary.LittleEndian.Uint64(b[1:]), kf.names[b[1]]
	for i := range ss {
		s := &ss[i]
		if n := len(s.text); v&s.mask == s.head && (n <= 8 || len(b) > n && string(b[9:n+1]) == s.text[8:]) {
			d.i += n + 1
			return s
		}
	}
	return nil
}

// resolve is the slot of attribute k.
func (r *itemRead) resolve(k []byte) slot {
	s := slot{field: -1, fold: -1}
	i, isField := r.p.exactField(k)
	switch {
	case isField:
		s.field = i
		if r.kf != nil {
			s.kept = r.kf.at[i]
			return s
		}
	default:
		if j, ok := r.p.foldField(k, r.extras); ok {
			s.fold = j
		}
	}
	s.kept = r.keep.keeps(k)
	return s
}

// literalName reports whether a JSON string holding k can be k's bytes
// between quotes: valid UTF-8, no quote, backslash or control character.
func literalName(k []byte) bool {
	for _, c := range k {
		if c < ' ' || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(k)
}

// member reads the value of the attribute of slot s, at d; k is its name
// when s is not keyNames' (whose name it then holds).
func (r *itemRead) member(s *slot, k []byte) error {
	d := r.d
	switch x := s.kept; x.how {
	case keepPresent:
		if x.at < 64 {
			r.present |= 1 << x.at // in head only when !complete
		} else {
			r.head[r.keep.Present[x.at]] = Here
		}
	case keepLazy:
		r.lazy[x.at] = d.i + 1 // read when !complete
	case keepValue:
		name := r.keep.name(x)
		av, err := d.AV()
		if err != nil {
			return err
		}
		r.head[name] = av
		if s.field >= 0 {
			r.hits++
			f := &r.p.fields[s.field]
			r.fieldErr(s.field, r.p.decodeJSONField(f, f.name, av, &r.v, r.base))
		} else if s.fold >= 0 {
			r.later = append(r.later, folded{s.fold, name, av})
		}
		return nil
	}
	switch {
	case s.field >= 0:
		return r.field(s.field)
	case s.fold < 0:
		return d.skipAV() // as strict as the SDK's deserializer
	}
	name := s.name
	if k != nil {
		name = d.copyString(k)
	}
	av, err := d.AV()
	if err == nil {
		r.later = append(r.later, folded{s.fold, name, av})
	}
	return err
}

// field decodes field i's value at d.
func (r *itemRead) field(i int) error {
	d, f := r.d, &r.p.fields[i]
	r.hits++
	if d.direct(f, r.base) || d.scalarFast(f, r.base) || d.listFast(f, r.base) {
		return nil
	}
	av, fresh, err := d.scalarAV(&d.sc)
	if err != nil {
		return err
	}
	if f.fkind != fkNone && decodeFast(f, av, r.base) {
		return nil
	}
	r.fieldErr(i, r.p.decodeJSONField(f, f.name, own(av, fresh), &r.v, r.base))
	return nil
}

// fieldErr records e, field i's error: Decode's error is its first
// field's that fails, in field order.
func (r *itemRead) fieldErr(i int, e error) {
	if e != nil && (r.ferr == nil || i < r.ferrAt) {
		r.ferr, r.ferrAt = e, i
	}
}

// end decodes the folded attributes and completes the head.
func (r *itemRead) end() (complete bool, ferr, err error) {
	for _, x := range r.later {
		if r.ferr == nil { // named as the item names it, as Decode does
			r.ferr = r.p.decodeJSONField(&r.p.fields[x.field], x.name, x.av, &r.v, r.base)
		}
	}
	complete = r.hits == len(r.p.fields)
	if !complete {
		err = r.d.keepIncomplete(r.keep, r.present, &r.lazy, r.head)
	}
	return complete, r.ferr, err
}

// keepIncomplete adds to head what keep keeps of an incomplete item: the
// Present attributes of bits present, the Lazy ones at their places.
func (d *JSON) keepIncomplete(keep *Keep, present uint64, lazy *[maxLazy]int, head map[string]types.AttributeValue) error {
	if keep == nil {
		return nil
	}
	for at, name := range keep.Present {
		if at < 64 && present&(1<<at) != 0 {
			head[name] = Here
		}
	}
	end := d.i
	defer func() { d.i = end }()
	for at, off := range lazy {
		if off == 0 {
			continue
		}
		d.i = off - 1
		av, err := d.AV()
		if err != nil {
			return err
		}
		head[keep.Lazy[at]] = av
	}
	return nil
}
