package singletable

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/singletable-go/singletable/internal/keys"
)

// The access-pattern catalog: the table taxonomy and access-pattern tables
// that single-table design documents write by hand, rendered from the
// declarations so they cannot drift from the code, plus a lint of the key
// design.

// Operation names the DynamoDB request an [AccessPattern] makes.
type Operation string

// Operations of access patterns. OpCreate is a PutItem conditional on the
// item not existing; OpCount is a Query with Select COUNT.
const (
	OpGet    Operation = "GetItem"
	OpCreate Operation = "PutItem (create)"
	OpPut    Operation = "PutItem"
	OpUpdate Operation = "UpdateItem"
	OpDelete Operation = "DeleteItem"
	OpQuery  Operation = "Query"
	OpCount  Operation = "Query (COUNT)"
)

// AccessPattern is one named way an application reads or writes the table,
// for the catalog. Make it from the query or repository that serves it with
// [Query.AccessPattern] or [Repo.AccessPattern], so the key condition shown
// is the one the code sends; or fill the fields by hand for requests the
// library does not build (a transaction, a batch).
type AccessPattern struct {
	// Name is the pattern's short identifier, e.g. "AP12".
	Name string
	// Description says what the pattern is for, e.g. "Find expert users for a skill".
	Description string
	// Entity is the entity type read or written.
	Entity string
	// Index is the index queried; "" for the table's primary key.
	Index string
	// Operation is the request made.
	Operation Operation
	// Condition is the key condition or item key, in template terms, e.g.
	// "GSI1PK = SKILL#{SkillName} AND begins_with(GSI1SK, LEVEL#{Level}#)".
	Condition string
}

// AccessPattern describes the query as an access pattern: its entity, index
// and key condition written with the declaration's templates rather than
// values, so one description covers every call. Filters and descending
// order are noted in the condition.
func (q *Query[T]) AccessPattern(name, description string) AccessPattern {
	op := OpQuery
	return AccessPattern{
		Name: name, Description: description,
		Entity: q.r.e.name, Index: q.index, Operation: op,
		Condition: q.describe(),
	}
}

// AccessPattern describes an item operation of the repository's entity (op
// is one of OpGet, OpCreate, OpPut, OpUpdate, OpDelete) as an access
// pattern; the condition is the item's primary key in template terms.
func (r *Repo[T]) AccessPattern(name, description string, op Operation) AccessPattern {
	t := r.t.opts
	cond := t.PartitionKey + " = " + r.e.pk.tpl.Raw
	if r.e.sk.defined() {
		cond += " AND " + t.SortKey + " = " + r.e.sk.tpl.Raw
	}
	if op == OpCreate {
		cond += " AND attribute_not_exists(" + t.PartitionKey + ")"
	}
	return AccessPattern{Name: name, Description: description, Entity: r.e.name, Operation: op, Condition: cond}
}

