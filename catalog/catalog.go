// Package catalog renders the access-pattern catalog of a single table:
// the table taxonomy and access-pattern tables that single-table design
// documents write by hand, built from the entity declarations (read
// through [singletable.Table.Describe]) so they cannot drift from the
// code, plus a lint of the key design.
//
// Each access pattern is made from the call that serves it, so the key
// condition shown is the one the code sends:
//
//	c := catalog.New(table,
//		catalog.Item("AP1", "Get user by username", catalog.OpGet, users),
//		catalog.Query("AP12", "Experts in a skill",
//			skills.QueryIndex("GSI1", UserSkill{}).Where("Level", singletable.Eq, nil)),
//	)
//	err := c.WriteMarkdown(os.Stdout)
//
// Patterns the library does not build (a transaction, a batch) are
// written out as [Pattern] values.
package catalog

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// Operation names the DynamoDB request a [Pattern] makes.
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

// Pattern is one named way an application reads or writes the table.
// Make it with [Item], [Query], [Count] or [Collection] from the
// repository or query that serves it, or write the fields out for
// requests the library does not build (a transaction, a batch).
type Pattern struct {
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

// A Querier is a query that describes itself: a *singletable.Query.
type Querier interface {
	Describe() describe.Query
}

// A Repo is a repository that describes its entity: a *singletable.Repo.
type Repo interface {
	Describe() describe.Entity
}

// Query is the access pattern of the query q (a *singletable.Query): its
// entity, index and key condition written with the declaration's
// templates rather than values, so one pattern covers every call.
// Filters and descending order are noted after the condition.
func Query(name, description string, q Querier) Pattern {
	d := q.Describe()
	cond := d.KeyCondition()
	if d.Partition == "" {
		cond = "unknown index " + d.Index
	}
	var notes []string
	if d.Filtered {
		notes = append(notes, "filtered")
	}
	if d.Descending {
		notes = append(notes, "descending")
	}
	if len(notes) > 0 {
		cond += " (" + strings.Join(notes, ", ") + ")"
	}
	return Pattern{Name: name, Description: description, Entity: d.Entity, Index: d.Index,
		Operation: OpQuery, Condition: cond}
}

// Count is like [Query] for a query run with Count (a Query with Select
// COUNT).
func Count(name, description string, q Querier) Pattern {
	p := Query(name, description, q)
	p.Operation = OpCount
	return p
}

// Item is the access pattern of an item operation of r's entity (r is a
// *singletable.Repo; op is one of OpGet, OpCreate, OpPut, OpUpdate,
// OpDelete): the condition is the item's primary key in template terms.
func Item(name, description string, op Operation, r Repo) Pattern {
	e := r.Describe()
	cond := e.PK.Attr + " = " + e.PK.Template
	if e.SK.Template != "" {
		cond += " AND " + e.SK.Attr + " = " + e.SK.Template
	}
	if op == OpCreate {
		cond += " AND attribute_not_exists(" + e.PK.Attr + ")"
	}
	return Pattern{Name: name, Description: description, Entity: e.Type, Operation: op, Condition: cond}
}

// Collection is the access pattern of reading the item collection of r's
// partition (r is a *singletable.Repo): one Query on the table's
// partition key alone, returning the items of every entity stored there,
// as a singletable.Collection made from r does.
func Collection(name, description string, r Repo) Pattern {
	e := r.Describe()
	return Pattern{Name: name, Description: description, Entity: e.Type, Operation: OpQuery,
		Condition: e.PK.Attr + " = " + e.PK.Template}
}

// Catalog is the access-pattern catalog of a table: its bound entities with
// their key templates and indexes, the access patterns given to [New], and
// the findings of the key-design lint. Render it with [Catalog.Markdown].
type Catalog struct {
	// Table is the table's name.
	Table string
	// PartitionKey, SortKey and EntityTypeAttr are the table's attribute names.
	PartitionKey, SortKey, EntityTypeAttr string
	// Entities are the bound entities, in the order they were bound.
	Entities []Entity
	// Indexes are the table's global secondary indexes, by name.
	Indexes []Index
	// Patterns are the access patterns given to New, in order.
	Patterns []Pattern
	// Findings are the lint's findings, errors first.
	Findings []Finding
}

// Entity is one entity in a [Catalog].
type Entity struct {
	// Type is the entity type stored on every item.
	Type string
	// PK and SK are the primary key templates (SK is "" without a sort key).
	PK, SK string
	// Indexes are the entity's index declarations.
	Indexes []EntityIndex
	// Unique lists the values kept unique by guard items: one field, or a
	// tuple of fields.
	Unique []describe.Unique
	// Version, CreatedAt, UpdatedAt and TTL name the fields the library
	// manages ("" when not declared).
	Version, CreatedAt, UpdatedAt, TTL string
}

// EntityIndex is how one entity appears in one index.
type EntityIndex struct {
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

// Index is one global secondary index of the table.
type Index struct {
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
	// Projection is what the index holds besides the keys: "ALL",
	// "KEYS_ONLY" or "INCLUDE (Email, SKU)".
	Projection string
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

// New builds the access-pattern catalog of table t from the entities bound
// to it (read through [singletable.Table.Describe]) and the given access
// patterns, and lints the key design:
//
//   - entities whose partition keys have the same shape (the same template
//     text around the placeholders, so their items can share a partition)
//     and whose sort keys are identical in shape (their items overwrite each
//     other: an error) or where one's sort-key prefix is a prefix of the
//     other's (a query for the first also reads the second's items, which
//     cost read capacity and are filtered out: a warning);
//   - partition keys without placeholders (one partition takes every write:
//     a warning, or info for a singleton item with a constant sort key);
//   - key formats: unix and unixmilli are not fixed width, and a raw value
//     before a delimiter can hold bytes sorting before it, so byte order
//     is not value order (warnings); templates sharing partitions that
//     write a time at one position in two formats (mixed precision, a
//     warning); what rfc3339, rfc3339milli, date and %0Nd refuse (info);
//   - forged keys: two entities writing one key attribute where a value
//     of one can render a key of the other (a raw value at the end of
//     u#{UserID:raw} renders u#{UserID:raw}#follower's keys), with the
//     values that do it and the constraint ({UserID:raw=[^#]+}) or
//     literals that close the gap (a warning; sort keys only where the
//     two can share a partition);
//   - when patterns are given: indexes that no pattern queries (they cost
//     write capacity for nothing), and patterns naming an entity or index
//     the table does not have.
//
// It sends no request, so the table needs no client.
func New(t *singletable.Table, patterns ...Pattern) *Catalog {
	d := t.Describe()
	c := &Catalog{Table: d.Name, PartitionKey: d.PartitionKey, SortKey: d.SortKey,
		EntityTypeAttr: d.EntityTypeAttr, Patterns: slices.Clone(patterns)}
	for _, ed := range d.Entities {
		ce := Entity{Type: ed.Type, PK: ed.PK.Template, SK: ed.SK.Template, Unique: ed.Unique,
			Version: ed.Version, CreatedAt: ed.CreatedAt, UpdatedAt: ed.UpdatedAt, TTL: ed.TTL}
		for _, ix := range ed.Indexes {
			ci := EntityIndex{Name: ix.Name, MultiAttribute: ix.MultiAttribute, Shards: ix.Shards}
			if ix.MultiAttribute {
				ci.PK = attrList(ix.Partition)
				ci.SK = attrList(ix.Sort)
				var names []string
				for _, f := range slices.Concat(ix.Partition, ix.Sort) {
					names = append(names, f.Name)
				}
				ci.Sparse = "when " + strings.Join(names, ", ") + " are all present"
			} else {
				ci.PK = ix.PK.Attr + " = " + ix.PK.Template
				if ix.SK.Template != "" {
					ci.SK = ix.SK.Attr + " = " + ix.SK.Template
				}
				fields := slices.Concat(fieldsOf(ix.PK), fieldsOf(ix.SK))
				var conds []string
				if len(fields) > 0 {
					conds = append(conds, strings.Join(uniq(fields), ", ")+" present")
				}
				if ix.HasWhen {
					conds = append(conds, "When("+strings.Join(ix.WhenFields, ", ")+") holds")
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
	for _, ix := range d.Indexes {
		ci := Index{Name: ix.Name, MultiAttribute: ix.MultiAttribute, Projection: string(ix.Projection)}
		if len(ix.Include) > 0 {
			ci.Projection += " (" + strings.Join(ix.Include, ", ") + ")"
		}
		for _, a := range ix.Partition {
			ci.Partition = append(ci.Partition, fmt.Sprintf("%s (%s)", a.Name, a.Type))
		}
		for _, a := range ix.Sort {
			ci.Sort = append(ci.Sort, fmt.Sprintf("%s (%s)", a.Name, a.Type))
		}
		for _, ed := range d.Entities {
			if slices.ContainsFunc(ed.Indexes, func(x describe.EntityIndex) bool { return x.Name == ix.Name }) {
				ci.Entities = append(ci.Entities, ed.Type)
			}
		}
		for _, ap := range patterns {
			if ap.Index == ix.Name {
				ci.Patterns = append(ci.Patterns, ap.Name)
			}
		}
		c.Indexes = append(c.Indexes, ci)
	}
	c.Findings = lint(d, c.Indexes, patterns)
	return c
}

// attrList renders multi-attribute key attributes: "SkillName = {SkillName}, ProficiencyLevel = {Level}".
func attrList(fs []describe.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Attr + " = {" + f.Name + "}"
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

// fieldsOf returns the Go fields of a key's placeholders, in order.
func fieldsOf(k describe.Key) []string {
	var out []string
	for _, p := range k.Parts {
		if p.Field != "" {
			out = append(out, p.Field)
		}
	}
	return out
}

// constantPrefix returns the literal text before a key's first
// placeholder: "" if it starts with one, the whole template if it has
// none. Every key of the template begins with it.
func constantPrefix(k describe.Key) string {
	if len(k.Parts) == 0 || k.Parts[0].Field != "" {
		return ""
	}
	return k.Parts[0].Literal
}

// shape is a template's text with every placeholder replaced by "{}": two
// templates of the same shape can render the same key.
func shape(k describe.Key) string {
	var b strings.Builder
	for _, p := range k.Parts {
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
	pk, sk             describe.Key
	primary, hasSortTp bool
	sharded            bool
	timeForms          map[string]string // the entity's time fields' stored options
}

func lint(d describe.Table, idxs []Index, patterns []Pattern) []Finding {
	var fs []Finding
	var pairs []keyPair
	for _, ed := range d.Entities {
		forms := map[string]string{}
		for _, f := range ed.Fields {
			if f.TimeForm != "" {
				forms[f.Name] = f.TimeForm
			}
		}
		pairs = append(pairs, keyPair{entity: ed.Type, pk: ed.PK, sk: ed.SK, primary: true, hasSortTp: ed.SK.Template != "", timeForms: forms})
		for _, ix := range ed.Indexes {
			if !ix.MultiAttribute {
				pairs = append(pairs, keyPair{entity: ed.Type, index: ix.Name, pk: ix.PK, sk: ix.SK,
					hasSortTp: ix.SK.Template != "", sharded: ix.Shards > 0, timeForms: forms})
			}
		}
	}
	// Hot partitions.
	for _, p := range pairs {
		if len(fieldsOf(p.pk)) > 0 || p.sharded {
			continue
		}
		switch {
		case p.primary && p.hasSortTp && len(fieldsOf(p.sk)) == 0:
			fs = append(fs, Finding{SeverityInfo, p.entity, "", fmt.Sprintf(
				"singleton item (%s = %s, %s = %s): every write to it goes to one partition, so keep its write rate well under 1,000 per second",
				p.pk.Attr, p.pk.Template, p.sk.Attr, p.sk.Template)})
		default:
			fs = append(fs, Finding{SeverityWarning, p.entity, p.index, fmt.Sprintf(
				"constant partition key %s = %s: every item goes to one partition (at most 1,000 writes and 3,000 reads per second); add a placeholder, e.g. a shard number, if it takes sustained traffic",
				p.pk.Attr, p.pk.Template)})
		}
	}
	// Entities sharing a partition.
	for i, a := range pairs {
		for _, b := range pairs[i+1:] {
			if a.entity == b.entity || a.primary != b.primary || a.pk.Attr != b.pk.Attr || shape(a.pk) != shape(b.pk) {
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
					a.entity, b.entity, where, a.pk.Attr, a.pk.Template, a.sk.Attr, a.sk.Template, why)})
				continue
			}
			for _, x := range [][2]keyPair{{a, b}, {b, a}} {
				p, q := x[0], x[1]
				if len(fieldsOf(p.sk)) == 0 {
					continue // queried by equality
				}
				pp, qp := constantPrefix(p.sk), constantPrefix(q.sk)
				if strings.HasPrefix(qp, pp) {
					fs = append(fs, Finding{SeverityWarning, p.entity, p.index, fmt.Sprintf(
						"%s shares its %s partitions (%s = %s) with %s, and %s's sort key prefix %q is a prefix of %s's (%s): queries for %s also read %s's items, paying for them and filtering them out",
						p.entity, where, p.pk.Attr, p.pk.Template, q.entity, p.entity, pp, q.entity, q.sk.Template, p.entity, q.entity)})
				}
			}
		}
	}
	fs = append(fs, lintFormats(pairs)...)
	fs = append(fs, lintForgery(d)...)
	// Entities recognising untyped items by their keys must not both
	// parse one key: such an item would be neither's in a collection.
	for i, a := range d.Entities {
		for _, b := range d.Entities[i+1:] {
			if a.MatchKeys && b.MatchKeys && mayRenderSame(a.PK, b.PK) && mayRenderSame(a.SK, b.SK) {
				fs = append(fs, Finding{SeverityWarning, a.Type, "", fmt.Sprintf(
					"%s and %s both match keys (MatchKeys) and a key can parse with both's templates (%s = %s / %s, %s = %s / %s): an item without the entity type attribute under such a key is refused as ambiguous in collections; give them distinct literals",
					a.Type, b.Type, a.PK.Attr, a.PK.Template, b.PK.Template, a.SK.Attr, a.SK.Template, b.SK.Template)})
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
			if !slices.ContainsFunc(d.Entities, func(ed describe.Entity) bool { return ed.Type == ap.Entity }) {
				fs = append(fs, Finding{SeverityError, ap.Entity, ap.Index, fmt.Sprintf("access pattern %s names an entity not bound to the table", ap.Name)})
			} else if ap.Index != "" && !slices.ContainsFunc(idxs, func(ix Index) bool { return ix.Name == ap.Index }) {
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
			what, per := code(strings.Join(u.Fields, "")), "value"
			if len(u.Fields) > 1 {
				names := make([]string, len(u.Fields))
				for i, f := range u.Fields {
					names[i] = code(f)
				}
				what, per = "("+strings.Join(names, ", ")+")", "tuple of values"
			}
			if u.Hash {
				per += " (keyed by its SHA-256)"
			}
			fmt.Fprintf(&b, "- Unique %s: a guard item per %s, written in the same transaction as the item\n", what, per)
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
			if ix.Projection != "" && ix.Projection != "ALL" {
				kind += ", projects " + ix.Projection
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
