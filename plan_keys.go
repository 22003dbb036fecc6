package singletable

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The plan's keys. A put renders the whole item (encodeSized); an update
// re-renders each index key it touches (writeIndexKeys), from the stored
// values of the fields it does not give (indexReads).

// encode turns v into a complete item (see encodeSized).
func (e *Entity[T]) encode(t *Table, v T) (map[string]types.AttributeValue, error) {
	item, _, err := e.encodeSized(t, &v)
	return item, err
}

// writeSet is what encodeSized adds to the codec's item of an entity for
// one table, worked out once.
type writeSet struct {
	table *Table
	// all names every attribute set or removed, each once.
	all []string
	// direct is set when the entity type, primary key and templated index
	// key attributes are distinct and no field is stored under their
	// names: they are sized as they are set, and only the attributes in
	// recheck (multi-attribute index and TTL attributes, which the codec
	// also encodes) are looked up before and after. Otherwise all are.
	direct  bool
	recheck []string
	// In direct mode: the size of the entity type attribute and of the
	// primary key's names (invalid: some is not valid UTF-8), and of each
	// templated index's key names. Rendered keys are valid UTF-8, so their
	// values count their length.
	fixed      int
	invalid    bool
	indexNames []int
	// owned is the ownership condition of AnyItem, written once: a Put
	// with no other condition sends it as is (its maps are only read).
	owned writeplan.CondExpr
	// owns is the ownership condition of each intent, made once (a
	// Condition is never changed: And makes a new one).
	owns [writeplan.ExistingItem + 1]writeplan.Condition
}

// writeSetFor returns the entity's writeSet for t (cached for the last
// table asked for: an entity is usually bound to one).
func (e *entityPlan) writeSetFor(t *Table) *writeSet {
	if ws := e.written.Load(); ws != nil && ws.table == t {
		return ws
	}
	ws := &writeSet{table: t, indexNames: make([]int, len(e.indexes))}
	seen := map[string]bool{}
	dup := false
	// add records name, once, among the attributes set or removed, and
	// sizes it into sz (when not nil).
	add := func(name string, recheck bool, sz *sizer) {
		if sz != nil {
			sz.str(name)
		}
		if seen[name] {
			dup = true
			return
		}
		seen[name] = true
		ws.all = append(ws.all, name)
		if recheck {
			ws.recheck = append(ws.recheck, name)
		}
	}
	var fixed sizer
	if !t.opts.OmitEntityType {
		add(t.opts.EntityTypeAttr, false, &fixed)
		fixed.str(e.name)
	}
	add(t.opts.PartitionKey, false, &fixed)
	if e.sk.defined() {
		add(t.opts.SortKey, false, &fixed)
	}
	for i, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				add(f.Attr, true, nil)
			}
			continue
		}
		var sz sizer
		add(p.pkAttr, false, &sz)
		if p.skAttr != "" {
			add(p.skAttr, false, &sz)
		}
		ws.indexNames[i] = sz.size
		fixed.invalid = fixed.invalid || sz.invalid
	}
	if e.guards.ttl != nil {
		add(e.guards.ttl.Attr, true, nil)
	}
	ws.fixed, ws.invalid = fixed.size, fixed.invalid
	ws.direct = !dup
	for _, n := range ws.all {
		ws.direct = ws.direct && (slices.Contains(ws.recheck, n) || !codec.MayHold(e.typ, n))
	}
	for i := range ws.owns {
		ws.owns[i] = e.ownershipOf(&t.opts, writeplan.Intent(i))
	}
	owned, err := buildCondition(ws.owns[writeplan.AnyItem], e.name, nil)
	if err == nil {
		ws.owned = owned
	}
	e.written.Store(ws)
	return ws
}

// owner is r.ownership(i), made once per table (see writeSet.owns).
func (r *repo) owner(i writeplan.Intent) writeplan.Condition { return r.e.writeSetFor(r.t).owns[i] }

