package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/tabledef"
)

// IndexDecl is an index declaration (the root's IndexSchema) with When
// taking the item as a reflect.Value.
type IndexDecl struct {
	Name                      string
	Multi                     bool
	PK, SK, PKAttr, SKAttr    string
	PartitionAttrs, SortAttrs []string
	When                      func(reflect.Value) bool
	WhenFields                []string
	Shards                    int
	Projection                types.ProjectionType
	Include                   []string
}

// Index is an index declaration resolved against the entity's fields.
type Index struct {
	Name            string
	Multi           bool
	PK, SK          Key    // templated
	PKAttr, SKAttr  string // templated
	Partition, Sort []*model.Field
	When            func(reflect.Value) bool
	Shards          int            // write shards of a templated index; 0 when not sharded
	WhenFields      []string       // as declared
	Deps            []*model.Field // every field the index's attributes depend on
	KeyFields       []*model.Field // the fields of a templated index's rendered keys, each once
	Proj            tabledef.Set   // Projection, Include as attributes
	// PKOwn, SKOwn: the field whose own attribute is the templated
	// index's partition (sort) key attribute, its template {Field:raw}:
	// the field's stored value is the key, written and removed with the
	// field, never rendered. nil for a rendered key.
	PKOwn, SKOwn *model.Field
}

// Index compiles the declaration of one index, its zone-less key times
// wall clocks in loc.
func (fs *Fields) Index(d IndexDecl, loc *time.Location) (*Index, error) {
	p := &Index{Name: d.Name, Multi: d.Multi, When: d.When, WhenFields: slices.Clone(d.WhenFields), Shards: d.Shards}
	if err := fs.checkKind(d); err != nil {
		return nil, err
	}
	if d.Shards == 1 || d.Shards < 0 || d.Shards > 100 {
		return nil, problem(fs.Entity, Where(d.Name, ""), "Shards must be 0 (not sharded) or 2-100, not %d", d.Shards)
	}
	var err error
	if p.Proj, err = fs.projection(d); err != nil {
		return nil, err
	}
	if p.Multi {
		return p, fs.multiIndex(p, d)
	}
	return p, fs.templatedIndex(p, d, loc)
}

// checkKind refuses the fields of the kind d does not declare: the kind
// is MultiAttribute, never inferred from which fields are filled.
func (fs *Fields) checkKind(d IndexDecl) error {
	given := func(names string, set ...bool) (out []string) {
		for i, n := range strings.Fields(names) {
			if set[i] {
				out = append(out, n)
			}
		}
		return out
	}
	if !d.Multi {
		if f := given("PartitionAttrs SortAttrs", len(d.PartitionAttrs) > 0, len(d.SortAttrs) > 0); len(f) > 0 {
			return problem(fs.Entity, Where(d.Name, ""), "%s given to a templated index: set MultiAttribute for a multi-attribute index (its keys are fields' own attributes), or give PK and SK templates", strings.Join(f, ", "))
		}
		return nil
	}
	if f := given("PK SK PKAttr SKAttr When WhenFields Shards", d.PK != "", d.SK != "", d.PKAttr != "", d.SKAttr != "", d.When != nil, len(d.WhenFields) > 0, d.Shards != 0); len(f) > 0 {
		return problem(fs.Entity, Where(d.Name, ""), "%s given to a multi-attribute index (MultiAttribute), which takes PartitionAttrs and SortAttrs: its keys are the item's own attributes, never rendered, suffixed or removed to hide it", strings.Join(f, ", "))
	}
	return nil
}

// projection resolves an index's projection, Include's Go field names
// made attributes (a KeyOnly field's key holds it).
func (fs *Fields) projection(d IndexDecl) (tabledef.Set, error) {
	attrs := make([]string, 0, len(d.Include))
	for _, n := range d.Include {
		if f := fs.ByName[n]; f != nil {
			n = f.Attr
		} else if fs.Excluded[n] {
			return tabledef.Set{}, fs.UnknownName("Include", n)
		}
		if n != "" {
			attrs = append(attrs, n)
		}
	}
	s, err := tabledef.Declared(d.Projection, attrs)
	if err != nil {
		return s, &Problem{Entity: fs.Entity, Field: Where(d.Name, "Projection"), Reason: "cannot be the index's projection", Err: err}
	}
	return s, nil
}

// multiIndex resolves a multi-attribute index's key fields.
func (fs *Fields) multiIndex(p *Index, d IndexDecl) error {
	if len(d.PartitionAttrs) == 0 || len(d.PartitionAttrs) > 4 || len(d.SortAttrs) > 4 {
		return problem(fs.Entity, Where(d.Name, ""), "multi-attribute keys take 1-4 partition and 0-4 sort attributes")
	}
	for i, n := range append(slices.Clone(d.PartitionAttrs), d.SortAttrs...) {
		f := fs.ByName[n]
		if f == nil {
			return fs.Unknown(Where(d.Name, ""), "", n)
		}
		if _, err := f.Scalar(); err != nil {
			return &Problem{Entity: fs.Entity, Field: Where(d.Name, n), Reason: "cannot be a multi-attribute key", Err: err}
		}
		markKeyMax(f, d.Name, i >= len(d.PartitionAttrs))
		p.Deps = append(p.Deps, f)
	}
	n := len(d.PartitionAttrs)
	p.Partition, p.Sort = p.Deps[:n:n], p.Deps[n:]
	return nil
}

