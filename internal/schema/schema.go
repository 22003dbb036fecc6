// Package schema compiles what an entity's declaration says that needs
// neither the entity's type parameter nor the root's types: the fields it
// names, its key templates bound to fields, each index's kind, keys, When
// and projection, the fields only keys hold, and the key attributes
// indexes share with the table and with each other. A mistake is a
// *Problem, which the root reports as a *ValidationError with the same
// entity, field, reason and cause.
package schema

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// Problem is a mistake in a declaration, before any request is sent.
type Problem struct {
	Entity, Field, Reason string
	Err                   error
}

// Error names the entity, field and reason, as the root's
// *ValidationError does without its prefix.
func (p *Problem) Error() string {
	s := p.Entity + ": " + p.Field + ": " + p.Reason
	if p.Err != nil {
		s += ": " + p.Err.Error()
	}
	return s
}

func problem(entity, field, format string, args ...any) *Problem {
	return &Problem{Entity: entity, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Where names a key attribute (or key, "PK") of index ("" for the primary
// key), or the index itself when key is "", as a Problem's Field.
func Where(index, key string) string {
	if index == "" {
		return key
	}
	if key == "" {
		return "index " + index
	}
	return "index " + index + " " + key
}

// Fields are an entity's fields as its declaration names them: by Go
// name and by stored attribute.
type Fields struct {
	Entity   string
	Type     reflect.Type
	All      []*model.Field
	ByName   map[string]*model.Field
	ByAttr   map[string]*model.Field
	Excluded map[string]bool // Go fields tagged `dynamodbav:"-"`
}

// NewFields resolves the fields of entity, declared for type t, marking
// those keyOnly names (model.Field.KeyOnly) before any key is compiled,
// so that none is taken for a field stored under a key attribute's name.
// One a dynamodbav:"-" tag keeps out of the item fields is added with no
// attribute (Attr ""): the keys render it and every decode parses it back.
func NewFields(entity string, t reflect.Type, keyOnly []string) (*Fields, error) {
	if t.Kind() != reflect.Struct {
		return nil, problem(entity, "", "entity type %s is not a struct", t)
	}
	if entity == "" {
		return nil, problem("", "", "Schema.Type is empty for %s", t)
	}
	fs := &Fields{Entity: entity, Type: t, All: model.StructFields(t), ByName: map[string]*model.Field{},
		ByAttr: map[string]*model.Field{}, Excluded: model.ExcludedFields(t)}
	for _, f := range fs.All {
		if f.FormErr != nil {
			return nil, &Problem{Entity: entity, Field: f.Name, Reason: "its dynamodbav tag's layout= option is not a usable time layout", Err: f.FormErr}
		}
		fs.ByName[f.Name] = f
		fs.ByAttr[f.Attr] = f
	}
	for _, name := range keyOnly {
		sf, ok := t.FieldByName(name)
		if f := fs.ByName[name]; f != nil {
			f.KeyOnly = true
		} else if ok && fs.Excluded[name] {
			f := &model.Field{Name: name, Index: sf.Index, Type: sf.Type, KeyOnly: true}
			fs.All = append(fs.All, f)
			fs.ByName[name] = f
		}
	}
	return fs, nil
}

// Unknown is the Problem of name, no field of the entity, where (the
// Problem's Field; name when "") the declaration or call names it, in
// role ("Unique", "Version", …; may be "").
func (fs *Fields) Unknown(where, role, name string) *Problem {
	if where == "" {
		where = name
	}
	if role != "" {
		role += ": "
	}
	if fs.Excluded[name] {
		return problem(fs.Entity, where, "%sfield %s is excluded by its dynamodbav:\"-\" tag (it is never stored)", role, name)
	}
	return problem(fs.Entity, where, "%sunknown field %q (no exported field of %s has that name)", role, name, fs.Type)
}

// UnknownName is the Problem of a name in a condition (role: "filter",
// "condition", …) that is neither a field nor an attribute the entity's
// items are stored with.
func (fs *Fields) UnknownName(role, name string) *Problem {
	if fs.Excluded[name] {
		return problem(fs.Entity, name, "%s names field %s, which is excluded by its dynamodbav:\"-\" tag (it is never stored)", role, name)
	}
	return problem(fs.Entity, name, "%s names %q, which is neither a Go field of %s nor an attribute its items are stored with", role, name, fs.Type)
}

// NotStored refuses a field stored under attr, an attribute the library
// writes itself (what, e.g. "the table's sort key attribute"), or one
// differing from it only in case (decoding matches names ignoring case).
// An empty attr is no clash.
func (fs *Fields) NotStored(attr, what string) error {
	for _, f := range fs.All {
		if attr == "" {
			break
		}
		switch {
		case f.KeyOnly: // never stored: the key attribute may carry its name
		case f.Attr == attr:
			return problem(fs.Entity, f.Name, "field %s is stored as attribute %q, %s, which the library writes: the field's value would be overwritten; store the field under another name (a dynamodbav tag)", f.Name, attr, what)
		case strings.EqualFold(f.Attr, attr):
			return problem(fs.Entity, f.Name, "field %s is stored as attribute %q, which differs from %s %q only in case: items are decoded matching names ignoring case, so the field would read back that attribute's value; store the field under another name (a dynamodbav tag)", f.Name, f.Attr, what, attr)
		}
	}
	return nil
}

// Key is a key template with its placeholders bound to fields.
type Key struct {
	Tpl    keys.Template
	Fields []*model.Field // the fields filling the placeholders, in order
	Places []*keys.Part   // the placeholders of Tpl: Fields[i] fills Places[i]
	Sort   bool           // a sort key: DynamoDB allows 1,024 bytes, not 2,048
	// Reserve is the room kept for a suffix added after rendering: the
	// longest "#shard_<n>" of a write-sharded index's partition key (a
	// query fans out to every shard, so every suffix must fit).
	Reserve int
}

// Key compiles tpl, the template of key attr (or "PK", "SK") of index
// ("" for the primary key), its zone-less times wall clocks in loc.
func (fs *Fields) Key(tpl, index, attr string, sort bool, loc *time.Location) (Key, error) {
	kt, err := keys.Parse(tpl)
	if err != nil {
		return Key{}, &Problem{Entity: fs.Entity, Field: Where(index, attr), Reason: "bad key template", Err: err}
	}
	kt.In(loc)
	k := Key{Tpl: kt, Sort: sort}
	for j := range kt.Parts {
		p := &kt.Parts[j]
		if !p.IsPlaceholder() {
			continue
		}
		f := fs.ByName[p.Field]
		if f == nil {
			return Key{}, fs.Unknown(Where(index, attr), "", p.Field)
		}
		if err := p.CheckType(f.Type); err != nil {
			return Key{}, &Problem{Entity: fs.Entity, Field: Where(index, attr), Reason: fmt.Sprintf("field %s cannot be part of a key", p.Field), Err: err}
		}
		k.Fields = append(k.Fields, f)
		k.Places = append(k.Places, p)
	}
	return k, nil
}

// markKeyMax records that f is a key attribute of index (a sort key's
// when sort), keeping the smallest size limit of those it is in.
func markKeyMax(f *model.Field, index string, sort bool) {
	if limit := keys.Limit(sort); f.KeyMax == 0 || limit < f.KeyMax {
		f.KeyMax, f.KeyIndex, f.KeySort = limit, index, sort
	}
}
