package schema

import (
	"slices"

	"github.com/singletable-go/singletable/internal/model"
)

// Held reports whether the library writes attr on every item of the
// entity in a table (its key attributes, the entity type attribute unless
// omitted), and the template that value is rendered from.
type Held func(attr string) (tpl string, held bool)

// TableAttrs refuses a templated index whose key attribute is one the
// items of table hold from the primary key or entity type (held) with a
// template that would render another value: the attribute holds one
// value. Writes leave such an attribute to the primary key: it is never
// removed, so an index with When or Shards needs a key of its own to hide
// or shard.
func (fs *Fields) TableAttrs(table string, indexes []*Index, held Held) error {
	for i, p := range indexes {
		if p.Multi {
			continue
		}
		rendered := false
		for _, k := range []struct {
			attr string
			tpl  string
			own  *model.Field
		}{{p.PKAttr, p.PK.Tpl.Raw, p.PKOwn}, {p.SKAttr, p.SK.Tpl.Raw, p.SKOwn}} {
			want, owned := held(k.attr)
			switch {
			case k.attr == "":
			case !owned:
				rendered = rendered || k.own == nil
			case k.tpl != want:
				return problem(fs.Entity, Where(p.Name, k.attr), "key attribute %s is table %s's own (the primary key or entity type writes it), so the index's template must be %q, not %q: one attribute holds one value", k.attr, table, want, k.tpl)
			case k.attr == p.PKAttr && p.Shards > 0:
				return problem(fs.Entity, Where(p.Name, k.attr), "Shards: the partition key attribute %s is table %s's own, which cannot carry a shard suffix", k.attr, table)
			}
		}
		if p.When != nil && !rendered {
			return problem(fs.Entity, Where(p.Name, ""), "When: no key attribute of the index is the index's own (each is table %s's key or entity type attribute, or a field's), so the library cannot remove one to hide the item", table)
		}
		if err := fs.sharedKeyAttrs(indexes[:i], p, held); err != nil {
			return err
		}
	}
	return nil
}

// sharedKeyAttrs refuses a key attribute that templated index p renders
// and an index before it renders too, unless both write the same value
// under the same conditions: the same template, fields and shards, and no
// When (else one would remove what the other sets).
func (fs *Fields) sharedKeyAttrs(before []*Index, p *Index, held Held) error {
	for _, q := range before {
		if q.Multi {
			continue
		}
		for _, a := range [][2]string{{p.PKAttr, p.PK.Tpl.Raw}, {p.SKAttr, p.SK.Tpl.Raw}} {
			if _, isHeld := held(a[0]); a[0] == "" || isHeld || fs.ByAttr[a[0]] != nil {
				continue
			}
			for _, b := range [][2]string{{q.PKAttr, q.PK.Tpl.Raw}, {q.SKAttr, q.SK.Tpl.Raw}} {
				same := a == b && p.When == nil && q.When == nil && p.Shards == q.Shards &&
					len(p.KeyFields) == len(q.KeyFields) && !slices.ContainsFunc(p.KeyFields, func(f *model.Field) bool { return !slices.Contains(q.KeyFields, f) })
				if a[0] == b[0] && !same {
					return problem(fs.Entity, Where(p.Name, a[0]), "key attribute %s is also index %s's, which renders it from %q (this one from %q) or keeps it under other conditions (When, Shards, the fields both keys need): one attribute holds one value", a[0], q.Name, b[1], a[1])
				}
			}
		}
	}
	return nil
}

// KeyOnly resolves the fields keyOnly names, which only keys hold: each
// must be in the primary key (pk, sk) or a templated index's key, not a
// multi-attribute index's key attribute, nor managed by the library
// (Version, CreatedAt, UpdatedAt, TTL).
func (fs *Fields) KeyOnly(keyOnly []string, pk, sk Key, indexes []*Index, managed ...*model.Field) ([]*model.Field, error) {
	var out []*model.Field
	for _, name := range keyOnly {
		f := fs.ByName[name]
		if f == nil {
			return nil, fs.Unknown("KeyOnly", "KeyOnly", name)
		}
		held := slices.Contains(pk.Fields, f) || slices.Contains(sk.Fields, f)
		for _, p := range indexes {
			if p.Multi && slices.Contains(p.Deps, f) {
				return nil, problem(fs.Entity, name, "KeyOnly: field %s is a key attribute of multi-attribute index %s, whose key attribute is the field's own attribute: it is stored; leave it out of KeyOnly", name, p.Name)
			}
			held = held || slices.Contains(p.KeyFields, f)
		}
		if !held {
			return nil, problem(fs.Entity, name, "KeyOnly: field %s is in no key template (PK %q, SK %q or a templated index's): it would not be stored anywhere", name, pk.Tpl.Raw, sk.Tpl.Raw)
		}
		if slices.Contains(managed, f) {
			return nil, problem(fs.Entity, name, "KeyOnly: field %s is managed by the library (Version, CreatedAt, UpdatedAt or TTL)", name)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}
