package codec

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
)

// Plan is the compiled codec of one struct type, for values that
// attributevalue would see either as addressable (reached through a pointer)
// or not (passed by value). Plans are built once per type and cached; they
// are safe for concurrent use.
type Plan struct {
	typ  reflect.Type
	addr bool
	// whole delegates the struct to attributevalue (see the package doc).
	whole bool
	// self is set when attributevalue treats the type itself specially
	// (a Marshaler, an Unmarshaler, a time): as a whole item it is then
	// delegated; as a value inside an item, the plan's encoders handle it.
	self bool

	fields []planField
	byName map[string]int
	// lower maps ASCII-lowercased names to the first field with that
	// name, answering attributevalue's case-insensitive lookup when every
	// name is ASCII (asciiNames).
	lower      map[string]int
	asciiNames bool
	exact      *nameTable // nil: use byName
	folded     *nameTable // nil: use lower / the scan

	// extras holds item keys seen before that match no field even
	// ignoring case (see decode).
	extras atomic.Pointer[[]string]

	sHint, nHint int // attribute values of each kind at the top level

	// dupNames is set when two fields share a name (the later one's value
	// is the one stored): EncodeSized then sizes the finished item.
	dupNames bool

	// flat is set when every field has a fast shape (see decodeFast):
	// decoding then needs no reflection on the struct, and Unmarshal does
	// not make its target escape to the heap.
	flat bool
}

type planField struct {
	name  string
	index []int
	deep  bool // index has more than one step
	enc   encFunc
	dec   decFunc
	typ   reflect.Type

	// fkind, when not fkNone, is the shape of a field at off from the
	// struct's address (reached without pointers) that decodeFast decodes
	// for common values.
	fkind    fastKind
	asString bool // the string option (numbers may come as S)
	off      uintptr

	// ekind, when not fkNone, is the shape of the field at off that
	// encodeFast encodes under the options eopts, as enc would.
	ekind fastKind
	eopts encOpts

	// nameSize and nameBad are itemsize.String(name): what the attribute
	// name adds to the item's size, and whether it is not valid UTF-8.
	nameSize int
	nameBad  bool
}

type planKey struct {
	t    reflect.Type
	addr bool
}

type encKey struct {
	t    reflect.Type
	tg   tag
	addr bool
}

type decKey struct {
	t  reflect.Type
	tg tag
}

var (
	plans   sync.Map // planKey → *Plan
	buildMu sync.Mutex
)

// builder holds the state of one compilation: plans and encoders being
// built (recursive types refer to them before they are complete).
type builder struct {
	plans   map[planKey]*Plan
	encMemo map[encKey]*encFunc
	decMemo map[decKey]*decFunc
}

// buildLocked runs fn with a fresh builder under the build lock and
// publishes the plans it made.
func buildLocked(fn func(b *builder)) {
	buildMu.Lock()
	defer buildMu.Unlock()
	b := &builder{plans: map[planKey]*Plan{}, encMemo: map[encKey]*encFunc{}, decMemo: map[decKey]*decFunc{}}
	fn(b)
	for k, p := range b.plans {
		plans.LoadOrStore(k, p)
	}
}

// For returns the plan of struct type t for values passed by value, as
// attributevalue.MarshalMap(v) sees them (ForAddressable for values reached
// through a pointer). It panics if t is not a struct type.
func For(t reflect.Type) *Plan { return planFor(t, false) }

// ForAddressable returns the plan of struct type t for values attributevalue
// sees as addressable, as in attributevalue.MarshalMap(&v): pointer-receiver
// Marshalers of field types are then called.
func ForAddressable(t reflect.Type) *Plan { return planFor(t, true) }

func planFor(t reflect.Type, addr bool) *Plan {
	if t.Kind() != reflect.Struct {
		panic("codec: " + t.String() + " is not a struct type")
	}
	key := planKey{t, addr}
	if p, ok := plans.Load(key); ok {
		return p.(*Plan)
	}
	buildLocked(func(b *builder) { b.plan(t, addr) })
	p, _ := plans.Load(key)
	return p.(*Plan)
}

