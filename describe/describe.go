// Package describe holds the descriptions of a singletable design: a
// table, its entities, their keys and indexes, and the queries built on
// them, as plain values. The root package builds them afresh on each
// call to singletable.Table.Describe, singletable.Repo.Describe and
// singletable.Query.Describe, without sending a request; tools that read
// the design (packages catalog and workbench) take them from there.
//
// The descriptions speak of Go fields by their Go names, as key templates,
// Where and Fields name them, and of attributes by their stored names.
package describe

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// Table describes a singletable.Table and the entities bound to it.
type Table struct {
	// Name is the table's name.
	Name string
	// PartitionKey and SortKey name the table's key attributes (SortKey
	// is "" for a table without a sort key); EntityTypeAttr names the
	// attribute holding each item's entity type.
	PartitionKey, SortKey, EntityTypeAttr string
	// OmitEntityType is set when the table never writes the entity type
	// attribute (singletable.TableOptions.OmitEntityType).
	OmitEntityType bool
	// Entities are the bound entities, in the order they were bound.
	Entities []Entity
	// Indexes are the global secondary indexes the entities declare, by
	// name: the indexes singletable.Table.CreateTable creates.
	Indexes []Index
}

// Index describes one global secondary index of the table: its key
// attributes, as the table defines them.
type Index struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// Partition and Sort are the key attributes in key order (one each
	// for a templated index; Sort is empty without a sort key).
	Partition, Sort []KeyAttribute
	// Projection is what the index holds besides the keys (ALL,
	// KEYS_ONLY or INCLUDE); Include lists INCLUDE's attributes, sorted
	// (singletable.IndexSchema.Projection).
	Projection types.ProjectionType
	Include    []string
}

// KeyAttribute is a key attribute and its type.
type KeyAttribute struct {
	Name string
	Type types.ScalarAttributeType
}

// Entity describes one bound entity: its type, keys, indexes, the fields
// the library manages, and every field with its stored name.
type Entity struct {
	// Type is the entity type stored on every item.
	Type string
	// PK and SK are the primary key templates (SK is the zero value for a
	// table without a sort key).
	PK, SK Key
	// Indexes are the entity's index declarations, in declaration order.
	Indexes []EntityIndex
	// Unique lists the declarations of values kept unique by guard
	// items, as the schema gave them.
	Unique []Unique
	// Version, CreatedAt, UpdatedAt and TTL name the Go fields the library
	// manages ("" when not declared).
	Version, CreatedAt, UpdatedAt, TTL string
	// MatchKeys is set when items without the entity type attribute are
	// recognised by their key shape (singletable.Schema.MatchKeys);
	// KeyOnly lists the fields held only in the key
	// (singletable.Schema.KeyOnly).
	MatchKeys bool
	KeyOnly   []string
	// Fields are the fields, in struct order (a KeyOnly field tagged
	// dynamodbav:"-" last).
	Fields []Field
}

// Unique is one declaration of values kept unique by guard items, a
// singletable.Unique as the schema gave it: the Go fields whose values,
// together, are unique, and whether the guard is keyed by their hash.
type Unique struct {
	Fields []string
	Hash   bool
}

// Field is one field: its Go name (as key templates, Where and Fields
// name it) and the attribute it is stored under; Attr is "-" for a field
// held only in keys (singletable.Schema.KeyOnly), which has none.
type Field struct {
	Name, Attr string
	// TimeForm is the dynamodbav option a time field is stored under
	// ("rfc3339", "rfc3339milli", "date", "unix", "unixmilli"), "" for the
	// default: writes cut such a time to what the form holds.
	TimeForm string
}

// Key is a key attribute rendered from a template.
type Key struct {
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
	// escaped, fixed-width encoding. See singletable.Schema for the
	// formats.
	Format string
}

// EntityIndex is how one entity appears in one index.
type EntityIndex struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// PK and SK are the key templates of a templated index (SK is the
	// zero value without a sort key).
	PK, SK Key
	// Partition and Sort are the key fields of a multi-attribute index,
	// in key order.
	Partition, Sort []Field
	// Shards is the number of write shards of a templated index's
	// partition key (suffix "#shard_<n>"), 0 when not sharded.
	Shards int
	// HasWhen is true when a When predicate decides, beyond the presence
	// of the key fields, whether the item is in the index; WhenFields are
	// the fields it reads.
	HasWhen    bool
	WhenFields []string
}

// Query describes a query in the terms of the declaration: its key
// condition written with the templates rather than values, so one
// description covers every call built the same way.
type Query struct {
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
func (q Query) KeyCondition() string {
	if q.Sort == "" {
		return q.Partition
	}
	return q.Partition + " AND " + q.Sort
}
