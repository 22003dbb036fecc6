package tabledef

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
)

// Table is a table's definition as CreateTable sends it: its keys (S
// attributes), its indexes and its capacity and stream.
type Table struct {
	Name, PartitionKey, SortKey string
	// Declared are the indexes the entities declare; Extra those that no
	// entity declares (given to CreateTable beside the declarations: a
	// key attribute's Type "" is S, Projection "" ALL), of which one that
	// names a declared index or types a key attribute unlike the table is
	// refused.
	Declared, Extra []describe.Index
	Provisioned     *types.ProvisionedThroughput
	Stream          types.StreamViewType
}

// Refusal is an extra index Input leaves out, and why.
type Refusal struct{ Index, Attr, Reason string }

// Input returns the CreateTable request for t, on-demand unless
// Provisioned, and the extra indexes it leaves out.
func (t Table) Input() (*dynamodb.CreateTableInput, []Refusal) {
	defs := map[string]types.ScalarAttributeType{t.PartitionKey: types.ScalarAttributeTypeS}
	in := &dynamodb.CreateTableInput{TableName: aws.String(t.Name), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String(t.PartitionKey), KeyType: types.KeyTypeHash}}}
	if t.SortKey != "" {
		defs[t.SortKey] = types.ScalarAttributeTypeS
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(t.SortKey), KeyType: types.KeyTypeRange})
	}
	var refused []Refusal
	for i, x := range slices.Concat(t.Declared, t.Extra) {
		g, attrs, r := gsi(x, defs)
		extra := i >= len(t.Declared)
		if r != nil && extra {
			refused = append(refused, *r)
			continue
		}
		if extra && slices.ContainsFunc(t.Declared, func(d describe.Index) bool { return d.Name == x.Name }) {
			refused = append(refused, Refusal{x.Name, "", "it names an index a bound entity declares: declare it once"})
			continue
		}
		g.ProvisionedThroughput = t.Provisioned
		maps.Copy(defs, attrs)
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, g)
	}
	for _, n := range slices.Sorted(maps.Keys(defs)) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: defs[n]})
	}
	if t.Stream != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: t.Stream}
	}
	if t.Provisioned != nil {
		in.BillingMode, in.ProvisionedThroughput = types.BillingModeProvisioned, t.Provisioned
	}
	return in, refused
}

// gsi returns x as CreateTable declares it and its key attributes' types,
// or why it cannot be: a bad projection, or a key attribute that defs,
// the attributes defined so far, type otherwise.
func gsi(x describe.Index, defs map[string]types.ScalarAttributeType) (types.GlobalSecondaryIndex, map[string]types.ScalarAttributeType, *Refusal) {
	proj, err := Declared(x.Projection, x.Include)
	if err != nil {
		return types.GlobalSecondaryIndex{}, nil, &Refusal{x.Name, "", err.Error()}
	}
	g := types.GlobalSecondaryIndex{IndexName: aws.String(x.Name), Projection: proj.Projection()}
	attrs := map[string]types.ScalarAttributeType{}
	for i, a := range slices.Concat(x.Partition, x.Sort) {
		kt := types.KeyTypeHash
		if i >= len(x.Partition) {
			kt = types.KeyTypeRange
		}
		g.KeySchema = append(g.KeySchema, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: kt})
		ty := a.Type
		if ty == "" {
			ty = types.ScalarAttributeTypeS
		}
		if d := defs[a.Name]; d != "" && d != ty {
			return g, nil, &Refusal{x.Name, a.Name, fmt.Sprintf("key attribute %s is %s here, %s in the table's other keys", a.Name, ty, d)}
		}
		attrs[a.Name] = ty
	}
	return g, attrs, nil
}
