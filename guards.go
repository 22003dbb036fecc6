package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// UniqueGuardType is the entity type stored on unique guard items (see
// [Schema].Unique), so that scans and migrations can recognise them.
const UniqueGuardType = "singletable.UniqueGuard"

// Attributes of a unique guard item besides the table's keys: the primary
// key of the item that owns the value.
const (
	guardOwnerPK = "OwnerPK"
	guardOwnerSK = "OwnerSK"
)

// guardPlan is what a schema declares beyond keys and indexes.
type guardPlan struct {
	unique           []*uniquePlan
	version          *model.Field
	created, updated *model.Field
	ttl              *model.Field
	// createdCut and updatedCut are the precision of the key formats
	// holding CreatedAt and UpdatedAt (0: no cut): the library's stamps
	// are cut to it, so that a key renders the stamp it made.
	createdCut, updatedCut time.Duration
}

// managed reports whether the library sets f itself.
func (g *guardPlan) managed(f *model.Field) bool {
	return f != nil && (f == g.version || f == g.created || f == g.updated)
}

func (e *entityDef) compileGuards(s Schema[reflect.Value]) error {
	g := &e.guards
	inPrimary := func(f *model.Field) bool {
		return slices.Contains(e.pk.fields, f) || slices.Contains(e.sk.fields, f)
	}
	field := func(role, name string) (*model.Field, error) {
		f := e.byName[name]
		if f == nil {
			return nil, e.unknownField(name, role, name)
		}
		if inPrimary(f) {
			return nil, validationErr(e.name, name, "%s: the field is part of the primary key", role)
		}
		return f, nil
	}
	if err := e.compileUnique(s.Unique, inPrimary); err != nil {
		return err
	}
	var err error
	if s.Version != "" {
		if g.version, err = field("Version", s.Version); err != nil {
			return err
		}
		switch g.version.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return validationErr(e.name, s.Version, "Version: the field is %s; it must be an integer", g.version.Type)
		}
	}
	isTime := func(t reflect.Type) bool {
		return t == model.TimeType || (t.Kind() == reflect.Pointer && t.Elem() == model.TimeType)
	}
	if s.CreatedAt != "" {
		if g.created, err = field("CreatedAt", s.CreatedAt); err != nil {
			return err
		}
		if !isTime(g.created.Type) {
			return validationErr(e.name, s.CreatedAt, "CreatedAt: the field is %s; it must be time.Time or *time.Time", g.created.Type)
		}
	}
	if s.UpdatedAt != "" {
		if g.updated, err = field("UpdatedAt", s.UpdatedAt); err != nil {
			return err
		}
		if !isTime(g.updated.Type) {
			return validationErr(e.name, s.UpdatedAt, "UpdatedAt: the field is %s; it must be time.Time or *time.Time", g.updated.Type)
		}
	}
	if g.createdCut, err = e.stampCut(g.created, "CreatedAt"); err != nil {
		return err
	}
	if g.updatedCut, err = e.stampCut(g.updated, "UpdatedAt"); err != nil {
		return err
	}
	if s.TTL != "" {
		if g.ttl, err = field("TTL", s.TTL); err != nil {
			return err
		}
		// Stored as epoch seconds, and not at all when zero: keys hold
		// it the same way (to the second, absent when zero).
		g.ttl.Form, g.ttl.OmitEmpty = codec.TimeUnix, true
		for _, p := range e.indexes {
			if p.multi && slices.Contains(p.deps, g.ttl) {
				return validationErr(e.name, s.TTL, "TTL: the field is a key attribute of multi-attribute index %s, whose type the table declares from the Go type, but DynamoDB's TTL is stored as a number of epoch seconds; index a copy of the time in another field", p.name)
			}
		}
		switch k := g.ttl.Type.Kind(); {
		case isTime(g.ttl.Type):
		case k >= reflect.Int && k <= reflect.Uint64:
		default:
			return validationErr(e.name, s.TTL, "TTL: the field is %s; it must be time.Time, *time.Time or an integer of epoch seconds", g.ttl.Type)
		}
	}
	roles := map[*model.Field]string{}
	for _, r := range []struct {
		f    *model.Field
		role string
	}{{g.version, "Version"}, {g.created, "CreatedAt"}, {g.updated, "UpdatedAt"}, {g.ttl, "TTL"}} {
		if r.f == nil {
			continue
		}
		if other, dup := roles[r.f]; dup {
			return validationErr(e.name, r.f.Name, "the field is both %s and %s", other, r.role)
		}
		if slices.ContainsFunc(g.unique, func(u *uniquePlan) bool { return slices.Contains(u.fields, r.f) }) {
			return validationErr(e.name, r.f.Name, "the field is both Unique and %s", r.role)
		}
		roles[r.f] = r.role
	}
	return nil
}

