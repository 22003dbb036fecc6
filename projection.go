package singletable

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
)

// What an index holds of its items ([IndexSchema].Projection), and the
// reads of an index that holds less than everything.

// holds reports whether a read of index p (nil: the table) in table t
// gives back attribute attr: its projection's, or a key of the index or
// the table.
func (t *Table) holds(p *indexPlan, attr string) bool {
	return p == nil || p.proj.Holds(attr, t.cursorKeys(p)...)
}

// heldNames is resolve refusing, before the network, a name of a filter
// on index p that stands for an attribute p does not hold.
func (t *Table) heldNames(entity string, p *indexPlan, resolve expr.Resolver) expr.Resolver {
	if p == nil {
		return resolve
	}
	return p.proj.Names(resolve, t.cursorKeys(p), func(name, attr string) error {
		return validationErr(entity, name, "index %s does not hold attribute %s (projection %s): DynamoDB refuses a filter on it; filter the items Complete reads in Go, or query the table", p.name, attr, p.proj)
	})
}

// heldAttrs is attrs, the projection of entity's read of index p (nil: the
// table), without an entity type p lacks (key shapes tell), refusing another such.
func (t *Table) heldAttrs(entity string, p *indexPlan, attrs []string, err error) ([]string, error) {
	for _, a := range attrs {
		if err == nil && !t.holds(p, a) && a != t.opts.EntityTypeAttr {
			err = validationErr(entity, a, "Fields: index %s does not hold attribute %s (projection %s); a Query's Complete reads it from the table", p.name, a, p.proj)
		}
	}
	return slices.DeleteFunc(attrs, func(a string) bool { return !t.holds(p, a) }), err
}

// unprojected lists the Go fields of e that a read of index p in table t
// leaves at their zero values: p does not hold their attributes and no
// key it holds (the primary key, p's own) gives them back.
func (e *entityPlan) unprojected(t *Table, p *indexPlan) []string {
	var out []string
	for _, f := range e.fields {
		inKey := func(k *compiledKey) bool { return slices.Contains(k.fields, f) }
		if f.Attr != "" && !t.holds(p, f.Attr) && !inKey(&e.pk) && !inKey(&e.sk) && !inKey(&p.pk) && !inKey(&p.sk) {
			out = append(out, f.Name)
		}
	}
	return out
}

// wholeFn replaces the items of a response.
type wholeFn func(context.Context, []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error)

// readWhole reads r's items among those an index query read (items) whole
// from the table, with ka's projection, keeping the index's values of
// keys: they say where the query stands (cursors, the merge of shards).
// An item the table no longer holds is left out, another's left as read.
func (r repo) readWhole(ka types.KeysAndAttributes, keys []string) wholeFn {
	return func(ctx context.Context, items []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
		var at []int
		var ks []map[string]types.AttributeValue
		for i, item := range items {
			if r.mine(item) {
				at, ks = append(at, i), append(ks, r.t.primaryKeyOf(item))
			}
		}
		if len(ks) == 0 {
			return items, nil
		}
		whole, errs := r.t.getItems(ctx, BatchOptions{}.run(), ka, ks, nil)
		items = slices.Clone(items)
		for j, i := range at {
			if errs[j] != nil {
				return nil, fmt.Errorf("read the items whole: %w", errs[j])
			}
			for _, k := range keys {
				if whole[j] != nil {
					whole[j][k] = items[i][k]
				}
			}
			items[i] = whole[j]
		}
		return slices.DeleteFunc(items, func(item map[string]types.AttributeValue) bool { return item == nil }), nil
	}
}
