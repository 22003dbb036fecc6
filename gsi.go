package singletable

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/tabledef"
)

// IndexSchema declares how an entity appears in one global secondary index.
// An index is either templated (PK and SK templates rendered into string
// attributes, by default "<Name>PK" and "<Name>SK", the overloaded GSI
// pattern) or multi-attribute (PartitionAttrs and SortAttrs name Go fields
// whose own attributes form the key: up to 4 + 4).
type IndexSchema[T any] struct {
	Name string

	// Templated keys.
	PK, SK string
	// Attribute names for the templated keys; default Name+"PK", Name+"SK".
	// A key attribute may be one the item holds anyway, as DynamoDB
	// allows: the table's PK or SK or the entity type attribute, whose
	// template must then be the entity's own for it (an inverted index:
	// PK = the SK template, PKAttr "SK"); or a string field's own attribute,
	// whose template must be {Field:raw} or {Field:raw=<RE2>}, so that the
	// stored value is the key. The library never writes or removes such an
	// attribute for the index: the primary key, entity type or field does
	// (a field's is removed when empty). An item is in the index exactly
	// when it holds every key attribute. Two indexes may share a rendered
	// attribute only with the same template, fields and no When.
	PKAttr, SKAttr string

	// Multi-attribute keys: Go field names, in key order. Each field's
	// own attribute is the key attribute, as stored; a time is in the key
	// codec's fixed-width UTC form (an S that sorts) unless its dynamodbav
	// tag chooses a shape (rfc3339, date, unix, …), as another service
	// writing the same index stores it.
	PartitionAttrs, SortAttrs []string

	// When, if set, makes a templated index sparse by predicate: the item
	// carries the index attributes only while When returns true (and all
	// template fields are present). WhenFields must list the fields When
	// reads, so that an update touching them re-evaluates it.
	When       func(T) bool
	WhenFields []string

	// Shards, when 2 to 100, write-shards a templated index whose
	// partitions would run hot: each item's index partition key gets a
	// suffix "#shard_<n>", n a hash of the item's primary key, and queries
	// on the index fan out to every shard and merge the results in sort
	// key order.
	Shards int

	// Projection is what the index holds besides the keys (the table's
	// and its own), as DynamoDB says it: "" or ProjectionTypeAll (the
	// default), ProjectionTypeKeysOnly, or ProjectionTypeInclude with the
	// attributes Include names (Go fields of T, or attribute names as
	// stored). Every entity declaring the index declares the same. See
	// docs/adopting.md, "Index projections": queries of such an index.
	Projection types.ProjectionType
	Include    []string
}

// indexPlan is an IndexSchema resolved against T.
type indexPlan struct {
	name           string
	multi          bool
	pk, sk         compiledKey // templated
	pkAttr, skAttr string      // templated
	partition      []*model.Field
	sort           []*model.Field
	when           func(reflect.Value) bool // When, called with the item
	shards         int                      // write shards of a templated index; 0 when not sharded
	whenFields     []string                 // as declared, for Table.Describe
	deps           []*model.Field           // every field the index's attributes depend on
	keyFields      []*model.Field           // the fields of a templated index's rendered keys, each once
	proj           tabledef.Set             // Projection, Include as attributes
	// pkOwn, skOwn: the field whose own attribute is the templated
	// index's partition (sort) key attribute, its template {Field:raw}:
	// the field's stored value is the key, written and removed with the
	// field, never rendered. nil for a rendered key.
	pkOwn, skOwn *model.Field
}

func (e *entityPlan) compileIndex(is IndexSchema[reflect.Value]) (*indexPlan, error) {
	p := &indexPlan{name: is.Name, when: is.When, whenFields: slices.Clone(is.WhenFields)}
	switch {
	case is.Shards == 1 || is.Shards < 0 || is.Shards > 100:
		return nil, validationErr(e.name, where(is.Name, ""), "Shards must be 0 (not sharded) or 2-100, not %d", is.Shards)
	case is.Shards > 0 && len(is.PartitionAttrs) > 0:
		return nil, validationErr(e.name, where(is.Name, ""), "Shards needs a templated partition key (a multi-attribute key has no string to suffix)")
	}
	p.shards = is.Shards
	var err error
	if p.proj, err = e.compileProjection(is); err != nil {
		return nil, err
	}
	templated := is.PK != "" || is.SK != ""
	multi := len(is.PartitionAttrs) > 0 || len(is.SortAttrs) > 0
	switch {
	case templated && multi:
		return nil, validationErr(e.name, where(is.Name, ""), "both templates and multi-attribute keys given; choose one")
	case !templated && !multi:
		return nil, validationErr(e.name, where(is.Name, ""), "no key: give PK (and SK) templates or PartitionAttrs")
	}
	if multi {
		return p, e.compileMultiIndex(p, is)
	}
	return p, e.compileTemplatedIndex(p, is)
}

