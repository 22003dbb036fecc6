package singletable_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// scanIndexFixture writes 30 documents, of which those public, live and
// with a category are in the sparse index GSI1; it returns the IDs of
// those in category "go", sorted.
func scanIndexFixture(t *testing.T, docs *singletable.Repo[Doc]) []string {
	t.Helper()
	ctx := context.Background()
	var want []string
	for i := range 30 {
		d := Doc{Owner: fmt.Sprintf("o%d", i%4), ID: fmt.Sprintf("%02d", i), Visibility: "public", Title: "t"}
		if i%3 == 0 {
			d.Visibility = "private"
		}
		switch {
		case i%5 == 0: // no category: not in the index
		case i%2 == 0:
			d.Category = "go"
		default:
			d.Category = "rust"
		}
		d.Deleted = i == 8
		_, err := docs.Create(ctx, d)
		require.NoError(t, err)
		if d.Visibility == "public" && !d.Deleted && d.Category == "go" {
			want = append(want, d.ID)
		}
	}
	require.Len(t, want, 7)
	return want
}

func docIDs(ds []Doc) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	slices.Sort(ids)
	return ids
}

// TestScanIndexSparse: a scan of a sparse index reads only the items in
// it, with a filter, Limit and cursors (every item once), parallel
// segments and Count, and sends IndexName.
func TestScanIndexSparse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var docs *singletable.Repo[Doc]
	newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, Docs) })
	want := scanIndexFixture(t, docs)
	goDocs := docs.ScanIndex("GSI1").Filter(expression.Name("Category").Equal(expression.Value("go")))

	all, err := docs.ScanIndex("GSI1").Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 15, "only the public, live, categorised documents are in the index")
	for _, d := range all {
		assert.Equal(t, "public", d.Visibility)
		assert.False(t, d.Deleted)
		assert.NotEmpty(t, d.Category)
		assert.Equal(t, "t", d.Title, "decoded whole")
	}

	got, err := goDocs.Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, docIDs(got))
	n, err := goDocs.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, len(want), n)

	// Limit pages with cursors: every item once, no page over the limit.
	var paged []Doc
	cursor := ""
	for {
		page, err := goDocs.Limit(2).After(cursor).Page(ctx)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(page.Items), 2)
		paged = append(paged, page.Items...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, want, docIDs(paged))

	// Parallel segments, all at once and each paged on its own.
	got, err = goDocs.Segments(3).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, docIDs(got))
	paged = nil
	for seg := range 3 {
		cursor := ""
		for {
			page, err := goDocs.Segment(seg, 3).Limit(1).After(cursor).Page(ctx)
			require.NoError(t, err)
			paged = append(paged, page.Items...)
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
	}
	assert.Equal(t, want, docIDs(paged))

	in, err := goDocs.Limit(2).Request()
	require.NoError(t, err)
	assert.Equal(t, "GSI1", *in.IndexName)
	assert.Nil(t, in.ConsistentRead)
}

// TestScanIndexRefusals: a consistent read of a global secondary index,
// an unknown index and a cursor of another scan are refused before any
// request is sent.
func TestScanIndexRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var docs *singletable.Repo[Doc]
	_, c := newTable(t, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, Docs) })
	scanIndexFixture(t, docs)
	consistent := func(o *singletable.ReadOptions) { o.ConsistentRead = true }

	tablePage, err := docs.Scan().Limit(1).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tablePage.Cursor)
	indexPage, err := docs.ScanIndex("GSI1").Limit(1).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, indexPage.Cursor)
	segPage, err := docs.ScanIndex("GSI1").Segment(0, 2).Limit(1).Page(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, segPage.Cursor)

	c.requests.Store(0)
	var ve *singletable.ValidationError
	_, err = docs.ScanIndex("GSI1", consistent).Page(ctx)
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "consistent")
	_, err = docs.ScanIndex("GSI1", consistent).Collect(ctx)
	require.ErrorAs(t, err, &ve)
	_, err = docs.ScanIndex("GSI1", consistent).Count(ctx)
	require.ErrorAs(t, err, &ve)
	_, err = docs.ScanIndex("GSI9").Collect(ctx)
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "GSI9")

	_, err = docs.ScanIndex("GSI1").After(tablePage.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "a table scan's cursor")
	_, err = docs.Scan().After(indexPage.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "an index scan's cursor on the table")
	_, err = docs.QueryIndex("GSI1", Doc{Category: "go"}).After(indexPage.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "an index scan's cursor on a query")
	_, err = docs.ScanIndex("GSI1").Segment(1, 2).After(segPage.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "another segment")
	assert.Zero(t, c.requests.Load(), "refused before the network")

	// The index scan's own cursor resumes it.
	rest, err := docs.ScanIndex("GSI1").After(indexPage.Cursor).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, rest, 14)
}
