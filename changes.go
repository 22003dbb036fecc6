package singletable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/writeplan"
)

// ChangeKind is what a stream record says happened to an item: its
// eventName.
type ChangeKind string

// The kinds of change a DynamoDB stream records.
const (
	ChangeInsert ChangeKind = "INSERT" // a new item
	ChangeModify ChangeKind = "MODIFY" // an item replaced or updated
	ChangeRemove ChangeKind = "REMOVE" // an item deleted (by a write or by TTL)
)

// StreamRecord is one record of a table's stream, in the library's terms:
// the package streams makes them from the DynamoDB Streams API's records,
// and the streams/lambdaevent module from a Lambda function's
// events.DynamoDBEvent. Images are nil when the record has none (an
// INSERT has no old image; the stream's view type decides the rest).
type StreamRecord struct {
	// EventID is the record's unique identifier.
	EventID string
	// EventName is INSERT, MODIFY or REMOVE.
	EventName string
	// SequenceNumber orders the records of one shard; readers checkpoint
	// it.
	SequenceNumber string
	// ApproximateCreationDateTime is when the change was made, as the
	// stream reports it.
	ApproximateCreationDateTime time.Time
	// Keys is the primary key of the changed item.
	Keys map[string]types.AttributeValue
	// OldImage and NewImage are the item before and after the change.
	OldImage, NewImage map[string]types.AttributeValue
	// UserIdentity is who made the change when it was not a request:
	// DynamoDB's time to live deletes items as principal
	// "dynamodb.amazonaws.com" of type "Service". Nil otherwise.
	UserIdentity *StreamIdentity
}

// StreamIdentity is a stream record's userIdentity.
type StreamIdentity struct {
	PrincipalID string
	Type        string
}

// ttlPrincipal and ttlIdentityType identify deletions made by time to
// live, as AWS documents them for stream records.
const (
	ttlPrincipal    = "dynamodb.amazonaws.com"
	ttlIdentityType = "Service"
)

// Change is a typed change event: a stream record of an entity's item
// decoded into the entity's Go type.
type Change struct {
	// Kind is what happened: ChangeInsert, ChangeModify or ChangeRemove.
	Kind ChangeKind
	// Entity is the changed item's entity type: the new image's, or the
	// old image's for a removal. For the library's own items (delivered
	// with ChangeOptions.LibraryItems) it is UniqueGuardType,
	// SequenceType or MigrationLedgerType.
	Entity string
	// Library is true for changes of the library's own items: unique
	// guards, sequences and migration ledgers. Their Old and New are nil;
	// the raw images are in Record.
	Library bool
	// Old and New are the images decoded into the entity's Go type (a T
	// for a target made from a *Repo[T], as in a [Collection]); nil where
	// the record has no such image: Old for an insert, New for a removal.
	Old, New any
	// TTL is true for a removal made by DynamoDB's time to live rather
	// than by a request.
	TTL bool
	// Record is the stream record, with the raw keys and images.
	Record StreamRecord
}

// Value returns the item as it is after the change, or as it was before
// a removal: New, or Old when New is nil.
func (c Change) Value() any {
	if c.New != nil {
		return c.New
	}
	return c.Old
}

// ChangeOptions tunes [Table.Changes].
type ChangeOptions struct {
	// SkipUnknown skips records of items whose entity type no target
	// accepts (and items without an entity type) instead of returning an
	// *UnknownTypeError, as [Collection.SkipUnknown] does.
	SkipUnknown bool
	// LibraryItems delivers changes of the library's own items (unique
	// guards, sequences, migration ledgers) as changes of their own kind
	// (Change.Library, Change.Entity naming the kind). By default they are
	// skipped.
	LibraryItems bool
}

// Changes decodes the records of a table's stream into typed change
// events, routing each image to the [Target] of its entity exactly as a
// [Collection] routes items. Make it with [Table.Changes]; it is safe for
// concurrent use when its targets are (targets made with [Repo.Member]
// are).
type Changes struct {
	t    *Table
	rt   *router // routes each image to its entity's target, as collections do
	opts ChangeOptions
}

