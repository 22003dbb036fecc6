package singletable

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
)

// Descriptions of the table as declared, as plain values built afresh on
// each call, for tools that read the design (package catalog). Nothing
// here sends a request.

// TableDescription describes a [Table] and the entities bound to it.
type TableDescription struct {
	// Name is the table's name.
	Name string
	// PartitionKey and SortKey name the table's key attributes (SortKey
	// is "" for a table without a sort key); EntityTypeAttr names the
	// attribute holding each item's entity type.
	PartitionKey, SortKey, EntityTypeAttr string
	// OmitEntityType is set when the table never writes the entity type
	// attribute ([TableOptions].OmitEntityType).
	OmitEntityType bool
	// Entities are the bound entities, in the order they were bound.
	Entities []EntityDescription
	// Indexes are the global secondary indexes the entities declare, by
	// name: the indexes [Table.CreateTable] creates.
	Indexes []IndexDescription
}

// IndexDescription describes one global secondary index of the table: its
// key attributes, as the table defines them.
type IndexDescription struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// Partition and Sort are the key attributes in key order (one each
	// for a templated index; Sort is empty without a sort key).
	Partition, Sort []KeyAttribute
	// Projection is what the index holds besides the keys (ALL,
	// KEYS_ONLY or INCLUDE); Include lists INCLUDE's attributes, sorted
	// ([IndexSchema].Projection).
	Projection types.ProjectionType
	Include    []string
}

// KeyAttribute is a key attribute and its type.
type KeyAttribute struct {
	Name string
	Type types.ScalarAttributeType
}

// EntityDescription describes one bound entity: its type, keys, indexes,
// the fields the library manages, and every field with its stored name.
type EntityDescription struct {
	// Type is the entity type stored on every item.
	Type string
	// PK and SK are the primary key templates (SK is the zero value for a
	// table without a sort key).
	PK, SK KeyDescription
	// Indexes are the entity's index declarations, in declaration order.
	Indexes []EntityIndexDescription
	// Unique lists the declarations of values kept unique by guard
	// items, as the schema gave them.
	Unique []Unique
	// Version, CreatedAt, UpdatedAt and TTL name the Go fields the library
	// manages ("" when not declared).
	Version, CreatedAt, UpdatedAt, TTL string
	// MatchKeys is set when items without the entity type attribute are
	// recognised by their key shape ([Schema].MatchKeys); KeyOnly lists
	// the fields held only in the key ([Schema].KeyOnly).
	MatchKeys bool
	KeyOnly   []string
	// Fields are the fields, in struct order (a KeyOnly field tagged
	// dynamodbav:"-" last).
	Fields []FieldDescription
}

// FieldDescription is one field: its Go name (as key templates, Where
// and Fields name it) and the attribute it is stored under; Attr is "-"
// for a field held only in keys ([Schema].KeyOnly), which has none.
type FieldDescription struct {
	Name, Attr string
	// TimeForm is the dynamodbav option a time field is stored under
	// ("rfc3339", "rfc3339milli", "date", "unix", "unixmilli"), "" for the
	// default: writes cut such a time to what the form holds.
	TimeForm string
}

// KeyDescription is a key attribute rendered from a template.
type KeyDescription struct {
	// Attr is the key attribute, e.g. "PK" or "GSI1PK".
	Attr string
	// Template is the template as declared, e.g. "SKILL#{SkillName}"; ""
	// when the key is not defined.
	Template string
	// Parts are the template's literals and placeholders, in order.
	Parts []KeyPart
}

// KeyPart is one part of a key template: a literal, or a placeholder
// naming a Go field and, optionally, its format.
type KeyPart struct {
	// Literal is the literal text, when Field is "".
	Literal string
	// Field is the Go field of a placeholder.
	Field string
	// Format is the placeholder's format as written after ':' in the
	// template ("rfc3339", "%08d", "raw", …); "" for the library's own
	// escaped, fixed-width encoding. See [Schema] for the formats.
	Format string
}