// plan returns the (possibly still incomplete) plan of struct type t.
func (b *builder) plan(t reflect.Type, addr bool) *Plan {
	key := planKey{t, addr}
	if p, ok := plans.Load(key); ok {
		return p.(*Plan)
	}
	if p, ok := b.plans[key]; ok {
		return p
	}
	p := &Plan{typ: t, addr: addr, byName: map[string]int{}, asciiNames: true, flat: true}
	b.plans[key] = p
	p.self = t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		reflect.PointerTo(t).Implements(unmarshalerType) || isTimeType(t)
	fs := visibleFields(t)
	for _, f := range fs {
		if f.exotic {
			p.whole, p.flat = true, false
			return p
		}
	}
	if p.self {
		p.flat = false
	}
	for _, f := range fs {
		pf := planField{name: f.Name, index: f.Index, deep: len(f.Index) > 1}
		ft := f.Type
		pf.enc = b.full(ft, f.tag, addr)
		pf.dec = b.dec(ft, f.tag.decodeTag())
		pf.typ = ft
		if off, ok := fieldOffset(t, f.Index); ok {
			pf.off = off
			pf.fkind = fastKindOf(ft, f.tag.decodeTag())
			pf.asString = f.tag.decodeTag().AsString
			pf.ekind, pf.eopts = encFastKindOf(ft, f.tag)
		}
		if pf.fkind == fkNone {
			p.flat = false
		}
		p.fields = append(p.fields, pf)
		switch {
		case plainString(ft) || isTimeType(ft) && !hasMarshaler(ft) && !f.timeForm().Number():
			p.sHint++
		case IsNumberKind(ft.Kind()) && !hasMarshaler(ft) || isTimeType(ft) && f.timeForm().Number():
			p.nHint++
		}
	}
	for i, f := range p.fields {
		if _, ok := p.byName[f.name]; !ok {
			p.byName[f.name] = i
		} else {
			p.dupNames = true
		}
		p.fields[i].nameSize, p.fields[i].nameBad = itemsize.String(f.name)
		if !isASCII(f.name) {
			p.asciiNames = false
		}
	}
	names := make([]string, len(p.fields))
	for i, f := range p.fields {
		names[i] = f.name
	}
	p.exact = newNameTable(names, false)
	if p.asciiNames {
		p.folded = newNameTable(names, true)
		p.lower = map[string]int{}
		for i, f := range p.fields {
			l := strings.ToLower(f.name)
			if _, ok := p.lower[l]; !ok {
				p.lower[l] = i
			}
		}
	}
	return p
}

// IsNumberKind reports whether k is a Go integer or float kind: a field
// of such a kind is stored as a DynamoDB number.
func IsNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Type returns the struct type the plan is for.
func (p *Plan) Type() reflect.Type { return p.typ }

// Encode returns the item for struct value v (of the plan's type; it need
// not be addressable, but reading is faster when it is): exactly
// attributevalue.MarshalMap(v.Interface()) for a plan from [For], or
// MarshalMap of a pointer to v for one from [ForAddressable]. extra is room
// to reserve in the map for attributes the caller adds.
func (p *Plan) Encode(v reflect.Value, extra int) (map[string]types.AttributeValue, error) {
	return p.encodeTop(v, extra, false)
}

// encodeTop is Encode; with check set it also refuses, with an
// *InvalidError, items holding numbers or sets DynamoDB would refuse.
func (p *Plan) encodeTop(v reflect.Value, extra int, check bool) (map[string]types.AttributeValue, error) {
	if p.whole || p.self {
		return p.avMarshalChecked(v, check)
	}
	st := getState(p.sHint, p.nHint)
	m, err := p.encode(st, v, extra)
	if err != nil {
		st.release()
		if keepErr(err) {
			return nil, err
		}
		// attributevalue says what went wrong, in its own words.
		return p.avMarshalChecked(v, check)
	}
	st.resolve()
	if check && len(st.verify) > 0 {
		if err := st.refused(m); err != nil {
			st.release()
			return nil, err
		}
	}
	st.release()
	return m, nil
}

