package singletable

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Client is the part of *dynamodb.Client the library uses. Pass a
// *dynamodb.Client, or wrap one (to count requests, inject faults, trace).
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// TableOptions configures a [Table]. Set fields in the option functions
// passed to [NewTable]; the defaults suit the usual single-table layout.
type TableOptions struct {
	// PartitionKey and SortKey name the table's key attributes; defaults
	// "PK" and "SK". Set SortKey to "" for a table without a sort key.
	PartitionKey, SortKey string
	// EntityTypeAttr names the attribute holding each item's entity type;
	// default "EntityType".
	EntityTypeAttr string
	// OmitEntityType makes the table never write the entity type
	// attribute on the entities' items, for a team whose other services
	// would reject it. Every entity bound to the table must recognise its
	// items by their keys ([Schema].MatchKeys; [Bind] refuses one that
	// does not). The library's own items (unique guards, sequences, the
	// migration ledger) keep their types.
	OmitEntityType bool
	// CursorKeys, when set, seal cursors with AES-GCM: they are encrypted
	// (key values are not readable) and authenticated (a changed byte is
	// ErrInvalidCursor). The first key seals new cursors; all keys open
	// them, so keys can be rotated. Each key should be 32 random bytes.
	CursorKeys [][]byte
	// CursorTTL, when positive, makes cursors older than this invalid.
	CursorTTL time.Duration
	// Now returns the current time; default time.Now. Tests replace it.
	Now func() time.Time
	// Observe, when set, is called after every request the table sends to
	// DynamoDB, with what the request was for (operation, index, entity,
	// access pattern named with [WithPattern]), the capacity it consumed
	// (the table asks for it, total and per index, only when Observe is
	// set), items read and returned, retries, throttles, latency and error.
	// It is called on the goroutine that sent the request, concurrently
	// for concurrent requests, and must not keep o. A table without
	// Observe pays nothing for it. Requests a [Table.Preview] does not
	// send are not observed, nor the migration engine's own requests.
	Observe func(ctx context.Context, o *Observation)
	// ObserveKeys adds to each [Observation] the primary keys of the
	// items the request addresses. Off by default: an Observation holds
	// no values at all.
	ObserveKeys bool
}

// Table is one DynamoDB table holding many entity types. Bind entities to it
// with [Bind] to get typed repositories; the table learns the indexes its
// entities declare, which [Table.CreateTable] uses.
type Table struct {
	name   string
	client Client
	opts   TableOptions

	mu       sync.RWMutex
	entities []entityInfo
}