// compileMultiIndex resolves a multi-attribute index's key fields.
func (e *entityPlan) compileMultiIndex(p *indexPlan, is IndexSchema[reflect.Value]) error {
	p.multi = true
	if len(is.PartitionAttrs) == 0 || len(is.PartitionAttrs) > 4 || len(is.SortAttrs) > 4 {
		return validationErr(e.name, where(is.Name, ""), "multi-attribute keys take 1-4 partition and 0-4 sort attributes")
	}
	if is.When != nil {
		return validationErr(e.name, where(is.Name, ""), "When is only supported on templated indexes (a multi-attribute index is keyed by the item's own attributes, which cannot be removed to hide it)")
	}
	for i, n := range append(slices.Clone(is.PartitionAttrs), is.SortAttrs...) {
		f, err := e.multiField(n, is.Name, i >= len(is.PartitionAttrs))
		if err != nil {
			return err
		}
		p.deps = append(p.deps, f)
	}
	n := len(is.PartitionAttrs)
	p.partition, p.sort = p.deps[:n:n], p.deps[n:]
	return nil
}

// compileTemplatedIndex compiles a templated index's key templates and
// attributes, and its When predicate's fields.
func (e *entityPlan) compileTemplatedIndex(p *indexPlan, is IndexSchema[reflect.Value]) error {
	if is.PK == "" {
		return validationErr(e.name, where(is.Name, "PK"), "partition key template is empty")
	}
	p.pkAttr, p.skAttr = is.PKAttr, is.SKAttr
	if p.pkAttr == "" {
		p.pkAttr = is.Name + "PK"
	}
	if is.SK == "" && p.skAttr != "" {
		return validationErr(e.name, where(is.Name, p.skAttr), "SKAttr %q is given without an SK template", p.skAttr)
	}
	if p.skAttr == "" && is.SK != "" {
		p.skAttr = is.Name + "SK"
	}
	var err error
	if p.pk, err = e.compileKey(is.PK, is.Name, p.pkAttr, false); err != nil {
		return err
	}
	if p.pkOwn, err = e.ownKeyField(is.Name, p.pkAttr, "partition", p.pk, false); err != nil {
		return err
	}
	if p.shards > 0 {
		if p.pkOwn != nil {
			return validationErr(e.name, where(is.Name, p.pkAttr), "Shards: the partition key attribute %s is field %s's own attribute, which cannot carry a shard suffix", p.pkAttr, p.pkOwn.Name)
		}
		p.pk.reserve = len(appendShard(nil, p.shards-1))
	}
	if is.SK != "" {
		if p.sk, err = e.compileKey(is.SK, is.Name, p.skAttr, true); err != nil {
			return err
		}
		if p.skOwn, err = e.ownKeyField(is.Name, p.skAttr, "sort", p.sk, true); err != nil {
			return err
		}
	}
	if p.pkOwn == nil {
		p.deps = slices.Clone(p.pk.fields)
	}
	if p.skOwn == nil {
		p.deps = append(p.deps, p.sk.fields...)
	}
	for _, f := range p.deps {
		p.keyFields = appendUnique(p.keyFields, f)
	}
	if is.When != nil && p.pkOwn != nil && (p.skAttr == "" || p.skOwn != nil) {
		return validationErr(e.name, where(is.Name, ""), "When: every key attribute of the index is a field's own attribute, which the library cannot remove to hide the item without losing the field")
	}
	return e.compileWhen(p, is)
}