// EntityIndexDescription is how one entity appears in one index.
type EntityIndexDescription struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// PK and SK are the key templates of a templated index (SK is the
	// zero value without a sort key).
	PK, SK KeyDescription
	// Partition and Sort are the key fields of a multi-attribute index,
	// in key order.
	Partition, Sort []FieldDescription
	// Shards is the number of write shards of a templated index's
	// partition key (suffix "#shard_<n>"), 0 when not sharded.
	Shards int
	// HasWhen is true when a When predicate decides, beyond the presence
	// of the key fields, whether the item is in the index; WhenFields are
	// the fields it reads.
	HasWhen    bool
	WhenFields []string
}

// Describe returns the table as declared by the entities bound to it. See
// [TableDescription]; it sends no request.
func (t *Table) Describe() TableDescription {
	d := TableDescription{Name: t.name, PartitionKey: t.opts.PartitionKey,
		SortKey: t.opts.SortKey, EntityTypeAttr: t.opts.EntityTypeAttr, OmitEntityType: t.opts.OmitEntityType}
	t.mu.RLock()
	ents := slices.Clone(t.entities)
	t.mu.RUnlock()
	for _, e := range ents {
		d.Entities = append(d.Entities, e.describe(t.opts))
	}
	d.Indexes = t.indexes()
	return d
}

// Describe returns the description of the repository's entity, as
// [Table.Describe] lists it.
func (r *Repo[T]) Describe() EntityDescription { return r.e.describe(r.t.opts) }

// describe builds the entity's description with the table's key
// attribute names.
func (e *entityPlan) describe(o TableOptions) EntityDescription {
	d := EntityDescription{Type: e.name, PK: describeKey(o.PartitionKey, e.pk)}
	if e.sk.defined() {
		d.SK = describeKey(o.SortKey, e.sk)
	}
	name := func(f *model.Field) string {
		if f == nil {
			return ""
		}
		return f.Name
	}
	g := e.guards
	for _, u := range g.unique {
		d.Unique = append(d.Unique, Unique{Fields: slices.Clone(u.names), Hash: u.hash})
	}
	d.Version, d.CreatedAt, d.UpdatedAt, d.TTL = name(g.version), name(g.created), name(g.updated), name(g.ttl)
	d.MatchKeys = e.foreign.matchKeys
	for _, f := range e.foreign.keyOnly {
		d.KeyOnly = append(d.KeyOnly, f.Name)
	}
	d.Fields = describeFields(e.fields)
	for _, p := range e.indexes {
		ix := EntityIndexDescription{Name: p.name, MultiAttribute: p.multi, Shards: p.shards,
			HasWhen: p.when != nil, WhenFields: slices.Clone(p.whenFields)}
		if p.multi {
			ix.Partition, ix.Sort = describeFields(p.partition), describeFields(p.sort)
		} else {
			ix.PK = describeKey(p.pkAttr, p.pk)
			if p.sk.defined() {
				ix.SK = describeKey(p.skAttr, p.sk)
			}
		}
		d.Indexes = append(d.Indexes, ix)
	}
	return d
}

// describeFields describes fs, nil when there are none.
func describeFields(fs []*model.Field) []FieldDescription {
	var out []FieldDescription
	for _, f := range fs {
		d := FieldDescription{Name: f.Name, Attr: f.Attr, TimeForm: f.Form.String()}
		if f.KeyOnly {
			d.Attr = "-"
		}
		out = append(out, d)
	}
	return out
}

func describeKey(attr string, k compiledKey) KeyDescription {
	d := KeyDescription{Attr: attr, Template: k.tpl.Raw}
	for _, p := range k.tpl.Parts {
		d.Parts = append(d.Parts, KeyPart{Literal: p.Literal, Field: p.Field, Format: p.Spec()})
	}
	return d
}

// QueryDescription describes a query in the terms of the declaration:
// its key condition written with the templates rather than values, so one
// description covers every call built the same way.
type QueryDescription struct {
	// Entity is the entity type queried.
	Entity string
	// Index is the index queried; "" for the table's primary key.
	Index string
	// Partition is the partition key condition, e.g.
	// "GSI1PK = SKILL#{SkillName}" ("USERS#shard_{0..3}" for a sharded
	// index; equalities joined with AND for a multi-attribute one); "" when
	// the entity does not declare the index.
	Partition string
	// Sort is the sort key condition, e.g. "begins_with(GSI1SK,
	// LEVEL#{Level}#)" or "SK BETWEEN DAY#{Day} AND DAY#{Day:high}"; ""
	// when the query has none. {F:prefix} stands for the prefix given to
	// BeginsWith, {F:high} for the upper bound given to Between.
	Sort string
	// Descending is true when the query reads in descending key order.
	Descending bool
	// Filtered is true when the query has a filter expression.
	Filtered bool
}

