package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// readFields lists the fields a write must read before it writes: the
// unique fields it moves and, when the caller gave no version, the version.
func (r *repo) readFields(unique []*model.Field, rv reflect.Value) []*model.Field {
	fields := unique
	if v := r.e.guards.version; v != nil && r.e.versionOf(rv) == 0 {
		fields = append(fields[:len(fields):len(fields)], v)
	}
	return fields
}

// updateReads lists what an update must read before it writes: every field
// of a unique it moves, the version unless it has one or adds 1, the index
// key fields of indexReads, and with readLists the lists it appends to.
// whole is set for an upsert that must read the whole item.
func (u *updateSpec) updateReads(moved []*uniquePlan, kv reflect.Value, addVersion bool) (reads []*model.Field, whole bool) {
	reads = uniqueFields(moved)
	if !addVersion {
		reads = u.r.readFields(reads, kv)
	}
	reads = append(reads[:len(reads):len(reads)], u.indexReads()...)
	if u.readLists {
		for _, o := range u.ops {
			if o.Kind == writeplan.OpAppend || o.Kind == writeplan.OpPrepend {
				reads = appendUnique(reads, o.Field)
			}
		}
	}
	// An upsert that gives every field of every index key need not read:
	// either way the keys it writes are the ones a Put would.
	whole = u.upsert && (len(reads) > 0 || !u.givesEveryIndex())
	return reads, whole
}

// refuseReads refuses an Idempotent update that would read the item
// first: a repeat with its token must be the same request.
func (u *updateSpec) refuseReads(reads []*model.Field, whole bool) error {
	if u.token == "" {
		return nil
	}
	if needs := u.indexNeeds(); len(needs) > 0 {
		return unknownKeyFields(u.r.e.name, needs, "an Idempotent update cannot read them from the stored item (a repeat with its token must be the same request); set them too")
	}
	if len(reads) > 0 || whole {
		return validationErr(u.r.e.name, "", "Idempotent: this update must read the item first (%s), so a repeat with the token would not be the same request",
			readReason(reads, whole))
	}
	return nil
}

// readReason says why an update reads the item first.
func readReason(reads []*model.Field, whole bool) string {
	var names []string
	for _, f := range reads {
		names = append(names, f.Name)
	}
	switch {
	case len(names) > 0:
		return "to learn " + strings.Join(names, ", ") + "; set them, or give the version"
	case whole:
		return "an upsert that does not set every index key field"
	}
	return ""
}

// readPut reads, for a put of rv, the fields in reads (x.Snap) and refuses
// a put that cannot succeed. It returns the item's key.
func (r *repo) readPut(ctx context.Context, x *expectation, rv reflect.Value, reads []*model.Field) (map[string]types.AttributeValue, error) {
	key := make(map[string]types.AttributeValue, 2)
	if err := r.e.putPrimaryKey(r.t, rv, key); err != nil {
		return nil, err
	}
	var err error
	if x.Snap, err = r.readBefore(ctx, key, reads, false); err != nil {
		return nil, err
	}
	return key, x.refuse(x.Snap)
}

// readBefore reads the item under key (strongly consistent) when fields
// is not empty (or all is set, to read it whole): the snapshot a write is
// conditioned on.
func (r *repo) readBefore(ctx context.Context, key map[string]types.AttributeValue, fields []*model.Field, all bool) (*writeplan.Snapshot, error) {
	if len(fields) == 0 && !all {
		return nil, nil
	}
	in := &dynamodb.GetItemInput{TableName: &r.t.name, Key: key, ConsistentRead: aws.Bool(true)}
	if !all {
		attrs := []string{r.t.opts.EntityTypeAttr, r.t.opts.PartitionKey}
		if r.e.foreign.matchKeys || slices.ContainsFunc(fields, r.e.inPrimaryKey) {
			// isMine parses the key; a key field of a unique tuple may be
			// held only in the key (KeyOnly, or another service's item).
			attrs = appendAttr(attrs, r.t.opts.SortKey)
		}
		for _, f := range fields {
			attrs = appendAttr(attrs, f.Attr)
		}
		attrs = r.e.indexKeysHolding(&r.t.opts, attrs, fields, nil)
		if v := r.e.guards.version; v != nil {
			attrs = append(attrs, v.Attr)
		}
		in.ProjectionExpression, in.ExpressionAttributeNames = projectionExpr(attrs)
	}
	out, err := r.t.planAPI(ctx, r.e.name).GetItem(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("singletable: read %s before a guarded write: %w", r.e.name, err)
	}
	s := &writeplan.Snapshot{Fields: fields}
	if len(out.Item) > 0 {
		s.Item, s.Mine = out.Item, r.isMine(out.Item)
		s.Keys = r.e.indexKeysHolding(&r.t.opts, nil, fields, out.Item)
	}
	return s, nil
}

// snapValue decodes the item in s into a T (the zero Value when nothing
// was read, or there was no item of this entity).
func (r *Repo[T]) snapValue(s *writeplan.Snapshot) (reflect.Value, error) {
	if s == nil || s.Item == nil || !r.isMine(s.Item) {
		return reflect.Value{}, nil
	}
	v, err := r.e.decode(r.t, s.Item)
	if err != nil {
		return reflect.Value{}, err
	}
	return reflect.ValueOf(&v).Elem(), nil
}

// raceError marks a write that failed because the item changed between the
// library's read and the write. Single writes retry it; in a transaction
// it is reported as ErrVersionConflict.
type raceError struct{ err error }

func (e *raceError) Error() string { return e.err.Error() }

func (e *raceError) Unwrap() error { return e.err }

func raced(what string) error {
	return &raceError{err: wrapSentinel(ErrVersionConflict, what+": the item changed between the library's read of it and the write", nil)}
}
