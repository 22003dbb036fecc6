package singletable

import (
	"maps"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What a backfill needs from an entity's declaration, kept apart from
// entity.go: which attributes the declaration renders, which attributes
// they are rendered from, and how a stored item should look now.

// managedAttrs returns the attributes the declaration renders rather than
// the struct: the primary key, templated index keys, and the attributes of
// multi-attribute index keys (stored in their canonical key form).
func (e *Entity[T]) managedAttrs(t *Table) []string {
	out := []string{t.opts.PartitionKey}
	if e.sk.defined() && t.opts.SortKey != "" {
		out = append(out, t.opts.SortKey)
	}
	for _, p := range e.indexes {
		if p.multi {
			for _, f := range p.deps {
				out = appendAttr(out, f.attr)
			}
			continue
		}
		out = appendAttr(out, p.pkAttr)
		if p.skAttr != "" {
			out = appendAttr(out, p.skAttr)
		}
	}
	return out
}

// sourceAttrs returns the attributes the managed attributes are rendered
// from: the key template fields, index template and predicate fields.
func (e *Entity[T]) sourceAttrs() []string {
	var out []string
	for _, f := range slices.Concat(e.pk.fields, e.sk.fields) {
		out = appendAttr(out, f.attr)
	}
	for _, p := range e.indexes {
		for _, f := range p.deps {
			out = appendAttr(out, f.attr)
		}
	}
	return out
}

// fieldAttrs returns the attribute of every field of T.
func (e *Entity[T]) fieldAttrs() []string {
	out := make([]string, 0, len(e.fields))
	for _, f := range e.fields {
		out = append(out, f.attr)
	}
	return out
}

func appendAttr(s []string, a string) []string {
	if a == "" || slices.Contains(s, a) {
		return s
	}
	return append(s, a)
}

// rewrite is how a stored item must change to match the declaration.
type rewrite struct {
	oldKey     map[string]types.AttributeValue
	newItem    map[string]types.AttributeValue // the item after the change
	set        map[string]types.AttributeValue // managed attributes to set
	remove     []string                        // managed attributes to remove
	keyChanged bool
	// guards are the keys of the unique guard items the item owns (see
	// Schema.Unique), which must follow it to its new key.
	guards []guardRef
}

// guardRef is one unique guard item: its key and the field it guards.
type guardRef struct {
	field string
	key   map[string]types.AttributeValue
}

func (w *rewrite) changed() bool { return len(w.set)+len(w.remove) > 0 }

// planRewrite decodes item, renders it again with the current declaration
// and compares the managed attributes. Attributes the declaration does not
// manage, including ones T does not know, are kept as they are.
func (e *Entity[T]) planRewrite(t *Table, item map[string]types.AttributeValue) (*rewrite, error) {
	v, err := e.decode(item)
	if err != nil {
		return nil, err
	}
	rendered, err := e.encode(t, v)
	if err != nil {
		return nil, err
	}
	w := &rewrite{oldKey: t.primaryKeyOf(item), newItem: maps.Clone(item), set: map[string]types.AttributeValue{}}
	keys := []string{t.opts.PartitionKey, t.opts.SortKey}
	for _, a := range e.managedAttrs(t) {
		old, had := item[a]
		nv, has := rendered[a]
		switch {
		case has && (!had || !avEqual(old, nv)):
			w.set[a] = nv
			w.newItem[a] = nv
		case !has && had:
			w.remove = append(w.remove, a)
			delete(w.newItem, a)
		default:
			continue
		}
		if slices.Contains(keys, a) {
			w.keyChanged = true
		}
	}
	if w.keyChanged {
		owner := &Repo[T]{t: t, e: e}
		rv := reflect.ValueOf(&v).Elem()
		for _, f := range e.guards.unique {
			key, ok, err := owner.guardKey(f, rv)
			if err != nil {
				return nil, err
			}
			if ok {
				w.guards = append(w.guards, guardRef{field: f.name, key: key})
			}
		}
	}
	return w, nil
}