// ownKeyField returns the field stored under attr, the templated index's
// partition or sort (role) key attribute, or nil when none is. Such a
// field's stored value is the key, so its template k must be {Field:raw}
// or {Field:raw=<RE2>} (checkKeyAttr checks it) for a string field: any
// other template would render a key differing from the stored value (a
// *ValidationError naming index, attribute and why). A field whose attribute differs from attr only in case is refused
// (see checkNotStored).
func (e *entityPlan) ownKeyField(index, attr, role string, k compiledKey, sort bool) (*model.Field, error) {
	f := e.byAttr[attr]
	if f == nil || f.KeyOnly {
		return nil, e.checkNotStored(attr, "index "+index+"'s "+role+" key attribute")
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "{" + f.Name + ":raw}"
	if pl := k.tpl.Parts[0]; len(k.tpl.Parts) != 1 || pl.Field != f.Name || pl.Format != format.Raw || t.Kind() != reflect.String {
		why := fmt.Sprintf("the template must be %s (or %s=<pattern>}), so that the key is the stored value, not %q", want, want[:len(want)-1], k.tpl.Raw)
		if t.Kind() != reflect.String {
			why = fmt.Sprintf("a templated key is a string and the field is a %s: declare the index with PartitionAttrs/SortAttrs", f.Type)
		}
		return nil, validationErr(e.name, f.Name, "field %s is stored as attribute %q, index %s's %s key attribute: %s; or store the field under another name (a dynamodbav tag)", f.Name, attr, index, role, why)
	}
	if limit := keyLimit(sort); f.KeyMax == 0 || limit < f.KeyMax {
		f.KeyMax, f.KeyIndex, f.KeySort = limit, index, sort
	}
	return f, nil
}

// checkIndexTableAttrs refuses a templated index whose key attribute is
// one table t's items hold from the primary key or entity type (the
// table's PK or SK, the entity type attribute) with a template that would
// render another value: the attribute holds one value. Writes leave such
// an attribute to the primary key: it is never removed, so an index with
// When or Shards needs a key of its own to hide or shard.
func (e *entityPlan) checkIndexTableAttrs(t *Table) error {
	o := &t.opts
	for i, p := range e.indexes {
		if p.multi {
			continue
		}
		rendered := false
		for _, k := range []struct {
			attr string
			ck   compiledKey
			own  *model.Field
		}{{p.pkAttr, p.pk, p.pkOwn}, {p.skAttr, p.sk, p.skOwn}} {
			want, owned := tableHeld(o, e, k.attr)
			switch {
			case k.attr == "":
			case !owned:
				rendered = rendered || k.own == nil
			case k.ck.tpl.Raw != want:
				return validationErr(e.name, where(p.name, k.attr), "key attribute %s is table %s's own (the primary key or entity type writes it), so the index's template must be %q, not %q: one attribute holds one value", k.attr, t.name, want, k.ck.tpl.Raw)
			case k.attr == p.pkAttr && p.shards > 0:
				return validationErr(e.name, where(p.name, k.attr), "Shards: the partition key attribute %s is table %s's own, which cannot carry a shard suffix", k.attr, t.name)
			}
		}
		if p.when != nil && !rendered {
			return validationErr(e.name, where(p.name, ""), "When: no key attribute of the index is the index's own (each is table %s's key or entity type attribute, or a field's), so the library cannot remove one to hide the item", t.name)
		}
		if err := e.checkSharedKeyAttrs(o, i, p); err != nil {
			return err
		}
	}
	return nil
}

// checkSharedKeyAttrs refuses a key attribute that templated index p (the
// i-th) renders and an index before it renders too, unless both write
// the same value under the same conditions: the same template, fields and
// shards, and no When (else one would remove what the other sets).
func (e *entityPlan) checkSharedKeyAttrs(o *TableOptions, i int, p *indexPlan) error {
	for _, q := range e.indexes[:i] {
		if q.multi {
			continue
		}
		for _, a := range [][2]string{{p.pkAttr, p.pk.tpl.Raw}, {p.skAttr, p.sk.tpl.Raw}} {
			if _, held := tableHeld(o, e, a[0]); a[0] == "" || held || e.byAttr[a[0]] != nil {
				continue
			}
			for _, b := range [][2]string{{q.pkAttr, q.pk.tpl.Raw}, {q.skAttr, q.sk.tpl.Raw}} {
				same := a == b && p.when == nil && q.when == nil && p.shards == q.shards &&
					len(p.keyFields) == len(q.keyFields) && !slices.ContainsFunc(p.keyFields, func(f *model.Field) bool { return !slices.Contains(q.keyFields, f) })
				if a[0] == b[0] && !same {
					return validationErr(e.name, where(p.name, a[0]), "key attribute %s is also index %s's, which renders it from %q (this one from %q) or keeps it under other conditions (When, Shards, the fields both keys need): one attribute holds one value", a[0], q.name, b[1], a[1])
				}
			}
		}
	}
	return nil
}

// tableHeld reports whether the library writes attr on every item of e
// in a table with options o (its key attributes, the entity type
// attribute unless omitted), and the template that value is rendered
// from.
func tableHeld(o *TableOptions, e *entityPlan, attr string) (string, bool) {
	switch {
	case attr == "":
		return "", false
	case attr == o.PartitionKey:
		return e.pk.tpl.Raw, true
	case attr == o.SortKey:
		return e.sk.tpl.Raw, true
	case attr == o.EntityTypeAttr && !o.OmitEntityType:
		return e.name, true
	}
	return "", false
}

// compileWhen checks a templated index's When and WhenFields and adds the
// fields the predicate reads to the index's dependencies.
func (e *entityPlan) compileWhen(p *indexPlan, is IndexSchema[reflect.Value]) error {
	if is.When != nil && len(is.WhenFields) == 0 {
		return validationErr(e.name, where(is.Name, ""), "When needs WhenFields: the fields the predicate reads, so updates know when to re-evaluate it")
	}
	if is.When == nil && len(is.WhenFields) > 0 {
		return validationErr(e.name, where(is.Name, ""), "WhenFields given without When")
	}
	for _, n := range is.WhenFields {
		f := e.byName[n]
		if f == nil {
			return e.unknownField(where(is.Name, "When"), "", n)
		}
		p.deps = appendUnique(p.deps, f)
	}
	return nil
}

func (e *entityPlan) multiField(name, index string, sort bool) (*model.Field, error) {
	f := e.byName[name]
	if f == nil {
		return nil, e.unknownField(where(index, ""), "", name)
	}
	if _, err := scalarType(f); err != nil {
		return nil, &ValidationError{Entity: e.name, Field: where(index, name), Reason: "cannot be a multi-attribute key", Err: err}
	}
	if limit := keyLimit(sort); f.KeyMax == 0 || limit < f.KeyMax {
		f.KeyMax, f.KeyIndex, f.KeySort = limit, index, sort
	}
	return f, nil
}

// checkKeyAttr returns a *KeyError when av, the value of field f as a key
// attribute of a multi-attribute index, is longer than DynamoDB allows (a
// number always fits), or as a templated index's, breaks its constraint.
func (e *entityPlan) checkKeyAttr(f *model.Field, av types.AttributeValue) error {
	for _, p := range e.indexes {
		for _, k := range [2]keyRef{{ck: &p.pk, attr: p.pkAttr, own: p.pkOwn == f}, {ck: &p.sk, attr: p.skAttr, own: p.skOwn == f}} {
			if s, isS := av.(*types.AttributeValueMemberS); k.own && isS && k.ck.places[0].Pattern != nil {
				if _, err := k.ck.places[0].AppendValue(nil, reflect.ValueOf(s.Value)); err != nil {
					return &KeyError{Entity: e.name, Index: p.name, Key: k.attr, Err: fmt.Errorf("field %s: %w", f.Name, err)}
				}
			}
		}
	}
	n := keyBytes(av)
	if n <= f.KeyMax {
		return nil
	}
	role := "partition"
	if f.KeySort {
		role = "sort"
	}
	return &KeyError{Entity: e.name, Index: f.KeyIndex, Key: f.Attr,
		Err: fmt.Errorf("field %s is %d bytes, over DynamoDB's %d-byte limit for a %s key attribute", f.Name, n, f.KeyMax, role)}
}

// keyBytes is the length DynamoDB's key size limits count of a string or
// binary key value (0 for a number, which always fits).
func keyBytes(av types.AttributeValue) int {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberB:
		return len(x.Value)
	}
	return 0
}

