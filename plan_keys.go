package singletable

import (
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// encode turns v into a complete item: attributes from the struct, entity
// type, primary key, and every index whose keys apply.
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
	// names: the codec's item cannot hold them, so they are sized as they
	// are set, and only the attributes in recheck (multi-attribute index
	// and TTL attributes, which are fields the codec also encodes) are
	// looked up before and after. Otherwise every name in all is.
	direct  bool
	recheck []string
	// In direct mode: the size of the entity type attribute and of the
	// primary key attributes' names (fixed, invalid when a name or the
	// type is not valid UTF-8), and of each templated index's key names.
	// Rendered keys are valid UTF-8 (keys.AppendEscaped), so their values
	// count their length.
	fixed      int
	invalid    bool
	indexNames []int
	// owned is the ownership condition of a write that expects the item
	// absent or this entity's (see Repo.ownership), written once: a Put
	// with no other condition sends it as is (its maps are only read).
	owned writeplan.CondExpr
}

// writeSetFor returns the entity's writeSet for t (cached for the last
// table asked for: an entity is usually bound to one).
func (e *entityDef) writeSetFor(t *Table) *writeSet {
	if ws := e.written.Load(); ws != nil && ws.table == t {
		return ws
	}
	ws := &writeSet{table: t}
	seen := map[string]bool{}
	dup := false
	add := func(name string, recheck bool) {
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
	if !t.opts.OmitEntityType {
		add(t.opts.EntityTypeAttr, false)
	}
	add(t.opts.PartitionKey, false)
	if e.sk.defined() {
		add(t.opts.SortKey, false)
	}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				add(f.Attr, true)
			}
			continue
		}
		add(p.pkAttr, false)
		if p.skAttr != "" {
			add(p.skAttr, false)
		}
	}
	if e.guards.ttl != nil {
		add(e.guards.ttl.Attr, true)
	}
	ws.direct = !dup
	for _, n := range ws.all {
		if ws.direct && !containsString(ws.recheck, n) && codec.MayHold(e.typ, n) {
			ws.direct = false
		}
	}
	var sz sizer
	if !t.opts.OmitEntityType {
		sz.str(t.opts.EntityTypeAttr)
		sz.str(e.name)
	}
	sz.str(t.opts.PartitionKey)
	if e.sk.defined() {
		sz.str(t.opts.SortKey)
	}
	ws.fixed, ws.invalid = sz.size, sz.invalid
	ws.indexNames = make([]int, len(e.indexes))
	for i, p := range e.indexes {
		if !p.multi {
			var sz sizer
			sz.str(p.pkAttr)
			sz.str(p.skAttr)
			ws.indexNames[i] = sz.size
			ws.invalid = ws.invalid || sz.invalid
		}
	}
	owned, err := buildCondition(e.ownershipOf(&t.opts, writeplan.AnyItem), e.name, nil)
	if err == nil {
		ws.owned = owned
	}
	e.written.Store(ws)
	return ws
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// encodeSized is encode of *v (which it does not modify) that also returns
// the item's size as [itemsize.Of] computes it, so that callers need not
// walk the item again. It refuses items with invalid UTF-8 (naming the
// attribute itemsize.Scan names: the smallest name, if several) and items
// over the size limit.
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
		pk, sk, err := p.apply(&e.entityDef, rv, item, avs[3+2*i:5+2*i])
		if err != nil {
			return nil, 0, err
		}
		if ws.direct && pk != "" {
			added.size += ws.indexNames[i] + len(pk) + len(sk)
		}
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
	// DynamoDB strings are UTF-8 (the SDK would silently send U+FFFD for
	// bad bytes) and items are at most 400 KB. When some string is invalid
	// (an attribute the codec made may since have been replaced), the
	// attribute to name is looked for in the whole item.
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

// invalidValue is the *ValidationError for attribute attr of an item
// holding a value DynamoDB would refuse or alter, for the reason given: it
// names the Go field (and the attribute, when its name differs), never the
// value, which may be anything a user typed.
func (e *entityDef) invalidValue(attr, reason string) *ValidationError {
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
