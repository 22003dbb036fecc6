package singletable

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/schema"
	"github.com/singletable-go/singletable/internal/tabledef"
)

// IndexSchema declares how an entity appears in one global secondary index.
// MultiAttribute says which of the two kinds it is, and a field of the
// other kind is a *ValidationError naming the index and the fields:
//   - templated (the default, MultiAttribute false): PK and SK templates
//     rendered into string attributes, by default "<Name>PK" and
//     "<Name>SK" (the overloaded GSI pattern), with PKAttr, SKAttr, When,
//     WhenFields and Shards;
//   - multi-attribute (MultiAttribute true): PartitionAttrs and SortAttrs
//     name Go fields whose own attributes form the key (up to 4 + 4).
type IndexSchema[T any] struct {
	Name string
	// MultiAttribute declares a multi-attribute index; false, a templated one.
	MultiAttribute bool

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

// indexPlan is an IndexSchema resolved against T (by internal/schema,
// which checks it: see schema.Index for the fields).
type indexPlan struct {
	name           string
	multi          bool
	pk, sk         compiledKey // templated
	pkAttr, skAttr string      // templated
	partition      []*model.Field
	sort           []*model.Field
	when           func(reflect.Value) bool // When, called with the item
	shards         int
	deps           []*model.Field
	keyFields      []*model.Field
	proj           tabledef.Set
	pkOwn, skOwn   *model.Field
	decl           *schema.Index // as compiled: for Bind's checks, WhenFields for Describe
}

// compileIndex compiles is (internal/schema checks it).
func (e *entityPlan) compileIndex(is IndexSchema[reflect.Value]) (*indexPlan, error) {
	c, err := e.fieldSet().Index(schema.IndexDecl{Name: is.Name, Multi: is.MultiAttribute, PK: is.PK, SK: is.SK, PKAttr: is.PKAttr, SKAttr: is.SKAttr,
		PartitionAttrs: is.PartitionAttrs, SortAttrs: is.SortAttrs, When: is.When, WhenFields: is.WhenFields, Shards: is.Shards,
		Projection: is.Projection, Include: is.Include}, e.foreign.loc)
	if err != nil {
		return nil, invalid(err)
	}
	return &indexPlan{name: c.Name, multi: c.Multi, pk: compiled(c.PK), sk: compiled(c.SK), pkAttr: c.PKAttr, skAttr: c.SKAttr,
		partition: c.Partition, sort: c.Sort, when: c.When, shards: c.Shards, deps: c.Deps,
		keyFields: c.KeyFields, proj: c.Proj, pkOwn: c.PKOwn, skOwn: c.SKOwn, decl: c}, nil
}

// indexDecls are e's indexes as compiled.
func (e *entityPlan) indexDecls() []*schema.Index {
	out := make([]*schema.Index, len(e.indexes))
	for i, p := range e.indexes {
		out[i] = p.decl
	}
	return out
}

// checkIndexTableAttrs refuses a templated index whose key attribute is
// one table t's items hold from the primary key or entity type with a
// template that would render another value (schema.Fields.TableAttrs).
func (e *entityPlan) checkIndexTableAttrs(t *Table) error {
	return invalid(e.fieldSet().TableAttrs(t.name, e.indexDecls(), func(attr string) (string, bool) { return tableHeld(&t.opts, e, attr) }))
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
	n := model.KeyBytes(av)
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
		return "", "", p.checkAggregate(e.name, item)
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

// checkAggregate returns a *KeyError when the multi-attribute index p's
// partition or sort key attributes in item are together longer than
// DynamoDB allows (2048 and 1024 bytes): it limits their aggregate, not
// only each one.
func (p *indexPlan) checkAggregate(entity string, item map[string]types.AttributeValue) error {
	for _, k := range [2]struct {
		fields []*model.Field
		max    int
		role   string
	}{{p.partition, 2048, "partition"}, {p.sort, 1024, "sort"}} {
		n, names := 0, make([]string, 0, len(k.fields))
		for _, f := range k.fields {
			n += model.KeyBytes(item[f.Attr])
			names = append(names, f.Name)
		}
		if n > k.max {
			return &KeyError{Entity: entity, Index: p.name, Key: k.fields[0].Attr,
				Err: fmt.Errorf("fields %s are %d bytes together, over DynamoDB's %d-byte limit for a multi-attribute %s key", strings.Join(names, ", "), n, k.max, k.role)}
		}
	}
	return nil
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
	return string(keys.AppendShard([]byte(pk), shard))
}

// shardOf picks the write shard of the item rv (keys.ShardOf).
func (e *entityPlan) shardOf(rv reflect.Value, shards int) (int, error) {
	pk, sk, err := e.renderPair(rv, "", e.pk, e.sk, "PK", "SK", 0)
	return keys.ShardOf(pk, sk, e.sk.defined(), shards), err
}