// Changes returns a decoder of the table's stream records into typed
// change events for the entities of targets: use [Repo.Member] targets,
// which decode and store nothing (a target made with [Repo.Into],
// [Repo.IntoOne] or [Repo.IntoFunc] decodes the same way; it is not
// called or appended to). Targets of another table, nil targets and two
// targets for one entity are a *ValidationError.
//
// The stream's view type must carry the images to decode:
// NEW_AND_OLD_IMAGES gives both ([CreateTableOptions].Stream), NEW_IMAGE
// or OLD_IMAGE one of them; a KEYS_ONLY record cannot be typed and is an
// error.
func (t *Table) Changes(targets []*Target, optFns ...func(*ChangeOptions)) (*Changes, error) {
	c := &Changes{t: t, opts: applyOpts(optFns)}
	rt, errs := newRouter(t, targets, false, false)
	if len(targets) == 0 {
		errs = append(errs, validationErr("", "", "changes: no targets"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.rt = rt
	return c, nil
}

// isLibraryType reports whether typ is the entity type of one of the
// library's own items.
func isLibraryType(typ string) bool {
	return typ == UniqueGuardType || typ == SequenceType || typ == MigrationLedgerType
}

// Decode turns one stream record into a typed change. ok is false when
// the record is skipped: an item of the library's own (without
// LibraryItems) or of an entity no target accepts (with SkipUnknown). An
// item of an unknown type is an *UnknownTypeError otherwise; an image
// that does not decode is the entity's decode error.
func (c *Changes) Decode(rec StreamRecord) (ch Change, ok bool, err error) {
	ch = Change{Kind: ChangeKind(rec.EventName), Record: rec}
	switch ch.Kind {
	case ChangeInsert, ChangeModify, ChangeRemove:
	default:
		return Change{}, false, fmt.Errorf("singletable: change %s: unknown event name %q", rec.EventID, rec.EventName)
	}
	if rec.OldImage == nil && rec.NewImage == nil {
		return Change{}, false, fmt.Errorf("singletable: change %s of item %s: the record has no image; the stream's view type must be NEW_AND_OLD_IMAGES, NEW_IMAGE or OLD_IMAGE", rec.EventID, c.t.keyText(rec.Keys))
	}
	ch.TTL = ch.Kind == ChangeRemove && rec.UserIdentity != nil &&
		rec.UserIdentity.PrincipalID == ttlPrincipal && rec.UserIdentity.Type == ttlIdentityType

	// Each image goes to its own entity's target: the new image names the
	// change, the old one names a removal.
	newTg, newTyp, newAmb := c.rt.target(rec.NewImage)
	oldTg, oldTyp, oldAmb := c.rt.target(rec.OldImage)
	ch.Entity = newTyp
	if rec.NewImage == nil {
		ch.Entity = oldTyp
	}
	if isLibraryType(ch.Entity) {
		if !c.opts.LibraryItems {
			return Change{}, false, nil
		}
		ch.Library = true
		return ch, true, nil
	}
	if rec.NewImage != nil {
		if newTg == nil {
			return c.unknown(rec, newTyp, newAmb)
		}
		if ch.New, err = newTg.image(rec.NewImage); err != nil {
			return Change{}, false, err
		}
	}
	if rec.OldImage != nil && !isLibraryType(oldTyp) {
		if oldTg == nil {
			return c.unknown(rec, oldTyp, oldAmb)
		}
		if ch.Old, err = oldTg.image(rec.OldImage); err != nil {
			return Change{}, false, err
		}
	}
	return ch, true, nil
}

func (c *Changes) unknown(rec StreamRecord, typ string, ambiguous []string) (Change, bool, error) {
	if c.opts.SkipUnknown {
		return Change{}, false, nil
	}
	return Change{}, false, &UnknownTypeError{Type: typ, Ambiguous: ambiguous, Key: rec.Keys, keys: c.t.keyNames(), in: "change"}
}

// Handle decodes records in order and calls fn with each change that is
// not skipped, stopping at the first error (a decode error or fn's),
// which names the record's sequence number. A Lambda function handles
// its batch this way; the package streams's reader does the same per
// shard.
func (c *Changes) Handle(ctx context.Context, records []StreamRecord, fn func(context.Context, Change) error) error {
	for _, rec := range records {
		ch, ok, err := c.Decode(rec)
		if err == nil && ok {
			err = fn(ctx, ch)
		}
		if err != nil {
			return &ChangeError{SequenceNumber: rec.SequenceNumber, EventID: rec.EventID, Err: err}
		}
	}
	return nil
}

// ChangeError reports the stream record whose change could not be
// handled: records before it were handled, it and those after it were
// not. A Lambda function reports SequenceNumber as its batch item failure
// so that the batch resumes there.
type ChangeError struct {
	SequenceNumber string
	EventID        string
	Err            error
}

// Error names the record and the cause.
func (e *ChangeError) Error() string {
	return fmt.Sprintf("singletable: change %s (sequence number %s): %v", e.EventID, e.SequenceNumber, e.Err)
}

// Unwrap returns the cause.
func (e *ChangeError) Unwrap() error { return e.Err }

// ReleaseExpiredGuards releases the unique guards (see [Schema].Unique)
// that an item removed by time to live held: DynamoDB deletes the item
// alone, so without this its values would stay claimed for ever. Call it
// from a stream handler with every change; it acts only on removals made
// by TTL (Change.TTL) of entities bound to the table that declare unique
// fields, reading the values from the old image (the stream must carry
// old images), and returns how many guards it deleted.
//
// Each guard is deleted in a transaction conditioned on the guard still
// naming the removed item as its owner and on no item under that key
// holding its value again: a guard that another item holds, or that an
// item re-created under the same key with the same value holds, is never
// released; an item re-created there with other values, or an item of
// another entity there, does not keep the expired item's values claimed. Handling the same record twice is
// harmless.
func (t *Table) ReleaseExpiredGuards(ctx context.Context, ch Change) (released int, err error) {
	if !ch.TTL || ch.Kind != ChangeRemove || ch.Library || ch.Record.OldImage == nil {
		return 0, nil
	}
	ei, ok := t.entityNamed(ch.Entity)
	if !ok || ei.guardReleases == nil {
		return 0, nil
	}
	items, err := ei.guardReleases(t, ch.Record.OldImage)
	if err != nil {
		return 0, err
	}
	owner := t.primaryKeyOf(ch.Record.OldImage)
	for _, it := range items {
		// The item under the owner's key, if any, does not hold the value:
		// it is another entity's (its type differs from the expired
		// item's; an item of another entity with an attribute of the same
		// name and value does not hold it), or one of the unique's
		// attributes differs from the expired item's. A field stored only
		// in the key (KeyOnly) is the same for any item under that key.
		var held []writeplan.Check
		for _, a := range append([]string{t.opts.EntityTypeAttr}, it.attrs...) {
			if av, ok := ch.Record.OldImage[a]; ok {
				held = append(held, writeplan.AttrEq(a, av))
			}
		}
		free := writeplan.AttrNotExists(t.opts.PartitionKey)
		if len(held) > 0 {
			free = writeplan.AnyOf(free, writeplan.Not(writeplan.AllOf(held...)))
		}
		cond, err := buildCondition(writeplan.Own(free), ch.Entity, nil)
		if err != nil {
			return 0, err
		}
		in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			it.tw,
			{ConditionCheck: &types.ConditionCheck{
				TableName:                 &t.name,
				Key:                       owner,
				ConditionExpression:       cond.Text,
				ExpressionAttributeNames:  cond.Names,
				ExpressionAttributeValues: cond.Values,
			}},
		}}
		_, err = t.client.TransactWriteItems(ctx, in)
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			released++
		case errors.As(err, &tce) && conditionFailedOnly(tce):
			// The guard belongs to another item, or the item lives again.
		default:
			return released, fmt.Errorf("singletable: release the %s guard of expired %s %s: %w", it.guard, ch.Entity, t.keyText(owner), err)
		}
	}
	return released, nil
}

