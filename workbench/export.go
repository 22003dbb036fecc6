package workbench

import (
	"context"
	"encoding"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// ExportOptions configure [Export].
type ExportOptions struct {
	// ModelName names the model; default the table's name.
	ModelName string
	// Author and Description go in the model's metadata; Description
	// defaults to a sentence naming the table.
	Author, Description string
	// Date is the model's DateCreated and DateLastModified; default now.
	// Set it for output that does not change from run to run.
	Date time.Time
	// Samples are example values of the entities, rendered through their
	// declarations ([Samples]): each item goes in its entity's facet.
	Samples []Sample
	// Items are items read from a table ([ScanItems]), each put in the
	// facet of the entity whose type it holds, or whose key templates its
	// keys match; an item no entity claims goes in the table's TableData.
	Items []map[string]types.AttributeValue
	// Provisioned, when set, exports a provisioned table with this
	// capacity; by default the table is on demand (PAY_PER_REQUEST), as
	// [singletable.Table.CreateTable] creates it.
	Provisioned *types.ProvisionedThroughput
}

// Sample is example values of one entity rendered into items: make it
// with [Samples].
type Sample struct {
	entity string
	typ    reflect.Type
	items  []map[string]types.AttributeValue
	err    error
}

// Samples renders values through r's declaration, as [singletable.Repo.PutOp]
// renders an item (managed timestamps filled only when zero: set them for
// output that does not change from run to run). Unique guard items are not
// part of a model. The values' Go type also gives the attribute types of
// fields no value holds.
func Samples[T any](r *singletable.Repo[T], values ...T) Sample {
	s := Sample{entity: r.Describe().Type, typ: reflect.TypeFor[T]()}
	for _, v := range values {
		op := r.PutOp(v)
		if err := op.Err(); err != nil {
			s.err = fmt.Errorf("workbench: sample of %s: %w", s.entity, err)
			return s
		}
		s.items = append(s.items, op.Item())
	}
	return s
}

// ScanItems reads up to limit items of t's table with one Scan (a page
// of at most limit items, fewer when DynamoDB's 1 MB page ends first),
// for [ExportOptions].Items.
func ScanItems(ctx context.Context, t *singletable.Table, limit int32) ([]map[string]types.AttributeValue, error) {
	out, err := t.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(t.Name()), Limit: aws.Int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("workbench: scan %s: %w", t.Name(), err)
	}
	return out.Items, nil
}

