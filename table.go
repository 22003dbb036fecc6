package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/tabledef"
	"github.com/singletable-go/singletable/internal/wire"
	"github.com/singletable-go/singletable/internal/writeplan"
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
	// Observe, when set, is called after every request the table sends,
	// with an [Observation] of it, on the goroutine that sent it
	// (concurrently for concurrent requests); it must not keep o. Requests
	// a [Table.Preview] does not send are not observed.
	Observe func(ctx context.Context, o *Observation)
	// ObserveKeys adds to each [Observation] the primary keys of the
	// items the request addresses.
	ObserveKeys bool
}

// Table is one DynamoDB table holding many entity types. Bind entities to it
// with [Bind] to get typed repositories; the table learns the indexes its
// entities declare, which [Table.CreateTable] uses.
type Table struct {
	name   string
	client Client
	opts   TableOptions
	wire   bool // client is a *dynamodb.Client built with wire.Enable

	// entities are the bound entities, in the order they were bound.
	mu       sync.RWMutex
	entities []*entityPlan
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
	return &Table{name: name, client: client, opts: o, wire: wire.Carries(client)}
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// Client returns the client the table sends requests through.
func (t *Table) Client() Client { return t.client }

// Options returns a copy of the table's options.
func (t *Table) Options() TableOptions { return t.opts }

// physicalIndexes returns the entity's indexes as table t sees them:
// their key attributes and projections (schema.Index.Physical).
func (e *entityPlan) physicalIndexes(t *Table) []describe.Index {
	var out []describe.Index
	for _, p := range e.indexes {
		out = append(out, p.decl.Physical(t.cursorKeys(p)))
	}
	return out
}

// ttlAttr returns the entity's TTL attribute, or "".
func (e *entityPlan) ttlAttr() string {
	if f := e.guards.ttl; f != nil {
		return f.Attr
	}
	return ""
}

// register adds an entity to the table, checking it agrees with the
// entities already there.
func (t *Table) register(e *entityPlan) error {
	if hasSK := e.sk.defined(); hasSK != (t.opts.SortKey != "") {
		if hasSK {
			return validationErr(e.name, "SK", "the entity has a sort key template but table %s has no sort key", t.name)
		}
		return validationErr(e.name, "SK", "table %s has sort key %q but the entity has no SK template", t.name, t.opts.SortKey)
	}
	ttl, indexes := e.ttlAttr(), e.physicalIndexes(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, other := range t.entities {
		if other.name == e.name {
			return validationErr(e.name, "", "entity type %q is already bound to table %s", e.name, t.name)
		}
		if o := other.ttlAttr(); ttl != "" && o != "" && ttl != o {
			return validationErr(e.name, "TTL", "TTL attribute %q differs from entity %s's %q: a table has one TTL attribute", ttl, other.name, o)
		}
		for _, p := range indexes {
			for _, q := range other.physicalIndexes(t) {
				if p.Name == q.Name && !(p.MultiAttribute == q.MultiAttribute &&
					slices.Equal(p.Partition, q.Partition) && slices.Equal(p.Sort, q.Sort)) {
					return validationErr(e.name, "index "+p.Name, "key attributes differ from entity %s's declaration of the same index", other.name)
				}
				if p.Name == q.Name && (p.Projection != q.Projection || !slices.Equal(p.Include, q.Include)) {
					return validationErr(e.name, "index "+p.Name, "projection %s differs from entity %s's declaration of the same index, %s: an index has one projection",
						tabledef.Set{Type: p.Projection, Attrs: p.Include}, other.name, tabledef.Set{Type: q.Projection, Attrs: q.Include})
				}
			}
		}
	}
	t.entities = append(t.entities, e)
	return nil
}

// entityNamed returns the bound entity called name, nil when none is.
func (t *Table) entityNamed(name string) *entityPlan {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entities {
		if e.name == name {
			return e
		}
	}
	return nil
}

// indexes returns every index declared by the bound entities, by name.
func (t *Table) indexes() []describe.Index {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []describe.Index
	for _, e := range t.entities {
		for _, p := range e.physicalIndexes(t) {
			if !slices.ContainsFunc(out, func(q describe.Index) bool { return q.Name == p.Name }) {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b describe.Index) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Repo is the typed repository of one entity in one table.
type Repo[T any] struct {
	repo
	e *Entity[T]
}

// repo is a Repo without its T: an entity's plan bound to a table, what the
// parts of a repository that do not depend on T work with, compiled once
// rather than once per entity type.
type repo struct {
	t       *Table
	e       *entityPlan
	byShape bool // a read of an index not holding the entity type attribute: key shape tells the items
}

// Bind binds entity e to table t and returns its typed repository. It
// returns a *ValidationError when e disagrees with the entities already
// bound (an index name with other key attributes, a type name taken) or
// stores a field under the table's key or entity type attributes.
func Bind[T any](t *Table, e *Entity[T]) (*Repo[T], error) {
	if err := e.checkTableAttrs(t); err != nil {
		return nil, err
	}
	if t.opts.OmitEntityType && !e.foreign.matchKeys {
		return nil, validationErr(e.name, "MatchKeys", "table %s omits the entity type attribute (OmitEntityType), so the entity must recognise its items by their keys: set Schema.MatchKeys", t.name)
	}
	if err := t.register(&e.entityPlan); err != nil {
		return nil, err
	}
	return &Repo[T]{repo{t: t, e: &e.entityPlan}, e}, nil
}

// checkTableAttrs refuses an entity with a field stored under the table's
// key or entity type attributes, which every write sets.
func (e *entityPlan) checkTableAttrs(t *Table) error {
	o := t.opts
	for _, a := range [][2]string{{o.PartitionKey, "partition key"}, {o.SortKey, "sort key"}, {o.EntityTypeAttr, "entity type"}} {
		if err := e.checkNotStored(a[0], "table "+t.name+"'s "+a[1]+" attribute"); err != nil {
			return err
		}
	}
	return e.checkIndexTableAttrs(t)
}

// MustBind is like [Bind] but panics on error: binding mistakes are
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

// ReleaseGuards releases the unique guards (see [Schema].Unique) that
// item held: item is an item of the named entity as it was before it was
// deleted without the library, as DynamoDB's time to live deletes an item
// alone, leaving its values claimed for ever. Package streams calls it for
// the removals by time to live it decodes.
//
// A guard is released only while it names item's key as its owner and no
// item under that key (of the same entity, with the same values) holds
// its values again. It returns how many guards it deleted: releasing the
// same item again returns 0. An entity that is not bound to the table or
// declares no unique fields holds no guards.
func (t *Table) ReleaseGuards(ctx context.Context, entity string, item map[string]types.AttributeValue) (released int, err error) {
	e := t.entityNamed(entity)
	if e == nil || len(e.guards.unique) == 0 || len(item) == 0 {
		return 0, nil
	}
	rv, err := e.decodeValue(&t.opts, item)
	if err != nil {
		return 0, err
	}
	owner := make(map[string]types.AttributeValue, 2)
	if err := e.putPrimaryKey(t, rv, owner); err != nil {
		return 0, err
	}
	b := repo{t: t, e: e}
	for _, u := range e.guards.unique {
		ok, err := b.releaseGuard(ctx, u, rv, item, owner)
		if err != nil {
			return released, err
		}
		if ok {
			released++
		}
	}
	return released, nil
}

// releaseGuard deletes the guard of u's values in rv, the decoded item,
// if it exists, names owner and no item under owner's key holds the
// values again; ok reports whether it was deleted.
func (b repo) releaseGuard(ctx context.Context, u *uniquePlan, rv reflect.Value, item, owner map[string]types.AttributeValue) (ok bool, err error) {
	t := b.t
	key, has, err := b.guardKey(u, rv)
	if err != nil || !has {
		return false, err
	}
	// ownedBy fails on an absent guard, so a guard already released is
	// not counted again.
	del, err := buildCondition(writeplan.Own(b.ownedBy(owner)), b.e.name, nil)
	if err != nil {
		return false, err
	}
	// The item under the owner's key, if any, holds the value only if it
	// has item's entity type and unique attributes (a KeyOnly field is the
	// same for any item under that key).
	var held []writeplan.Check
	for _, a := range append([]string{t.opts.EntityTypeAttr}, u.attrs()...) {
		if av, ok := item[a]; ok {
			held = append(held, writeplan.AttrEq(a, av))
		}
	}
	free := writeplan.AttrNotExists(t.opts.PartitionKey)
	if len(held) > 0 {
		free = writeplan.AnyOf(free, writeplan.Not(writeplan.AllOf(held...)))
	}
	check, err := buildCondition(writeplan.Own(free), b.e.name, nil)
	if err != nil {
		return false, err
	}
	ownerKey := t.primaryKeyOf(item)
	err = t.execTx(ctx, "Delete", b.e.name, []txItem{b.deleteTxItem(key, del), {table: t, key: ownerKey,
		tw: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &t.name, Key: ownerKey,
			ConditionExpression: check.Text, ExpressionAttributeNames: check.Names, ExpressionAttributeValues: check.Values}}}}, "")
	var te *TransactionError
	notCondition := func(r TxReason) bool { return r.Code != "ConditionalCheckFailed" }
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &te) && len(te.Reasons) > 0 && !slices.ContainsFunc(te.Reasons, notCondition):
		return false, nil // absent, another item's, or held again
	}
	return false, fmt.Errorf("singletable: release the unique %s guard of %s %s: %w", u.name, b.e.name, t.keyText(owner), err)
}