// encodeSized turns *v (unmodified) into a complete item: attributes from
// the struct, entity type, primary key, and every index whose keys apply
// (a sparse one is left out), with its size as [itemsize.Of] computes it.
// It refuses items with invalid UTF-8 and items over the size limit.
func (e *Entity[T]) encodeSized(t *Table, v *T) (map[string]types.AttributeValue, int, error) {
	ws := e.writeSetFor(t)
	// Room for the entity type, the primary key and the index keys.
	item, size, bad, err := codec.MarshalSized(v, 3+2*len(e.indexes))
	if err != nil {
		if ie, ok := err.(*codec.InvalidError); ok {
			return nil, 0, e.invalidValue(ie.Attr, ie.Reason)
		}
		return nil, 0, &ValidationError{Entity: e.name, Reason: "cannot encode item", Err: err}
	}
	if len(e.foreign.keyOnly) > 0 {
		size -= e.dropKeyOnly(item)
	}
	// The attributes the codec may have made that are replaced or removed
	// below: their sizes are taken out now, the new ones added after.
	looked := ws.all
	if ws.direct {
		looked = ws.recheck
	}
	for _, n := range looked {
		if av, ok := item[n]; ok {
			s, _ := itemsize.Attr(n, av)
			size -= s
		}
	}
	rv := reflect.ValueOf(v).Elem()
	// One block for the entity type, the primary key and the index keys.
	avs := make([]types.AttributeValueMemberS, 3+2*len(e.indexes))
	if !t.opts.OmitEntityType {
		avs[0].Value = e.name
		item[t.opts.EntityTypeAttr] = &avs[0]
	}
	if err := e.putPrimaryKeyAVs(t, rv, item, avs[1:]); err != nil {
		return nil, 0, err
	}
	var added sizer
	for i, p := range e.indexes {
		pk, sk, err := p.apply(&e.entityPlan, &t.opts, rv, item, avs[3+2*i:5+2*i])
		if err != nil {
			return nil, 0, err
		}
		if ws.direct && pk != "" {
			added.size += ws.indexNames[i] + len(pk) + len(sk)
		}
	}
	if err := e.keyOnlyHeld(rv, e.foreign.keyOnly); err != nil {
		return nil, 0, err
	}
	e.encodeTTL(rv, item)
	if ws.direct {
		added.size += ws.fixed + len(avs[1].Value) + len(avs[2].Value)
		added.invalid = added.invalid || ws.invalid
	}
	for _, n := range looked {
		if av, ok := item[n]; ok {
			added.add(n, av)
		}
	}
	size += added.size
	// When some string is invalid (an attribute the codec made may since
	// have been replaced), the attribute to name is looked for in the whole
	// item.
	if bad != "" || added.invalid {
		_, bad = itemsize.Scan(item)
	}
	if bad != "" {
		return nil, 0, e.invalidValue(bad, "string is not valid UTF-8 (DynamoDB would store U+FFFD instead)")
	}
	if size > itemsize.MaxItemBytes {
		return nil, 0, &ValidationError{Entity: e.name, Reason: "item too large", Err: &itemsize.TooLargeError{Size: size, Max: itemsize.MaxItemBytes}}
	}
	return item, size, nil
}

// keyOnlyHeld returns a *KeyError when a KeyOnly field of fields has a
// value in rv that would be stored nowhere: it is held only in the keys of
// indexes the item is not in (a field of their keys is absent, or When is
// false).
func (e *entityPlan) keyOnlyHeld(rv reflect.Value, fields []*model.Field) error {
	for _, f := range fields {
		var out []string
		for _, p := range e.indexes {
			if !f.KeyOnly || e.inPrimaryKey(f) || !slices.Contains(p.keyFields, f) || !f.Present(rv) {
				continue
			}
			if !slices.ContainsFunc(p.keyFields, func(g *model.Field) bool { return !g.Present(rv) }) && (p.when == nil || p.when(rv)) {
				out = nil
				break
			}
			out = append(out, p.name)
		}
		if len(out) > 0 {
			return &KeyError{Entity: e.name, Index: strings.Join(out, ", "),
				Err: fmt.Errorf("KeyOnly field %s is held only in the keys of indexes the item is not in: its value would be stored nowhere", f.Name)}
		}
	}
	return nil
}