// Export returns the NoSQL Workbench model of t as its bound entities
// declare it ([singletable.Table.Describe]): the table's key, one global
// secondary index per declared index, and one facet per entity whose key
// aliases are its key templates (PartitionKeyAlias "USER#{Username}"),
// with the sample items given in opts. A multi-attribute index key, which
// the format cannot hold, is exported as its first attribute, and the
// model's description says so.
func Export(t *singletable.Table, optFns ...func(*ExportOptions)) (*Model, error) {
	var o ExportOptions
	for _, fn := range optFns {
		fn(&o)
	}
	d := t.Describe()
	x := newExporter(d)
	for _, s := range o.Samples {
		if s.err != nil {
			return nil, s.err
		}
		x.sample(s)
	}
	for _, it := range o.Items {
		x.add(x.route(it), it)
	}
	tb := x.table(o.Provisioned)
	name, date := o.ModelName, o.Date
	if name == "" {
		name = d.Name
	}
	if date.IsZero() {
		date = time.Now()
	}
	desc := o.Description
	if desc == "" {
		desc = "The single-table design of " + d.Name + ", exported by singletable from its entity declarations."
	}
	for _, n := range x.notes {
		desc += "\n" + n
	}
	m := &Model{ModelName: name, DataModel: []Table{tb}, ModelMetadata: ModelMetadata{
		Author: o.Author, DateCreated: date.Format(DateLayout), DateLastModified: date.Format(DateLayout),
		Description: desc, AWSService: "Amazon DynamoDB", Version: "3.0"}}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// exporter gathers a table's facets and attribute definitions.
type exporter struct {
	d      describe.Table
	facets []*facet
	other  []Item            // items no entity claims
	types  map[string]string // attribute → type, from values or Go types
	order  []string          // attributes in the order first met
	notes  []string
}

type facet struct {
	e     describe.Entity
	typ   reflect.Type
	items []Item
	attrs []string
	pk    *regexp.Regexp
	sk    *regexp.Regexp
}

func newExporter(d describe.Table) *exporter {
	x := &exporter{d: d, types: map[string]string{}}
	for _, e := range d.Entities {
		f := &facet{e: e, pk: keyPattern(e.PK), sk: keyPattern(e.SK)}
		if !d.OmitEntityType {
			f.attrs = append(f.attrs, d.EntityTypeAttr)
		}
		for _, fd := range e.Fields {
			if fd.Attr != "-" { // "-": held only in keys (KeyOnly)
				f.attrs = append(f.attrs, fd.Attr)
			}
		}
		for _, ix := range e.Indexes {
			if !ix.MultiAttribute {
				f.attrs = append(f.attrs, ix.PK.Attr, ix.SK.Attr)
			}
		}
		x.facets = append(x.facets, f)
	}
	return x
}

// keyPattern matches the keys a template renders: its literals, and
// anything for a placeholder.
func keyPattern(k describe.Key) *regexp.Regexp {
	if k.Template == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("^")
	for _, p := range k.Parts {
		if p.Field != "" {
			b.WriteString("(.+)")
		} else {
			b.WriteString(regexp.QuoteMeta(p.Literal))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func (x *exporter) facetOf(entity string) *facet {
	for _, f := range x.facets {
		if f.e.Type == entity {
			return f
		}
	}
	return nil
}

func (x *exporter) sample(s Sample) {
	f := x.facetOf(s.entity)
	f.typ = s.typ
	for _, it := range s.items {
		x.add(f, it)
	}
}

// route finds the facet of an item read from the table: by its entity
// type, or by its keys for an entity that recognises its items so.
func (x *exporter) route(it map[string]types.AttributeValue) *facet {
	if t, ok := it[x.d.EntityTypeAttr].(*types.AttributeValueMemberS); ok {
		return x.facetOf(t.Value)
	}
	s := func(attr string) (string, bool) {
		v, ok := it[attr].(*types.AttributeValueMemberS)
		if !ok {
			return "", false
		}
		return v.Value, true
	}
	pk, okPK := s(x.d.PartitionKey)
	sk, okSK := s(x.d.SortKey)
	for _, f := range x.facets {
		if f.e.MatchKeys && okPK && f.pk.MatchString(pk) && (f.sk == nil || okSK && f.sk.MatchString(sk)) {
			return f
		}
	}
	return nil
}

func (x *exporter) add(f *facet, av map[string]types.AttributeValue) {
	it := ItemOf(av)
	for _, k := range slices.Sorted(maps.Keys(it)) {
		x.define(k, it[k].Type())
		if f != nil && !slices.Contains(f.attrs, k) && !x.isTableKey(k) {
			f.attrs = append(f.attrs, k)
		}
	}
	if f == nil {
		x.other = append(x.other, it)
		return
	}
	f.items = append(f.items, it)
}

func (x *exporter) isTableKey(attr string) bool {
	return attr == x.d.PartitionKey || attr == x.d.SortKey
}

// define records attr's type, the first one given winning.
func (x *exporter) define(attr, typ string) {
	if attr == "" || typ == "" {
		return
	}
	if _, ok := x.types[attr]; !ok {
		x.types[attr] = typ
		x.order = append(x.order, attr)
	}
}

// table builds the table: keys and index attributes first (their types
// are declared), then each facet's attributes.
func (x *exporter) table(prov *types.ProvisionedThroughput) Table {
	d := x.d
	tb := Table{TableName: d.Name, DataAccess: &DataAccess{}, BillingMode: "PAY_PER_REQUEST",
		KeyAttributes: KeyAttributes{PartitionKey: Attribute{d.PartitionKey, "S"}}}
	if d.SortKey != "" {
		tb.KeyAttributes.SortKey = &Attribute{d.SortKey, "S"}
	}
	if prov != nil {
		tb.BillingMode = "PROVISIONED"
		tb.ProvisionedCapacitySettings = &ProvisionedCapacitySettings{ProvisionedThroughput: Throughput{
			ReadCapacityUnits: aws.ToInt64(prov.ReadCapacityUnits), WriteCapacityUnits: aws.ToInt64(prov.WriteCapacityUnits)}}
	}
	declared := map[string]string{}
	for _, ix := range d.Indexes {
		gsi := Index{IndexName: ix.Name, Projection: Projection{ProjectionType: "ALL"}}
		gsi.KeyAttributes.PartitionKey = Attribute{ix.Partition[0].Name, string(ix.Partition[0].Type)}
		if len(ix.Sort) > 0 {
			gsi.KeyAttributes.SortKey = &Attribute{ix.Sort[0].Name, string(ix.Sort[0].Type)}
		}
		if len(ix.Partition) > 1 || len(ix.Sort) > 1 {
			x.notes = append(x.notes, fmt.Sprintf("Index %s has a multi-attribute key (%s), which a Workbench model cannot hold: it is shown keyed on its first attributes.",
				ix.Name, keyNames(ix)))
		}
		for _, a := range append(slices.Clone(ix.Partition), ix.Sort...) {
			declared[a.Name] = string(a.Type)
		}
		tb.GlobalSecondaryIndexes = append(tb.GlobalSecondaryIndexes, gsi)
	}
	for _, f := range x.facets {
		x.goTypes(f)
	}
	seen := map[string]bool{d.PartitionKey: true, d.SortKey: true}
	def := func(attr string) {
		if seen[attr] || attr == "" {
			return
		}
		seen[attr] = true
		typ := declared[attr]
		if typ == "" {
			typ = x.types[attr]
		}
		if typ == "" {
			typ = "S"
		}
		tb.NonKeyAttributes = append(tb.NonKeyAttributes, Attribute{attr, typ})
	}
	for _, f := range x.facets {
		fc := Facet{FacetName: f.e.Type, TableData: f.items, DataAccess: &DataAccess{},
			KeyAttributeAlias: KeyAttributeAlias{PartitionKeyAlias: f.e.PK.Template, SortKeyAlias: f.e.SK.Template}}
		if fc.TableData == nil {
			fc.TableData = []Item{}
		}
		for _, a := range f.attrs {
			if a != "" && !x.isTableKey(a) && !slices.Contains(fc.NonKeyAttributes, a) {
				fc.NonKeyAttributes = append(fc.NonKeyAttributes, a)
				def(a)
			}
		}
		tb.TableFacets = append(tb.TableFacets, fc)
	}
	for _, a := range x.order {
		def(a)
	}
	for _, a := range slices.Sorted(maps.Keys(declared)) {
		def(a)
	}
	tb.TableData = x.other
	return tb
}

func keyNames(ix describe.Index) string {
	var ps, ss []string
	for _, a := range ix.Partition {
		ps = append(ps, a.Name)
	}
	for _, a := range ix.Sort {
		ss = append(ss, a.Name)
	}
	if len(ss) == 0 {
		return "partition " + strings.Join(ps, ", ")
	}
	return "partition " + strings.Join(ps, ", ") + "; sort " + strings.Join(ss, ", ")
}

// goTypes defines the attributes of f's fields that no sample holds, from
// the fields' Go types.
func (x *exporter) goTypes(f *facet) {
	if f.typ == nil {
		return
	}
	for _, fd := range f.e.Fields {
		sf, ok := f.typ.FieldByName(fd.Name)
		if !ok || fd.Attr == "-" {
			continue
		}
		x.define(fd.Attr, goAttrType(sf.Type, fd.TimeForm))
	}
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// goAttrType is the DynamoDB type a field of type t is stored as.
func goAttrType(t reflect.Type, timeForm string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType && (timeForm == "unix" || timeForm == "unixmilli"):
		return "N"
	case t == timeType, t.Implements(marshalerType), reflect.PointerTo(t).Implements(marshalerType):
		return "S"
	}
	switch t.Kind() {
	case reflect.String:
		return "S"
	case reflect.Bool:
		return "BOOL"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "N"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "B"
		}
		return "L"
	case reflect.Map, reflect.Struct:
		return "M"
	}
	return "S"
}
