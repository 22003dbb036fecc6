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

	"github.com/singletable-go/singletable/internal/itemsize"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// UniqueGuardType is the entity type stored on unique guard items (see
// [Unique]).
const UniqueGuardType = "singletable.UniqueGuard"

// Unique declares values that must be unique among an entity's items (see
// [Schema].Unique): one field, such as a user's Email, or a tuple of
// fields, such as (TeamID, URL) for "a URL is unique within its team".
//
// Each value present is claimed by a guard item whose partition key is
//
//	UNIQUE#<Type>#<attribute>#<value>                       one field
//	UNIQUE#<Type>#<attr 1>#…#<attr n>#<value 1>#…#<value n>  a tuple
//	UNIQUE#<Type>#<attr 1>#…#<attr n>#$SHA256:<hex digest>   Hash
//
// (sort key "UNIQUE" on a table with one), the values in the default key
// encoding (escaped, fixed-width), whatever format the item's own key
// templates give the field.
type Unique struct {
	// Fields are the Go field names whose values, together, must be
	// unique. A tuple is claimed only when every field is present (a
	// non-empty string, a non-nil pointer). Fields of the primary key may
	// be part of a tuple, but not the whole of it.
	Fields []string
	// Hash keys the guard by the SHA-256 of the values, so that long
	// values (URLs) stay under DynamoDB's 2,048-byte partition key limit;
	// without it a value too long is a *KeyError before the network.
	Hash bool
}

// uniquePlan is a compiled [Unique].
type uniquePlan struct {
	fields []*model.Field
	names  []string // the fields' Go names
	hash   bool
	name   string // in messages and transaction reasons: "Email", "(TeamID, URL)"
	prefix []byte // "UNIQUE#<Type>#<attr 1>#…#<attr n>#"
}

// attrs lists the stored attributes of the unique's fields.
func (u *uniquePlan) attrs() []string {
	out := make([]string, len(u.fields))
	for i, f := range u.fields {
		out[i] = f.Attr
	}
	return out
}

// compileUnique checks and compiles the schema's Unique declarations.
func (e *entityPlan) compileUnique(decl []Unique) error {
	g := &e.guards
	seen := map[string]bool{}
	for _, d := range decl {
		if len(d.Fields) == 0 {
			return validationErr(e.name, "", "Unique: a declaration names no field")
		}
		u := &uniquePlan{hash: d.Hash, names: slices.Clone(d.Fields)}
		keyOnly := true
		for _, name := range d.Fields {
			f := e.byName[name]
			if f == nil {
				return e.unknownField(name, "Unique", name)
			}
			if slices.Contains(u.fields, f) {
				return validationErr(e.name, name, "Unique: listed twice")
			}
			if err := keys.TypeSupported(f.Type); err != nil {
				return &ValidationError{Entity: e.name, Field: name, Reason: "Unique: the value cannot be rendered into a guard key", Err: err}
			}
			if !e.inPrimaryKey(f) {
				keyOnly = false
			}
			u.fields = append(u.fields, f)
		}
		if keyOnly {
			if len(d.Fields) == 1 {
				return validationErr(e.name, d.Fields[0], "Unique: the field is part of the primary key")
			}
			return validationErr(e.name, d.Fields[0], "Unique: every field of (%s) is part of the primary key, which is unique already", strings.Join(d.Fields, ", "))
		}
		u.name = d.Fields[0]
		if len(d.Fields) > 1 {
			u.name = "(" + strings.Join(d.Fields, ", ") + ")"
		}
		set := slices.Sorted(slices.Values(u.attrs()))
		id := strings.Join(set, "\x00")
		if seen[id] {
			return validationErr(e.name, d.Fields[0], "Unique: %s listed twice", u.name)
		}
		seen[id] = true
		u.prefix = []byte("UNIQUE#")
		for _, s := range append([]string{e.name}, u.attrs()...) {
			u.prefix = append(keys.AppendEscaped(u.prefix, s), '#')
		}
		g.unique = append(g.unique, u)
	}
	return nil
}

// uniqueFields lists the fields of the given uniques, each once.
func uniqueFields(us []*uniquePlan) []*model.Field {
	var out []*model.Field
	for _, u := range us {
		for _, f := range u.fields {
			out = appendUnique(out, f)
		}
	}
	return out
}