// describe renders the query's key condition symbolically.
func (q *Query[T]) describe() string {
	e, t := q.r.e, q.r.t.opts
	var parts []string
	idx, _ := e.index(q.index)
	switch {
	case q.index != "" && idx == nil:
		return "unknown index " + q.index
	case idx == nil:
		parts = append(parts, t.PartitionKey+" = "+e.pk.tpl.Raw)
		parts = append(parts, q.describeTemplatedSort(e.sk, t.SortKey)...)
	case !idx.multi:
		pk := idx.pkAttr + " = " + idx.pk.tpl.Raw
		if idx.shards > 0 {
			pk += fmt.Sprintf("#shard_{0..%d}", idx.shards-1)
		}
		parts = append(parts, pk)
		parts = append(parts, q.describeTemplatedSort(idx.sk, idx.skAttr)...)
	default:
		for _, f := range idx.partition {
			parts = append(parts, f.attr+" = {"+f.name+"}")
		}
		parts = append(parts, q.describeMultiSort(idx)...)
	}
	s := strings.Join(parts, " AND ")
	var notes []string
	if q.filter != nil {
		notes = append(notes, "filtered")
	}
	if q.desc {
		notes = append(notes, "descending")
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

func (q *Query[T]) describeTemplatedSort(sk compiledKey, attr string) []string {
	if !sk.defined() {
		return nil
	}
	if q.kind == sortNone {
		cp := sk.tpl.ConstantPrefix()
		switch {
		case cp == "":
			return nil
		case len(sk.fields) == 0:
			return []string{attr + " = " + cp}
		}
		return []string{"begins_with(" + attr + ", " + cp + ")"}
	}
	n := min(len(q.fields), len(sk.fields))
	if n == 0 {
		return nil
	}
	// P: the template up to the n-th placeholder; L: the literal after it.
	var P strings.Builder
	var L, last string
	i := 0
	for j, part := range sk.tpl.Parts {
		if part.Field == "" {
			P.WriteString(part.Literal)
			continue
		}
		if i == n-1 {
			last = part.Field
			if j+1 < len(sk.tpl.Parts) {
				L = sk.tpl.Parts[j+1].Literal
			}
			break
		}
		P.WriteString("{" + part.Field + "}")
		i++
	}
	prefix := P.String()
	switch q.kind {
	case sortBeginsWith:
		return []string{"begins_with(" + attr + ", " + prefix + "{" + last + ":prefix})"}
	case sortBetween:
		return []string{attr + " BETWEEN " + prefix + "{" + last + "} AND " + prefix + "{" + last + ":high}"}
	}
	if q.op == Eq {
		if n == len(sk.fields) {
			return []string{attr + " = " + sk.tpl.Raw}
		}
		return []string{"begins_with(" + attr + ", " + prefix + "{" + last + "}" + L + ")"}
	}
	return []string{attr + " " + q.op.String() + " " + prefix + "{" + last + "}"}
}

func (q *Query[T]) describeMultiSort(idx *indexPlan[T]) []string {
	if q.kind == sortNone {
		return nil
	}
	n := min(len(q.fields), len(idx.sort))
	var out []string
	for _, f := range idx.sort[:max(n-1, 0)] {
		out = append(out, f.attr+" = {"+f.name+"}")
	}
	if n == 0 {
		return out
	}
	last := idx.sort[n-1]
	switch {
	case q.kind == sortBeginsWith:
		out = append(out, "begins_with("+last.attr+", {"+last.name+":prefix})")
	case q.kind == sortBetween:
		out = append(out, last.attr+" BETWEEN {"+last.name+"} AND {"+last.name+":high}")
	default:
		out = append(out, last.attr+" "+q.op.String()+" {"+last.name+"}")
	}
	return out
}

// decl returns the index as declared, for the catalog.
func (p *indexPlan[T]) decl() indexDecl {
	d := indexDecl{name: p.name, multi: p.multi, pkTpl: p.pk.tpl, skTpl: p.sk.tpl,
		pkAttr: p.pkAttr, skAttr: p.skAttr, sparse: p.when != nil, whenFields: p.whenFields, shards: p.shards}
	for _, f := range p.partition {
		d.partition = append(d.partition, f.name)
		d.partitionAttrs = append(d.partitionAttrs, f.attr)
	}
	for _, f := range p.sort {
		d.sort = append(d.sort, f.name)
		d.sortAttrs = append(d.sortAttrs, f.attr)
	}
	return d
}

// Catalog is the access-pattern catalog of a table: its bound entities with
// their key templates and indexes, the access patterns given to
// [Table.Catalog], and the findings of the key-design lint. Render it with
// [Catalog.Markdown].
type Catalog struct {
	// Table is the table's name.
	Table string
	// PartitionKey, SortKey and EntityTypeAttr are the table's attribute names.
	PartitionKey, SortKey, EntityTypeAttr string
	// Entities are the bound entities, in the order they were bound.
	Entities []CatalogEntity
	// Indexes are the table's global secondary indexes, by name.
	Indexes []CatalogIndex
	// Patterns are the access patterns given to Table.Catalog, in order.
	Patterns []AccessPattern
	// Findings are the lint's findings, errors first.
	Findings []Finding
}

// CatalogEntity is one entity in a [Catalog].
type CatalogEntity struct {
	// Type is the entity type stored on every item.
	Type string
	// PK and SK are the primary key templates (SK is "" without a sort key).
	PK, SK string
	// Indexes are the entity's index declarations.
	Indexes []CatalogEntityIndex
	// Unique lists the fields kept unique by guard items.
	Unique []string
	// Version, CreatedAt, UpdatedAt and TTL name the fields the library
	// manages ("" when not declared).
	Version, CreatedAt, UpdatedAt, TTL string
}

// CatalogEntityIndex is how one entity appears in one index.
type CatalogEntityIndex struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// PK and SK describe the keys: "GSI1PK = SKILL#{SkillName}" for a
	// templated index, "SkillName = {SkillName}, ProficiencyLevel = {Level}"
	// (attribute = {Go field}) for a multi-attribute one.
	PK, SK string
	// Sparse says when the item is in the index.
	Sparse string
	// Shards is the number of write shards of the index partition key
	// (suffix "#shard_<n>"), 0 when not sharded.
	Shards int
}

// CatalogIndex is one global secondary index of the table.
type CatalogIndex struct {
	// Name is the index name.
	Name string
	// MultiAttribute is true for native multi-attribute keys.
	MultiAttribute bool
	// Partition and Sort are the key attributes with their types, e.g. "GSI1PK (S)".
	Partition, Sort []string
	// Entities are the entity types that declare the index.
	Entities []string
	// Patterns are the names of the access patterns that query it.
	Patterns []string
}

// Severity grades a lint [Finding].
type Severity string

// Severities of lint findings.
const (
	// SeverityError: the design is broken (items of two entities overwrite each other).
	SeverityError Severity = "error"
	// SeverityWarning: it works but costs capacity or will not scale.
	SeverityWarning Severity = "warning"
	// SeverityInfo: worth knowing, usually intended.
	SeverityInfo Severity = "info"
)

// Finding is one result of the catalog's key-design lint.
type Finding struct {
	Severity Severity
	// Entity and Index locate the finding ("" when not about one).
	Entity, Index string
	// Message explains the problem and what to do.
	Message string
}

// String returns the finding as one line: severity, entity, index, message.
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(string(f.Severity))
	if f.Entity != "" {
		b.WriteString(" " + f.Entity)
	}
	if f.Index != "" {
		b.WriteString(" index " + f.Index)
	}
	b.WriteString(": " + f.Message)
	return b.String()
}

