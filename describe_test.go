package singletable_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

type descAccount struct {
	ID      string `dynamodbav:"id"`
	Email   string
	Region  string
	Score   int `dynamodbav:"score"`
	Version int
	Created time.Time
	Expires time.Time
}

type descNote struct {
	ID, Note string
}

func describedTable(t *testing.T) (*singletable.Table, *singletable.Repo[descAccount]) {
	t.Helper()
	tbl := singletable.NewTable(nil, "described")
	accounts := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[descAccount]{
		Type: "Account", PK: "ACCOUNT#{ID}", SK: "A",
		Unique: []singletable.Unique{{Fields: []string{"Email"}}}, Version: "Version", CreatedAt: "Created", TTL: "Expires",
		Indexes: []singletable.IndexSchema[descAccount]{
			{Name: "ByRegion", PK: "REGION#{Region}", SK: "{Email}", Shards: 4,
				When: func(a descAccount) bool { return a.Score > 0 }, WhenFields: []string{"Score"}},
			{Name: "ByScore", MultiAttribute: true, PartitionAttrs: []string{"Region"}, SortAttrs: []string{"Score"}},
		},
	}))
	singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[descNote]{
		Type: "Note", PK: "ACCOUNT#{ID}", SK: "NOTE#{Note}",
	}))
	return tbl, accounts
}

func TestTableDescribe(t *testing.T) {
	t.Parallel()
	tbl, accounts := describedTable(t)
	d := tbl.Describe()
	assert.Equal(t, "described", d.Name)
	assert.Equal(t, []string{"PK", "SK", "EntityType"}, []string{d.PartitionKey, d.SortKey, d.EntityTypeAttr})
	require.Len(t, d.Entities, 2)
	assert.Equal(t, "Note", d.Entities[1].Type)

	a := d.Entities[0]
	assert.Equal(t, "Account", a.Type)
	assert.Equal(t, singletable.KeyDescription{Attr: "PK", Template: "ACCOUNT#{ID}",
		Parts: []singletable.KeyPart{{Literal: "ACCOUNT#"}, {Field: "ID"}}}, a.PK)
	assert.Equal(t, singletable.KeyDescription{Attr: "SK", Template: "A", Parts: []singletable.KeyPart{{Literal: "A"}}}, a.SK)
	assert.Equal(t, []singletable.Unique{{Fields: []string{"Email"}}}, a.Unique)
	assert.Equal(t, []string{"Version", "Created", "", "Expires"}, []string{a.Version, a.CreatedAt, a.UpdatedAt, a.TTL})
	assert.Contains(t, a.Fields, singletable.FieldDescription{Name: "ID", Attr: "id"})
	assert.Contains(t, a.Fields, singletable.FieldDescription{Name: "Score", Attr: "score"})
	require.Len(t, a.Indexes, 2)
	assert.Equal(t, singletable.EntityIndexDescription{
		Name: "ByRegion",
		PK: singletable.KeyDescription{Attr: "ByRegionPK", Template: "REGION#{Region}",
			Parts: []singletable.KeyPart{{Literal: "REGION#"}, {Field: "Region"}}},
		SK:     singletable.KeyDescription{Attr: "ByRegionSK", Template: "{Email}", Parts: []singletable.KeyPart{{Field: "Email"}}},
		Shards: 4, HasWhen: true, WhenFields: []string{"Score"},
	}, a.Indexes[0])
	assert.Equal(t, singletable.EntityIndexDescription{
		Name: "ByScore", MultiAttribute: true,
		Partition: []singletable.FieldDescription{{Name: "Region", Attr: "Region"}},
		Sort:      []singletable.FieldDescription{{Name: "Score", Attr: "score"}},
	}, a.Indexes[1])
	assert.Equal(t, []singletable.IndexDescription{
		{Name: "ByRegion", Partition: []singletable.KeyAttribute{{Name: "ByRegionPK", Type: types.ScalarAttributeTypeS}},
			Sort: []singletable.KeyAttribute{{Name: "ByRegionSK", Type: types.ScalarAttributeTypeS}}, Projection: types.ProjectionTypeAll},
		{Name: "ByScore", MultiAttribute: true, Partition: []singletable.KeyAttribute{{Name: "Region", Type: types.ScalarAttributeTypeS}},
			Sort: []singletable.KeyAttribute{{Name: "score", Type: types.ScalarAttributeTypeN}}, Projection: types.ProjectionTypeAll},
	}, d.Indexes)
	assert.Equal(t, a, accounts.Describe(), "the repository describes its entity as the table lists it")

	// The description is a copy: changing it changes nothing in the table.
	a.Unique[0].Fields[0] = "X"
	a.Indexes[0].WhenFields[0] = "X"
	a.PK.Parts[1].Field = "X"
	d.Entities[0].Type = "X"
	d.Indexes[0].Partition[0].Name = "X"
	again := tbl.Describe()
	assert.Equal(t, "Account", again.Entities[0].Type)
	assert.Equal(t, []singletable.Unique{{Fields: []string{"Email"}}}, again.Entities[0].Unique)
	assert.Equal(t, []string{"Score"}, again.Entities[0].Indexes[0].WhenFields)
	assert.Equal(t, "ID", again.Entities[0].PK.Parts[1].Field)
	assert.Equal(t, "ByRegionPK", again.Indexes[0].Partition[0].Name)
}

func TestTableDescribeNoSortKey(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "flat", func(o *singletable.TableOptions) { o.SortKey = ""; o.PartitionKey = "pk" })
	type Thing struct{ ID string }
	things := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Thing]{Type: "Thing", PK: "THING#{ID}"}))
	d := things.Describe()
	assert.Equal(t, "pk", d.PK.Attr)
	assert.Equal(t, singletable.KeyDescription{}, d.SK, "no sort key: the zero value")
	assert.Empty(t, tbl.Describe().Indexes)
}

func TestQueryDescribe(t *testing.T) {
	t.Parallel()
	_, accounts := describedTable(t)
	k := descAccount{}
	cases := []struct {
		q    *singletable.Query[descAccount]
		want singletable.QueryDescription
	}{
		{accounts.Query(k), singletable.QueryDescription{Entity: "Account",
			Partition: "PK = ACCOUNT#{ID}", Sort: "SK = A"}},
		{accounts.QueryIndex("ByRegion", k).Where("Email", singletable.Eq, k.Email).Desc(), singletable.QueryDescription{
			Entity: "Account", Index: "ByRegion", Partition: "ByRegionPK = REGION#{Region}#shard_{0..3}",
			Sort: "ByRegionSK = {Email}", Descending: true}},
		{accounts.QueryIndex("ByScore", k).Where("Score", singletable.Ge, k.Score).
			Filter(expression.Name("Email").AttributeExists()), singletable.QueryDescription{
			Entity: "Account", Index: "ByScore", Partition: "Region = {Region}", Sort: "score >= {Score}", Filtered: true}},
		{accounts.QueryIndex("Nope", k), singletable.QueryDescription{Entity: "Account", Index: "Nope"}},
	}
	for i, c := range cases {
		assert.Equal(t, c.want, c.q.Describe(), "case %d", i)
	}
	assert.Equal(t, "PK = ACCOUNT#{ID} AND SK = A", cases[0].want.KeyCondition())
	assert.Equal(t, "Region = {Region}", singletable.QueryDescription{Partition: "Region = {Region}"}.KeyCondition())
}
