package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/model"
)

// The write plan: what every write of an entity (Create, Put, Update,
// Upsert, Delete, their transaction forms, and the guarded ops of a batch)
// derives from, so that no two of them do a step differently:
//
//   - what the write expects of the item under its key (its intent), which
//     gives both the ownership condition (never write over another
//     entity's item) and the meaning of a failed condition;
//   - what it must read first: the unique values it releases, the stored
//     version when the caller gave none, and the stored values of index key
//     fields the write does not know, so that index keys are recomputed
//     from the item and never go stale;
//   - the managed fields: Version, CreatedAt, UpdatedAt and TTL (see
//     [Schema]).
//
// The version rule is the same on every path: a non-zero version is the
// one the caller read, and the write is conditioned on it; version 0 means
// the caller read none, and the library reads the stored version itself
// (Put, Update, Upsert) and writes the next one, conditioned on what it
// read. Either way the stored version is the previous one plus one, set
// (never added) so that a retried request cannot count twice. Create
// stores version 1; Delete checks a non-zero version and otherwise none.

// intent is what a write expects of the item under its key.
type intent uint8

const (
	// anyItem: absent, or this entity's (Put, Delete, Upsert).
	anyItem intent = iota
	// absentItem: no item at all (Create).
	absentItem
	// existingItem: this entity's item (Update, Put and Delete with
	// MustExist).
	existingItem
)

// ownership is the condition that the item under the key is as i expects:
// whatever else a write checks, it never replaces or removes an item of
// another entity that happens to share its primary key.
func (r *Repo[T]) ownership(i intent) condition {
	switch i {
	case absentItem:
		return check(r.notExists())
	case existingItem:
		return check(r.exists(), r.isEntity())
	}
	c := check(anyOf(r.notExists(), r.isEntity()))
	c.onlyOwnership = true
	return c
}

// buildCond writes cond, taking the ownership condition of an unguarded
// write ready-made.
func (r *Repo[T]) buildCond(cond condition) (condExpr, error) {
	if cond.onlyOwnership {
		if ce := r.e.writeSetFor(r.t).owned; ce.text != nil {
			return ce, nil
		}
	}
	return cond.build(r.e.name, r.condNames())
}

// expectation is what one write's condition checks, to tell what its
// failure means.
type expectation struct {
	op     string // the operation as TxReason.Op names it: "Put", "Update", …
	entity string
	typ    string // the table's entity type attribute
	intent intent
	// versionAttr is set when the write checks the version: version is the
	// one expected (0: no version stored yet).
	versionAttr string
	version     int64
	// versionRead is set when the version checked is the one the library
	// read (the caller gave 0): a mismatch is then a race, not a conflict.
	versionRead bool
	// addVersion is set for an update that adds 1 to the version without
	// reading it: the caller gave 0 and the update is a transaction (a
	// token makes the ADD apply once) whose request must not depend on a
	// read. No index key holds the version then.
	addVersion bool
	// snap is what the library read before the write, when it did.
	snap *snapshot
}

func (r *Repo[T]) expect(op string, i intent) expectation {
	return expectation{op: op, entity: r.e.name, typ: r.t.opts.EntityTypeAttr, intent: i}
}

// what names the write in errors: "put User".
func (x *expectation) what() string { return strings.ToLower(x.op) + " " + x.entity }

// failed says what a failed condition means, given the item as it was
// (nil when there was none). It is the one classification every write
// uses.
func (x *expectation) failed(old map[string]types.AttributeValue) error {
	what := x.what()
	var mine bool
	if old != nil {
		s, ok := old[x.typ].(*types.AttributeValueMemberS)
		mine = ok && s.Value == x.entity
	}
	switch {
	case x.snap != nil && x.snap.changed(old):
		return raced(what)
	case x.intent == absentItem && old != nil:
		return wrapSentinel(ErrAlreadyExists, what, nil)
	case x.intent == existingItem && !mine:
		return wrapSentinel(ErrNotFound, what, nil)
	case old != nil && !mine:
		return wrapSentinel(ErrConditionFailed, what+": the item under this key is another entity's", nil)
	case x.versionAttr != "" && storedVersion(old, x.versionAttr) != x.version:
		if x.versionRead {
			// The version was the library's own read, not the caller's.
			return raced(what)
		}
		return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", what, x.version), nil)
	}
	return wrapSentinel(ErrConditionFailed, what, nil)
}

// refuse reports, from the item the library read before writing, a write
// that cannot succeed, without sending it: nil when it may go on.
func (x *expectation) refuse(s *snapshot) error {
	if s == nil {
		return nil
	}
	mine := s.item != nil && s.mine
	switch {
	case x.intent == absentItem && s.item != nil:
		return wrapSentinel(ErrAlreadyExists, x.what(), nil)
	case x.intent == existingItem && !mine:
		return wrapSentinel(ErrNotFound, x.what(), nil)
	case s.item != nil && !mine:
		return wrapSentinel(ErrConditionFailed, x.what()+": the item under this key is another entity's", nil)
	}
	return nil
}

// versioning decides the version a write of v checks and stores: the
// caller's (non-zero) version, or, for 0, the one in s, the item the
// library read (0 when absent). It sets v's version to the next one and
// records the check in x.
func (r *Repo[T]) versioning(x *expectation, rv reflect.Value, s *snapshot) {
	g := &r.e.guards
	if g.version == nil {
		return
	}
	expected := r.e.versionOf(rv)
	if expected == 0 && s != nil {
		expected = storedVersion(s.item, g.version.Attr)
		x.versionRead = true
	}
	x.versionAttr, x.version = g.version.Attr, expected
	r.e.setVersion(rv, expected+1)
}

// readFields lists the fields a write of an entity must read before it
// writes: the unique fields it moves and, when the caller gave no version
// (0), the version.
func (r *Repo[T]) readFields(unique []*model.Field, rv reflect.Value) []*model.Field {
	fields := unique
	if v := r.e.guards.version; v != nil && r.e.versionOf(rv) == 0 {
		fields = append(fields[:len(fields):len(fields)], v)
	}
	return fields
}

// versionInIndex reports whether an index key of the entity holds the
// version.
func (e *Entity[T]) versionInIndex() bool {
	for _, p := range e.indexes {
		if e.guards.version != nil && slices.Contains(p.deps, e.guards.version) {
			return true
		}
	}
	return false
}

// readBefore reads the item under key when fields is not empty (or all
// is set): the snapshot a write is conditioned on.
func (r *Repo[T]) readBefore(ctx context.Context, key map[string]types.AttributeValue, fields []*model.Field, all bool) (*snapshot, error) {
	if len(fields) == 0 && !all {
		return nil, nil
	}
	s, err := r.readSnapshot(ctx, key, fields, all)
	if err != nil {
		return nil, err
	}
	return &s, nil
}
