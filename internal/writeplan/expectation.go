package writeplan

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/model"
)

// Intent is what a write expects of the item under its key.
type Intent uint8

const (
	// AnyItem: absent, or this entity's (Put, Delete, Upsert).
	AnyItem Intent = iota
	// AbsentItem: no item at all (Create).
	AbsentItem
	// ExistingItem: this entity's item (Update, Put and Delete with
	// MustExist).
	ExistingItem
)

// Ownership is the condition that the item under the key is as i expects:
// whatever else a write checks, it never replaces or removes an item of
// another entity that happens to share its primary key. pk is the table's
// partition key attribute, typeAttr its entity type attribute, entity the
// entity's name. untyped is set for an entity that recognises its items by
// their key shape (Schema.MatchKeys): an item without the entity type
// attribute under the entity's own key is then its item too.
func Ownership(i Intent, pk, typeAttr, entity string, untyped bool) Condition {
	switch i {
	case AbsentItem:
		return Own(AttrNotExists(pk))
	case ExistingItem:
		return Own(AttrExists(pk), isEntity(typeAttr, entity, untyped))
	}
	c := Own(AnyOf(AttrNotExists(pk), isEntity(typeAttr, entity, untyped)))
	c.OnlyOwnership = true
	return c
}

func isEntity(typeAttr, entity string, untyped bool) Check {
	is := AttrEq(typeAttr, &types.AttributeValueMemberS{Value: entity})
	if untyped {
		return AnyOf(AttrNotExists(typeAttr), is)
	}
	return is
}

// Owns reports whether item (not nil) is entity's by its entity type
// attribute, or, untyped, by having none (see Ownership).
func Owns(item map[string]types.AttributeValue, typeAttr, entity string, untyped bool) bool {
	switch s := item[typeAttr].(type) {
	case *types.AttributeValueMemberS:
		return s.Value == entity
	case nil:
		return untyped
	}
	return false
}

// Expectation is what one write's condition checks, to tell what its
// failure means.
type Expectation struct {
	Op       string // the operation as TxReason.Op names it: "Put", "Update", …
	Entity   string
	TypeAttr string // the table's entity type attribute
	// Untyped is set when an item without the entity type attribute
	// under the write's key is the entity's (Schema.MatchKeys).
	Untyped bool
	Intent  Intent
	// VersionAttr is set when the write checks the version: Version is the
	// one expected (0: no version stored yet).
	VersionAttr string
	Version     int64
	// VersionRead is set when the version checked is the one the library
	// read (the caller gave 0): a mismatch is then a race, not a conflict.
	VersionRead bool
	// AddVersion is set for an update that adds 1 to the version without
	// reading it: the caller gave 0 and the update is a transaction (a
	// token makes the ADD apply once) whose request must not depend on a
	// read. No index key holds the version then.
	AddVersion bool
	// Snap is what the library read before the write, when it did.
	Snap *Snapshot
}

// What names the write in errors: "put User".
func (x *Expectation) What() string { return strings.ToLower(x.Op) + " " + x.Entity }

// Outcome is what a failed condition, or an item read before a write,
// means for the write.
type Outcome uint8

const (
	// Proceed: nothing refuses the write (Refuse only).
	Proceed Outcome = iota
	// Raced: the item changed between the library's read of it and the
	// write; a single write is planned and sent again.
	Raced
	// AlreadyExists: an item is there and the write expected none.
	AlreadyExists
	// NotFound: the write expected this entity's item, and there is none
	// (or another entity's).
	NotFound
	// OtherEntity: the item under the key is another entity's.
	OtherEntity
	// VersionConflict: the stored version is not the one the caller read
	// (Expectation.Version).
	VersionConflict
	// ConditionFailed: none of the above; the caller's condition failed.
	ConditionFailed
)

