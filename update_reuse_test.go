package singletable_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

type PNote struct {
	ID string `dynamodbav:"ID"`
	*PNoteBody
}

type PNoteBody struct {
	Tag   string `dynamodbav:"Tag"`
	Count int    `dynamodbav:"Count"`
}

var PNotes = singletable.MustDefine(singletable.Schema[PNote]{Type: "PNote", PK: "PNOTE#{ID}", SK: "PNOTE",
	Indexes: []singletable.IndexSchema[PNote]{{Name: "GSI1", PK: "TAG#{Tag}", SK: "N#{Count}"}}})

// An Update run twice computes each run from the stored item: what one run
// read or added does not stay in the update (fields promoted from an
// embedded pointer included).
func TestUpdateRunTwiceEmbeddedPointer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var notes *singletable.Repo[PNote]
	newTable(t, func(tb *singletable.Table) { notes = singletable.MustBind(tb, PNotes) })
	_, err := notes.Create(ctx, PNote{ID: "a", PNoteBody: &PNoteBody{Tag: "x", Count: 0}})
	require.NoError(t, err)
	u := notes.Update(PNote{ID: "a"}).Add("Count", 1)
	_, err = u.Run(ctx)
	require.NoError(t, err)
	// Someone else moves the tag in between, then removes it.
	_, err = notes.Update(PNote{ID: "a"}).Set("Tag", "y").Run(ctx)
	require.NoError(t, err)
	got, err := u.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, got.Count)
	require.Equal(t, "y", got.Tag)
	page, err := notes.QueryIndex("GSI1", PNote{PNoteBody: &PNoteBody{Tag: "y"}}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, 2, page[0].Count)

	_, err = notes.Update(PNote{ID: "a"}).Remove("Tag").Run(ctx)
	require.NoError(t, err)
	got, err = u.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, got.Count)
	require.Empty(t, got.Tag)
	page, err = notes.QueryIndex("GSI1", PNote{PNoteBody: &PNoteBody{Tag: "y"}}).Collect(ctx)
	require.NoError(t, err)
	require.Empty(t, page, "the item without a tag is not in the sparse index")
}