// guards is how the table stores unique guard items.
func (t *Table) guards() writeplan.Guards {
	return writeplan.Guards{PK: t.opts.PartitionKey, SK: t.opts.SortKey, TypeAttr: t.opts.EntityTypeAttr, Type: UniqueGuardType}
}

// guardKey renders the key of the guard item claiming u's values in rv;
// ok is false when a value is absent or rv is the zero Value (no item).
func (r *repo) guardKey(u *uniquePlan, rv reflect.Value) (key map[string]types.AttributeValue, ok bool, err error) {
	b, bad, err := writeplan.GuardValue(u.prefix, u.fields, u.hash, rv)
	switch {
	case err != nil:
		return nil, false, &KeyError{Entity: r.e.name, Key: "unique " + u.name, Missing: []string{bad.Name}, Err: err}
	case b == nil:
		return nil, false, nil
	case len(b) > keyLimit(false):
		return nil, false, &KeyError{Entity: r.e.name, Key: "unique " + u.name,
			Err: fmt.Errorf("guard key is %d bytes, over DynamoDB's %d-byte limit (declare the Unique with Hash)", len(b), keyLimit(false))}
	}
	return r.t.guards().Key(b), true, nil
}

// ownedBy holds when the guard item belongs to owner.
func (r *repo) ownedBy(owner map[string]types.AttributeValue) writeplan.Check {
	return r.t.guards().OwnedBy(owner)
}

// guardPut claims a unique value for owner.
func (r *repo) guardPut(u *uniquePlan, key, owner map[string]types.AttributeValue) (txItem, error) {
	item := r.t.guards().Item(key, owner)
	ce, err := buildCondition(r.t.guards().OwnerCond(owner), r.e.name, nil)
	if err != nil {
		return txItem{}, err
	}
	what := fmt.Sprintf("%s.%s: value is taken by another item", r.e.name, u.name)
	return txItem{table: r.t, key: key, guard: "unique " + u.name, size: itemsize.Of(item),
		tw: types.TransactWriteItem{Put: &types.Put{
			TableName:                 &r.t.name,
			Item:                      item,
			ConditionExpression:       ce.Text,
			ExpressionAttributeNames:  ce.Names,
			ExpressionAttributeValues: ce.Values,
		}},
		failed: func(map[string]types.AttributeValue) error { return wrapSentinel(ErrAlreadyExists, what, nil) },
	}, nil
}

// guardDelete releases a unique value held by owner. When the guard
// belongs to another item (two items held the value before the guards
// were adopted), the release fails with a *foreignGuardError: a single
// write is made again without it.
func (r *repo) guardDelete(u *uniquePlan, key, owner map[string]types.AttributeValue) (txItem, error) {
	ce, err := buildCondition(r.t.guards().OwnerCond(owner), r.e.name, nil)
	if err != nil {
		return txItem{}, err
	}
	what := fmt.Sprintf("%s.%s: the guard of the old value belongs to another item", r.e.name, u.name)
	id := r.t.itemID(key)
	it := r.deleteTxItem(key, ce)
	it.guard, it.release = "release unique "+u.name, true
	it.failed = func(old map[string]types.AttributeValue) error {
		err := wrapSentinel(ErrConditionFailed, what, nil)
		if len(old) > 0 && !r.t.guards().OwnerIs(old, owner) {
			return &foreignGuardError{guard: id, err: err}
		}
		return err
	}
	return it, nil
}

// foreignGuardError is the failure of a guard release whose guard belongs
// to another item. It matches ErrConditionFailed (the outcome in a
// caller's transaction).
type foreignGuardError struct {
	guard itemID
	err   error
}

func (e *foreignGuardError) Error() string { return e.err.Error() }

func (e *foreignGuardError) Unwrap() error { return e.err }

// withoutReleases drops the releases of the guards in foreign from items.
func withoutReleases(items []txItem, foreign []itemID) []txItem {
	if len(foreign) == 0 {
		return items
	}
	return slices.DeleteFunc(items, func(it txItem) bool {
		return it.release && slices.Contains(foreign, it.table.itemID(it.key))
	})
}