// scalarType returns the DynamoDB scalar type (S, N or B) a field is stored
// as when it is a multi-attribute key attribute: a time is an S, or an N
// when its tag option stores epoch numbers (unix, unixmilli).
func scalarType(f *model.Field) (types.ScalarAttributeType, error) {
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == model.TimeType {
		if f.Form.Number() {
			return types.ScalarAttributeTypeN, nil
		}
		return types.ScalarAttributeTypeS, nil
	}
	switch {
	case t.Kind() == reflect.String:
		return types.ScalarAttributeTypeS, nil
	case codec.IsNumberKind(t.Kind()):
		return types.ScalarAttributeTypeN, nil
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return types.ScalarAttributeTypeB, nil
	}
	return "", fmt.Errorf("type %s is not a string, number, time or []byte", t)
}

func (e *entityPlan) index(name string) (*indexPlan, error) {
	for _, p := range e.indexes {
		if p.name == name {
			return p, nil
		}
	}
	return nil, validationErr(e.name, name, "unknown index")
}

// apply writes (or leaves out) the index's attributes for item v in a
// table with options o, using avs (two values) for a templated index's
// keys. A key attribute the table holds from the primary key or entity
// type is left to them, and a field's own attribute to the field (removed
// when absent: DynamoDB refuses an empty key). For a templated index that
// applies, it returns the keys it set (sk "" when the index has no sort
// key); pk is "" otherwise.
func (p *indexPlan) apply(e *entityPlan, o *TableOptions, rv reflect.Value, item map[string]types.AttributeValue, avs []types.AttributeValueMemberS) (pk, sk string, err error) {
	if p.multi {
		for _, f := range p.deps {
			if err := e.applyKeyAttr(p.name, f, rv, item); err != nil {
				return "", "", err
			}
		}
		return "", "", nil
	}
	pk, sk, ok, err := p.render(e, rv)
	if err != nil {
		return "", "", err
	}
	for i, k := range [2]struct {
		attr, val string
		own       *model.Field
	}{{p.pkAttr, pk, p.pkOwn}, {p.skAttr, sk, p.skOwn}} {
		_, held := tableHeld(o, e, k.attr)
		switch {
		case k.attr == "" || held:
		case k.own != nil:
			if err := e.applyKeyAttr(p.name, k.own, rv, item); err != nil {
				return "", "", err
			}
		case ok:
			avs[i].Value = k.val
			item[k.attr] = &avs[i]
		default:
			delete(item, k.attr)
		}
	}
	if !ok {
		return "", "", nil
	}
	return pk, sk, nil
}

