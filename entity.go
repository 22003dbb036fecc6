package singletable

import (
	"reflect"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/schema"
)

// Schema declares one entity: its Go type T, the value of its entity type
// attribute, its primary key templates and its secondary indexes.
//
// Templates are literal text with {Field} placeholders naming Go fields of
// T, e.g. "USER#{Username}", each followed by the end or a delimiter such as
// '#'; values are escaped. {Field:format} reads and writes another service's
// key strings: rfc3339, rfc3339milli, date, unix, unixmilli (time.Time),
// %0Nd (integers) or raw (strings); a value it cannot write exactly is a
// *[KeyError]. See docs/adopting.md, "Key formats".
//
// Which fields are stored: every exported field of T is stored as its own
// attribute (its dynamodbav name), except a field tagged dynamodbav:"-"
// and a field named in KeyOnly, which only the keys hold. A field in a key
// template is also rendered into that key; the item keeps both.
type Schema[T any] struct {
	// Type is stored in the table's entity type attribute (default
	// "EntityType") on every item, e.g. "UserSkill".
	Type string
	// PK is the partition key template, e.g. "USER#{Username}".
	PK string
	// SK is the sort key template, e.g. "SKILL#{SkillName}" or "PROFILE".
	// Leave it empty only for tables without a sort key.
	SK string
	// Indexes are the entity's global secondary indexes.
	Indexes []IndexSchema[T]

	// Unique declares values (one field or a tuple) unique among the
	// entity's items, each claimed by a guard item written in the item's
	// transaction: a clash is [ErrAlreadyExists], a delete releases it, an
	// absent value claims nothing. Put, Delete and updates of a unique field
	// read the item first. See [Unique] and docs/reliability.md.
	Unique []Unique
	// Version names an integer field for optimistic locking. Create stores
	// 1; a non-zero version given to Put, Update or Delete conditions the
	// write ([ErrVersionConflict] when stale); version 0 makes Put and
	// Update read the stored one and Delete check nothing. A PutOp in a
	// [BatchWrite] stores the version as given.
	Version string
	// CreatedAt and UpdatedAt name time.Time (or *time.Time) fields the
	// library manages: CreatedAt set on the first write when zero, UpdatedAt
	// on every Create, Put and Update ([Repo.PutOp]: only when zero).
	CreatedAt, UpdatedAt string
	// TTL names a time.Time, *time.Time or integer (epoch seconds) field
	// stored as epoch seconds, DynamoDB's time-to-live format; a zero value
	// stores no attribute (the item does not expire). [Table.CreateTable]
	// enables TTL on that attribute; a table has at most one.
	TTL string

	// MatchKeys makes an item without the entity type attribute the
	// entity's when its keys parse with the entity's templates. See
	// docs/adopting.md, "Items without the entity type attribute".
	MatchKeys bool
	// KeyOnly names fields of the primary key or templated index keys
	// held only in those keys (tagged `dynamodbav:"-"`, or under any name,
	// a key attribute's too): every read fills them from the keys, and two
	// keys holding different values are a *[KeyError]. Not a key attribute
	// of a multi-attribute index: that is the field's own attribute. See
	// docs/adopting.md, "Fields held only in the key".
	KeyOnly []string
	// Location is where time texts without a zone and bare dates are read,
	// for the entity's top-level time fields, and zone-less key times are
	// written and read (wall clocks: layouts, date, naive isoformat); nil is UTC.
	Location *time.Location

	// ExactlyOnceCounters sends every [Repo.Update] with an operator a
	// repeat would apply again (Add, Subtract, Append, Prepend) as a
	// one-item transaction under a drawn client request token, so that
	// retries after a lost response cannot apply it twice; it costs 2 write
	// units and a consistent read back. See docs/reliability.md, "Counters".
	ExactlyOnceCounters bool
}

// Entity is a checked declaration: templates parsed, fields resolved, codec
// plan built. Create it once with [Define] or [MustDefine] and share it.
type Entity[T any] struct {
	entityPlan
}

// entityPlan is an Entity without its T, so that the code working with it
// is compiled once, not once per entity type.
type entityPlan struct {
	name     string
	typ      reflect.Type
	fields   []*model.Field
	byName   map[string]*model.Field
	byAttr   map[string]*model.Field
	excluded map[string]bool // Go fields tagged `dynamodbav:"-"`
	pk, sk   compiledKey
	indexes  []*indexPlan
	guards   guardPlan
	foreign  foreignPlan
	written  atomic.Pointer[writeSet] // encodeSized's plan for the last table
	once     bool                     // Schema.ExactlyOnceCounters
}

