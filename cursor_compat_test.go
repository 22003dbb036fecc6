package singletable_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// Cursors issued, before multi-attribute partition bindings were made
// injective, by a query and a collection on the multi-attribute index
// GSI2 of table "cursor-compat" (partition SkillName "go", Level
// "Expert"; issued at unix 1700000000, after user bob's item).
const (
	legacyGSI2QueryCursor      = "AYrltkllv8IAQAbmX7RWagkAAAAAZVPxAAZTAmdvUwZFeHBlcnROATNTHjIwMjQtMDEtMDFUMDA6MDA6MDAuMDAwMDAwMDAwWlMIVVNFUiNib2JTCFNLSUxMI2dvsKfXDyjrjYk"
	legacyGSI2CollectionCursor = "AX6mTUmLgBGVNoabx367zk0AAAAAZVPxAAZTAmdvUwZFeHBlcnROATNTHjIwMjQtMDEtMDFUMDA6MDA6MDAuMDAwMDAwMDAwWlMIVVNFUiNib2JTCFNLSUxMI2dvWUUT249BvNI"
)

func TestLegacyMultiAttributeCursorsStillDecode(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "cursor-compat", func(o *singletable.TableOptions) {
		o.Now = func() time.Time { return time.Unix(1700000000, 0) }
	})
	skills := singletable.MustBind(tbl, UserSkills)
	key := UserSkill{SkillName: "go", Level: "Expert"}
	in, err := skills.QueryIndex("GSI2", key).After(legacyGSI2QueryCursor).Request()
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "USER#bob"}, in.ExclusiveStartKey["PK"])
	cin, err := skills.QueryIndexCollection("GSI2", key).After(legacyGSI2CollectionCursor).Request()
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "USER#bob"}, cin.ExclusiveStartKey["PK"])

	// In another partition they are refused (the key check after the
	// legacy binding).
	_, err = skills.QueryIndex("GSI2", UserSkill{SkillName: "go", Level: "Novice"}).After(legacyGSI2QueryCursor).Request()
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
}

// TestMultiAttributeCursorNotInterchangeable: partitions whose values
// joined with NUL alike ("x\x00Sy", "z") and ("x", "y\x00Sz") no longer
// share cursors.
func TestMultiAttributeCursorNotInterchangeable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, skills, _ := skillsTable(t)
	a := UserSkill{SkillName: "x\x00Sy", Level: "z"}
	b := UserSkill{SkillName: "x", Level: "y\x00Sz"}
	for _, u := range []string{"ann", "bob"} {
		for _, k := range []UserSkill{a, b} {
			k.Username = u
			_, err := skills.Create(ctx, k)
			require.NoError(t, err)
		}
	}
	page, err := skills.QueryIndex("GSI2", a).Limit(1).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, page.Cursor)
	_, err = skills.QueryIndex("GSI2", b).After(page.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	cp, err := skills.QueryIndexCollection("GSI2", a).Limit(1).Page(ctx, skills.Target())
	require.NoError(t, err)
	require.NotEmpty(t, cp.Cursor)
	_, err = skills.QueryIndexCollection("GSI2", b).After(cp.Cursor).Page(ctx, skills.Target())
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	next, err := skills.QueryIndex("GSI2", a).After(page.Cursor).Page(ctx)
	require.NoError(t, err)
	assert.Len(t, next.Items, 1)
}
