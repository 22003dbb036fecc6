package workbench

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// GenerateOptions configure [Generate].
type GenerateOptions struct {
	// Package is the generated file's package name; default "model".
	Package string
	// Table names the model's table to generate; default its first.
	Table string
}

// Generate returns Go declarations for a table of model m, gofmt'ed: a
// struct per facet, its [singletable.Schema] with key templates inferred
// from the facet's sample items (constant prefixes, '#'-separated parts,
// attributes written verbatim or escaped, zero-padded numbers, and times
// in the layouts the library reads and writes), the table's options, and
// a New that binds every entity to a table. What the samples leave open
// is said in a comment where it is decided; a facet without sample items
// is left out, with a comment. See docs/workbench.md.
func Generate(m *Model, optFns ...func(*GenerateOptions)) ([]byte, error) {
	o := GenerateOptions{Package: "model"}
	for _, fn := range optFns {
		fn(&o)
	}
	var tb *Table
	for i := range m.DataModel {
		if o.Table == "" || m.DataModel[i].TableName == o.Table {
			tb = &m.DataModel[i]
			break
		}
	}
	if tb == nil {
		return nil, fmt.Errorf("workbench: model %s has no table %q", m.ModelName, o.Table)
	}
	g := newTableGen(m, tb)
	src := g.source(o.Package)
	out, err := format.Source(src)
	if err != nil {
		return src, fmt.Errorf("workbench: generated code does not parse: %w", err)
	}
	return out, nil
}

// tableGen generates one table's declarations.
type tableGen struct {
	m         *Model
	tb        *Table
	pk, sk    string
	typeAttr  string // "" when no attribute holds the entity type
	typeNotes []string
	facets    []*facetGen
	skipped   []string
	names     map[string]bool
}

// facetGen infers one facet's entity.
type facetGen struct {
	t        *tableGen
	f        Facet
	items    []Item
	goName   string
	typ      string
	fields   []*field
	index    bool   // inferring an index key
	newField string // the key-only field the last placeholder made
	pk, sk   keyInference
	indexes  []indexGen
}

type indexGen struct {
	name, pkAttr, skAttr string
	multi                []string // a multi-attribute key's fields: partition, then sort
	skip                 bool
	pk, sk               keyInference
	notes                []string
}

func newTableGen(m *Model, tb *Table) *tableGen {
	g := &tableGen{m: m, tb: tb, pk: tb.KeyAttributes.PartitionKey.AttributeName, names: map[string]bool{
		"TableOptions": true, "Repos": true, "New": true}}
	if tb.KeyAttributes.SortKey != nil {
		g.sk = tb.KeyAttributes.SortKey.AttributeName
	}
	g.findTypeAttr()
	for _, f := range tb.TableFacets {
		if len(f.TableData) == 0 {
			g.skipped = append(g.skipped, f.FacetName)
			continue
		}
		fg := &facetGen{t: g, f: f, items: f.TableData, goName: g.unique(goName(f.FacetName))}
		fg.typ = f.FacetName
		if g.typeAttr != "" {
			fg.typ = f.TableData[0][g.typeAttr].Text()
		}
		fg.infer()
		g.facets = append(g.facets, fg)
	}
	return g
}

func (g *tableGen) unique(name string) string {
	n := name
	for i := 2; g.names[n] || g.names[n+"Entity"]; i++ {
		n = name + strconv.Itoa(i)
	}
	g.names[n], g.names[n+"Entity"] = true, true
	return n
}

// findTypeAttr finds the attribute holding the entity type: an S that
// every sample holds, the same within each facet and different between
// facets; one whose values are the facet names is preferred.
func (g *tableGen) findTypeAttr() {
	var found []string
	for _, a := range g.tb.NonKeyAttributes {
		vals := map[string]bool{}
		ok := a.AttributeType == "S"
		byName := true
		for _, f := range g.tb.TableFacets {
			for i, it := range f.TableData {
				v := it[a.AttributeName]
				if v.S == nil || *v.S != f.TableData[0][a.AttributeName].Text() {
					ok = false
				}
				if i == 0 && v.S != nil {
					if vals[*v.S] {
						ok = false
					}
					vals[*v.S] = true
					byName = byName && *v.S == f.FacetName
				}
			}
		}
		if ok && len(vals) > 0 {
			if byName {
				found = append([]string{a.AttributeName}, found...)
			} else {
				found = append(found, a.AttributeName)
			}
		}
	}
	switch {
	case len(found) == 0:
		g.typeNotes = append(g.typeNotes, "No attribute holds a type that tells the facets' items apart, so the table omits the entity type attribute (OmitEntityType) and each entity recognises its items by their keys (MatchKeys).")
	case len(found) > 1:
		g.typeAttr = found[0]
		g.typeNotes = append(g.typeNotes, fmt.Sprintf("The entity type attribute could be any of %s: %s was taken.", strings.Join(found, ", "), found[0]))
	default:
		g.typeAttr = found[0]
	}
}