// invalidValue is the *ValidationError for attribute attr of an item
// holding a value DynamoDB would refuse or alter: it names the Go field
// (and the attribute), never the value, which may be anything a user typed.
func (e *entityPlan) invalidValue(attr, reason string) *ValidationError {
	f := e.byAttr[attr]
	if f == nil {
		return validationErr(e.name, attr, "%s", reason)
	}
	if f.Attr != f.Name {
		reason = "attribute " + f.Attr + ": " + reason
	}
	return validationErr(e.name, f.Name, "%s", reason)
}

// sizer sums attribute sizes as itemsize.Scan counts them and notes
// invalid UTF-8.
type sizer struct {
	size    int
	invalid bool
}

// str adds a string's size: an attribute name or an S value.
func (s *sizer) str(v string) {
	n, bad := itemsize.String(v)
	s.size += n
	s.invalid = s.invalid || bad
}

func (s *sizer) add(name string, av types.AttributeValue) {
	n, bad := itemsize.Attr(name, av)
	s.size += n
	s.invalid = s.invalid || bad
}

// inPrimaryKey reports whether f is a field of the primary key.
func (e *entityPlan) inPrimaryKey(f *model.Field) bool {
	return slices.Contains(e.pk.fields, f) || slices.Contains(e.sk.fields, f)
}

// inMultiKey reports whether f's own attribute is an index key attribute:
// a key attribute of a multi-attribute index, or a templated index's key
// that is the field's own attribute (pkOwn, skOwn).
func (e *entityPlan) inMultiKey(f *model.Field) bool {
	return slices.ContainsFunc(e.indexes, func(p *indexPlan) bool {
		return p.multi && slices.Contains(p.deps, f) || p.pkOwn == f || p.skOwn == f
	})
}

// writeKeyFields writes the primary key's fields the item holds (not only
// in its key, see KeyOnly) into w, for an upsert sent without reading.
func (u *updateSpec) writeKeyFields(w *updateExpr, mv reflect.Value, touched map[*model.Field]bool) error {
	e := u.r.e
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
		av, err := e.marshalFieldPlain(f, mv)
		if err != nil {
			return err
		}
		if av != nil && !touched[f] && !slices.Contains(e.foreign.keyOnly, f) {
			w.ub.Set(w.b.Name(f.Attr), w.b.Value(av))
		}
	}
	return nil
}

// writeIndexKeys writes the keys of every templated index whose key
// depends on a field the update touches (every index, blind) into w,
// rendered from mv, the item after the update: SET when the index applies,
// REMOVE when it does not. A key attribute the table holds from its
// primary key or entity type is never written or removed here, nor a
// field's own attribute (the field's update writes it). A field not known
// (after indexReads) is an error: the keys are never written stale.
func (u *updateSpec) writeIndexKeys(w *updateExpr, mv reflect.Value, touched, known map[*model.Field]bool, blind bool) error {
	e := u.r.e
	var rerender []*indexPlan
	var unknown []indexNeed
	for _, p := range e.indexes {
		if p.multi || !blind && !slices.ContainsFunc(p.deps, func(f *model.Field) bool { return touched[f] }) {
			continue
		}
		n := indexNeed{index: p.name}
		for _, f := range p.deps {
			if !known[f] {
				n.fields = append(n.fields, f)
			}
		}
		if len(n.fields) > 0 {
			unknown = append(unknown, n)
		}
		rerender = append(rerender, p)
	}
	if len(unknown) > 0 {
		return unknownKeyFields(e.name, unknown, "the update changes part of these keys but the other fields are unknown")
	}
	held := slices.Clone(u.set) // and the KeyOnly fields only re-rendered indexes hold: When may have turned false
	for _, f := range e.foreign.keyOnly {
		if known[f] && !slices.Contains(held, f) && !slices.ContainsFunc(e.indexes, func(p *indexPlan) bool {
			return slices.Contains(p.keyFields, f) && !slices.Contains(rerender, p)
		}) {
			held = append(held, f)
		}
	}
	if err := e.keyOnlyHeld(mv, held); err != nil {
		return err
	}
	for _, p := range rerender {
		pk, sk, ok, err := p.render(e, mv)
		if err != nil {
			return err
		}
		for _, k := range []struct {
			attr, val string
			own       *model.Field
		}{{p.pkAttr, pk, p.pkOwn}, {p.skAttr, sk, p.skOwn}} {
			_, held := tableHeld(&u.r.t.opts, e, k.attr)
			switch {
			case k.attr == "" || held || k.own != nil:
			case ok:
				w.ub.Set(w.b.Name(k.attr), w.b.ValueS(k.val))
			default:
				w.ub.Remove(w.b.Name(k.attr))
			}
		}
	}
	return nil
}