// Failed says what a failed condition means, given the item as it was
// (nil when there was none). It is the one classification every write
// uses; it never returns Proceed.
func (x *Expectation) Failed(old map[string]types.AttributeValue) Outcome {
	mine := old != nil && Owns(old, x.TypeAttr, x.Entity, x.Untyped)
	switch {
	case x.Snap != nil && x.Snap.Changed(old):
		return Raced
	case x.Intent == AbsentItem && old != nil:
		return AlreadyExists
	case x.Intent == ExistingItem && !mine:
		return NotFound
	case old != nil && !mine:
		return OtherEntity
	case x.VersionAttr != "" && StoredVersion(old, x.VersionAttr) != x.Version:
		if x.VersionRead {
			// The version was the library's own read, not the caller's.
			return Raced
		}
		return VersionConflict
	}
	return ConditionFailed
}

// Refuse reports, from the item the library read before writing, a write
// that cannot succeed, without sending it: Proceed when it may go on.
func (x *Expectation) Refuse(s *Snapshot) Outcome {
	if s == nil {
		return Proceed
	}
	mine := s.Item != nil && s.Mine
	switch {
	case x.Intent == AbsentItem && s.Item != nil:
		return AlreadyExists
	case x.Intent == ExistingItem && !mine:
		return NotFound
	case s.Item != nil && !mine:
		return OtherEntity
	}
	return Proceed
}

// VersionCheck is the condition that the stored version is the one x
// expects (for 0: the item has none yet), empty when x checks none.
func (x *Expectation) VersionCheck() Condition {
	if x.VersionAttr == "" {
		return Condition{}
	}
	eq := AttrEq(x.VersionAttr, &types.AttributeValueMemberN{Value: strconv.FormatInt(x.Version, 10)})
	if x.Version == 0 {
		return Own(AnyOf(AttrNotExists(x.VersionAttr), eq))
	}
	return Own(eq)
}

// SnapshotCheck holds while the item is as the library read it (x.Snap;
// pk is the table's partition key attribute), empty when it read nothing.
func (x *Expectation) SnapshotCheck(pk string) Condition {
	if x.Snap == nil {
		return Condition{}
	}
	return x.Snap.Cond(pk)
}

// Snapshot is what the library read of an item before a guarded write.
type Snapshot struct {
	Item   map[string]types.AttributeValue // nil when there was no item
	Mine   bool                            // the item is this entity's
	Fields []*model.Field                  // the unique fields the write moves
	// Keys are the stored key attributes some Fields were read from (the
	// item holds no attribute of their own), checked as read too.
	Keys []string
}

// Cond holds while the item's unique attributes are as read in s; pk is
// the table's partition key attribute.
func (s *Snapshot) Cond(pk string) Condition {
	if s.Item == nil {
		return Own(AttrNotExists(pk))
	}
	return Own(AttrExists(pk)).And(AsRead(s.Item, s.attrs()))
}

// attrs are the attributes the snapshot condition checks: the fields'
// (a field held only in keys has none: Attr "") and Keys.
func (s *Snapshot) attrs() []string {
	var out []string
	for _, f := range s.Fields {
		if f.Attr != "" {
			out = append(out, f.Attr)
		}
	}
	return append(out, s.Keys...)
}

// Changed reports whether old, the item as it was when the write failed,
// differs from the snapshot in what the snapshot condition checks.
func (s *Snapshot) Changed(old map[string]types.AttributeValue) bool {
	if (s.Item == nil) != (old == nil) {
		return true
	}
	for _, n := range s.attrs() {
		a, okA := s.Item[n]
		b, okB := old[n]
		if okA != okB || (okA && !attrvalue.Equal(a, b)) {
			return true
		}
	}
	return false
}

// StoredVersion reads the version attribute attr of a raw item (0 when
// absent, or when item is nil).
func StoredVersion(item map[string]types.AttributeValue, attr string) int64 {
	n, ok := item[attr].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.ParseInt(n.Value, 10, 64)
	return v
}