// isKeyAttr reports whether attr is a key attribute of the table or one
// of its indexes.
func (g *tableGen) isKeyAttr(attr string) bool {
	if attr == g.pk || attr == g.sk {
		return true
	}
	for _, ix := range g.tb.GlobalSecondaryIndexes {
		if ix.KeyAttributes.PartitionKey.AttributeName == attr || ix.KeyAttributes.SortKey != nil && ix.KeyAttributes.SortKey.AttributeName == attr {
			return true
		}
	}
	return false
}

func (g *tableGen) attrType(attr string) string {
	for _, a := range g.tb.NonKeyAttributes {
		if a.AttributeName == attr {
			return a.AttributeType
		}
	}
	return ""
}

// infer builds the facet's fields and keys.
func (fg *facetGen) infer() {
	g := fg.t
	var attrs []string
	for _, it := range fg.items {
		for _, a := range sortedKeys(it) {
			if !slices.Contains(attrs, a) && a != g.typeAttr && a != g.pk && a != g.sk {
				attrs = append(attrs, a)
			}
		}
	}
	// Attributes first as the facet lists them, then the rest.
	slices.SortStableFunc(attrs, func(a, b string) int { return pos(fg.f.NonKeyAttributes, a) - pos(fg.f.NonKeyAttributes, b) })
	var sources, indexAttrs []string
	for _, a := range attrs {
		if g.isKeyAttr(a) {
			indexAttrs = append(indexAttrs, a)
		} else {
			sources = append(sources, a)
		}
	}
	for _, a := range sources {
		fg.addField(a)
	}
	// An index key attribute that is one varying value no other attribute
	// holds is an attribute of its own (an index on a plain attribute).
	for _, a := range indexAttrs {
		probe := &facetGen{t: g, f: fg.f, items: fg.items, index: true}
		for _, s := range sources {
			probe.addField(s)
		}
		if inf := probe.inferKey(a, fg.holding(a), sources); inf.own {
			sources = append(sources, a)
			fg.addField(a)
		}
	}
	all := make([]int, len(fg.items))
	for i := range all {
		all[i] = i
	}
	fg.pk = fg.inferKey(g.pk, all, sources)
	if g.sk != "" {
		fg.sk = fg.inferKey(g.sk, all, sources)
	}
	for _, f := range fg.fields {
		if f.attr == "" {
			f.keyOnly = true
		}
	}
	fg.index = true
	for _, ix := range g.tb.GlobalSecondaryIndexes {
		fg.inferIndex(ix, sources)
	}
	fg.settleFields()
}

func pos(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}

// holding lists the items that hold attr.
func (fg *facetGen) holding(attr string) []int {
	var out []int
	for i, it := range fg.items {
		if it[attr].Type() != "" {
			out = append(out, i)
		}
	}
	return out
}

