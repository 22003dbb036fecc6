package singletable

import (
	"context"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/expr"
)

// What an entity offers package migrate: [StoredItems] and the
// [StoredChange]s it plans through the write plan.

// MigrationLedgerType is the entity type of the items in which package
// migrate keeps a table's migration ledger, for readers of the table's
// stream and scans that skip them.
const MigrationLedgerType = "_Migration"

// StoredItems is one entity's stored items in one table, raw, as a
// migration reads and rewrites them: package migrate's backfill and
// unique guard migrations plan each item's change with [StoredItems.Rewrite]
// and [StoredItems.ClaimGuards] and apply it with [StoredChange.Apply],
// under the conditions of the write plan. [Repo.StoredItems] returns it.
type StoredItems struct {
	repo
	// decode decodes a stored item into a new value of the entity's type
	// (addressable) and, when render is set, renders that value again.
	decode func(item map[string]types.AttributeValue, render bool) (reflect.Value, map[string]types.AttributeValue, error)
}

// StoredItems returns r's stored items, for package migrate (nil for a
// nil r).
func (r *Repo[T]) StoredItems() *StoredItems {
	if r == nil {
		return nil
	}
	return &StoredItems{repo: r.repo, decode: r.decodeStored}
}

// decodeStored is StoredItems.decode for T: the generic edge of the face.
func (r *Repo[T]) decodeStored(item map[string]types.AttributeValue, render bool) (reflect.Value, map[string]types.AttributeValue, error) {
	v, err := r.e.decode(r.t, item)
	rv := reflect.ValueOf(&v).Elem()
	if err != nil || !render {
		return rv, nil, err
	}
	rendered, err := r.e.encode(r.t, v)
	return rv, rendered, err
}

// Table returns the table the items are in.
func (s *StoredItems) Table() *Table { return s.t }

// Describe describes the entity, as [Repo.Describe] does.
func (s *StoredItems) Describe() describe.Entity { return s.e.describe(s.t.opts) }

// FilterScan sets in's filter expression (and its names and values) to the
// filter of the entity's queries: the entity type attribute naming it, or,
// for an entity matching keys ([Schema].MatchKeys), none. Of the items it
// keeps, those [StoredItems.Owns] refuses are not the entity's (untyped
// items of another key shape, which a filter cannot tell).
func (s *StoredItems) FilterScan(in *dynamodb.ScanInput) {
	var b expr.Builder
	in.FilterExpression = aws.String(s.e.typeFilter(&b, &s.t.opts))
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = b.Names(), b.Values()
}

// Owns reports whether item is the entity's: its entity type attribute
// names the entity, or it has none, the entity matches keys and the
// item's key parses with its templates.
func (s *StoredItems) Owns(item map[string]types.AttributeValue) bool { return s.isMine(item) }

// Read reads the item under key with a strongly consistent GetItem; nil
// when there is none.
func (s *StoredItems) Read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := s.t.api(ctx, s.e.name).GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("singletable: %s: read: %w", s.e.name, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// StoredChange is the write that brings one stored item in line with its
// entity's declaration, as [StoredItems.Rewrite] or
// [StoredItems.ClaimGuards] planned it from the item as read.
type StoredChange struct {
	// Writes counts the items Apply writes: for a rewrite 1 (0 when the
	// item is as the declaration renders it); for a claim, the guard items
	// it claims (missing ones, and stale ones taken over).
	Writes int
	// Attrs names what changes: for a rewrite, the managed attributes it
	// sets (sorted), then those it removes; for a claim, the Unique
	// declarations ("Email", "(TeamID, URL)") whose guard the item does not
	// hold.
	Attrs []string
	// Rekey is set when a rewrite moves the item to a new primary key.
	Rekey bool
	// Units is the write capacity Apply consumes (computed from item
	// sizes; a transaction counts twice).
	Units int64
	// Holder, for a claim, is the primary key of another item of the
	// entity that holds one of the item's unique values with its guard (a
	// duplicate, which the claim leaves where it is), and Taken names the
	// Go fields of that Unique; nil when there is none.
	Holder map[string]types.AttributeValue
	Taken  []string

	apply func(ctx context.Context) error
}

// Apply writes the change. It returns an error matching
// [ErrConditionFailed] when the item (or, for a claim, a guard or an
// owner read) changed since it was read: read it again and plan anew.
// For a re-key whose new key holds another item, or a guard held by
// another item, it returns an error matching [ErrAlreadyExists].
func (c *StoredChange) Apply(ctx context.Context) error {
	if c.apply == nil {
		return nil
	}
	return c.apply(ctx)
}

// Rewrite decodes item, a stored item of the entity, renders it again with
// the current declaration and compares the managed attributes (primary
// key and index keys); other attributes are kept as they are.
//
// A change of index attributes only is an UpdateItem of just those,
// conditioned on the attributes they derive from being as read. A change
// of primary key is one transaction: a create at the new key, a delete of
// the old item on condition it is unchanged, and the hand-over of its
// unique guards; if the new key already holds exactly that item, only the
// old item is deleted.
func (s *StoredItems) Rewrite(item map[string]types.AttributeValue) (*StoredChange, error) {
	return s.planRewrite(item)
}

// ClaimGuards reads the guard items of item's unique values (consistently)
// and plans the transaction that claims the missing ones and takes over
// stale ones (whose owner no longer holds the value); a guard another item
// holds with the same value is a duplicate, reported in Holder and Taken.
// Every claim is conditioned on what was read, so Apply never overrides a
// concurrent writer.
func (s *StoredItems) ClaimGuards(ctx context.Context, item map[string]types.AttributeValue) (*StoredChange, error) {
	return s.planClaims(ctx, item)
}

// GetItems reads the raw items under keys, primary keys of t, with
// strongly consistent [BatchGetItem] requests sent one at a time, retried
// as [BatchGet]'s are: items[i] is the item under keys[i], nil when there
// is none. It returns the first error when some keys could not be read.
//
// [BatchGetItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
func (t *Table) GetItems(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	read := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	items, errs := t.getItems(ctx, BatchOptions{Concurrency: 1}.run(), read, keys, nil)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}