// applyKeyAttr writes field f, a key attribute of index, into item as the
// key attribute it is, or removes it when absent: DynamoDB rejects empty
// strings in key attributes, and an absent attribute keeps the item out of
// the index.
func (e *entityPlan) applyKeyAttr(index string, f *model.Field, rv reflect.Value, item map[string]types.AttributeValue) error {
	if !f.Present(rv) {
		delete(item, f.Attr)
		return nil
	}
	av, err := e.marshalField(f, rv)
	if err != nil {
		return keyErrorOr(err, &KeyError{Entity: e.name, Index: index, Key: f.Attr, Err: err})
	}
	if av == nil {
		delete(item, f.Attr)
	} else {
		item[f.Attr] = av
	}
	return nil
}

// render renders a templated index's keys (a key that is a field's own
// attribute is left ""). ok is false when the item does not belong in the
// index: a field of a rendered key is absent or When is false.
func (p *indexPlan) render(e *entityPlan, rv reflect.Value) (pk, sk string, ok bool, err error) {
	base := model.StructBase(rv)
	for _, f := range p.keyFields {
		if !f.PresentAt(base, rv) {
			return "", "", false, nil
		}
	}
	if p.when != nil && !p.when(rv) {
		return "", "", false, nil
	}
	pkKey, skKey := p.pk, p.sk
	if p.pkOwn != nil {
		pkKey = compiledKey{}
	}
	if p.skOwn != nil {
		skKey = compiledKey{}
	}
	pk, sk, err = e.renderPair(rv, p.name, pkKey, skKey, p.pkAttr, p.skAttr, p.shards)
	return pk, sk, err == nil, err
}

// shardKey is the partition key of one write shard.
func shardKey(pk string, shard int) string {
	return string(appendShard([]byte(pk), shard))
}

// appendShard appends the suffix that makes a rendered partition key the
// key of one write shard.
func appendShard(dst []byte, shard int) []byte {
	return strconv.AppendInt(append(dst, "#shard_"...), int64(shard), 10)
}

// shardOf picks the write shard of the item rv: a hash of its rendered
// primary key, so every write of one item lands in the same shard and an
// update can recompute it from the key alone.
func (e *entityPlan) shardOf(rv reflect.Value, shards int) (int, error) {
	pk, sk, err := e.renderPair(rv, "", e.pk, e.sk, "PK", "SK", 0)
	if err != nil {
		return 0, err
	}
	h := fnv.New32a()
	h.Write([]byte(pk))
	if e.sk.defined() {
		h.Write([]byte{0})
		h.Write([]byte(sk))
	}
	return int(h.Sum32() % uint32(shards)), nil
}