func (fg *facetGen) inferIndex(ix Index, sources []string) {
	g := fg.t
	pkA := ix.KeyAttributes.PartitionKey.AttributeName
	idx := fg.holding(pkA)
	if len(idx) == 0 {
		return
	}
	ig := indexGen{name: ix.IndexName, pkAttr: pkA}
	key := func(attr string) keyInference {
		switch attr {
		case g.pk:
			return fg.pk
		case g.sk:
			return fg.sk
		}
		return fg.inferKey(attr, idx, sources)
	}
	ig.pk = key(pkA)
	if ix.KeyAttributes.SortKey != nil {
		ig.skAttr = ix.KeyAttributes.SortKey.AttributeName
		ig.sk = key(ig.skAttr)
	}
	ownPK, ownSK := fg.ownField(ig.pk, pkA), fg.ownField(ig.sk, ig.skAttr)
	switch {
	case ownPK != nil && (ig.skAttr == "" || ownSK != nil):
		// Keyed on plain attributes: a multi-attribute key, each as stored.
		ig.multi = []string{ownPK.name}
		if ownSK != nil {
			ig.multi = append(ig.multi, ownSK.name)
		}
	case ownPK != nil && ownPK.attrType != "S", ownSK != nil && ownSK.attrType != "S":
		ig.skip = true
		ig.notes = append(ig.notes, fmt.Sprintf("%s mixes a key on a plain non-string attribute with a templated one, which the library cannot declare: it is left out.", ix.IndexName))
	}
	if len(idx) < len(fg.items) {
		ig.notes = append(ig.notes, fmt.Sprintf("Sparse: %d of %d samples are in %s; the others must miss a field of its templates (a zero value), or the index needs a When.",
			len(idx), len(fg.items), ix.IndexName))
	}
	fg.indexes = append(fg.indexes, ig)
}

// ownField returns the field whose own attribute attr is the key
// inference k: a lone placeholder of that field.
func (fg *facetGen) ownField(k keyInference, attr string) *field {
	f := fg.fieldOf(attr)
	if f == nil || !strings.HasPrefix(k.template, "{"+f.name) || strings.Count(k.template, "{") != 1 || !strings.HasSuffix(k.template, "}") {
		return nil
	}
	return f
}

// addField adds the field of attribute attr, typed from the model.
func (fg *facetGen) addField(attr string) *field {
	if f := fg.fieldOf(attr); f != nil {
		return f
	}
	f := &field{name: fg.fieldName(goName(attr)), attr: attr, attrType: fg.t.attrType(attr)}
	if f.attrType == "" {
		for _, it := range fg.items {
			if t := it[attr].Type(); t != "" {
				f.attrType = t
				break
			}
		}
	}
	fg.fields = append(fg.fields, f)
	return f
}

func (fg *facetGen) fieldName(name string) string {
	n := name
	for i := 2; slices.ContainsFunc(fg.fields, func(f *field) bool { return f.name == n }); i++ {
		n = name + strconv.Itoa(i)
	}
	return n
}

func (fg *facetGen) fieldOf(attr string) *field {
	for _, f := range fg.fields {
		if f.attr == attr && attr != "" {
			return f
		}
	}
	return nil
}

// bind settles the field of candidate c's attribute to c's type.
func (fg *facetGen) bind(c candidate) *field {
	f := fg.addField(c.attr)
	if !f.bound {
		f.bound, f.goType, f.timeOpt = true, c.goType, c.attrOp
		if c.kind == "time" {
			f.notes = append(f.notes, fmt.Sprintf("%s reads as a time in every sample key (%s): declared time.Time; declare a string and {%s:raw} if it is text.",
				c.attr, keyFmtName(c.keyFmt), f.name))
		}
	}
	return f
}

