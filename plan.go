package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
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
//
// The plan's non-generic core is internal/writeplan: conditions, intents,
// the snapshot and the one classification of a failed condition (an
// Outcome, which expectation.err turns into this package's errors). What
// needs the entity's type or this package's errors (the version of a T, the
// read before a write, the errors of an Outcome) is here.

// ownership is the condition that the item under the key is as i expects:
// whatever else a write checks, it never replaces or removes an item of
// another entity that happens to share its primary key.
func (r *boundEntity) ownership(i writeplan.Intent) writeplan.Condition {
	return r.e.ownershipOf(&r.t.opts, i)
}

// buildCond writes cond, taking the ownership condition of an unguarded
// write ready-made.
func (r *boundEntity) buildCond(cond writeplan.Condition) (writeplan.CondExpr, error) {
	if cond.OnlyOwnership {
		if ce := r.e.writeSetFor(r.t).owned; ce.Text != nil {
			return ce, nil
		}
	}
	return buildCondition(cond, r.e.name, r.condNames())
}

// expectation is what one write's condition checks (writeplan.Expectation),
// with the root's errors for what its failure means.
type expectation struct {
	writeplan.Expectation
}

func (r *boundEntity) expect(op string, i writeplan.Intent) expectation {
	return expectation{writeplan.Expectation{Op: op, Entity: r.e.name, TypeAttr: r.t.opts.EntityTypeAttr, Untyped: r.e.foreign.matchKeys, Intent: i}}
}

// failed says what a failed condition means, given the item as it was
// (nil when there was none): writeplan.Expectation.Failed, the one
// classification every write uses, as the error the caller sees.
func (x *expectation) failed(old map[string]types.AttributeValue) error {
	return x.err(x.Failed(old))
}

// refuse reports, from the item the library read before writing, a write
// that cannot succeed, without sending it: nil when it may go on.
func (x *expectation) refuse(s *writeplan.Snapshot) error {
	return x.err(x.Refuse(s))
}

// err is the error of outcome o of the write: a sentinel error
// (errors.Is), or a race (raced) that a single write plans again.
func (x *expectation) err(o writeplan.Outcome) error {
	switch o {
	case writeplan.Proceed:
		return nil
	case writeplan.Raced:
		return raced(x.What())
	case writeplan.AlreadyExists:
		return wrapSentinel(ErrAlreadyExists, x.What(), nil)
	case writeplan.NotFound:
		return wrapSentinel(ErrNotFound, x.What(), nil)
	case writeplan.OtherEntity:
		return wrapSentinel(ErrConditionFailed, x.What()+": the item under this key is another entity's", nil)
	case writeplan.VersionConflict:
		return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", x.What(), x.Version), nil)
	}
	return wrapSentinel(ErrConditionFailed, x.What(), nil)
}

// versioning decides the version a write of v checks and stores: the
// caller's (non-zero) version, or, for 0, the one in s, the item the
// library read (0 when absent). It sets v's version to the next one and
// records the check in x.
func (r *boundEntity) versioning(x *expectation, rv reflect.Value, s *writeplan.Snapshot) {
	g := &r.e.guards
	if g.version == nil {
		return
	}
	expected := r.e.versionOf(rv)
	if expected == 0 && s != nil {
		expected = writeplan.StoredVersion(s.Item, g.version.Attr)
		x.VersionRead = true
	}
	x.VersionAttr, x.Version = g.version.Attr, expected
	r.e.setVersion(rv, expected+1)
}

// readFields lists the fields a write of an entity must read before it
// writes: the unique fields it moves and, when the caller gave no version
// (0), the version.
func (r *boundEntity) readFields(unique []*model.Field, rv reflect.Value) []*model.Field {
	fields := unique
	if v := r.e.guards.version; v != nil && r.e.versionOf(rv) == 0 {
		fields = append(fields[:len(fields):len(fields)], v)
	}
	return fields
}

// versionInIndex reports whether an index key of the entity holds the
// version.
func (e *entityDef) versionInIndex() bool {
	for _, p := range e.indexes {
		if e.guards.version != nil && slices.Contains(p.deps, e.guards.version) {
			return true
		}
	}
	return false
}

// readBefore reads the item under key when fields is not empty (or all
// is set): the snapshot a write is conditioned on.
func (r *boundEntity) readBefore(ctx context.Context, key map[string]types.AttributeValue, fields []*model.Field, all bool) (*writeplan.Snapshot, error) {
	if len(fields) == 0 && !all {
		return nil, nil
	}
	s, err := r.readSnapshot(ctx, key, fields, all)
	if err != nil {
		return nil, err
	}
	return &s, nil
}
