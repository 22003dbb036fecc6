package singletable_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
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
			{Name: "ByScore", PartitionAttrs: []string{"Region"}, SortAttrs: []string{"Score"}},
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
	assert.Equal(t, describe.Key{Attr: "PK", Template: "ACCOUNT#{ID}",
		Parts: []describe.KeyPart{{Literal: "ACCOUNT#"}, {Field: "ID"}}}, a.PK)
	assert.Equal(t, describe.Key{Attr: "SK", Template: "A", Parts: []describe.KeyPart{{Literal: "A"}}}, a.SK)
	assert.Equal(t, []describe.Unique{{Fields: []string{"Email"}}}, a.Unique)
	assert.Equal(t, []string{"Version", "Created", "", "Expires"}, []string{a.Version, a.CreatedAt, a.UpdatedAt, a.TTL})
	assert.Contains(t, a.Fields, describe.Field{Name: "ID", Attr: "id"})
	assert.Contains(t, a.Fields, describe.Field{Name: "Score", Attr: "score"})
	require.Len(t, a.Indexes, 2)
	assert.Equal(t, describe.EntityIndex{
		Name: "ByRegion",
		PK: describe.Key{Attr: "ByRegionPK", Template: "REGION#{Region}",
			Parts: []describe.KeyPart{{Literal: "REGION#"}, {Field: "Region"}}},
		SK:     describe.Key{Attr: "ByRegionSK", Template: "{Email}", Parts: []describe.KeyPart{{Field: "Email"}}},
		Shards: 4, HasWhen: true, WhenFields: []string{"Score"},
	}, a.Indexes[0])
	assert.Equal(t, describe.EntityIndex{
		Name: "ByScore", MultiAttribute: true,
		Partition: []describe.Field{{Name: "Region", Attr: "Region"}},
		Sort:      []describe.Field{{Name: "Score", Attr: "score"}},
	}, a.Indexes[1])
	assert.Equal(t, []describe.Index{
		{Name: "ByRegion", Partition: []describe.KeyAttribute{{Name: "ByRegionPK", Type: types.ScalarAttributeTypeS}},
			Sort: []describe.KeyAttribute{{Name: "ByRegionSK", Type: types.ScalarAttributeTypeS}}, Projection: types.ProjectionTypeAll},
		{Name: "ByScore", MultiAttribute: true, Partition: []describe.KeyAttribute{{Name: "Region", Type: types.ScalarAttributeTypeS}},
			Sort: []describe.KeyAttribute{{Name: "score", Type: types.ScalarAttributeTypeN}}, Projection: types.ProjectionTypeAll},
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
	assert.Equal(t, []describe.Unique{{Fields: []string{"Email"}}}, again.Entities[0].Unique)
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
	assert.Equal(t, describe.Key{}, d.SK, "no sort key: the zero value")
	assert.Empty(t, tbl.Describe().Indexes)
}

func TestQueryDescribe(t *testing.T) {
	t.Parallel()
	_, accounts := describedTable(t)
	k := descAccount{}
	cases := []struct {
		q    *singletable.Query[descAccount]
		want describe.Query
	}{
		{accounts.Query(k), describe.Query{Entity: "Account",
			Partition: "PK = ACCOUNT#{ID}", Sort: "SK = A"}},
		{accounts.QueryIndex("ByRegion", k).Where("Email", singletable.Eq, k.Email).Desc(), describe.Query{
			Entity: "Account", Index: "ByRegion", Partition: "ByRegionPK = REGION#{Region}#shard_{0..3}",
			Sort: "ByRegionSK = {Email}", Descending: true}},
		{accounts.QueryIndex("ByScore", k).Where("Score", singletable.Ge, k.Score).
			Filter(expression.Name("Email").AttributeExists()), describe.Query{
			Entity: "Account", Index: "ByScore", Partition: "Region = {Region}", Sort: "score >= {Score}", Filtered: true}},
		{accounts.QueryIndex("Nope", k), describe.Query{Entity: "Account", Index: "Nope"}},
	}
	for i, c := range cases {
		assert.Equal(t, c.want, c.q.Describe(), "case %d", i)
	}
	assert.Equal(t, "PK = ACCOUNT#{ID} AND SK = A", cases[0].want.KeyCondition())
	assert.Equal(t, "Region = {Region}", describe.Query{Partition: "Region = {Region}"}.KeyCondition())
}