// indexKeysHolding appends to attrs, once each, the index keys holding a field
// of fields (with item, only one item has no attribute for, or KeyOnly):
// what a read before an update reads such a field from, and checks as
// read. An index key is never removed for lack of a field its key holds.
func (e *entityPlan) indexKeysHolding(o *TableOptions, attrs []string, fields []*model.Field, item map[string]types.AttributeValue) []string {
	_ = e.eachKey(o, func(k keyRef) error {
		for _, f := range fields {
			_, stored := item[f.Attr]
			if k.index != "" && slices.Contains(k.ck.fields, f) && (item == nil || f.KeyOnly || !stored) {
				attrs = appendAttr(attrs, k.attr)
			}
		}
		return nil
	})
	return attrs
}

// known is the set of fields whose values after the update are known: the
// key's, those it sets, removes or read (fromSnap), UpdatedAt and the
// version.
func (u *updateSpec) known(fromSnap map[*model.Field]bool) map[*model.Field]bool {
	e := u.r.e
	known := map[*model.Field]bool{}
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields, u.set, u.remove, []*model.Field{e.guards.updated, e.guards.version}) {
		known[f] = true
	}
	for f := range fromSnap {
		known[f] = true
	}
	delete(known, nil) // no UpdatedAt or version
	return known
}

// indexReads lists the fields an update must read because an index key it
// changes depends on them and it does not give them (indexNeeds).
func (u *updateSpec) indexReads() []*model.Field {
	var out []*model.Field
	for _, n := range u.indexNeeds() {
		for _, f := range n.fields {
			out = appendUnique(out, f)
		}
	}
	return out
}

// indexNeed is what one index needs read.
type indexNeed struct {
	index  string
	fields []*model.Field
}

// indexNeeds lists, per index, the fields an update must read for it: the
// other fields of a touched templated index, and the fields an operator
// changes in any index (the result is only known from the stored value).
func (u *updateSpec) indexNeeds() []indexNeed {
	g := &u.r.e.guards
	touched := func(f *model.Field) bool {
		return u.setsOrRemoves(f) || u.operates(f) || f == g.updated || f == g.version
	}
	known := u.known(nil) // given by the update, stamped, or the next version
	var out []indexNeed
	for _, p := range u.r.e.indexes {
		n := indexNeed{index: p.name}
		for _, f := range p.deps {
			if p.multi && u.operates(f) || !p.multi && !known[f] && slices.ContainsFunc(p.deps, touched) {
				n.fields = append(n.fields, f)
			}
		}
		if len(n.fields) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// unknownKeyFields is the *KeyError of an update that changes part of the
// keys of indexes without knowing the rest, naming them all and why.
func unknownKeyFields(entity string, needs []indexNeed, why string) *KeyError {
	ke := &KeyError{Entity: entity}
	var names, per []string
	for _, n := range needs {
		names = append(names, n.index)
		var fs []string
		for _, f := range n.fields {
			fs = append(fs, f.Name)
			if !slices.Contains(ke.Missing, f.Name) {
				ke.Missing = append(ke.Missing, f.Name)
			}
		}
		per = append(per, n.index+" needs "+strings.Join(fs, ", "))
	}
	ke.Index = strings.Join(names, ", ")
	ke.Err = errors.New(strings.Join(per, "; ") + ": " + why)
	return ke
}

// givesEveryIndex reports whether the update knows every field of every
// index key of the entity.
func (u *updateSpec) givesEveryIndex() bool {
	known := u.known(nil)
	for _, p := range u.r.e.indexes {
		for _, f := range p.deps {
			if !known[f] {
				return false
			}
		}
	}
	return true
}