// conditionFailedOnly reports whether a transaction was cancelled only
// because conditions did not hold.
func conditionFailedOnly(tce *types.TransactionCanceledException) bool {
	failed := false
	for _, r := range tce.CancellationReasons {
		switch code := derefString(r.Code); code {
		case "", "None":
		case "ConditionalCheckFailed":
			failed = true
		default:
			return false
		}
	}
	return failed
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// entityNamed returns the bound entity called name.
func (t *Table) entityNamed(name string) (entityInfo, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entities {
		if e.name == name {
			return e, true
		}
	}
	return entityInfo{}, false
}

// guardRelease is the delete of one guard an expired item held, and the
// attributes of the unique's fields (the value is held while an item
// under the owner's key has all of them as the expired item had).
type guardRelease struct {
	txItem
	attrs []string
}

// guardReleases returns, for an item of e, the deletes of the guards its
// unique values hold, each conditioned on the item being their owner.
func (e *Entity[T]) guardReleases(t *Table, item map[string]types.AttributeValue) ([]guardRelease, error) {
	old, err := e.decode(t, item)
	if err != nil {
		return nil, err
	}
	r := &Repo[T]{boundEntity{t, &e.entityDef}, e}
	owner, err := e.key(t, old)
	if err != nil {
		return nil, err
	}
	var out []guardRelease
	for _, u := range e.guards.unique {
		items, err := r.guardSwaps([]*uniquePlan{u}, reflect.ValueOf(&old).Elem(), reflect.Value{}, owner)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out = append(out, guardRelease{txItem: it, attrs: u.attrs()})
		}
	}
	return out, nil
}

// image decodes item into T without delivering it: the decoding a
// [Changes] uses.
func (r *Repo[T]) image(item map[string]types.AttributeValue) (any, error) {
	return r.e.decode(r.t, item)
}