// avMarshalChecked is avMarshal that, with check set, refuses items
// holding numbers or sets DynamoDB would refuse.
func (p *Plan) avMarshalChecked(v reflect.Value, check bool) (map[string]types.AttributeValue, error) {
	m, err := p.avMarshal(v)
	if err == nil && check {
		if err := checkItem(m, false); err != nil {
			return nil, err
		}
	}
	return m, err
}

// EncodeSized is Encode that also returns what itemsize.Scan returns for
// the item: its size and the name of an attribute holding invalid UTF-8
// ("" when there is none; the smallest such name, see itemsize.Scan),
// computed from the attribute values as they are made rather than by
// walking the item's map. Each field's value is sized on its own (its name's
// size and validity are computed once, with the plan); items the plan does
// not build itself (delegated to attributevalue) are scanned whole.
func (p *Plan) EncodeSized(v reflect.Value, extra int) (m map[string]types.AttributeValue, size int, invalid string, err error) {
	return p.encodeSized(v, extra, nil, false)
}

// attrSized is what EncodeSized found for one attribute (for tests):
// inline is set when the value's encoder sized it.
type attrSized struct {
	name    string
	size    int
	invalid bool
	inline  bool
}

// encodeSized is EncodeSized that, when trace is not nil, appends to it
// each attribute's size and verdict as it was counted (nothing when the
// item was scanned whole); with check set, items holding numbers or sets
// DynamoDB would refuse are an *InvalidError.
func (p *Plan) encodeSized(v reflect.Value, extra int, trace *[]attrSized, check bool) (m map[string]types.AttributeValue, size int, invalid string, err error) {
	if p.whole || p.self || p.dupNames {
		if m, err = p.encodeTop(v, extra, check); err != nil {
			return nil, 0, "", err
		}
		size, invalid = itemsize.Scan(m)
		return m, size, invalid, nil
	}
	st := getState(p.sHint, p.nHint)
	st.sizing, st.trace = true, trace
	m, err = p.encodeFields(st, v, extra, true)
	if err != nil {
		st.release()
		if keepErr(err) {
			return nil, 0, "", err
		}
		if m, err = p.avMarshalChecked(v, check); err != nil {
			return nil, 0, "", err
		}
		size, invalid = itemsize.Scan(m)
		return m, size, invalid, nil
	}
	st.resolve()
	if check && len(st.verify) > 0 {
		if err := st.refused(m); err != nil {
			st.release()
			return nil, 0, "", err
		}
	}
	// The values their encoders did not size, now that their texts are set.
	for _, a := range st.top {
		n, b := a.size()
		st.size += n
		st.bad(a.f.name, b)
		if st.trace != nil {
			*st.trace = append(*st.trace, attrSized{a.f.name, n, b, false})
		}
	}
	size, invalid = st.size, st.badName
	st.release()
	return m, size, invalid, nil
}

// sameAV reports whether a and b are the same interface value, word for
// word (the same dynamic type and the same pointer): for the pointer types
// that implement AttributeValue, a == b without the runtime call.
func sameAV(a, b types.AttributeValue) bool {
	x := (*[2]unsafe.Pointer)(unsafe.Pointer(&a))
	y := (*[2]unsafe.Pointer)(unsafe.Pointer(&b))
	return x[0] == y[0] && x[1] == y[1]
}

// topAttr is one attribute of an item being encoded: the field and the
// value stored for it.
type topAttr struct {
	f  *planField
	av types.AttributeValue
}

// size is itemsize.Attr(a.f.name, a.av), with the name's part computed
// once per plan and the common values (S, N) sized without the general
// walk. The values' deferred texts must be resolved.
func (a topAttr) size() (int, bool) {
	n, bad := a.f.nameSize, a.f.nameBad
	switch av := a.av.(type) {
	case *types.AttributeValueMemberS:
		k, b := itemsize.String(av.Value)
		return n + k, bad || b
	case *types.AttributeValueMemberN:
		return n + itemsize.Number(av.Value), bad
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return n + 1, bad
	}
	k, b := itemsize.ValueChecked(a.av)
	return n + k, bad || b
}