// KeyCondition returns the query's key condition: Partition and Sort
// joined with AND.
func (d QueryDescription) KeyCondition() string {
	if d.Sort == "" {
		return d.Partition
	}
	return d.Partition + " AND " + d.Sort
}

// Describe returns the query's description. It reads only what the query
// was built with: a query whose building failed (say, an unknown index)
// is described as far as it goes, and Collect still reports the error.
func (q *Query[T]) Describe() QueryDescription {
	e, t := q.r.e, q.r.t.opts
	d := QueryDescription{Entity: e.name, Index: q.index, Descending: q.desc, Filtered: q.filter != nil}
	var parts []string
	idx, _ := e.index(q.index)
	switch {
	case q.index != "" && idx == nil:
		return d
	case idx == nil:
		d.Partition = t.PartitionKey + " = " + e.pk.tpl.Raw
		parts = q.describeTemplatedSort(e.sk, t.SortKey)
	case !idx.multi:
		d.Partition = idx.pkAttr + " = " + idx.pk.tpl.Raw
		if idx.shards > 0 {
			d.Partition += fmt.Sprintf("#shard_{0..%d}", idx.shards-1)
		}
		parts = q.describeTemplatedSort(idx.sk, idx.skAttr)
	default:
		var pk []string
		for _, f := range idx.partition {
			pk = append(pk, f.Attr+" = {"+f.Name+"}")
		}
		d.Partition = strings.Join(pk, " AND ")
		parts = q.describeMultiSort(idx)
	}
	d.Sort = strings.Join(parts, " AND ")
	return d
}

// describeTemplatedSort describes the condition templatedSortCond builds
// on sort key sk, with the template's placeholders for the values.
func (q *querySpec) describeTemplatedSort(sk compiledKey, attr string) []string {
	if c := shapeCond(sk, attr); c != nil && q.kind == sortNone {
		v := c.V1.(*types.AttributeValueMemberS).Value
		if c.Op == expr.OpBeginsWith {
			return []string{"begins_with(" + attr + ", " + v + ")"}
		}
		return []string{attr + c.Op + v}
	}
	n, _ := q.sortFields(sk.fields, "")
	if n == 0 {
		return nil
	}
	// The template up to the n-th placeholder.
	var prefix strings.Builder
	for j := 0; &sk.tpl.Parts[j] != sk.places[n-1]; j++ {
		if p := &sk.tpl.Parts[j]; p.IsPlaceholder() {
			prefix.WriteString(p.Placeholder())
		} else {
			prefix.WriteString(p.Literal)
		}
	}
	last := sk.places[n-1]
	switch {
	case q.op == Eq && n == len(sk.fields):
		return []string{attr + " = " + sk.tpl.Raw}
	case q.op == Eq:
		return []string{"begins_with(" + attr + ", " + prefix.String() + last.Placeholder() + sk.tpl.LiteralAfter(n-1) + ")"}
	}
	return []string{q.describeLast(attr, prefix.String(), last.Field, last.Placeholder())}
}

func (q *querySpec) describeMultiSort(idx *indexPlan) []string {
	n, _ := q.sortFields(idx.sort, "")
	var out []string
	for _, f := range idx.sort[:max(n-1, 0)] {
		out = append(out, f.Attr+" = {"+f.Name+"}")
	}
	if n == 0 {
		return out
	}
	last := idx.sort[n-1]
	return append(out, q.describeLast(last.Attr, "", last.Name, "{"+last.Name+"}"))
}

// describeLast describes the condition on the last named sort field,
// field, whose placeholder is place, after prefix in the key.
func (q *querySpec) describeLast(attr, prefix, field, place string) string {
	switch q.kind {
	case sortBeginsWith:
		return "begins_with(" + attr + ", " + prefix + "{" + field + ":prefix})"
	case sortBetween:
		return attr + " BETWEEN " + prefix + place + " AND " + prefix + "{" + field + ":high}"
	}
	return attr + " " + q.op.String() + " " + prefix + place
}
