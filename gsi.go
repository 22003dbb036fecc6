package singletable

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/model"
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
	keyFields      []*model.Field           // the fields of a templated index's keys, each once
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
	if p.skAttr == "" && is.SK != "" {
		p.skAttr = is.Name + "SK"
	}
	// The rendered keys are written to these attributes: no field may be
	// stored there.
	if err := e.checkNotStored(p.pkAttr, "index "+is.Name+"'s partition key attribute"); err != nil {
		return err
	}
	if err := e.checkNotStored(p.skAttr, "index "+is.Name+"'s sort key attribute"); err != nil {
		return err
	}
	var err error
	if p.pk, err = e.compileKey(is.PK, is.Name, p.pkAttr, false); err != nil {
		return err
	}
	if p.shards > 0 {
		p.pk.reserve = len(appendShard(nil, p.shards-1))
	}
	if is.SK != "" {
		if p.sk, err = e.compileKey(is.SK, is.Name, p.skAttr, true); err != nil {
			return err
		}
	}
	p.deps = append(slices.Clone(p.pk.fields), p.sk.fields...)
	for _, f := range p.deps {
		p.keyFields = appendUnique(p.keyFields, f)
	}
	return e.compileWhen(p, is)
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
// attribute of a multi-attribute index, is longer than DynamoDB allows.
// Numbers (at most 38 digits) always fit.
func (e *entityPlan) checkKeyAttr(f *model.Field, av types.AttributeValue) error {
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

// apply writes (or leaves out) the index's attributes for item v, using
// avs (two values) for a templated index's keys. For a templated index
// that applies, it returns the keys it set (sk "" when the index has no
// sort key); pk is "" otherwise.
func (p *indexPlan) apply(e *entityPlan, rv reflect.Value, item map[string]types.AttributeValue, avs []types.AttributeValueMemberS) (pk, sk string, err error) {
	if p.multi {
		for _, f := range p.deps {
			if !f.Present(rv) {
				// DynamoDB rejects empty strings in key attributes; an
				// absent attribute keeps the item out of the index.
				delete(item, f.Attr)
				continue
			}
			av, err := e.marshalField(f, rv)
			if err != nil {
				return "", "", keyErrorOr(err, &KeyError{Entity: e.name, Index: p.name, Key: f.Attr, Err: err})
			}
			if av == nil {
				delete(item, f.Attr)
			} else {
				item[f.Attr] = av
			}
		}
		return "", "", nil
	}
	pk, sk, ok, err := p.render(e, rv)
	if err != nil {
		return "", "", err
	}
	if !ok {
		delete(item, p.pkAttr)
		if p.skAttr != "" {
			delete(item, p.skAttr)
		}
		return "", "", nil
	}
	avs[0].Value = pk
	item[p.pkAttr] = &avs[0]
	if p.skAttr != "" {
		avs[1].Value = sk
		item[p.skAttr] = &avs[1]
	}
	return pk, sk, nil
}

// render renders a templated index's keys. ok is false when the item does
// not belong in the index: a template field is absent or When is false.
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
	pk, sk, err = e.renderPair(rv, p.name, p.pk, p.sk, p.pkAttr, p.skAttr, p.shards)
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
