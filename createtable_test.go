package singletable_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/describe"
)

func TestCreateAndCheckTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, _, _ := skillsTable(t)
	require.NoError(t, tbl.Check(ctx))

	out, err := tbl.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	assert.Equal(t, types.BillingModePayPerRequest, out.Table.BillingModeSummary.BillingMode)
	gsis := map[string][]types.KeySchemaElement{}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		gsis[aws.ToString(g.IndexName)] = g.KeySchema
	}
	require.Len(t, gsis, 2)
	// The multi-attribute index has two partition and two sort attributes.
	assert.Len(t, gsis["GSI2"], 4)

	// A table that lacks a declared index fails the check with a clear
	// message.
	c := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	bare := singletable.NewTable(c, name)
	singletable.MustBind(bare, Users)
	require.NoError(t, bare.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, c, name)
	withSkills := singletable.NewTable(c, name)
	singletable.MustBind(withSkills, UserSkills)
	err = withSkills.Check(ctx)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "index GSI1 is missing")
	assert.Contains(t, err.Error(), "index GSI2 is missing")
}

// An index no entity declares is one field of CreateTableOptions, created
// with the declared ones; Check given the same options checks it, and a
// table without it differs. One that names a declared index, or types a
// key attribute unlike the table, is refused before any request.
func TestCreateTableExtraIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := ddblocal.Shared(t).Client()
	declared := func(name string) *singletable.Table {
		tbl := singletable.NewTable(c, name)
		singletable.MustBind(tbl, Users)
		singletable.MustBind(tbl, UserSkills)
		return tbl
	}
	extra := func(o *singletable.CreateTableOptions) {
		o.Indexes = []describe.Index{
			{Name: "GSI3", Partition: []describe.KeyAttribute{{Name: "GSI3PK"}}, Sort: []describe.KeyAttribute{{Name: "GSI3SK"}},
				Projection: types.ProjectionTypeKeysOnly},
			{Name: "ByYears", Partition: []describe.KeyAttribute{{Name: "YearsOfExperience", Type: types.ScalarAttributeTypeN}}},
		}
	}
	name := ddblocal.TableName(t)
	tbl := declared(name)
	require.NoError(t, tbl.CreateTable(ctx, extra))
	ddblocal.DeleteTableOnCleanup(t, c, name)
	require.NoError(t, tbl.Check(ctx, extra))
	require.NoError(t, tbl.Check(ctx), "an index no entity declares is fine without the options")

	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	got := map[string]string{}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		var ks []string
		for _, k := range g.KeySchema {
			ks = append(ks, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		got[aws.ToString(g.IndexName)] = fmt.Sprint(ks, " ", g.Projection.ProjectionType)
	}
	assert.Equal(t, map[string]string{
		"GSI1":    "[GSI1PK HASH GSI1SK RANGE] ALL",
		"GSI2":    "[SkillName HASH ProficiencyLevel HASH YearsOfExperience RANGE LastUsedDate RANGE] ALL",
		"GSI3":    "[GSI3PK HASH GSI3SK RANGE] KEYS_ONLY",
		"ByYears": "[YearsOfExperience HASH] ALL",
	}, got)

	// The table the declarations alone create lacks them: drift.
	plain := ddblocal.TableName(t)
	require.NoError(t, declared(plain).CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, c, plain)
	err = declared(plain).Check(ctx, extra)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "index GSI3 is missing")
	assert.Contains(t, err.Error(), "index ByYears is missing")

	// Refused before any request: the table is never created.
	for _, c := range []struct {
		index describe.Index
		want  string
	}{
		{describe.Index{Name: "GSI1", Partition: []describe.KeyAttribute{{Name: "GSI1PK"}}},
			"index GSI1: CreateTableOptions.Indexes: it names an index a bound entity declares: declare it once"},
		{describe.Index{Name: "ByLevel", Partition: []describe.KeyAttribute{{Name: "ProficiencyLevel", Type: types.ScalarAttributeTypeN}}},
			"index ByLevel ProficiencyLevel: CreateTableOptions.Indexes: key attribute ProficiencyLevel is N here, S in the table's other keys"},
		{describe.Index{Name: "G4", Partition: []describe.KeyAttribute{{Name: "G4PK"}}, Include: []string{"Email"}},
			"index G4: CreateTableOptions.Indexes: projection ALL takes no Include"},
	} {
		name := ddblocal.TableName(t)
		tbl := declared(name)
		opts := func(o *singletable.CreateTableOptions) { o.Indexes = []describe.Index{c.index} }
		err := tbl.CreateTable(ctx, opts)
		require.ErrorAs(t, err, &ve)
		assert.ErrorContains(t, err, c.want)
		assert.ErrorContains(t, tbl.Check(ctx, opts), c.want)
		in := tbl.CreateTableInput(opts)
		assert.Len(t, in.GlobalSecondaryIndexes, 2, "the refused index is left out")
		_, err = ddblocal.Shared(t).Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		assert.ErrorAs(t, err, &nf, "no request was sent")
	}
}