func (p *Plan) avMarshal(v reflect.Value) (map[string]types.AttributeValue, error) {
	if p.addr && v.CanAddr() {
		return attributevalue.MarshalMap(v.Addr().Interface())
	}
	if p.addr {
		c := reflect.New(p.typ)
		c.Elem().Set(v)
		return attributevalue.MarshalMap(c.Interface())
	}
	return attributevalue.MarshalMap(v.Interface())
}

func (p *Plan) encode(st *encState, v reflect.Value, extra int) (map[string]types.AttributeValue, error) {
	return p.encodeFields(st, v, extra, false)
}

// encodeFields is encode; with top set (EncodeSized) it also counts each
// stored attribute's size and UTF-8 verdict in st when the value's encoder
// sized it, and otherwise records the attribute in st.top, to be sized
// once the item's texts are set.
//
// When v is addressable (Marshal passes *v), the fields of a fast shape
// (planField.ekind) are encoded by encodeFast, read at their offset from
// the struct's address: without reflect.Value.Field and the call through
// the field's encoder.
func (p *Plan) encodeFields(st *encState, v reflect.Value, extra int, top bool) (map[string]types.AttributeValue, error) {
	m := make(map[string]types.AttributeValue, len(p.fields)+extra)
	var base unsafe.Pointer
	if v.CanAddr() {
		base = v.Addr().UnsafePointer()
	}
	for i := range p.fields {
		f := &p.fields[i]
		if top {
			st.szAV = nil
		}
		var av types.AttributeValue
		var err error
		if base != nil && f.ekind != fkNone {
			av, err = encodeFast(st, f, base)
		} else {
			var fv reflect.Value
			if f.deep {
				var ok bool
				if fv, ok = fieldForEncode(v, f.index); !ok {
					continue
				}
			} else {
				fv = v.Field(f.index[0])
			}
			av, err = f.enc(st, fv)
		}
		if err != nil {
			return nil, err
		}
		if av != nil {
			m[f.name] = av
			if top {
				if sameAV(av, st.szAV) {
					// Sized by its encoder.
					st.size += f.nameSize + st.szN
					if f.nameBad || st.szBad {
						st.bad(f.name, true)
					}
					if st.trace != nil {
						*st.trace = append(*st.trace, attrSized{f.name, f.nameSize + st.szN, f.nameBad || st.szBad, true})
					}
				} else {
					st.top = append(st.top, topAttr{f, av})
				}
			}
		}
	}
	return m, nil
}

