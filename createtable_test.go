package singletable_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
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