// templatedIndex compiles a templated index's key templates and
// attributes, and its When predicate's fields.
func (fs *Fields) templatedIndex(p *Index, d IndexDecl, loc *time.Location) error {
	if d.PK == "" {
		return problem(fs.Entity, Where(d.Name, "PK"), "partition key template is empty")
	}
	p.PKAttr, p.SKAttr = d.PKAttr, d.SKAttr
	if p.PKAttr == "" {
		p.PKAttr = d.Name + "PK"
	}
	if d.SK == "" && p.SKAttr != "" {
		return problem(fs.Entity, Where(d.Name, p.SKAttr), "SKAttr %q is given without an SK template", p.SKAttr)
	}
	if p.SKAttr == "" && d.SK != "" {
		p.SKAttr = d.Name + "SK"
	}
	var err error
	if p.PK, p.PKOwn, err = fs.indexKey(d.PK, d.Name, p.PKAttr, false, loc); err != nil {
		return err
	}
	if p.Shards > 0 {
		if p.PKOwn != nil {
			return problem(fs.Entity, Where(d.Name, p.PKAttr), "Shards: the partition key attribute %s is field %s's own attribute, which cannot carry a shard suffix", p.PKAttr, p.PKOwn.Name)
		}
		p.PK.Reserve = len(keys.AppendShard(nil, p.Shards-1))
	}
	if d.SK != "" {
		if p.SK, p.SKOwn, err = fs.indexKey(d.SK, d.Name, p.SKAttr, true, loc); err != nil {
			return err
		}
	}
	if p.PKOwn == nil {
		p.Deps = slices.Clone(p.PK.Fields)
	}
	if p.SKOwn == nil {
		p.Deps = append(p.Deps, p.SK.Fields...)
	}
	for _, f := range p.Deps {
		if !slices.Contains(p.KeyFields, f) {
			p.KeyFields = append(p.KeyFields, f)
		}
	}
	if d.When != nil && p.PKOwn != nil && (p.SKAttr == "" || p.SKOwn != nil) {
		return problem(fs.Entity, Where(d.Name, ""), "When: every key attribute of the index is a field's own attribute, which the library cannot remove to hide the item without losing the field")
	}
	return fs.when(p, d)
}

// indexKey compiles tpl, the template of a templated index's key
// attribute attr, and returns the field stored under attr, if any (see
// ownKeyField).
func (fs *Fields) indexKey(tpl, index, attr string, sort bool, loc *time.Location) (Key, *model.Field, error) {
	k, err := fs.Key(tpl, index, attr, sort, loc)
	if err != nil {
		return k, nil, err
	}
	role := "partition"
	if sort {
		role = "sort"
	}
	own, err := fs.ownKeyField(index, attr, role, k, sort)
	return k, own, err
}

// ownKeyField returns the field stored under attr, the templated index's
// partition or sort (role) key attribute, or nil when none is. Such a
// field's stored value is the key, so its template k must be {Field:raw}
// or {Field:raw=<RE2>} for a string field: any other template would
// render a key differing from the stored value (a Problem naming index,
// attribute and why; a field that is no string belongs in a
// multi-attribute index). A field whose attribute differs from attr only
// in case is refused (see NotStored).
func (fs *Fields) ownKeyField(index, attr, role string, k Key, sort bool) (*model.Field, error) {
	f := fs.ByAttr[attr]
	if f == nil || f.KeyOnly {
		return nil, fs.NotStored(attr, "index "+index+"'s "+role+" key attribute")
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := "{" + f.Name + ":raw}"
	if pl := k.Tpl.Parts[0]; len(k.Tpl.Parts) != 1 || pl.Field != f.Name || pl.Format != format.Raw || t.Kind() != reflect.String {
		why := fmt.Sprintf("the template must be %s (or %s=<pattern>}), so that the key is the stored value, not %q", want, want[:len(want)-1], k.Tpl.Raw)
		if t.Kind() != reflect.String {
			why = fmt.Sprintf("a templated key is a string and the field is a %s: declare a multi-attribute index (IndexSchema.MultiAttribute) with the field in PartitionAttrs/SortAttrs", f.Type)
		}
		return nil, problem(fs.Entity, f.Name, "field %s is stored as attribute %q, index %s's %s key attribute: %s; or store the field under another name (a dynamodbav tag)", f.Name, attr, index, role, why)
	}
	markKeyMax(f, index, sort)
	return f, nil
}

// when checks a templated index's When and WhenFields and adds the fields
// the predicate reads to the index's dependencies.
func (fs *Fields) when(p *Index, d IndexDecl) error {
	if d.When != nil && len(d.WhenFields) == 0 {
		return problem(fs.Entity, Where(d.Name, ""), "When needs WhenFields: the fields the predicate reads, so updates know when to re-evaluate it")
	}
	if d.When == nil && len(d.WhenFields) > 0 {
		return problem(fs.Entity, Where(d.Name, ""), "WhenFields given without When")
	}
	for _, n := range d.WhenFields {
		f := fs.ByName[n]
		if f == nil {
			return fs.Unknown(Where(d.Name, "When"), "", n)
		}
		if !slices.Contains(p.Deps, f) {
			p.Deps = append(p.Deps, f)
		}
	}
	return nil
}