// keyField returns the field held only in keys whose value in item
// idx[i] is parts[i], reusing one with the same values.
func (fg *facetGen) keyField(attr string, pos int, parts []string, idx []int) *field {
	for _, f := range fg.fields {
		if f.vals == nil {
			continue
		}
		same := true
		for i, j := range idx {
			v, ok := f.vals[j]
			same = same && ok && v == parts[i]
		}
		if same {
			return f
		}
	}
	name := ""
	if pos > 0 {
		// Named for the literal before it when it is one: ACCT#123 → Acct.
		if v := strings.Split(fg.items[idx[0]][attr].Text(), "#")[pos-1]; isWord(v) {
			name = goName(strings.ToLower(v))
		}
	}
	if name == "" {
		name = goName(attr) + "Part" + strconv.Itoa(pos+1)
	}
	f := &field{name: fg.fieldName(name), goType: "string", bound: true, vals: map[int]string{}, derived: fg.index}
	for i, j := range idx {
		f.vals[j] = parts[i]
	}
	fg.fields = append(fg.fields, f)
	return f
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// settleFields gives every field its Go type and tag options.
func (fg *facetGen) settleFields() {
	for _, f := range fg.fields {
		if f.attr == "" {
			if f.derived {
				f.attr = snake(f.name)
				f.notes = append(f.notes, fmt.Sprintf("%s is part of an index key that no attribute of the samples holds: it is stored as %s, which the model's items do not have.", f.name, f.attr))
			}
			continue
		}
		if !f.bound {
			f.goType = fg.goType(f)
		}
		if f.goType == "time.Time" && f.timeOpt != "" {
			f.opts = append(f.opts, f.timeOpt)
		}
		switch f.attrType {
		case "SS":
			f.opts = append(f.opts, "stringset")
		case "NS":
			f.opts = append(f.opts, "numberset")
		case "BS":
			f.opts = append(f.opts, "binaryset")
		}
		if n := len(fg.holding(f.attr)); n < len(fg.items) {
			f.opts = append(f.opts, "omitempty")
			if fg.zeroHeld(f) {
				f.notes = append(f.notes, fmt.Sprintf("%s is missing from %d of %d samples and a zero value in others: omitempty drops the zero values a write would store.", f.attr, len(fg.items)-n, len(fg.items)))
			}
		}
	}
}

// zeroHeld reports whether a sample holds f's attribute as a zero value.
func (fg *facetGen) zeroHeld(f *field) bool {
	for _, it := range fg.items {
		v, ok := it[f.attr]
		if ok && (v.Text() == "" && (v.S != nil) || v.N != nil && *v.N == "0" || v.BOOL != nil && !*v.BOOL) {
			return true
		}
	}
	return false
}

// goType is the Go type of a field no key settled, from its attribute's
// type and values.
func (fg *facetGen) goType(f *field) string {
	switch f.attrType {
	case "S":
		return "string"
	case "N":
		for _, it := range fg.items {
			if v := it[f.attr]; v.N != nil {
				if _, err := strconv.ParseInt(*v.N, 10, 64); err != nil {
					return "float64"
				}
			}
		}
		return "int64"
	case "BOOL":
		return "bool"
	case "B":
		return "[]byte"
	case "SS":
		return "[]string"
	case "NS":
		return "[]float64"
	case "BS":
		return "[][]byte"
	case "M":
		return "map[string]any"
	case "L":
		return "[]any"
	}
	f.notes = append(f.notes, fmt.Sprintf("%s has type %q in the model: declared any.", f.attr, f.attrType))
	return "any"
}

// source writes the file.
func (g *tableGen) source(pkg string) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("// Package %s declares the entities of table %s of the NoSQL Workbench\n// model %q, as singletable's workbench.Generate inferred them from the\n// model's sample items. Read the comments: they say what the samples\n// left open.\npackage %s\n\n", pkg, g.tb.TableName, g.m.ModelName, pkg)
	w("import (\n")
	if g.uses("time.Time") {
		w("\t\"time\"\n\n")
	}
	w("\t\"github.com/singletable-go/singletable\"\n)\n\n")
	comment(&b, "", g.typeNotes)
	w("// TableOptions sets the attribute names of table %s.\nfunc TableOptions(o *singletable.TableOptions) {\n", g.tb.TableName)
	w("\to.PartitionKey, o.SortKey = %q, %q\n", g.pk, g.sk)
	if g.typeAttr != "" {
		w("\to.EntityTypeAttr = %q\n", g.typeAttr)
	} else {
		w("\to.OmitEntityType = true\n")
	}
	w("}\n\n")
	for _, name := range g.skipped {
		w("// Facet %q has no sample items, so nothing shows its keys: it is not declared.\n\n", name)
	}
	for _, fg := range g.facets {
		fg.source(&b)
	}
	w("// Repos are the repositories of table %s's entities.\ntype Repos struct {\n\tTable *singletable.Table\n", g.tb.TableName)
	for _, fg := range g.facets {
		w("\t%s *singletable.Repo[%s]\n", fg.goName, fg.goName)
	}
	w("}\n\n// New binds every entity to the named table; optFns change the table's\n// options after TableOptions.\n")
	w("func New(client singletable.Client, name string, optFns ...func(*singletable.TableOptions)) *Repos {\n")
	w("\tt := singletable.NewTable(client, name, append([]func(*singletable.TableOptions){TableOptions}, optFns...)...)\n")
	w("\treturn &Repos{Table: t,\n")
	for _, fg := range g.facets {
		w("\t\t%s: singletable.MustBind(t, %sEntity),\n", fg.goName, fg.goName)
	}
	w("\t}\n}\n")
	return b.Bytes()
}