// movedUniques lists the uniques an update moves: those with a field it
// sets, removes or changes by an operator.
func (u *updateSpec) movedUniques() []*uniquePlan {
	var moved []*uniquePlan
	for _, g := range u.r.e.guards.unique {
		if slices.ContainsFunc(g.fields, func(f *model.Field) bool { return u.setsOrRemoves(f) || u.operates(f) }) {
			moved = append(moved, g)
		}
	}
	return moved
}

// withGuards returns it, a write of the item under it.key, followed by the
// guard items moving the uniques us from their values in the item s read
// (if any) to those in newV (the zero Value for a delete). held, when not
// nil, tells whether a value the write keeps is guarded (see guardSwaps).
func (r *Repo[T]) withGuards(it txItem, us []*uniquePlan, s *writeplan.Snapshot, newV reflect.Value, held func(key map[string]types.AttributeValue) (bool, error)) ([]txItem, error) {
	if len(us) == 0 {
		return []txItem{it}, nil
	}
	oldV, err := r.snapValue(s)
	if err != nil {
		return nil, err
	}
	guards, err := r.guardSwaps(us, oldV, newV, it.key, held)
	if err != nil {
		return nil, err
	}
	return append([]txItem{it}, guards...), nil
}

// heldBy returns the check a write makes of each unique value it keeps:
// whether owner holds the value's guard, by a strongly consistent read of
// the guard item.
func (r *repo) heldBy(ctx context.Context, owner map[string]types.AttributeValue) func(key map[string]types.AttributeValue) (bool, error) {
	return func(key map[string]types.AttributeValue) (bool, error) {
		out, err := r.t.planAPI(ctx, r.e.name).GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.t.name, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, fmt.Errorf("singletable: read the guard of a unique value of %s before a write: %w", r.e.name, err)
		}
		return len(out.Item) > 0 && r.t.guards().OwnerIs(out.Item, owner), nil
	}
}

// GuardOps returns puts of the unique guard items claiming v's values, for
// an item already in the table without its guards. The puts are
// unconditional: run them only when the values are known to be unique. To
// adopt a table's items, checking every value and reporting duplicates,
// run package migrate's UniqueGuards instead.
func (r *Repo[T]) GuardOps(v T) []WriteOp {
	owner, err := r.e.key(r.t, v)
	var items []txItem
	if err == nil {
		items, err = r.guardSwaps(r.e.guards.unique, reflect.Value{}, reflect.ValueOf(&v).Elem(), owner, nil)
	}
	if err != nil {
		return []WriteOp{{table: r.t, entity: r.e.name, err: err}}
	}
	ops := make([]WriteOp, len(items))
	for i, it := range items {
		ops[i] = plainPut(r.t, UniqueGuardType, it.tw.Put.Item, it.key)
	}
	return ops
}

// guardSwaps returns the guard items that move the uniques in us from
// their values in oldV to those in newV (either may be the zero Value: no
// item). A tuple whose values are all unchanged keeps its guard; when
// held says owner does not hold it (another service stored the value
// without a guard, or before the field was declared Unique), the write
// claims it, and fails with ErrAlreadyExists if another item holds it.
func (r *repo) guardSwaps(us []*uniquePlan, oldV, newV reflect.Value, owner map[string]types.AttributeValue, held func(key map[string]types.AttributeValue) (bool, error)) ([]txItem, error) {
	var items []txItem
	for _, u := range us {
		oldKey, hadOld, err := r.guardKey(u, oldV)
		if err != nil {
			return nil, err
		}
		newKey, hasNew, err := r.guardKey(u, newV)
		if err != nil {
			return nil, err
		}
		if hadOld && hasNew && r.t.itemID(oldKey) == r.t.itemID(newKey) {
			if held == nil {
				continue
			}
			ok, err := held(newKey)
			if err != nil {
				return nil, err
			}
			if ok {
				continue // kept, and guarded: the guard stays
			}
			hadOld = false // kept without a guard of its own: claim it
		}
		if hadOld {
			it, err := r.guardDelete(u, oldKey, owner)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		if hasNew {
			it, err := r.guardPut(u, newKey, owner)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
	}
	return items, nil
}