// Define checks a schema and builds its entity. Errors are
// *ValidationError values naming the entity, index and field concerned.
func Define[T any](s Schema[T]) (*Entity[T], error) {
	e := &Entity[T]{}
	if err := e.define(reflect.TypeFor[T](), s.untyped()); err != nil {
		return nil, err
	}
	return e, nil
}

// untyped is s with each index's When taking the item as a reflect.Value
// (of a T, addressable or not): the schema the non-generic code compiles.
// TestSchemaUntypedKeepsEveryField checks that no field is left behind.
func (s Schema[T]) untyped() Schema[reflect.Value] {
	u := Schema[reflect.Value]{Type: s.Type, PK: s.PK, SK: s.SK, Unique: s.Unique, Version: s.Version,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, TTL: s.TTL, MatchKeys: s.MatchKeys, KeyOnly: s.KeyOnly, Location: s.Location,
		ExactlyOnceCounters: s.ExactlyOnceCounters}
	for _, is := range s.Indexes {
		ui := IndexSchema[reflect.Value]{Name: is.Name, MultiAttribute: is.MultiAttribute, PK: is.PK, SK: is.SK, PKAttr: is.PKAttr, SKAttr: is.SKAttr,
			PartitionAttrs: is.PartitionAttrs, SortAttrs: is.SortAttrs, WhenFields: is.WhenFields, Shards: is.Shards,
			Projection: is.Projection, Include: is.Include}
		if when := is.When; when != nil {
			ui.When = func(rv reflect.Value) bool {
				if rv.CanAddr() {
					return when(*(*T)(rv.Addr().UnsafePointer()))
				}
				return when(rv.Interface().(T))
			}
		}
		u.Indexes = append(u.Indexes, ui)
	}
	return u
}

