package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
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

// Record is one record of a table's stream, in the library's terms: a
// [Reader] makes them from the DynamoDB Streams API's records
// ([RecordFromAPI]), and the streams/lambdaevent module from a Lambda
// function's events.DynamoDBEvent. Images are nil when the record has
// none (an INSERT has no old image; the stream's view type decides the
// rest).
type Record struct {
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
	UserIdentity *Identity
}

// Identity is a stream record's userIdentity.
type Identity struct {
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
	// with ChangeOptions.LibraryItems) it is [singletable.UniqueGuardType],
	// [singletable.SequenceType] or the migration ledger's "_Migration".
	Entity string
	// Library is true for changes of the library's own items: unique
	// guards, sequences and migration ledgers. Their Old and New are nil;
	// the raw images are in Record.
	Library bool
	// Old and New are the images decoded into the entity's Go type (a T
	// for a target made from a *Repo[T], as in a [singletable.Collection]);
	// nil where the record has no such image: Old for an insert, New for a
	// removal.
	Old, New any
	// TTL is true for a removal made by DynamoDB's time to live rather
	// than by a request.
	TTL bool
	// Record is the stream record, with the raw keys and images.
	Record Record
}

// Value returns the item as it is after the change, or as it was before
// a removal: New, or Old when New is nil.
func (c Change) Value() any {
	if c.New != nil {
		return c.New
	}
	return c.Old
}

// ChangeOptions tunes [NewChanges].
type ChangeOptions struct {
	// SkipUnknown skips records of items whose entity type no target
	// accepts (and items without an entity type) instead of returning an
	// *singletable.UnknownTypeError, as [singletable.Collection.SkipUnknown]
	// does.
	SkipUnknown bool
	// LibraryItems delivers changes of the library's own items (unique
	// guards, sequences, migration ledgers) as changes of their own kind
	// (Change.Library, Change.Entity naming the kind). By default they are
	// skipped.
	LibraryItems bool
}

// Changes decodes the records of a table's stream into typed change
// events, routing each image to the [singletable.Target] of its entity
// exactly as a collection routes items (through a [singletable.Decoder]).
// Make it with [NewChanges]; it is safe for concurrent use.
type Changes struct {
	t    *singletable.Table
	dec  *singletable.Decoder
	opts ChangeOptions
}

// NewChanges returns a decoder of table's stream records into typed
// change events for the entities of targets: use [singletable.Repo.Target]
// targets, which decode and store nothing (a target made with AppendTo,
// StoreOne or PassTo decodes the same way; it is not called or appended
// to). No target, targets of another table, nil targets and two targets
// for one entity are a *singletable.ValidationError.
//
// The stream's view type must carry the images to decode:
// NEW_AND_OLD_IMAGES gives both (singletable.CreateTableOptions.Stream),
// NEW_IMAGE or OLD_IMAGE one of them; a KEYS_ONLY record cannot be typed
// and is an error.
func NewChanges(table *singletable.Table, targets []*singletable.Target, optFns ...func(*ChangeOptions)) (*Changes, error) {
	c := &Changes{t: table}
	for _, fn := range optFns {
		fn(&c.opts)
	}
	var err error
	if c.dec, err = table.Decoder(targets); err != nil {
		return nil, err
	}
	return c, nil
}

// isLibraryType reports whether typ is the entity type of one of the
// library's own items.
func isLibraryType(typ string) bool {
	return typ == singletable.UniqueGuardType || typ == singletable.SequenceType || typ == singletable.MigrationLedgerType
}

// Decode turns one stream record into a typed change. ok is false when
// the record is skipped: an item of the library's own (without
// LibraryItems) or of an entity no target accepts (with SkipUnknown). An
// item of an unknown type is an *singletable.UnknownTypeError otherwise;
// an image that does not decode is the entity's decode error.
func (c *Changes) Decode(rec Record) (ch Change, ok bool, err error) {
	ch = Change{Kind: ChangeKind(rec.EventName), Record: rec}
	switch ch.Kind {
	case ChangeInsert, ChangeModify, ChangeRemove:
	default:
		return Change{}, false, fmt.Errorf("singletable/streams: change %s: unknown event name %q", rec.EventID, rec.EventName)
	}
	if rec.OldImage == nil && rec.NewImage == nil {
		return Change{}, false, fmt.Errorf("singletable/streams: change %s: the record has no image; the stream's view type must be NEW_AND_OLD_IMAGES, NEW_IMAGE or OLD_IMAGE", rec.EventID)
	}
	ch.TTL = ch.Kind == ChangeRemove && rec.UserIdentity != nil &&
		rec.UserIdentity.PrincipalID == ttlPrincipal && rec.UserIdentity.Type == ttlIdentityType

	// Each image goes to its own entity's target: the new image names the
	// change, the old one names a removal.
	var newErr, oldErr error
	if rec.NewImage != nil {
		ch.Entity, ch.New, newErr = c.dec.Decode(rec.NewImage)
	}
	if rec.OldImage != nil {
		var oldType string
		oldType, ch.Old, oldErr = c.dec.Decode(rec.OldImage)
		if rec.NewImage == nil {
			ch.Entity = oldType
		}
		if isLibraryType(oldType) {
			ch.Old, oldErr = nil, nil
		}
	}
	if isLibraryType(ch.Entity) {
		if !c.opts.LibraryItems {
			return Change{}, false, nil
		}
		ch.Library, ch.Old, ch.New = true, nil, nil
		return ch, true, nil
	}
	for _, err := range []error{newErr, oldErr} {
		if _, unknown := err.(*singletable.UnknownTypeError); unknown && c.opts.SkipUnknown {
			return Change{}, false, nil
		}
		if err != nil {
			return Change{}, false, err
		}
	}
	return ch, true, nil
}

// Handle decodes records in order and calls fn with each change that is
// not skipped, stopping at the first error (a decode error or fn's),
// which names the record's sequence number. A Lambda function handles
// its batch this way; a [Reader] hands on each batch of a shard for it.
func (c *Changes) Handle(ctx context.Context, records []Record, fn func(context.Context, Change) error) error {
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
	return fmt.Sprintf("singletable/streams: change %s (sequence number %s): %v", e.EventID, e.SequenceNumber, e.Err)
}

// Unwrap returns the cause.
func (e *ChangeError) Unwrap() error { return e.Err }

// ReleaseExpiredGuards releases the unique guards (see
// [singletable.Schema].Unique) that an item removed by time to live held:
// DynamoDB deletes the item alone, so without this its values would stay
// claimed for ever. Call it from a stream handler with every change; it
// acts only on removals made by TTL (Change.TTL) of entities bound to the
// table that declare unique fields, reading the values from the old image
// (the stream must carry old images), and returns how many guards it
// deleted ([singletable.Table.ReleaseGuards]).
//
// A guard that another item holds, or that an item re-created under the
// expired item's key with the same value holds, is never released; an
// item re-created there with other values, or an item of another entity
// there, does not keep the expired item's values claimed. Handling the
// same record twice is harmless: the second time deletes nothing and
// returns 0.
func (c *Changes) ReleaseExpiredGuards(ctx context.Context, ch Change) (released int, err error) {
	if !ch.TTL || ch.Kind != ChangeRemove || ch.Library || ch.Record.OldImage == nil {
		return 0, nil
	}
	return c.t.ReleaseGuards(ctx, ch.Entity, ch.Record.OldImage)
}
