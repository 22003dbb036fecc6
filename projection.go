package singletable

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/projection"
)

// What an index holds of its items ([IndexSchema].Projection), and the
// reads of an index that holds less than everything.

// compileProjection resolves an index's projection, Include's Go field
// names made attributes (a KeyOnly field's key holds it).
func (e *entityPlan) compileProjection(is IndexSchema[reflect.Value]) (projection.Set, error) {
	attrs := make([]string, 0, len(is.Include))
	for _, n := range is.Include {
		switch f := e.byName[n]; {
		case f != nil && f.Attr == "":
			continue
		case f != nil:
			n = f.Attr
		case e.excluded[n]:
			return projection.Set{}, e.unknownName("Include", n)
		}
		attrs = append(attrs, n)
	}
	s, err := projection.Declared(is.Projection, attrs)
	if err != nil {
		return s, &ValidationError{Entity: e.name, Field: where(is.Name, "Projection"), Reason: "cannot be the index's projection", Err: err}
	}
	return s, nil
}

// holds reports whether a read of index p (nil: the table) in table t
// gives back attribute attr: its projection's, or a key of the index or
// the table.
func (t *Table) holds(p *indexPlan, attr string) bool {
	return p == nil || p.proj.Holds(attr, t.cursorKeys(p)...)
}

// heldNames is resolve refusing, before the network, a name of a filter
// on index p that stands for an attribute p does not hold: DynamoDB
// refuses the query.
func (t *Table) heldNames(entity string, p *indexPlan, resolve expr.Resolver) expr.Resolver {
	if p == nil || p.proj.All() {
		return resolve
	}
	return func(name string) (string, expr.Operand, error) {
		a, op, err := resolve(name)
		if err == nil && !t.holds(p, a) {
			err = validationErr(entity, name, "index %s does not hold attribute %s (projection %s): DynamoDB refuses a filter on it; filter the items Complete reads in Go, or query the table", p.name, a, p.proj)
		}
		return a, op, err
	}
}

// unprojected lists the Go fields of e that a read of index p in table t
// leaves at their zero values: p does not hold their attributes and no
// primary key gives them back.
func (e *entityPlan) unprojected(t *Table, p *indexPlan) []string {
	var out []string
	for _, f := range e.fields {
		if f.Attr != "" && !t.holds(p, f.Attr) && !slices.Contains(e.pk.fields, f) && !slices.Contains(e.sk.fields, f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// wholeItems is the feed of an index query with Complete: the items the
// query reads, each of the entity's read whole from the table in one
// BatchGetItem per response (an item the table no longer holds is left
// out), the others as read.
type wholeItems struct {
	pager
	r      *repo
	ka     types.KeysAndAttributes                    // Fields' projection, if any
	gather bool                                       // the pager yields an item a call (a shard merge)
	read   map[itemID]map[string]types.AttributeValue // the index's items of the last batch, for cursors
}

func (w *wholeItems) next(ctx context.Context, want int) ([]map[string]types.AttributeValue, bool, error) {
	items, last, err := w.pager.next(ctx, want)
	if w.gather {
		// At most want items (100 without a limit): a page then ends at
		// a batch's end, where the merge's cursor stands.
		items = slices.Clone(items)
		goal := cmp.Or(want, 100)
		for err == nil && !last && len(items) < goal {
			var more []map[string]types.AttributeValue
			more, last, err = w.pager.next(ctx, max(want-len(items), 0))
			items = append(items, more...)
		}
	}
	var keys []map[string]types.AttributeValue
	ours := make([]bool, len(items))
	for i, item := range items {
		if ours[i] = w.r.mine(item); ours[i] {
			keys = append(keys, w.r.t.primaryKeyOf(item))
		}
	}
	if err != nil || len(keys) == 0 {
		return items, last, err
	}
	whole, errs := w.r.t.getItems(ctx, BatchOptions{}.run(), w.ka, keys)
	w.read = make(map[itemID]map[string]types.AttributeValue, len(keys))
	out, j := make([]map[string]types.AttributeValue, 0, len(items)), 0
	for i, item := range items {
		switch {
		case !ours[i]:
			out = append(out, item)
			continue
		case errs[j] != nil:
			return nil, false, fmt.Errorf("singletable: query %s: read the items whole: %w", w.r.e.name, errs[j])
		case whole[j] != nil:
			w.read[w.r.t.itemID(item)] = item
			out = append(out, whole[j])
		}
		j++
	}
	return out, last, nil
}

// cursor resumes after item, read whole, from the index's copy of it: its
// index keys are where the query stands.
func (w *wholeItems) cursor(item map[string]types.AttributeValue) (string, error) {
	if read, ok := w.read[w.r.t.itemID(item)]; ok && item != nil {
		item = read
	}
	return w.pager.cursor(item)
}