// define checks s, declared for struct type t, and builds e from it.
func (e *entityPlan) define(t reflect.Type, s Schema[reflect.Value]) error {
	fs, err := schema.NewFields(s.Type, t, s.KeyOnly)
	if err != nil {
		return invalid(err)
	}
	*e = entityPlan{name: s.Type, typ: t, fields: fs.All, byName: fs.ByName, byAttr: fs.ByAttr, excluded: fs.Excluded,
		once: s.ExactlyOnceCounters, foreign: foreignPlan{loc: s.Location}} // before the keys: their zone-less times are wall clocks in it
	if s.PK == "" {
		return validationErr(s.Type, "PK", "partition key template is empty")
	}
	if e.pk, err = e.compileKey(s.PK, "", "PK", false); err != nil {
		return err
	}
	if s.SK != "" {
		if e.sk, err = e.compileKey(s.SK, "", "SK", true); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, is := range s.Indexes {
		if is.Name == "" {
			return validationErr(s.Type, "", "an index has no Name")
		}
		if seen[is.Name] {
			return validationErr(s.Type, is.Name, "duplicate index name")
		}
		seen[is.Name] = true
		p, err := e.compileIndex(is)
		if err != nil {
			return err
		}
		e.indexes = append(e.indexes, p)
	}
	if err := e.compileGuards(s); err != nil {
		return err
	}
	return e.compileForeign(s)
}

// fieldSet is e's fields as internal/schema checks a declaration against them.
func (e *entityPlan) fieldSet() *schema.Fields {
	return &schema.Fields{Entity: e.name, Type: e.typ, All: e.fields, ByName: e.byName, ByAttr: e.byAttr, Excluded: e.excluded}
}

// MustDefine is like [Define] but panics on error; use it for package-level
// declarations, which are checked when the program starts.
func MustDefine[T any](s Schema[T]) *Entity[T] {
	e, err := Define(s)
	if err != nil {
		panic(err)
	}
	return e
}

// Name returns the entity type stored on every item.
func (e *entityPlan) Name() string { return e.name }

// checkNotStored refuses a field stored under attr, an attribute the
// library writes itself (what; see schema.Fields.NotStored).
func (e *entityPlan) checkNotStored(attr, what string) error {
	return invalid(e.fieldSet().NotStored(attr, what))
}

func where(index, key string) string { return schema.Where(index, key) }

// field returns the named field or a ValidationError.
func (e *entityPlan) field(name string) (*model.Field, error) {
	if f := e.byName[name]; f != nil {
		return f, nil
	}
	return nil, e.unknownField(name, "", name)
}

// unknownField is the *ValidationError for a name that is no field of the
// entity (see schema.Fields.Unknown).
func (e *entityPlan) unknownField(where, role, name string) *ValidationError {
	return validationOf(e.fieldSet().Unknown(where, role, name))
}

// marshalField returns the attribute value a multi-attribute index key
// field has in v: as the item codec stores it, except that times use the
// fixed-width key form so that they sort by instant. It is nil when the
// attribute is not stored (nil pointer, omitempty zero).
func (e *entityPlan) marshalField(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	av, err := e.marshalKeyAttr(f, v)
	if err == nil && av != nil && f.KeyMax > 0 {
		err = e.checkKeyAttr(f, av)
	}
	if err != nil {
		return nil, err
	}
	return av, nil
}

// marshalKeyAttr is marshalField without the size check (keys.Attr).
func (e *entityPlan) marshalKeyAttr(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	return keys.Attr(e.typ, f, v)
}

// marshalFieldPlain returns the attribute value the field has in v exactly
// as the item codec stores it (model.Field.Encode).
func (e *entityPlan) marshalFieldPlain(f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	return f.Encode(e.typ, v)
}

func fieldByIndexAlloc(v reflect.Value, index []int) reflect.Value { return model.FieldAlloc(v, index) }

// truncateSeconds sets the times rv stores in a shape holding less than
// the whole time to what a read decodes (model.TruncateStored).
func (e *entityPlan) truncateSeconds(rv reflect.Value) {
	model.TruncateStored(e.fields, rv, e.foreign.loc)
}

// putPrimaryKey renders the primary key of rv into item.
func (e *entityPlan) putPrimaryKey(t *Table, rv reflect.Value, item map[string]types.AttributeValue) error {
	n := 1
	if e.sk.defined() {
		n = 2
	}
	return e.putPrimaryKeyAVs(t, rv, item, make([]types.AttributeValueMemberS, n))
}

// putPrimaryKeyAVs renders the primary key of rv into item, using avs (two
// values, or one for a table without a sort key) as the attribute values.
func (e *entityPlan) putPrimaryKeyAVs(t *Table, rv reflect.Value, item map[string]types.AttributeValue, avs []types.AttributeValueMemberS) error {
	pk, sk, err := e.renderPair(rv, "", e.pk, e.sk, "PK", "SK", 0)
	if err != nil {
		return err
	}
	avs[0].Value = pk
	item[t.opts.PartitionKey] = &avs[0]
	if e.sk.defined() {
		avs[1].Value = sk
		item[t.opts.SortKey] = &avs[1]
	}
	return nil
}

// key renders just the primary key of v.
func (e *Entity[T]) key(t *Table, v T) (map[string]types.AttributeValue, error) {
	key := make(map[string]types.AttributeValue, 2)
	if err := e.putPrimaryKey(t, reflect.ValueOf(&v).Elem(), key); err != nil {
		return nil, err
	}
	return key, nil
}

// decodeInto decodes an item of table t into *out, the zero value already
// on the heap (a page's slice element), in place; key template fields the
// item lacks are parsed from its keys (see decodeRest).
func (e *Entity[T]) decodeInto(t *Table, item map[string]types.AttributeValue, out *T) error {
	complete, err := codec.UnmarshalInPlaceComplete(e.codecItem(item), out)
	if err != nil {
		return &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
	}
	complete = complete && len(e.foreign.keyOnly) == 0 // the codec never fills them
	if !complete || e.foreign.loc != nil {
		return e.decodeRest(&t.opts, item, reflect.ValueOf(out).Elem(), complete)
	}
	return nil
}

// reasonDecode is the Reason of the *ValidationError of an item that
// does not decode.
const reasonDecode = "cannot decode item"

// decode turns an item of table t into T.
func (e *Entity[T]) decode(t *Table, item map[string]types.AttributeValue) (T, error) {
	var out T
	complete, err := codec.UnmarshalComplete(e.codecItem(item), &out)
	if err != nil {
		return out, &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
	}
	complete = complete && len(e.foreign.keyOnly) == 0 // the codec never fills them
	if !complete || e.foreign.loc != nil {
		// On the heap only here: out stays on the stack otherwise.
		p := new(T)
		*p = out
		err = e.decodeRest(&t.opts, item, reflect.ValueOf(p).Elem(), complete)
		out = *p
	}
	return out, err
}

// decodeValue is decode without T, for the code that does not know it
// (the release of an item's guards): the item as an addressable struct
// value of the entity's type.
func (e *entityPlan) decodeValue(o *TableOptions, item map[string]types.AttributeValue) (reflect.Value, error) {
	rv := reflect.New(e.typ).Elem()
	if err := codec.For(e.typ).Decode(e.codecItem(item), rv); err != nil {
		return rv, &ValidationError{Entity: e.name, Reason: reasonDecode, Err: err}
	}
	return rv, e.decodeRest(o, item, rv, false)
}
