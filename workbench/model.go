package workbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The data-model format NoSQL Workbench imports and exports (its
// ModelMetadata Version "3.0"), as Go values. Field names are the JSON
// names; a field Workbench writes for every model has no omitempty.

// Model is a NoSQL Workbench data model: one or more tables.
type Model struct {
	ModelName     string        `json:"ModelName"`
	ModelMetadata ModelMetadata `json:"ModelMetadata"`
	DataModel     []Table       `json:"DataModel"`
}

// ModelMetadata describes a [Model]. Workbench writes its dates as "Jan
// 2, 2006, 03:04 PM" ([DateLayout]).
type ModelMetadata struct {
	Author           string `json:"Author"`
	DateCreated      string `json:"DateCreated"`
	DateLastModified string `json:"DateLastModified"`
	Description      string `json:"Description"`
	AWSService       string `json:"AWSService,omitempty"`
	Version          string `json:"Version"`
}

// DateLayout is the Go layout of [ModelMetadata]'s dates.
const DateLayout = "Jan 2, 2006, 03:04 PM"

// Table is one table of a [Model]: its key, its attribute definitions, its
// indexes and its facets (one per entity type), each with sample items.
type Table struct {
	TableName     string        `json:"TableName"`
	KeyAttributes KeyAttributes `json:"KeyAttributes"`
	// NonKeyAttributes define every other attribute the facets and
	// indexes name, index key attributes included.
	NonKeyAttributes       []Attribute `json:"NonKeyAttributes,omitempty"`
	TableFacets            []Facet     `json:"TableFacets,omitempty"`
	GlobalSecondaryIndexes []Index     `json:"GlobalSecondaryIndexes,omitempty"`
	// TableData holds sample items outside any facet (older models).
	TableData                   []Item                       `json:"TableData,omitempty"`
	DataAccess                  *DataAccess                  `json:"DataAccess,omitempty"`
	BillingMode                 string                       `json:"BillingMode,omitempty"`
	ProvisionedCapacitySettings *ProvisionedCapacitySettings `json:"ProvisionedCapacitySettings,omitempty"`
}

// KeyAttributes is a table's or an index's key.
type KeyAttributes struct {
	PartitionKey Attribute  `json:"PartitionKey"`
	SortKey      *Attribute `json:"SortKey,omitempty"`
}

// Attribute is an attribute definition: its name and DynamoDB type ("S",
// "N", "B", "BOOL", "M", "L", "SS", "NS", "BS", "NULL").
type Attribute struct {
	AttributeName string `json:"AttributeName"`
	AttributeType string `json:"AttributeType"`
}

// Facet is one access pattern of a table as Workbench draws it: here one
// entity type, its key templates as the key aliases and its sample items.
type Facet struct {
	FacetName         string            `json:"FacetName"`
	KeyAttributeAlias KeyAttributeAlias `json:"KeyAttributeAlias"`
	TableData         []Item            `json:"TableData"`
	NonKeyAttributes  []string          `json:"NonKeyAttributes"`
	DataAccess        *DataAccess       `json:"DataAccess,omitempty"`
}

// KeyAttributeAlias names the table's key attributes in a facet.
type KeyAttributeAlias struct {
	PartitionKeyAlias string `json:"PartitionKeyAlias"`
	SortKeyAlias      string `json:"SortKeyAlias,omitempty"`
}

// Index is a global secondary index.
type Index struct {
	IndexName     string        `json:"IndexName"`
	KeyAttributes KeyAttributes `json:"KeyAttributes"`
	Projection    Projection    `json:"Projection"`
}

// Projection is an index's projection: "ALL", "KEYS_ONLY", or "INCLUDE"
// with NonKeyAttributes.
type Projection struct {
	ProjectionType   string   `json:"ProjectionType"`
	NonKeyAttributes []string `json:"NonKeyAttributes,omitempty"`
}

// DataAccess is where Workbench imports sample data from; an empty MySql
// is what it writes for data entered by hand.
type DataAccess struct {
	MySql struct{} `json:"MySql"` //nolint:revive // Workbench's name
}

// ProvisionedCapacitySettings are a provisioned table's capacity and
// auto scaling, as Workbench writes them.
type ProvisionedCapacitySettings struct {
	ProvisionedThroughput Throughput   `json:"ProvisionedThroughput"`
	AutoScalingRead       *AutoScaling `json:"AutoScalingRead,omitempty"`
	AutoScalingWrite      *AutoScaling `json:"AutoScalingWrite,omitempty"`
}

// Throughput is a provisioned capacity.
type Throughput struct {
	ReadCapacityUnits  int64 `json:"ReadCapacityUnits"`
	WriteCapacityUnits int64 `json:"WriteCapacityUnits"`
}

// AutoScaling is an auto scaling setting of a provisioned table.
type AutoScaling struct {
	ScalableTargetRequest      ScalableTarget `json:"ScalableTargetRequest"`
	ScalingPolicyConfiguration ScalingPolicy  `json:"ScalingPolicyConfiguration"`
}

// ScalableTarget is the range auto scaling moves the capacity in.
type ScalableTarget struct {
	MinCapacity int64  `json:"MinCapacity"`
	MaxCapacity int64  `json:"MaxCapacity"`
	ServiceRole string `json:"ServiceRole,omitempty"`
}

// ScalingPolicy is the utilisation auto scaling aims at, in percent.
type ScalingPolicy struct {
	TargetValue float64 `json:"TargetValue"`
}

// Item is one sample item in DynamoDB JSON: {"PK": {"S": "USER#ann"}}.
type Item map[string]Value

// Value is one attribute value in DynamoDB JSON: exactly one field is set.
type Value struct {
	S    *string          `json:"S,omitempty"`
	N    *string          `json:"N,omitempty"`
	B    []byte           `json:"B,omitempty"`
	BOOL *bool            `json:"BOOL,omitempty"`
	NULL *bool            `json:"NULL,omitempty"`
	M    map[string]Value `json:"M,omitempty"`
	L    []Value          `json:"L,omitempty"`
	SS   []string         `json:"SS,omitempty"`
	NS   []string         `json:"NS,omitempty"`
	BS   [][]byte         `json:"BS,omitempty"`
}

// Type returns the value's DynamoDB type ("S", "N", …), "" when no field
// is set.
func (v Value) Type() string {
	switch {
	case v.S != nil:
		return "S"
	case v.N != nil:
		return "N"
	case v.B != nil:
		return "B"
	case v.BOOL != nil:
		return "BOOL"
	case v.NULL != nil:
		return "NULL"
	case v.M != nil:
		return "M"
	case v.L != nil:
		return "L"
	case v.SS != nil:
		return "SS"
	case v.NS != nil:
		return "NS"
	case v.BS != nil:
		return "BS"
	}
	return ""
}

// Text returns the value of an S or N, "" for the other types.
func (v Value) Text() string {
	switch {
	case v.S != nil:
		return *v.S
	case v.N != nil:
		return *v.N
	}
	return ""
}

// Read decodes a model from r, strictly: a field the format does not have
// is an error, as is a model that misses what Workbench needs to open it
// ([Model.Validate]).
func Read(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("workbench: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Write writes m as Workbench writes a model: indented by two spaces.
func (m *Model) Write(w io.Writer) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("workbench: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

var validTypes = map[string]bool{"S": true, "N": true, "B": true, "BOOL": true, "NULL": true,
	"M": true, "L": true, "SS": true, "NS": true, "BS": true}

// Validate checks what Workbench needs to open the model: a name, the
// metadata's version, and per table a name, a typed key (S, N or B), a
// definition of every attribute a facet or index names, facets with a
// name and a partition key alias (and a sort key alias when the table has
// a sort key), sample items holding the table's key with values of one
// type each, and index keys defined. All problems are reported, joined.
func (m *Model) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("workbench: "+format, args...)) }
	if m.ModelName == "" {
		bad("ModelName is empty")
	}
	if m.ModelMetadata.Version == "" {
		bad("ModelMetadata.Version is empty")
	}
	if len(m.DataModel) == 0 {
		bad("DataModel has no table")
	}
	for i := range m.DataModel {
		m.DataModel[i].validate(bad)
	}
	return errors.Join(errs...)
}

func (t *Table) validate(bad func(string, ...any)) {
	if t.TableName == "" {
		bad("a table has no TableName")
	}
	defined := map[string]string{}
	checkKey := func(where string, k KeyAttributes) {
		for _, a := range []*Attribute{&k.PartitionKey, k.SortKey} {
			if a == nil {
				continue
			}
			if typ := a.AttributeType; a.AttributeName == "" || typ != "S" && typ != "N" && typ != "B" {
				bad("%s: key attribute %q has type %q (want S, N or B)", where, a.AttributeName, a.AttributeType)
			}
		}
	}
	checkKey("table "+t.TableName, t.KeyAttributes)
	defined[t.KeyAttributes.PartitionKey.AttributeName] = t.KeyAttributes.PartitionKey.AttributeType
	if sk := t.KeyAttributes.SortKey; sk != nil {
		defined[sk.AttributeName] = sk.AttributeType
	}
	for _, a := range t.NonKeyAttributes {
		if !validTypes[a.AttributeType] {
			bad("table %s: attribute %q has type %q", t.TableName, a.AttributeName, a.AttributeType)
		}
		if _, dup := defined[a.AttributeName]; dup {
			bad("table %s: attribute %q is defined twice", t.TableName, a.AttributeName)
		}
		defined[a.AttributeName] = a.AttributeType
	}
	for _, ix := range t.GlobalSecondaryIndexes {
		where := "table " + t.TableName + " index " + ix.IndexName
		if ix.IndexName == "" {
			bad("table %s: an index has no IndexName", t.TableName)
		}
		checkKey(where, ix.KeyAttributes)
		for _, a := range []*Attribute{&ix.KeyAttributes.PartitionKey, ix.KeyAttributes.SortKey} {
			if a != nil && defined[a.AttributeName] != a.AttributeType {
				bad("%s: key attribute %q is not defined as %s", where, a.AttributeName, a.AttributeType)
			}
		}
		switch ix.Projection.ProjectionType {
		case "ALL", "KEYS_ONLY", "INCLUDE":
		default:
			bad("%s: ProjectionType %q", where, ix.Projection.ProjectionType)
		}
	}
	for _, f := range t.TableFacets {
		where := "table " + t.TableName + " facet " + f.FacetName
		if f.FacetName == "" {
			bad("table %s: a facet has no FacetName", t.TableName)
		}
		if f.KeyAttributeAlias.PartitionKeyAlias == "" || (t.KeyAttributes.SortKey != nil) != (f.KeyAttributeAlias.SortKeyAlias != "") {
			bad("%s: KeyAttributeAlias does not match the table's key", where)
		}
		for _, a := range f.NonKeyAttributes {
			if _, ok := defined[a]; !ok {
				bad("%s: attribute %q is not defined in the table's NonKeyAttributes", where, a)
			}
		}
		t.validateItems(where, f.TableData, defined, bad)
	}
	t.validateItems("table "+t.TableName, t.TableData, defined, bad)
}

func (t *Table) validateItems(where string, items []Item, defined map[string]string, bad func(string, ...any)) {
	for i, it := range items {
		for _, k := range []*Attribute{&t.KeyAttributes.PartitionKey, t.KeyAttributes.SortKey} {
			if k != nil && it[k.AttributeName].Type() != k.AttributeType {
				bad("%s: item %d: key attribute %q is not a %s", where, i, k.AttributeName, k.AttributeType)
			}
		}
		for name, v := range it {
			typ, ok := defined[name]
			switch {
			case v.Type() == "":
				bad("%s: item %d: attribute %q has no value", where, i, name)
			case !ok:
				bad("%s: item %d: attribute %q is not defined", where, i, name)
			case typ != v.Type():
				bad("%s: item %d: attribute %q is a %s, defined as %s", where, i, name, v.Type(), typ)
			}
		}
	}
}
