package singletable

import (
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// The plan's managed fields (see [Schema]): the version, CreatedAt,
// UpdatedAt and TTL, with one meaning on every path (the version rule is
// in docs/architecture.md). The stored version is the previous one plus
// one, SET (never added) so that a retried request cannot count twice,
// except where a transaction's token makes an ADD apply once.

// guardPlan is what a schema declares beyond keys and indexes: the unique
// guards (plan_guards.go) and the managed fields.
type guardPlan struct {
	unique           []*uniquePlan
	version          *model.Field
	created, updated *model.Field
	ttl              *model.Field
	// createdCut and updatedCut are the precision of the key formats
	// holding CreatedAt and UpdatedAt (0: none): stamps are cut to it, so
	// that a key renders the stamp stored.
	createdCut, updatedCut time.Duration
}

// managed reports whether the library sets f itself.
func (g *guardPlan) managed(f *model.Field) bool {
	return f != nil && (f == g.version || f == g.created || f == g.updated)
}

func (e *entityPlan) compileGuards(s Schema[reflect.Value]) error {
	g := &e.guards
	field := func(role, name string) (*model.Field, error) {
		f := e.byName[name]
		if f == nil {
			return nil, e.unknownField(name, role, name)
		}
		if e.inPrimaryKey(f) {
			return nil, validationErr(e.name, name, "%s: the field is part of the primary key", role)
		}
		return f, nil
	}
	if err := e.compileUnique(s.Unique); err != nil {
		return err
	}
	var err error
	if s.Version != "" {
		if g.version, err = field("Version", s.Version); err != nil {
			return err
		}
		if k := g.version.Type.Kind(); k < reflect.Int || k > reflect.Uint64 {
			return validationErr(e.name, s.Version, "Version: the field is %s; it must be an integer", g.version.Type)
		}
	}
	stamp := func(role, name string) (f *model.Field, cut time.Duration, err error) {
		if name == "" {
			return nil, 0, nil
		}
		if f, err = field(role, name); err == nil && !isTimeType(f.Type) {
			err = validationErr(e.name, name, "%s: the field is %s; it must be time.Time or *time.Time", role, f.Type)
		}
		if err == nil {
			cut, err = e.stampCut(f, role)
		}
		return f, cut, err
	}
	if g.created, g.createdCut, err = stamp("CreatedAt", s.CreatedAt); err != nil {
		return err
	}
	if g.updated, g.updatedCut, err = stamp("UpdatedAt", s.UpdatedAt); err != nil {
		return err
	}
	if s.TTL != "" {
		if g.ttl, err = field("TTL", s.TTL); err != nil {
			return err
		}
		if err := e.compileTTL(); err != nil {
			return err
		}
	}
	return e.checkRoles()
}

// isTimeType and ttlValue stay callable by the model's files.
var (
	isTimeType = writeplan.IsTime
	ttlValue   = writeplan.TTLValue
)

// compileTTL checks the TTL field and sets how it is stored (and held in
// keys): as epoch seconds, and not at all when zero.
func (e *entityPlan) compileTTL() error {
	f := e.guards.ttl
	f.Form, f.OmitEmpty = format.Unix, true
	for _, p := range e.indexes {
		if p.multi && slices.Contains(p.deps, f) {
			return validationErr(e.name, f.Name, "TTL: the field is a key attribute of multi-attribute index %s, whose type the table declares from the Go type, but DynamoDB's TTL is stored as a number of epoch seconds; index a copy of the time in another field", p.name)
		}
	}
	switch k := f.Type.Kind(); {
	case isTimeType(f.Type):
	case k >= reflect.Int && k <= reflect.Uint64:
	default:
		return validationErr(e.name, f.Name, "TTL: the field is %s; it must be time.Time, *time.Time or an integer of epoch seconds", f.Type)
	}
	return nil
}

// checkRoles refuses a field given two roles among the managed fields and
// the unique ones.
func (e *entityPlan) checkRoles() error {
	g := &e.guards
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
func (e *entityPlan) encodeTTL(rv reflect.Value, item map[string]types.AttributeValue) {
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

// stampNow fills the managed timestamps of *v (see stamp).
func (e *Entity[T]) stampNow(t *Table, v *T, keepUpdated bool) {
	if e.guards.created == nil && e.guards.updated == nil {
		return
	}
	e.stamp(reflect.ValueOf(v).Elem(), writeplan.StampTime(t.opts.Now()), keepUpdated)
}

// stamp sets the managed timestamps of rv: CreatedAt when zero, UpdatedAt
// always (or only when zero, with keepUpdated).
func (e *entityPlan) stamp(rv reflect.Value, now time.Time, keepUpdated bool) {
	writeplan.Stamp(rv, e.guards.created, now, e.guards.createdCut, true)
	writeplan.Stamp(rv, e.guards.updated, now, e.guards.updatedCut, keepUpdated)
}

// versionOf returns the version field of rv.
func (e *entityPlan) versionOf(rv reflect.Value) int64 {
	return writeplan.Version(e.guards.version, rv)
}

func (e *entityPlan) setVersion(rv reflect.Value, n int64) {
	writeplan.SetVersion(e.guards.version, rv, n)
}

// versionIn is the version of the struct value rv, 0 for an unversioned
// entity.
func (r *repo) versionIn(rv reflect.Value) int64 {
	if r.e.guards.version == nil {
		return 0
	}
	return r.e.versionOf(rv)
}

// versioning decides the version a write of rv checks (the caller's, or
// for 0 the one in s, the item read) and records it in x; it sets rv's
// version to the next one.
func (r *repo) versioning(x *expectation, rv reflect.Value, s *writeplan.Snapshot) {
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

// deleteVersion records in x the version a delete with key kv checks: the
// caller's, if any, which proves the item was there (gone: ErrNotFound).
func (r *repo) deleteVersion(x *expectation, kv reflect.Value) {
	if v := r.versionIn(kv); v != 0 {
		x.Intent = writeplan.ExistingItem
		x.VersionAttr, x.Version = r.e.guards.version.Attr, v
	}
}

// addsVersion reports whether an update with key kv adds 1 to the version
// instead of reading it: the caller gave none, a transaction's token (inTx,
// Idempotent or countsOnce) makes the ADD apply once, and no index key
// holds it.
func (u *updateSpec) addsVersion(kv reflect.Value, inTx bool) bool {
	return u.r.e.guards.version != nil && u.r.versionIn(kv) == 0 && (inTx || u.token != "" || u.countsOnce()) && !u.r.e.versionInIndex()
}

// versionInIndex reports whether an index key of the entity holds the
// version.
func (e *entityPlan) versionInIndex() bool {
	for _, p := range e.indexes {
		if e.guards.version != nil && slices.Contains(p.deps, e.guards.version) {
			return true
		}
	}
	return false
}

// managedSets stamps UpdatedAt and sets the next version (unless
// x.AddVersion) in mv, the item after an update, and returns the fields
// the update SETs: its own, then those (so index keys built from them
// follow). CreatedAt is not an update's to set.
func (u *updateSpec) managedSets(x *expectation, mv reflect.Value, now time.Time) []*model.Field {
	g := &u.r.e.guards
	set := slices.Clone(u.set)
	if g.updated != nil {
		writeplan.Stamp(mv, g.updated, now, g.updatedCut, false)
		set = append(set, g.updated)
	}
	if g.version != nil && !x.AddVersion {
		u.r.versioning(x, mv, x.Snap)
		set = append(set, g.version)
	}
	return set
}

// writeCreatedAt writes CreatedAt = if_not_exists(CreatedAt, now): an
// upsert sent without reading may create the item.
func (u *updateSpec) writeCreatedAt(w *updateExpr, now time.Time) error {
	e := u.r.e
	f := e.guards.created
	if f == nil {
		return nil
	}
	sv := reflect.New(e.typ).Elem()
	e.stamp(sv, now, false)
	av, err := e.marshalFieldPlain(f, sv)
	if err != nil {
		return &ValidationError{Entity: e.name, Field: f.Name, Reason: "cannot encode", Err: err}
	}
	w.ub.SetIfNotExists(w.b.Name(f.Attr), w.b.Value(av))
	return nil
}

// writeVersion writes the version's ADD of 1 (x.AddVersion), or records
// the version the update stores (managedSets SETs it) in its effect.
func (u *updateSpec) writeVersion(w *updateExpr, x *expectation) {
	g := &u.r.e.guards
	switch {
	case x.AddVersion:
		w.ub.Add(w.b.Name(g.version.Attr), w.b.Value(&types.AttributeValueMemberN{Value: "1"}))
	case g.version != nil:
		w.eff.VersionAttr, w.eff.Version = g.version.Attr, x.Version+1
	}
}

// stampCut is the precision of the key formats holding f, a managed
// timestamp (role names it), 0 when none cuts. A format holding only the
// date is refused (the stamp has a time of day), unless the field is
// stored as a date (tag option date).
func (e *entityPlan) stampCut(f *model.Field, role string) (time.Duration, error) {
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
			switch kf := k.places[i].Format; {
			case kf == nil:
			case kf.Cut < 24*time.Hour:
				cut = max(cut, kf.Cut)
			case f.Form != format.Date:
				return 0, validationErr(e.name, f.Name, "%s: the field is in key template %q as a date, but the time the library stamps has a time of day; store the field as a date (tag option date) or index a day field of your own", role, k.tpl.Raw)
			}
		}
	}
	return cut, nil
}