// Catalog builds the table's access-pattern catalog from the entities bound
// to it and the given access patterns, and lints the key design:
//
//   - entities whose partition keys have the same shape (the same template
//     text around the placeholders, so their items can share a partition)
//     and whose sort keys are identical in shape (their items overwrite each
//     other: an error) or where one's sort-key prefix is a prefix of the
//     other's (a query for the first also reads the second's items, which
//     cost read capacity and are filtered out: a warning);
//   - partition keys without placeholders (one partition takes every write:
//     a warning, or info for a singleton item with a constant sort key);
//   - when patterns are given: indexes that no pattern queries (they cost
//     write capacity for nothing), and patterns naming an entity or index
//     the table does not have.
func (t *Table) Catalog(patterns ...AccessPattern) *Catalog {
	t.mu.RLock()
	ents := slices.Clone(t.entities)
	t.mu.RUnlock()
	c := &Catalog{Table: t.name, PartitionKey: t.opts.PartitionKey, SortKey: t.opts.SortKey,
		EntityTypeAttr: t.opts.EntityTypeAttr, Patterns: slices.Clone(patterns)}
	for _, ei := range ents {
		g := ei.guardDecl
		ce := CatalogEntity{Type: ei.name, PK: ei.pkTpl.Raw, SK: ei.skTpl.Raw, Unique: g.unique,
			Version: g.version, CreatedAt: g.created, UpdatedAt: g.updated, TTL: g.ttl}
		for _, d := range ei.decls {
			ci := CatalogEntityIndex{Name: d.name, MultiAttribute: d.multi, Shards: d.shards}
			if d.multi {
				ci.PK = attrList(d.partitionAttrs, d.partition)
				ci.SK = attrList(d.sortAttrs, d.sort)
				ci.Sparse = "when " + strings.Join(slices.Concat(d.partition, d.sort), ", ") + " are all present"
			} else {
				ci.PK = d.pkAttr + " = " + d.pkTpl.Raw
				if d.skAttr != "" {
					ci.SK = d.skAttr + " = " + d.skTpl.Raw
				}
				fields := slices.Concat(d.pkTpl.Fields(), d.skTpl.Fields())
				var conds []string
				if len(fields) > 0 {
					conds = append(conds, strings.Join(uniq(fields), ", ")+" present")
				}
				if d.sparse {
					conds = append(conds, "When("+strings.Join(d.whenFields, ", ")+") holds")
				}
				if len(conds) > 0 {
					ci.Sparse = "when " + strings.Join(conds, " and ")
				} else {
					ci.Sparse = "always"
				}
			}
			ce.Indexes = append(ce.Indexes, ci)
		}
		c.Entities = append(c.Entities, ce)
	}
	for _, p := range t.indexes() {
		ci := CatalogIndex{Name: p.name, MultiAttribute: p.multi}
		for _, a := range p.partition {
			ci.Partition = append(ci.Partition, fmt.Sprintf("%s (%s)", a.name, a.typ))
		}
		for _, a := range p.sort {
			ci.Sort = append(ci.Sort, fmt.Sprintf("%s (%s)", a.name, a.typ))
		}
		for _, ei := range ents {
			if slices.ContainsFunc(ei.decls, func(d indexDecl) bool { return d.name == p.name }) {
				ci.Entities = append(ci.Entities, ei.name)
			}
		}
		for _, ap := range patterns {
			if ap.Index == p.name {
				ci.Patterns = append(ci.Patterns, ap.Name)
			}
		}
		c.Indexes = append(c.Indexes, ci)
	}
	c.Findings = lint(t.opts, ents, c.Indexes, patterns)
	return c
}