// encodeTTL stores the TTL field as epoch seconds, or leaves it out when
// zero.
func (e *entityDef) encodeTTL(rv reflect.Value, item map[string]types.AttributeValue) {
	f := e.guards.ttl
	if f == nil {
		return
	}
	if av := ttlValue(f, rv); av != nil {
		item[f.Attr] = av
	} else {
		delete(item, f.Attr)
	}
}

// ttlValue is the epoch-seconds value of a TTL field, nil when zero.
func ttlValue(f *model.Field, rv reflect.Value) types.AttributeValue {
	fv, ok := f.Get(rv)
	if !ok {
		return nil
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		fv = fv.Elem()
	}
	var n int64
	switch {
	case fv.Type() == model.TimeType:
		t := fv.Interface().(time.Time)
		if t.IsZero() {
			return nil
		}
		n = t.Unix()
	case fv.CanInt():
		n = fv.Int()
	case fv.CanUint():
		n = int64(fv.Uint())
	}
	if n == 0 {
		return nil
	}
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// stamp sets the managed timestamps of rv: CreatedAt when zero, UpdatedAt
// always (or only when zero, with keepUpdated).
func (e *entityDef) stamp(rv reflect.Value, now time.Time, keepUpdated bool) {
	e.stampField(rv, e.guards.created, now, true)
	e.stampField(rv, e.guards.updated, now, keepUpdated)
}

// stampField sets the managed timestamp f of rv (nil: none) to now, cut to
// the precision of the key formats holding it; with onlyZero, only when it
// is zero.
func (e *entityDef) stampField(rv reflect.Value, f *model.Field, now time.Time, onlyZero bool) {
	if f == nil {
		return
	}
	if cut := e.guards.createdCut; f == e.guards.created && cut > 0 {
		now = now.Truncate(cut)
	} else if cut := e.guards.updatedCut; f == e.guards.updated && cut > 0 {
		now = now.Truncate(cut)
	}
	fv := fieldByIndexAlloc(rv, f.Index)
	if onlyZero && !fv.IsZero() && !(fv.Kind() == reflect.Pointer && fv.Elem().IsZero()) {
		return
	}
	if fv.Kind() == reflect.Pointer {
		t := now
		fv.Set(reflect.ValueOf(&t))
	} else {
		fv.Set(reflect.ValueOf(now))
	}
}

// versionOf returns the version field of rv.
func (e *entityDef) versionOf(rv reflect.Value) int64 {
	fv, ok := e.guards.version.Get(rv)
	if !ok {
		return 0
	}
	if fv.CanInt() {
		return fv.Int()
	}
	return int64(fv.Uint())
}

func (e *entityDef) setVersion(rv reflect.Value, n int64) {
	fv := fieldByIndexAlloc(rv, e.guards.version.Index)
	if fv.CanInt() {
		fv.SetInt(n)
	} else {
		fv.SetUint(uint64(n))
	}
}

// versionIn is the version of the struct value rv, 0 for an unversioned
// entity.
func (r *boundEntity) versionIn(rv reflect.Value) int64 {
	if r.e.guards.version == nil {
		return 0
	}
	return r.e.versionOf(rv)
}

// versionCond is the condition "the stored version is the one read": for
// 0, the item has no version yet.
func (e *entityDef) versionCond(expected int64) writeplan.Condition {
	attr := e.guards.version.Attr
	eq := writeplan.AttrEq(attr, &types.AttributeValueMemberN{Value: strconv.FormatInt(expected, 10)})
	if expected == 0 {
		return writeplan.Own(writeplan.AnyOf(writeplan.AttrNotExists(attr), eq))
	}
	return writeplan.Own(eq)
}

// raceError marks a write that failed because the item changed between the
// library's own read (to learn the unique values to release) and the
// write. Single writes retry it; in a transaction it is reported as
// ErrVersionConflict.
type raceError struct{ err error }

// Error returns the wrapped error's text.
func (e *raceError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error.
func (e *raceError) Unwrap() error { return e.err }

// readSnapshot reads the item under key (strongly consistent). With all
// false, only the attributes a guarded write needs are read.
func (r *boundEntity) readSnapshot(ctx context.Context, key map[string]types.AttributeValue, fields []*model.Field, all bool) (writeplan.Snapshot, error) {
	in := &dynamodb.GetItemInput{TableName: &r.t.name, Key: key, ConsistentRead: aws.Bool(true)}
	if !all {
		attrs := []string{r.t.opts.EntityTypeAttr, r.t.opts.PartitionKey}
		inKey := func(f *model.Field) bool {
			return slices.Contains(r.e.pk.fields, f) || slices.Contains(r.e.sk.fields, f)
		}
		if r.e.foreign.matchKeys || slices.ContainsFunc(fields, inKey) {
			// isMine parses the key; a key field of a unique tuple may be
			// held only in the key (KeyOnly, or another service's item).
			attrs = appendAttr(attrs, r.t.opts.SortKey)
		}
		for _, f := range fields {
			attrs = append(attrs, f.Attr)
		}
		if v := r.e.guards.version; v != nil {
			attrs = append(attrs, v.Attr)
		}
		in.ProjectionExpression, in.ExpressionAttributeNames = projectionExpr(attrs)
	}
	out, err := r.t.planAPI(ctx, r.e.name).GetItem(ctx, in)
	if err != nil {
		return writeplan.Snapshot{}, fmt.Errorf("singletable: read %s before a guarded write: %w", r.e.name, err)
	}
	s := writeplan.Snapshot{Fields: fields}
	if len(out.Item) > 0 {
		s.Item, s.Mine = out.Item, r.isMine(out.Item)
	}
	return s, nil
}

// snapValue decodes the snapshot into T (nil when there was no item of
// this entity).
func (r *Repo[T]) snapValue(s writeplan.Snapshot) (*T, error) {
	if s.Item == nil || !r.isMine(s.Item) {
		return nil, nil
	}
	v, err := r.e.decode(r.t, s.Item)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func raced(what string) error {
	return &raceError{err: wrapSentinel(ErrVersionConflict, what+": the item changed between the library's read of it and the write", nil)}
}

// GuardOps returns puts of the unique guard items claiming v's values, for
// an item already in the table without its guards (written by another
// service, or before the field was declared Unique; a [Repo.PutOp] claims
// its own). The puts are unconditional: run them only when the values are
// known to be unique. To adopt a table's items, checking every value and
// reporting duplicates, run package migrate's UniqueGuards instead.
func (r *Repo[T]) GuardOps(v T) []WriteOp {
	owner, err := r.e.key(r.t, v)
	if err != nil {
		return []WriteOp{{table: r.t, entity: r.e.name, err: err}}
	}
	items, err := r.guardSwaps(r.e.guards.unique, reflect.Value{}, reflect.ValueOf(&v).Elem(), owner)
	if err != nil {
		return []WriteOp{{table: r.t, entity: r.e.name, err: err}}
	}
	ops := make([]WriteOp, len(items))
	for i, it := range items {
		ops[i] = WriteOp{table: r.t, entity: UniqueGuardType, put: it.tw.Put.Item, key: it.key}
	}
	return ops
}

// stampCut is the precision of the key formats of the templates holding
// f, a managed timestamp (role names it): a second for rfc3339 and unix, a
// millisecond for rfc3339milli and unixmilli, 0 when none cuts. A format
// holding only the date is refused: the library's stamp has a time of day,
// unless the field is stored as a date (tag option date), which cuts it.
func (e *entityDef) stampCut(f *model.Field, role string) (time.Duration, error) {
	if f == nil {
		return 0, nil
	}
	tpls := []compiledKey{e.pk, e.sk}
	for _, p := range e.indexes {
		if !p.multi {
			tpls = append(tpls, p.pk, p.sk)
		}
	}
	var cut time.Duration
	for _, k := range tpls {
		for i, kf := range k.fields {
			if kf != f {
				continue
			}
			switch k.places[i].Format {
			case keys.RFC3339, keys.Unix:
				cut = max(cut, time.Second)
			case keys.RFC3339Milli, keys.UnixMilli:
				cut = max(cut, time.Millisecond)
			case keys.Date:
				if f.Form != codec.TimeDate {
					return 0, validationErr(e.name, f.Name, "%s: the field is in key template %q as a date, but the time the library stamps has a time of day; store the field as a date (tag option date) or index a day field of your own", role, k.tpl.Raw)
				}
			}
		}
	}
	return cut, nil
}
