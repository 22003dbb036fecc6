package singletable

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/schema"
)

// Describe returns the table as declared by the entities bound to it. See
// [describe.Table]; it sends no request.
func (t *Table) Describe() describe.Table {
	d := describe.Table{Name: t.name, PartitionKey: t.opts.PartitionKey,
		SortKey: t.opts.SortKey, EntityTypeAttr: t.opts.EntityTypeAttr, OmitEntityType: t.opts.OmitEntityType}
	t.mu.RLock()
	ents := slices.Clone(t.entities)
	t.mu.RUnlock()
	for _, e := range ents {
		d.Entities = append(d.Entities, e.describe(t.opts))
	}
	d.Indexes = t.indexes()
	return d
}

// Describe returns the description of the repository's entity, as
// [Table.Describe] lists it.
func (r *Repo[T]) Describe() describe.Entity { return r.e.describe(r.t.opts) }

// describe builds the entity's description with the table's key
// attribute names.
func (e *entityPlan) describe(o TableOptions) describe.Entity {
	d := describe.Entity{Type: e.name, PK: describeKey(o.PartitionKey, e.pk)}
	if e.sk.defined() {
		d.SK = describeKey(o.SortKey, e.sk)
	}
	name := func(f *model.Field) string {
		if f == nil {
			return ""
		}
		return f.Name
	}
	g := e.guards
	for _, u := range g.unique {
		d.Unique = append(d.Unique, describe.Unique{Fields: slices.Clone(u.names), Hash: u.hash})
	}
	d.Version, d.CreatedAt, d.UpdatedAt, d.TTL = name(g.version), name(g.created), name(g.updated), name(g.ttl)
	d.MatchKeys = e.foreign.matchKeys
	for _, f := range e.foreign.keyOnly {
		d.KeyOnly = append(d.KeyOnly, f.Name)
	}
	d.Fields = schema.DescribeFields(e.fields)
	for _, p := range e.indexes {
		ix := describe.EntityIndex{Name: p.name, MultiAttribute: p.multi, Shards: p.shards,
			HasWhen: p.when != nil, WhenFields: slices.Clone(p.decl.WhenFields)}
		if p.multi {
			ix.Partition, ix.Sort = schema.DescribeFields(p.partition), schema.DescribeFields(p.sort)
		} else {
			ix.PK = describeKey(p.pkAttr, p.pk)
			if p.sk.defined() {
				ix.SK = describeKey(p.skAttr, p.sk)
			}
		}
		d.Indexes = append(d.Indexes, ix)
	}
	return d
}

func describeKey(attr string, k compiledKey) describe.Key { return schema.DescribeKey(attr, &k.tpl) }

// Describe returns the query's description. It reads only what the query
// was built with: a query whose building failed (say, an unknown index)
// is described as far as it goes, and Collect still reports the error.
func (q *Query[T]) Describe() describe.Query {
	e, t := q.r.e, q.r.t.opts
	d := describe.Query{Entity: e.name, Index: q.index, Descending: q.desc, Filtered: q.filter != nil}
	var parts []string
	idx, _ := e.index(q.index)
	switch {
	case q.index != "" && idx == nil:
		return d
	case idx == nil:
		d.Partition = t.PartitionKey + " = " + e.pk.tpl.Raw
		parts = q.describeTemplatedSort(e.sk, t.SortKey)
	case !idx.multi:
		d.Partition = idx.pkAttr + " = " + idx.pk.tpl.Raw
		if idx.shards > 0 {
			d.Partition += keys.ShardRange(idx.shards)
		}
		parts = q.describeTemplatedSort(idx.sk, idx.skAttr)
	default:
		var pk []string
		for _, f := range idx.partition {
			pk = append(pk, f.Attr+" = {"+f.Name+"}")
		}
		d.Partition = strings.Join(pk, " AND ")
		parts = q.describeMultiSort(idx)
	}
	d.Sort = strings.Join(parts, " AND ")
	return d
}

// describeTemplatedSort describes the condition templatedSortCond builds
// on sort key sk, with the template's placeholders for the values.
func (q *querySpec) describeTemplatedSort(sk compiledKey, attr string) []string {
	if c := shapeCond(sk, attr); c != nil && q.kind == sortNone {
		v := c.V1.(*types.AttributeValueMemberS).Value
		if c.Op == expr.OpBeginsWith {
			return []string{"begins_with(" + attr + ", " + v + ")"}
		}
		return []string{attr + c.Op + v}
	}
	n, _ := q.sortFields(sk.fields, "")
	if n == 0 {
		return nil
	}
	// The template up to the n-th placeholder.
	var prefix strings.Builder
	for j := 0; &sk.tpl.Parts[j] != sk.places[n-1]; j++ {
		if p := &sk.tpl.Parts[j]; p.IsPlaceholder() {
			prefix.WriteString(p.Placeholder())
		} else {
			prefix.WriteString(p.Literal)
		}
	}
	last := sk.places[n-1]
	switch {
	case q.op == Eq && n == len(sk.fields):
		return []string{attr + " = " + sk.tpl.Raw}
	case q.op == Eq:
		return []string{"begins_with(" + attr + ", " + prefix.String() + last.Placeholder() + sk.tpl.LiteralAfter(n-1) + ")"}
	}
	return []string{q.describeLast(attr, prefix.String(), last.Field, last.Placeholder())}
}

func (q *querySpec) describeMultiSort(idx *indexPlan) []string {
	n, _ := q.sortFields(idx.sort, "")
	var out []string
	for _, f := range idx.sort[:max(n-1, 0)] {
		out = append(out, f.Attr+" = {"+f.Name+"}")
	}
	if n == 0 {
		return out
	}
	last := idx.sort[n-1]
	return append(out, q.describeLast(last.Attr, "", last.Name, "{"+last.Name+"}"))
}

// describeLast describes the condition on the last named sort field,
// field, whose placeholder is place, after prefix in the key.
func (q *querySpec) describeLast(attr, prefix, field, place string) string {
	switch q.kind {
	case sortBeginsWith:
		return "begins_with(" + attr + ", " + prefix + "{" + field + ":prefix})"
	case sortBetween:
		return attr + " BETWEEN " + prefix + place + " AND " + prefix + "{" + field + ":high}"
	}
	return attr + " " + q.op.String() + " " + prefix + place
}
