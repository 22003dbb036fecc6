package singletable_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

type Doc struct {
	Owner      string `dynamodbav:"Owner"`
	ID         string `dynamodbav:"ID"`
	Visibility string `dynamodbav:"Visibility"`
	Deleted    bool   `dynamodbav:"Deleted"`
	Category   string `dynamodbav:"Category,omitempty"`
	Title      string `dynamodbav:"Title"`
}

var Docs = singletable.MustDefine(singletable.Schema[Doc]{
	Type: "Doc",
	PK:   "OWNER#{Owner}",
	SK:   "DOC#{ID}",
	Indexes: []singletable.IndexSchema[Doc]{
		// Public, live documents by category: sparse by predicate and by
		// the optional Category field.
		{
			Name: "GSI1", PK: "CAT#{Category}", SK: "DOC#{ID}",
			When:       func(d Doc) bool { return d.Visibility == "public" && !d.Deleted },
			WhenFields: []string{"Visibility", "Deleted"},
		},
	},
})

func TestSparseIndexFollowsUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var docs *singletable.Repo[Doc]
	newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, Docs) })
	inIndex := func() []string {
		t.Helper()
		got, err := docs.QueryIndex("GSI1", Doc{Category: "go"}).Collect(ctx)
		require.NoError(t, err)
		ids := []string{}
		for _, d := range got {
			ids = append(ids, d.ID)
		}
		return ids
	}
	_, err := docs.Create(ctx, Doc{Owner: "ann", ID: "1", Visibility: "public", Category: "go", Title: "a"})
	require.NoError(t, err)
	_, err = docs.Create(ctx, Doc{Owner: "ann", ID: "2", Visibility: "private", Category: "go", Title: "b"})
	require.NoError(t, err)
	_, err = docs.Create(ctx, Doc{Owner: "bob", ID: "3", Visibility: "public", Title: "no category"})
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, inIndex())

	// Predicate turns false: the item leaves the index...
	_, err = docs.Update(Doc{Owner: "ann", ID: "1"}).Set("Visibility", "private").Set("Deleted", false).Set("Category", "go").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{}, inIndex())
	// ...and comes back when it turns true.
	_, err = docs.Update(Doc{Owner: "ann", ID: "1"}).Set("Visibility", "public").Set("Deleted", false).Set("Category", "go").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, inIndex())
	// Soft delete hides it again.
	_, err = docs.Update(Doc{Owner: "ann", ID: "1"}).Set("Deleted", true).Set("Visibility", "public").Set("Category", "go").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{}, inIndex())

	// A template field arriving makes the item indexable.
	_, err = docs.Update(Doc{Owner: "bob", ID: "3"}).Set("Category", "go").Set("Visibility", "public").Set("Deleted", false).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"3"}, inIndex())
	// Removing it takes the item out.
	_, err = docs.Update(Doc{Owner: "bob", ID: "3"}).Remove("Category").Set("Visibility", "public").Set("Deleted", false).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{}, inIndex())

	// Changing one field of an index key without the others: the library
	// reads the others from the stored item (conditioned on them) and
	// recomputes the key, so the caller need not resupply them.
	_, err = docs.Update(Doc{Owner: "ann", ID: "2"}).Set("Visibility", "public").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"2"}, inIndex(), "private → public: the stored Category and Deleted give the key")
	_, err = docs.Update(Doc{Owner: "ann", ID: "2"}).Set("Deleted", true).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{}, inIndex(), "a soft delete alone takes it out")
	// An update that touches no index field needs nothing more.
	_, err = docs.Update(Doc{Owner: "ann", ID: "2"}).Set("Title", "renamed").Run(ctx)
	require.NoError(t, err)

	// Put follows the same rules.
	_, err = docs.Put(ctx, Doc{Owner: "ann", ID: "2", Visibility: "public", Category: "go"})
	require.NoError(t, err)
	assert.Equal(t, []string{"2"}, inIndex())
}
