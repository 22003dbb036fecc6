package codec

import (
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
// Items of one kind come with their attributes in one order: each read
// learns the order of the items it reads (a layout, per plan and Keep),
// and a key that is where the layout says, byte for byte, is taken as
// read without being scanned, hashed and looked up again.
//
// complete is as for decodeAtN. A field that does not decode is ferr (the
// item is read to its end, the rest of it not decoded); err is malformed
// JSON, after which d cannot go on.
func (p *Plan) DecodeJSON(d *JSON, base unsafe.Pointer, keep *Keep, head map[string]types.AttributeValue) (complete bool, ferr, err error) {
	if p.whole || p.self || p.dupNames {
		return p.decodeJSONItem(d, base, keep, head)
	}
	r := itemRead{p: p, d: d, base: base, keep: keep, head: head, extras: p.extras.Load(), kf: keep.fields(p)}
	var lay *layout
	if r.kf != nil {
		lay = r.kf.layout.Load()
	}
	if err := d.Begin('{'); err != nil {
		return false, nil, err
	}
	var (
		starts        [maxLayout]int32 // where each key is
		n, pos, fresh int              // keys read, the layout's next, keys not in it
	)
	for first := true; ; {
		if more, err := d.nextMember(&first); !more || err != nil {
			if err != nil {
				return false, nil, err
			}
			break
		}
		if n < maxLayout {
			starts[n] = int32(d.i)
		}
		n++
		var e error
		if lay != nil && pos < len(lay.slots) && d.matchKey(lay.slots[pos].name) {
			pos++
			e = r.member(&lay.slots[pos-1], nil)
		} else {
			k, err := d.key()
			if err != nil {
				return false, nil, err
			}
			fresh++
			pos = lay.after(k, pos)
			s := r.resolve(k)
			e = r.member(&s, k)
		}
		if e != nil {
			return false, nil, e
		}
	}
	if fresh > 0 && (lay == nil || fresh*4 > n) && r.kf != nil {
		r.kf.layout.Store(r.learn(starts[:min(n, maxLayout)]))
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
	name        string // in a layout: the name, whose JSON text it is
	field, fold int
	kept        kept
}

// layout is the order of the attributes of the items of a plan and Keep,
// as the last item read that did not match it had them.
type layout struct{ slots []slot }

// maxLayout is how many attributes a layout holds at most.
const maxLayout = 64

// after is where lay goes on after key k, read where pos was expected: after
// k when lay has it further on, pos otherwise.
func (lay *layout) after(k []byte, pos int) int {
	if lay == nil {
		return pos
	}
	for j := pos; j < len(lay.slots); j++ {
		if lay.slots[j].name == string(k) {
			return j + 1
		}
	}
	return pos
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

// learn is the layout of the keys at starts (each "name":), those whose
// text is their name.
func (r *itemRead) learn(starts []int32) *layout {
	d := r.d
	end := d.i
	defer func() { d.i = end }()
	lay := &layout{slots: make([]slot, 0, len(starts))}
	for _, at := range starts {
		d.i = int(at)
		k, err := d.key()
		if err != nil || !literalName(k) || d.i-int(at) != len(k)+3 {
			continue
		}
		s := r.resolve(k)
		s.name = string(k)
		lay.slots = append(lay.slots, s)
	}
	return lay
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
// when s is not a layout's (whose name it then holds).
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
			r.fieldErr(s.field, r.p.decodeJSONField(&r.p.fields[s.field], av, &r.v, r.base))
		} else if s.fold >= 0 {
			r.later = append(r.later, folded{s.fold, name, av})
		}
		return nil
	}
	switch {
	case s.field >= 0:
		return r.field(s.field)
	case s.fold < 0:
		return d.Skip()
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
	r.fieldErr(i, r.p.decodeJSONField(f, own(av, fresh), &r.v, r.base))
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
		if r.ferr == nil {
			if e := r.p.decodeJSONField(&r.p.fields[x.field], x.av, &r.v, r.base); e != nil {
				r.ferr = fieldErr(x.name, x.av, r.p.fields[x.field].typ, e)
			}
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