// attrList renders multi-attribute key attributes: "SkillName = {SkillName}, ProficiencyLevel = {Level}".
func attrList(attrs, fields []string) string {
	parts := make([]string, len(attrs))
	for i := range attrs {
		parts[i] = attrs[i] + " = {" + fields[i] + "}"
	}
	return strings.Join(parts, ", ")
}

func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// shape is a template's text with every placeholder replaced by "{}": two
// templates of the same shape can render the same key.
func shape(t keys.Template) string {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Field != "" {
			b.WriteString("{}")
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// keyPair is a partition template and the sort template under it.
type keyPair struct {
	entity, index      string
	pk, sk             keys.Template
	pkAttr, skAttr     string
	primary, hasSortTp bool
	sharded            bool
}

func lint(o TableOptions, ents []entityInfo, idxs []CatalogIndex, patterns []AccessPattern) []Finding {
	var fs []Finding
	var pairs []keyPair
	for _, ei := range ents {
		pairs = append(pairs, keyPair{entity: ei.name, pk: ei.pkTpl, sk: ei.skTpl,
			pkAttr: o.PartitionKey, skAttr: o.SortKey, primary: true, hasSortTp: ei.skTpl.Raw != ""})
		for _, d := range ei.decls {
			if !d.multi {
				pairs = append(pairs, keyPair{entity: ei.name, index: d.name, pk: d.pkTpl, sk: d.skTpl,
					pkAttr: d.pkAttr, skAttr: d.skAttr, hasSortTp: d.skTpl.Raw != "", sharded: d.shards > 0})
			}
		}
	}
	// Hot partitions.
	for _, p := range pairs {
		if p.pk.NumFields() > 0 || p.sharded {
			continue
		}
		switch {
		case p.primary && p.hasSortTp && p.sk.NumFields() == 0:
			fs = append(fs, Finding{SeverityInfo, p.entity, "", fmt.Sprintf(
				"singleton item (%s = %s, %s = %s): every write to it goes to one partition, so keep its write rate well under 1,000 per second",
				p.pkAttr, p.pk.Raw, p.skAttr, p.sk.Raw)})
		default:
			fs = append(fs, Finding{SeverityWarning, p.entity, p.index, fmt.Sprintf(
				"constant partition key %s = %s: every item goes to one partition (at most 1,000 writes and 3,000 reads per second); add a placeholder, e.g. a shard number, if it takes sustained traffic",
				p.pkAttr, p.pk.Raw)})
		}
	}
	// Entities sharing a partition.
	for i, a := range pairs {
		for _, b := range pairs[i+1:] {
			if a.entity == b.entity || a.primary != b.primary || a.pkAttr != b.pkAttr || shape(a.pk) != shape(b.pk) {
				continue
			}
			if !a.primary && a.index != b.index {
				continue
			}
			if !a.hasSortTp || !b.hasSortTp {
				continue
			}
			where := "table"
			if !a.primary {
				where = "index " + a.index
			}
			if shape(a.sk) == shape(b.sk) {
				sev := SeverityError
				why := "their items overwrite each other"
				if !a.primary {
					sev = SeverityWarning
					why = "a query for one always reads the other's items too"
				}
				fs = append(fs, Finding{sev, a.entity, a.index, fmt.Sprintf(
					"%s and %s render the same %s keys (%s = %s, %s = %s): %s; give them distinct sort key prefixes",
					a.entity, b.entity, where, a.pkAttr, a.pk.Raw, a.skAttr, a.sk.Raw, why)})
				continue
			}
			for _, x := range [][2]keyPair{{a, b}, {b, a}} {
				p, q := x[0], x[1]
				if p.sk.NumFields() == 0 {
					continue // queried by equality
				}
				pp, qp := p.sk.ConstantPrefix(), q.sk.ConstantPrefix()
				if strings.HasPrefix(qp, pp) {
					fs = append(fs, Finding{SeverityWarning, p.entity, p.index, fmt.Sprintf(
						"%s shares its %s partitions (%s = %s) with %s, and %s's sort key prefix %q is a prefix of %s's (%s): queries for %s also read %s's items, paying for them and filtering them out",
						p.entity, where, p.pkAttr, p.pk.Raw, q.entity, p.entity, pp, q.entity, q.sk.Raw, p.entity, q.entity)})
				}
			}
		}
	}
	if len(patterns) > 0 {
		for _, ix := range idxs {
			if len(ix.Patterns) == 0 {
				fs = append(fs, Finding{SeverityWarning, "", ix.Name,
					"no listed access pattern queries this index: every write to its entities still pays for it"})
			}
		}
		for _, ap := range patterns {
			if !slices.ContainsFunc(ents, func(ei entityInfo) bool { return ei.name == ap.Entity }) {
				fs = append(fs, Finding{SeverityError, ap.Entity, ap.Index, fmt.Sprintf("access pattern %s names an entity not bound to the table", ap.Name)})
			} else if ap.Index != "" && !slices.ContainsFunc(idxs, func(ix CatalogIndex) bool { return ix.Name == ap.Index }) {
				fs = append(fs, Finding{SeverityError, ap.Entity, ap.Index, fmt.Sprintf("access pattern %s queries an index the table does not have", ap.Name)})
			}
		}
	}
	rank := map[Severity]int{SeverityError: 0, SeverityWarning: 1, SeverityInfo: 2}
	slices.SortStableFunc(fs, func(x, y Finding) int { return rank[x.Severity] - rank[y.Severity] })
	return fs
}

// Markdown renders the catalog as a Markdown document: the table's keys,
// its indexes and the patterns each serves, one section per entity with its
// templates and sparse conditions, the access-pattern table, and the lint's
// findings.
func (c *Catalog) Markdown() string {
	var b strings.Builder
	_ = c.WriteMarkdown(&b)
	return b.String()
}

// WriteMarkdown writes [Catalog.Markdown] to w.
func (c *Catalog) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Table `%s`\n\n", c.Table)
	fmt.Fprintf(&b, "Generated from the entity declarations by `singletable`; do not edit by hand.\n\n")
	if c.SortKey != "" {
		fmt.Fprintf(&b, "Primary key: `%s` (S, partition), `%s` (S, sort). ", c.PartitionKey, c.SortKey)
	} else {
		fmt.Fprintf(&b, "Primary key: `%s` (S, partition). ", c.PartitionKey)
	}
	fmt.Fprintf(&b, "Entity type attribute: `%s`.\n\n", c.EntityTypeAttr)

	b.WriteString("## Entities\n\n")
	b.WriteString("| Entity | " + c.PartitionKey + " | " + c.SortKey + " | Indexes |\n|---|---|---|---|\n")
	for _, e := range c.Entities {
		var names []string
		for _, ix := range e.Indexes {
			names = append(names, ix.Name)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e.Type, code(e.PK), code(e.SK), cell(strings.Join(names, ", ")))
	}
	b.WriteString("\n")

	for _, e := range c.Entities {
		fmt.Fprintf(&b, "### %s\n\n", e.Type)
		fmt.Fprintf(&b, "- `%s`: %s\n", c.PartitionKey, code(e.PK))
		if e.SK != "" {
			fmt.Fprintf(&b, "- `%s`: %s\n", c.SortKey, code(e.SK))
		}
		fmt.Fprintf(&b, "- `%s`: `%s`\n", c.EntityTypeAttr, e.Type)
		for _, ix := range e.Indexes {
			if ix.MultiAttribute {
				fmt.Fprintf(&b, "- %s (multi-attribute): partition %s", ix.Name, code(ix.PK))
				if ix.SK != "" {
					fmt.Fprintf(&b, ", sort %s", code(ix.SK))
				}
			} else {
				fmt.Fprintf(&b, "- %s: %s", ix.Name, code(ix.PK))
				if ix.SK != "" {
					fmt.Fprintf(&b, ", %s", code(ix.SK))
				}
			}
			if ix.Shards > 0 {
				fmt.Fprintf(&b, "; write-sharded over %d partitions (`#shard_0`…`#shard_%d`), queries merge them", ix.Shards, ix.Shards-1)
			}
			fmt.Fprintf(&b, "; in the index %s\n", ix.Sparse)
		}
		for _, u := range e.Unique {
			fmt.Fprintf(&b, "- Unique `%s`: a guard item per value, written in the same transaction as the item\n", u)
		}
		if e.Version != "" {
			fmt.Fprintf(&b, "- Version `%s`: optimistic locking on every write\n", e.Version)
		}
		if e.CreatedAt != "" || e.UpdatedAt != "" {
			fmt.Fprintf(&b, "- Managed timestamps: %s\n", strings.Join(slices.DeleteFunc([]string{e.CreatedAt, e.UpdatedAt}, func(s string) bool { return s == "" }), ", "))
		}
		if e.TTL != "" {
			fmt.Fprintf(&b, "- TTL `%s`: epoch seconds, expired items deleted by DynamoDB\n", e.TTL)
		}
		var serves []string
		for _, ap := range c.Patterns {
			if ap.Entity == e.Type {
				serves = append(serves, ap.Name)
			}
		}
		if len(serves) > 0 {
			fmt.Fprintf(&b, "- Access patterns: %s\n", strings.Join(serves, ", "))
		}
		b.WriteString("\n")
	}

	if len(c.Indexes) > 0 {
		b.WriteString("## Indexes\n\n| Index | Kind | Partition key | Sort key | Entities | Serves |\n|---|---|---|---|---|---|\n")
		for _, ix := range c.Indexes {
			kind := "templated"
			if ix.MultiAttribute {
				kind = "multi-attribute"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", ix.Name, kind,
				cell(strings.Join(ix.Partition, ", ")), cell(strings.Join(ix.Sort, ", ")),
				cell(strings.Join(ix.Entities, ", ")), cell(strings.Join(ix.Patterns, ", ")))
		}
		b.WriteString("\n")
	}

	if len(c.Patterns) > 0 {
		b.WriteString("## Access patterns\n\n| # | Description | Entity | Index | Operation | Key condition |\n|---|---|---|---|---|---|\n")
		for _, ap := range c.Patterns {
			index := ap.Index
			if index == "" {
				index = "table"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(ap.Name), cell(ap.Description), cell(ap.Entity),
				index, ap.Operation, code(ap.Condition))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Lint\n\n")
	if len(c.Findings) == 0 {
		b.WriteString("No findings.\n")
	}
	for _, f := range c.Findings {
		fmt.Fprintf(&b, "- %s\n", cell(f.String()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// code formats s as inline code for a Markdown table cell.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// cell escapes s for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