func (g *tableGen) uses(goType string) bool {
	for _, fg := range g.facets {
		for _, f := range fg.fields {
			if f.goType == goType {
				return true
			}
		}
	}
	return false
}

func comment(b *bytes.Buffer, indent string, notes []string) {
	for _, n := range notes {
		for _, l := range wrap(n, 72) {
			fmt.Fprintf(b, "%s// %s\n", indent, l)
		}
	}
}

func wrap(s string, width int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	return append(lines, cur)
}

func (fg *facetGen) source(b *bytes.Buffer) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("// %s is an item of facet %q (%d sample items).\ntype %s struct {\n", fg.goName, fg.f.FacetName, len(fg.items), fg.goName)
	for _, f := range fg.fields {
		comment(b, "\t", f.notes)
		tag := f.attr
		if f.keyOnly {
			tag = "-"
		}
		if len(f.opts) > 0 {
			tag += "," + strings.Join(f.opts, ",")
		}
		w("\t%s %s `dynamodbav:%q`\n", f.name, f.goType, tag)
	}
	w("}\n\n")
	w("// %sEntity declares %s.\nvar %sEntity = singletable.MustDefine(singletable.Schema[%s]{\n", fg.goName, fg.goName, fg.goName, fg.goName)
	w("\tType: %q,\n", fg.typ)
	comment(b, "\t", fg.pk.notes)
	w("\tPK: %q,\n", fg.pk.template)
	if fg.t.sk != "" {
		comment(b, "\t", fg.sk.notes)
		w("\tSK: %q,\n", fg.sk.template)
	}
	var keyOnly []string
	for _, f := range fg.fields {
		if f.keyOnly {
			keyOnly = append(keyOnly, strconv.Quote(f.name))
		}
	}
	if len(keyOnly) > 0 {
		w("\tKeyOnly: []string{%s},\n", strings.Join(keyOnly, ", "))
	}
	if fg.t.typeAttr == "" {
		w("\tMatchKeys: true,\n")
	}
	if len(fg.indexes) > 0 {
		w("\tIndexes: []singletable.IndexSchema[%s]{\n", fg.goName)
		for _, ix := range fg.indexes {
			comment(b, "\t\t", ix.notes)
			if ix.skip {
				continue
			}
			if ix.multi != nil {
				w("\t\t{Name: %q, MultiAttribute: true, PartitionAttrs: []string{%q}", ix.name, ix.multi[0])
				if len(ix.multi) > 1 {
					w(", SortAttrs: []string{%q}", ix.multi[1])
				}
				w("},\n")
				continue
			}
			comment(b, "\t\t", ix.pk.notes)
			comment(b, "\t\t", ix.sk.notes)
			w("\t\t{Name: %q, PK: %q, PKAttr: %q", ix.name, ix.pk.template, ix.pkAttr)
			if ix.skAttr != "" {
				w(", SK: %q, SKAttr: %q", ix.sk.template, ix.skAttr)
			}
			if ix.pk.shards > 0 {
				w(", Shards: %d", ix.pk.shards)
			}
			w("},\n")
		}
		w("\t},\n")
	}
	w("})\n\n")
}

// goName makes an exported Go name of s: words split at non-letters and
// case changes, common initialisms upper-cased (user_id → UserID).
func goName(s string) string {
	var words []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = nil
		}
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		if up := strings.ToUpper(w); initialisms[up] {
			b.WriteString(up)
			continue
		}
		if w == strings.ToUpper(w) {
			w = strings.ToLower(w) // TASK → Task
		}
		r := []rune(w)
		b.WriteString(strings.ToUpper(string(r[0])) + string(r[1:]))
	}
	n := b.String()
	if n == "" || !unicode.IsLetter([]rune(n)[0]) {
		n = "X" + n
	}
	return n
}

var initialisms = map[string]bool{"ID": true, "PK": true, "SK": true, "URL": true, "TTL": true, "GSI": true, "API": true, "IP": true, "UUID": true}

// snake makes an attribute name of a Go name: GoalID → goal_id.
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func keyFmtName(f string) string {
	if f == "" {
		return "the key codec's default"
	}
	return f
}

func sortedKeys(it Item) []string {
	ks := make([]string, 0, len(it))
	for k := range it {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