// NewTable returns a handle for the table called name, reached through
// client (a *dynamodb.Client or a wrapper).
func NewTable(client Client, name string, optFns ...func(*TableOptions)) *Table {
	o := TableOptions{PartitionKey: "PK", SortKey: "SK", EntityTypeAttr: "EntityType", Now: time.Now}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Table{name: name, client: client, opts: o}
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// Client returns the client the table sends requests through.
func (t *Table) Client() Client { return t.client }

// Options returns a copy of the table's options.
func (t *Table) Options() TableOptions { return t.opts }

// entityInfo is the non-generic view of a bound entity.
type entityInfo struct {
	name     string
	indexes  []physicalIndex
	ttlAttr  string
	describe func(TableOptions) EntityDescription // for Table.Describe
	// guardReleases, for an entity with unique fields, returns the guard
	// deletes of one of its items (Table.ReleaseExpiredGuards).
	guardReleases func(t *Table, item map[string]types.AttributeValue) ([]txItem, error)
}

// physicalIndex is an index as the table sees it: its key attributes.
type physicalIndex struct {
	name      string
	multi     bool
	partition []attrDef
	sort      []attrDef
}

type attrDef struct {
	name string
	typ  types.ScalarAttributeType
}

func (p physicalIndex) equal(q physicalIndex) bool {
	return p.name == q.name && p.multi == q.multi &&
		slices.Equal(p.partition, q.partition) && slices.Equal(p.sort, q.sort)
}

func (e *entityDef) info() entityInfo {
	ei := entityInfo{name: e.name, describe: e.describe}
	if f := e.guards.ttl; f != nil {
		ei.ttlAttr = f.Attr
	}
	for _, p := range e.indexes {
		pi := physicalIndex{name: p.name, multi: p.multi}
		if p.multi {
			for _, f := range p.partition {
				st, _ := scalarType(f)
				pi.partition = append(pi.partition, attrDef{f.Attr, st})
			}
			for _, f := range p.sort {
				st, _ := scalarType(f)
				pi.sort = append(pi.sort, attrDef{f.Attr, st})
			}
		} else {
			pi.partition = []attrDef{{p.pkAttr, types.ScalarAttributeTypeS}}
			if p.skAttr != "" {
				pi.sort = []attrDef{{p.skAttr, types.ScalarAttributeTypeS}}
			}
		}
		ei.indexes = append(ei.indexes, pi)
	}
	return ei
}

// register adds an entity to the table, checking it agrees with the
// entities already there.
func (t *Table) register(ei entityInfo, hasSK bool) error {
	if hasSK != (t.opts.SortKey != "") {
		if hasSK {
			return validationErr(ei.name, "SK", "the entity has a sort key template but table %s has no sort key", t.name)
		}
		return validationErr(ei.name, "SK", "table %s has sort key %q but the entity has no SK template", t.name, t.opts.SortKey)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, other := range t.entities {
		if other.name == ei.name {
			return validationErr(ei.name, "", "entity type %q is already bound to table %s", ei.name, t.name)
		}
		if ei.ttlAttr != "" && other.ttlAttr != "" && ei.ttlAttr != other.ttlAttr {
			return validationErr(ei.name, "TTL", "TTL attribute %q differs from entity %s's %q: a table has one TTL attribute", ei.ttlAttr, other.name, other.ttlAttr)
		}
		for _, p := range ei.indexes {
			for _, q := range other.indexes {
				if p.name == q.name && !p.equal(q) {
					return validationErr(ei.name, "index "+p.name, "key attributes differ from entity %s's declaration of the same index", other.name)
				}
			}
		}
	}
	t.entities = append(t.entities, ei)
	return nil
}

// indexes returns every index declared by the bound entities, by name.
func (t *Table) indexes() []physicalIndex {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []physicalIndex
	for _, e := range t.entities {
		for _, p := range e.indexes {
			if !slices.ContainsFunc(out, func(q physicalIndex) bool { return q.name == p.name }) {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b physicalIndex) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out
}

// Repo is the typed repository of one entity in one table.
type Repo[T any] struct {
	boundEntity
	e *Entity[T]
}

// boundEntity is an entity's declaration bound to a table: what the parts of
// a repository that do not depend on T work with, compiled once rather
// than once per entity type.
type boundEntity struct {
	t *Table
	e *entityDef
}

// Bind binds entity e to table t and returns its typed repository,
// checking that e agrees with the entities already bound (same index names
// must mean the same key attributes; entity type names must be unique in
// the table) and that no field of e is stored under the table's key or
// entity type attributes, which every write sets (a *ValidationError
// naming the field and the attribute).
func Bind[T any](t *Table, e *Entity[T]) (*Repo[T], error) {
	if err := e.checkTableAttrs(t); err != nil {
		return nil, err
	}
	if t.opts.OmitEntityType && !e.foreign.matchKeys {
		return nil, validationErr(e.name, "MatchKeys", "table %s omits the entity type attribute (OmitEntityType), so the entity must recognise its items by their keys: set Schema.MatchKeys", t.name)
	}
	ei := e.info()
	if len(e.guards.unique) > 0 {
		ei.guardReleases = e.guardReleases
	}
	if err := t.register(ei, e.sk.defined()); err != nil {
		return nil, err
	}
	return &Repo[T]{boundEntity{t, &e.entityDef}, e}, nil
}

// checkTableAttrs refuses an entity with a field stored under one of the
// attributes the table's options name (its keys and the entity type
// attribute), which every write sets: see [Entity.checkNotStored].
func (e *entityDef) checkTableAttrs(t *Table) error {
	o := t.opts
	attrs := []struct{ name, what string }{
		{o.PartitionKey, "table " + t.name + "'s partition key attribute"},
		{o.SortKey, "table " + t.name + "'s sort key attribute"},
		{o.EntityTypeAttr, "table " + t.name + "'s entity type attribute"},
	}
	for _, a := range attrs {
		if a.name == "" {
			continue
		}
		if err := e.checkNotStored(a.name, a.what); err != nil {
			return err
		}
	}
	return nil
}

// MustBind is like [Bind] but panics on error: boundEntity mistakes are
// programming errors found at start-up, like a bad regexp in MustCompile.
func MustBind[T any](t *Table, e *Entity[T]) *Repo[T] {
	r, err := Bind(t, e)
	if err != nil {
		panic(err)
	}
	return r
}

// Table returns the repository's table.
func (r *Repo[T]) Table() *Table { return r.t }

// Entity returns the repository's entity.
func (r *Repo[T]) Entity() *Entity[T] { return r.e }

func (t *Table) String() string { return fmt.Sprintf("singletable.Table(%s)", t.name) }