// fieldForEncode is attributevalue's encoderFieldByIndex: false when an
// embedded pointer on the way is nil.
func fieldForEncode(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// fieldForDecode is attributevalue's decoderFieldByIndex: embedded pointers
// on the way are allocated.
func fieldForDecode(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// EncodeAttr returns the attribute named attr of the item for v, as Encode
// would store it, or nil when the item would not hold it. A value DynamoDB
// would refuse or alter (see [Check]: invalid UTF-8 included, as every
// path of the library refuses it) is an *InvalidError naming attr.
func (p *Plan) EncodeAttr(v reflect.Value, attr string) (types.AttributeValue, error) {
	av, err := p.encodeAttr(v, attr)
	if err != nil || av == nil {
		return av, err
	}
	if r := reason(av, true); r != "" {
		return nil, &InvalidError{Attr: attr, Reason: r}
	}
	return av, nil
}

func (p *Plan) encodeAttr(v reflect.Value, attr string) (types.AttributeValue, error) {
	if p.whole || p.self {
		m, err := p.avMarshal(v)
		return m[attr], err
	}
	i, ok := p.byName[attr]
	if !ok {
		return nil, nil
	}
	f := &p.fields[i]
	fv, ok := fieldForEncode(v, f.index)
	if !ok {
		return nil, nil
	}
	st := getState(1, 1)
	av, err := f.enc(st, fv)
	if err != nil {
		st.release()
		if keepErr(err) {
			return nil, err
		}
		m, err := p.avMarshal(v)
		return m[attr], err
	}
	st.finish()
	return av, nil
}

// AttrIndex returns the index path (for reflect.Value.FieldByIndex) of the
// Go field stored as attribute attr, and false when no field is.
func (p *Plan) AttrIndex(attr string) ([]int, bool) {
	if p.whole {
		for _, f := range visibleFields(p.typ) {
			if f.Name == attr {
				return slices.Clone(f.Index), true
			}
		}
		return nil, false
	}
	i, ok := p.byName[attr]
	if !ok {
		return nil, false
	}
	return slices.Clone(p.fields[i].index), true
}

// MayHold reports whether the item Marshal makes of a value of struct type
// t can hold attribute attr at its top level: when a field is stored under
// that name, and always when attributevalue encodes the type as a whole
// (a Marshaler), whose item is not known in advance.
func MayHold(t reflect.Type, attr string) bool {
	if t.Kind() != reflect.Struct {
		return true
	}
	p := forValue(t)
	if p.whole || p.self {
		return true
	}
	_, ok := p.byName[attr]
	return ok
}

// HasField reports whether attribute attr is stored from the Go field at
// index (a reflect.Value.FieldByIndex path).
func (p *Plan) HasField(attr string, index []int) bool {
	if p.whole || p.self {
		idx, ok := p.AttrIndex(attr)
		return ok && slices.Equal(idx, index)
	}
	i, ok := p.byName[attr]
	return ok && slices.Equal(p.fields[i].index, index)
}

// Decode decodes item into v, an addressable struct value of the plan's
// type: exactly attributevalue.UnmarshalMap(item, v.Addr().Interface()).
// Like attributevalue, it sets only the fields the item has and shares the
// item's strings.
func (p *Plan) Decode(item map[string]types.AttributeValue, v reflect.Value) error {
	if p.whole || p.self {
		return attributevalue.UnmarshalMap(item, v.Addr().Interface())
	}
	return p.decode(item, v)
}

func (p *Plan) decode(item map[string]types.AttributeValue, v reflect.Value) error {
	var base unsafe.Pointer
	if v.CanAddr() {
		base = v.Addr().UnsafePointer()
	}
	return p.decodeAt(item, v, base)
}

// decodeAt decodes item into the struct v whose address is base (nil when v
// is not addressable). For a flat plan v may be the zero Value: the struct
// is then reached through base alone, and base does not escape.
func (p *Plan) decodeAt(item map[string]types.AttributeValue, v reflect.Value, base unsafe.Pointer) error {
	_, err := p.decodeAtN(item, v, base)
	return err
}

// decodeAtN is decodeAt that also reports whether the item held an
// attribute of exactly each field's name: complete, every field was set.
func (p *Plan) decodeAtN(item map[string]types.AttributeValue, v reflect.Value, base unsafe.Pointer) (complete bool, err error) {
	// Look the fields up in the item, as hand-written code does: cheaper
	// than walking the item's map. attributevalue walks the item and also
	// matches keys to field names ignoring case, so the keys that are not
	// exact names must then be accounted for.
	hits := 0
	for i := range p.fields {
		f := &p.fields[i]
		av, ok := item[f.name]
		if !ok {
			continue
		}
		hits++
		if base != nil && f.fkind != fkNone && decodeFast(f, av, base) {
			continue
		}
		if err := p.decodeField(f, av, v, base); err != nil {
			return false, fieldErr(f.name, av, f.typ, err)
		}
	}
	complete = hits == len(p.fields)
	if hits == len(item) {
		return complete, nil
	}
	// The other keys are usually the same few (keys, entity type, index
	// keys), known to match no field even ignoring case.
	if known := p.extras.Load(); known != nil {
		n := hits
		for _, k := range *known {
			if _, ok := item[k]; ok {
				n++
			}
		}
		if n == len(item) {
			return complete, nil
		}
	}
	var learned []string
	for k, av := range item {
		if p.isField(k) {
			continue
		}
		i, ok := p.fold(k)
		if !ok {
			learned = append(learned, k)
			continue
		}
		if err := p.decodeField(&p.fields[i], av, v, base); err != nil {
			return false, fieldErr(k, av, p.fields[i].typ, err)
		}
	}
	p.learnExtras(learned)
	return complete, nil
}

func (p *Plan) isField(k string) bool {
	if p.exact != nil {
		_, ok := p.exact.find(k)
		return ok
	}
	_, ok := p.byName[k]
	return ok
}

func (p *Plan) decodeField(f *planField, av types.AttributeValue, v reflect.Value, base unsafe.Pointer) error {
	if base != nil && f.fkind != fkNone {
		if decodeFast(f, av, base) {
			return nil
		}
		if !v.IsValid() {
			return decodeFieldCopy(f, av, unsafe.Add(base, f.off))
		}
	}
	var fv reflect.Value
	if f.deep {
		fv = fieldForDecode(v, f.index)
	} else {
		fv = v.Field(f.index[0])
	}
	return f.dec(av, fv)
}

// decodeFieldCopy runs the reflective decoder of fast field f (whose value
// is at p) on a copy of the field and copies the result back. Decoding a
// value of these shapes reaches nothing but the value itself, so this is
// decoding in place, without p escaping.
func decodeFieldCopy(f *planField, av types.AttributeValue, p unsafe.Pointer) error {
	c := reflect.New(f.typ)
	cp := c.UnsafePointer()
	copyFast(f.fkind, cp, p)
	err := f.dec(av, c.Elem())
	copyFast(f.fkind, p, cp)
	return err
}

// maxExtras bounds the remembered non-field keys, so that items with
// arbitrary keys cannot grow a plan.
const maxExtras = 16

// learnExtras remembers keys that match no field.
func (p *Plan) learnExtras(keys []string) {
	if len(keys) == 0 {
		return
	}
	for {
		old := p.extras.Load()
		var cur []string
		if old != nil {
			cur = *old
		}
		next := slices.Clone(cur)
		for _, k := range keys {
			if len(next) < maxExtras && !slices.Contains(next, k) {
				next = append(next, strings.Clone(k))
			}
		}
		if len(next) == len(cur) || p.extras.CompareAndSwap(old, &next) {
			return
		}
	}
}

// fold is the case-insensitive half of attributevalue's FieldByName: the
// first field whose name equals k under Unicode case folding.
func (p *Plan) fold(k string) (int, bool) {
	if p.asciiNames && isASCII(k) {
		if p.folded != nil {
			return p.folded.findFold(k)
		}
		var buf [64]byte
		if len(k) <= len(buf) {
			b := buf[:len(k)]
			for i := 0; i < len(k); i++ {
				c := k[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b[i] = c
			}
			i, ok := p.lower[string(b)]
			return i, ok
		}
	}
	for i, f := range p.fields {
		if strings.EqualFold(f.name, k) {
			return i, true
		}
	}
	return 0, false
}

// Marshal returns the item for *v: exactly attributevalue.MarshalMap(*v),
// or an *InvalidError when it holds a number or a set DynamoDB would
// refuse (see [Check]; UTF-8 is left to [MarshalSized], whose sizing
// checks it for free). extra is room to reserve in the map for attributes
// the caller adds.
func Marshal[T any](v *T, extra int) (map[string]types.AttributeValue, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		m, err := attributevalue.MarshalMap(*v)
		if err == nil {
			err = checkItem(m, false)
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return forValue(t).encodeTop(reflect.ValueOf(v).Elem(), extra, true)
}

// MarshalSized is Marshal that also returns what itemsize.Scan returns for
// the item (see Plan.EncodeSized): its size and the attribute holding
// invalid UTF-8, if any.
func MarshalSized[T any](v *T, extra int) (map[string]types.AttributeValue, int, string, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		m, err := attributevalue.MarshalMap(*v)
		if err == nil {
			err = checkItem(m, false)
		}
		if err != nil {
			return nil, 0, "", err
		}
		size, invalid := itemsize.Scan(m)
		return m, size, invalid, nil
	}
	return forValue(t).encodeSized(reflect.ValueOf(v).Elem(), extra, nil, true)
}

// Unmarshal decodes item into *out: exactly attributevalue.UnmarshalMap(item, out).
//
// out does not escape: a caller's value can stay on its stack. Structs with
// a flat plan are decoded in place; other targets are decoded into a copy
// of *out on the heap (reflection would make out escape in every call, flat
// or not), which is copied back, also when decoding fails. The outcome is
// that of decoding in place unless decoding reaches *out through some other
// pointer (a field pointing into the struct itself) or an Unmarshaler keeps
// the address of its receiver.
//
// Errors are *DecodeError values, whose text never quotes a stored value.
func Unmarshal[T any](item map[string]types.AttributeValue, out *T) error {
	if out == nil {
		return decodeError(attributevalue.UnmarshalMap(item, (*T)(nil)))
	}
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Struct {
		if p := forValue(t); p.flat {
			if err := p.decodeAt(item, reflect.Value{}, unsafe.Pointer(out)); err != nil {
				return decodeError(err)
			}
			return nil
		}
	}
	c := new(T)
	*c = *out
	err := unmarshalSlow(item, c)
	*out = *c
	return decodeError(err)
}

// UnmarshalInPlace is Unmarshal for an out that is on the heap anyway (an
// element of a slice, say): it never copies, and out escapes.
func UnmarshalInPlace[T any](item map[string]types.AttributeValue, out *T) error {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Struct {
		if p := forValue(t); p.flat {
			if err := p.decodeAt(item, reflect.Value{}, unsafe.Pointer(out)); err != nil {
				return decodeError(err)
			}
			return nil
		}
	}
	return decodeError(unmarshalSlow(item, out))
}

// UnmarshalComplete is Unmarshal that also reports whether the item held
// an attribute of exactly each field's name (see UnmarshalInPlaceComplete).
// Like Unmarshal, out does not escape.
func UnmarshalComplete[T any](item map[string]types.AttributeValue, out *T) (complete bool, err error) {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Struct {
		if p := forValue(t); p.flat {
			complete, err = p.decodeAtN(item, reflect.Value{}, unsafe.Pointer(out))
			return complete, decodeError(err)
		}
	}
	c := new(T)
	*c = *out
	complete, err = UnmarshalInPlaceComplete(item, c)
	*out = *c
	return complete, err
}

// UnmarshalInPlaceComplete is UnmarshalInPlace that also reports whether
// the item held an attribute of exactly each field's name (complete: no
// field was left as it was). It is false for types attributevalue decodes
// whole.
func UnmarshalInPlaceComplete[T any](item map[string]types.AttributeValue, out *T) (complete bool, err error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return false, decodeError(attributevalue.UnmarshalMap(item, out))
	}
	p := forValue(t)
	if p.flat {
		complete, err = p.decodeAtN(item, reflect.Value{}, unsafe.Pointer(out))
		return complete, decodeError(err)
	}
	if p.whole || p.self {
		return false, decodeError(p.Decode(item, reflect.ValueOf(out).Elem()))
	}
	v := reflect.ValueOf(out).Elem()
	complete, err = p.decodeAtN(item, v, v.Addr().UnsafePointer())
	return complete, decodeError(err)
}

func unmarshalSlow[T any](item map[string]types.AttributeValue, out *T) error {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return attributevalue.UnmarshalMap(item, out)
	}
	return forValue(t).Decode(item, reflect.ValueOf(out).Elem())
}

// valuePlans maps struct types (by typeID) to their plans from For: a
// copy-on-write map read without locking, cheaper than the sync.Map of all
// plans on the path of every Marshal and Unmarshal.
var valuePlans atomic.Pointer[map[unsafe.Pointer]*Plan]

// typeID identifies a reflect.Type by its descriptor's address (the data
// word of the interface; every reflect.Type is a *reflect.rtype), which a
// map hashes and compares faster than the interface.
func typeID(t reflect.Type) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&t))[1]
}

// forValue is For(t) for a struct type t.
func forValue(t reflect.Type) *Plan {
	id := typeID(t)
	if m := valuePlans.Load(); m != nil {
		if p, ok := (*m)[id]; ok {
			return p
		}
	}
	p := For(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	old := valuePlans.Load()
	var next map[unsafe.Pointer]*Plan
	if old != nil {
		next = make(map[unsafe.Pointer]*Plan, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	} else {
		next = make(map[unsafe.Pointer]*Plan, 1)
	}
	next[id] = p
	valuePlans.Store(&next)
	return p
}
