package singletable_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// BlogPost has a field of every kind the update operators change: a list, a
// string, number and binary set, numbers, and a map (stored as a map,
// not a set). GSI1 lists the blogPosts with labels (sparse on a set field);
// GSI2 sorts them by Likes.
type BlogPost struct {
	Blog    string              `dynamodbav:"Blog"`
	ID      string              `dynamodbav:"ID"`
	Title   string              `dynamodbav:"Title,omitempty"`
	Summary string              `dynamodbav:"Summary,omitempty"`
	Tags    []string            `dynamodbav:"Tags,omitempty"`
	Labels  []string            `dynamodbav:"Labels,stringset,omitempty"`
	Scores  []int               `dynamodbav:"Scores,numberset,omitempty"`
	Blobs   [][]byte            `dynamodbav:"Blobs,omitempty"`
	Likes   int                 `dynamodbav:"Likes"`
	Views   uint8               `dynamodbav:"Views"`
	Rating  float64             `dynamodbav:"Rating"`
	Cats    map[string]struct{} `dynamodbav:"Cats,omitempty"`
	Version int                 `dynamodbav:"Version"`
}

var BlogPosts = singletable.MustDefine(singletable.Schema[BlogPost]{
	Type: "BlogPost", PK: "BLOG#{Blog}", SK: "POST#{ID}", Version: "Version",
	Indexes: []singletable.IndexSchema[BlogPost]{
		{Name: "GSI1", PK: "LABELED#{Blog}", SK: "POST#{ID}",
			When: func(p BlogPost) bool { return len(p.Labels) > 0 }, WhenFields: []string{"Labels"}},
		{Name: "GSI2", PK: "LIKES#{Blog}", SK: "{Likes}#{ID}"},
	},
})

func TestUpdateOperators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blogPosts *singletable.Repo[BlogPost]
	_, c := newTable(t, func(tbl *singletable.Table) { blogPosts = singletable.MustBind(tbl, BlogPosts) })
	key := BlogPost{Blog: "b", ID: "1"}
	_, err := blogPosts.Create(ctx, BlogPost{Blog: "b", ID: "1", Title: "t"})
	require.NoError(t, err)
	run := func(u *singletable.Update[BlogPost]) BlogPost {
		t.Helper()
		p, err := u.Run(ctx)
		require.NoError(t, err)
		return p
	}
	labeled := func() int {
		t.Helper()
		got, err := blogPosts.QueryIndex("GSI1", key).Collect(ctx)
		require.NoError(t, err)
		return len(got)
	}

	// Lists: Append and Prepend, onto a missing attribute too.
	assert.Equal(t, []string{"a", "b"}, run(blogPosts.Update(key).Append("Tags", "a", "b")).Tags)
	assert.Equal(t, []string{"z", "a", "b"}, run(blogPosts.Update(key).Prepend("Tags", "z")).Tags)
	assert.Equal(t, []string{"z", "a", "b", "c", "d"}, run(blogPosts.Update(key).Append("Tags", []string{"c", "d"})).Tags, "a slice appends its elements")

	// Sets: Add and Delete. GSI1 depends on Labels: its key follows.
	assert.Equal(t, []string{"x"}, run(blogPosts.Update(key).Add("Labels", "x")).Labels)
	assert.Equal(t, 1, labeled())
	assert.ElementsMatch(t, []string{"x", "y"}, run(blogPosts.Update(key).Add("Labels", []string{"y", "x"})).Labels)
	assert.Equal(t, []string{"y"}, run(blogPosts.Update(key).Delete("Labels", "x")).Labels)
	assert.Empty(t, run(blogPosts.Update(key).Delete("Labels", []string{"y"})).Labels, "a set emptied is removed")
	assert.Equal(t, 0, labeled(), "and the item leaves the sparse index")
	assert.Equal(t, []int{3}, run(blogPosts.Update(key).Add("Scores", 3).Add("Likes", 2)).Scores)
	assert.Equal(t, []int{3, 4}, sorted(run(blogPosts.Update(key).Add("Scores", []int{4})).Scores))
	assert.Equal(t, []int{4}, run(blogPosts.Update(key).Delete("Scores", 3)).Scores)
	assert.Equal(t, [][]byte{{1}}, run(blogPosts.Update(key).Add("Blobs", []byte{1})).Blobs)
	assert.Empty(t, run(blogPosts.Update(key).Delete("Blobs", [][]byte{{1}})).Blobs)

	// SetIfNotExists keeps a stored value and fills a missing one.
	p := run(blogPosts.Update(key).SetIfNotExists("Title", "new").SetIfNotExists("Summary", "s"))
	assert.Equal(t, "t", p.Title)
	assert.Equal(t, "s", p.Summary)

	// Numbers: Add and Subtract; GSI2's sort key holds Likes and follows.
	p = run(blogPosts.Update(key).Add("Likes", 5).Subtract("Rating", 1.5).Add("Views", uint8(7)))
	assert.Equal(t, 7, p.Likes)
	assert.Equal(t, -1.5, p.Rating)
	p = run(blogPosts.Update(key).Subtract("Likes", 3).Subtract("Views", 2))
	assert.Equal(t, 4, p.Likes)
	assert.Equal(t, uint8(5), p.Views)
	byLikes, err := blogPosts.QueryIndex("GSI2", BlogPost{Blog: "b"}).Where("Likes", singletable.Eq, 4).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, byLikes, 1)
	assert.Equal(t, "1", byLikes[0].ID)

	// The stored item as a raw read sees it.
	raw, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(blogPosts.Table().Name()), Key: blogPosts.DeleteOp(key).Key()})
	require.NoError(t, err)
	assert.IsType(t, &types.AttributeValueMemberL{}, raw.Item["Tags"])
	assert.IsType(t, &types.AttributeValueMemberNS{}, raw.Item["Scores"])
	assert.NotContains(t, raw.Item, "Labels")
	assert.NotContains(t, raw.Item, "GSI1PK")
	rendered := blogPosts.PutOp(p).Item()
	for _, a := range []string{"GSI2PK", "GSI2SK"} {
		assert.Equal(t, rendered[a], raw.Item[a], a)
	}

	// Operators compose with Set in one update, one action per attribute,
	// and with the version check.
	p = run(blogPosts.Update(BlogPost{Blog: "b", ID: "1", Version: p.Version}).Set("Title", "u").Append("Tags", "e").Add("Labels", "q"))
	assert.Equal(t, "u", p.Title)
	assert.Equal(t, []string{"z", "a", "b", "c", "d", "e"}, p.Tags)
	assert.Equal(t, 1, labeled())

	// In a transaction.
	err = singletable.Tx(ctx, []singletable.WriteOp{blogPosts.Update(key).Prepend("Tags", "tx").Op()})
	require.NoError(t, err)
	got, err := blogPosts.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "tx", got.Tags[0])
}

// Concurrent appends and set adds are never lost: each is applied by
// DynamoDB from the stored value, whatever the others do.
func TestUpdateOperatorsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blogPosts *singletable.Repo[BlogPost]
	newTable(t, func(tbl *singletable.Table) { blogPosts = singletable.MustBind(tbl, BlogPosts) })
	key := BlogPost{Blog: "b", ID: "1"}
	_, err := blogPosts.Create(ctx, key)
	require.NoError(t, err)
	// Scores feeds an index key, so each update reads, computes and writes
	// conditioned on what it read, retrying a bounded number of times: under
	// this contention some report ErrVersionConflict. Those must have
	// changed nothing, and every acknowledged one must be there.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []string
	var scores []int
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := blogPosts.Update(key).Append("Tags", fmt.Sprint(i)).Add("Scores", i+1).Run(ctx)
			if err != nil {
				assert.ErrorIs(t, err, singletable.ErrVersionConflict)
				return
			}
			mu.Lock()
			acked, scores = append(acked, fmt.Sprint(i)), append(scores, i+1)
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.NotEmpty(t, acked)
	got, err := blogPosts.Get(ctx, key)
	require.NoError(t, err)
	assert.ElementsMatch(t, acked, got.Tags)
	assert.Equal(t, sorted(scores), sorted(got.Scores))
}

// An upsert with operators that finds no item creates it with the
// operators applied to the missing attributes, index keys included.
func TestUpsertWithOperators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blogPosts *singletable.Repo[BlogPost]
	newTable(t, func(tbl *singletable.Table) { blogPosts = singletable.MustBind(tbl, BlogPosts) })
	p, err := blogPosts.Update(BlogPost{Blog: "b", ID: "2"}).Upsert().Append("Tags", "a").Add("Labels", "l").Subtract("Likes", 1).
		SetIfNotExists("Title", "first").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, BlogPost{Blog: "b", ID: "2", Title: "first", Tags: []string{"a"}, Labels: []string{"l"}, Likes: -1, Version: 1}, p)
	got, err := blogPosts.QueryIndex("GSI1", p).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "in the sparse index a Put would put it in")
	p, err = blogPosts.Update(BlogPost{Blog: "b", ID: "2"}).Upsert().Append("Tags", "b").SetIfNotExists("Title", "second").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, p.Tags)
	assert.Equal(t, "first", p.Title)
}

// Each operator is checked against the field's Go type (and how the codec
// stores it) before anything is sent.
func TestUpdateOperatorsRefusedBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blogPosts *singletable.Repo[BlogPost]
	_, c := newTable(t, func(tbl *singletable.Table) { blogPosts = singletable.MustBind(tbl, BlogPosts) })
	key := BlogPost{Blog: "b", ID: "1"}
	cases := []struct {
		name string
		u    *singletable.Update[BlogPost]
	}{
		{"Append to a string", blogPosts.Update(key).Append("Title", "x")},
		{"Append to a set", blogPosts.Update(key).Append("Labels", "x")},
		{"Append of a wrong element type", blogPosts.Update(key).Append("Tags", 3)},
		{"Append of nothing", blogPosts.Update(key).Append("Tags")},
		{"Prepend to a number", blogPosts.Update(key).Prepend("Likes", 1)},
		{"Add elements to a list", blogPosts.Update(key).Add("Tags", "x")},
		{"Add to a string", blogPosts.Update(key).Add("Title", 1)},
		{"Add a string to a number", blogPosts.Update(key).Add("Likes", "1")},
		{"Add a fraction to an integer", blogPosts.Update(key).Add("Likes", 1.5)},
		{"Add overflowing the field", blogPosts.Update(key).Add("Views", 300)},
		{"Add to a map", blogPosts.Update(key).Add("Cats", "x")},
		{"Add of no elements", blogPosts.Update(key).Add("Labels", []string{})},
		{"Add of repeated elements", blogPosts.Update(key).Add("Labels", []string{"a", "a"})},
		{"Add of a wrong element type", blogPosts.Update(key).Add("Scores", "x")},
		{"Delete from a number", blogPosts.Update(key).Delete("Likes", 1)},
		{"Delete from a list", blogPosts.Update(key).Delete("Tags", "a")},
		{"SetIfNotExists of a wrong type", blogPosts.Update(key).SetIfNotExists("Likes", "x")},
		{"SetIfNotExists of an omitted zero", blogPosts.Update(key).SetIfNotExists("Title", "")},
		{"Subtract from a string", blogPosts.Update(key).Subtract("Title", 1)},
		{"Subtract of a non-number", blogPosts.Update(key).Subtract("Likes", "1")},
		{"Append to a key field", blogPosts.Update(key).Append("ID", "x")},
		{"Add to the version", blogPosts.Update(key).Add("Version", 1)},
		{"unknown field", blogPosts.Update(key).Append("Nope", "x")},
		{"two actions on one attribute", blogPosts.Update(key).Set("Tags", []string{"a"}).Append("Tags", "b")},
		{"two operators on one attribute", blogPosts.Update(key).Add("Likes", 1).Subtract("Likes", 2)},
	}
	for _, tc := range cases {
		_, err := tc.u.Run(ctx)
		var ve *singletable.ValidationError
		assert.ErrorAs(t, err, &ve, tc.name)
	}
	assert.Equal(t, int64(0), c.requests.Load(), "nothing sent")
}

func sorted(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Journal stores its list without omitempty: a nil slice is a NULL, as
// attributevalue stores it.
type Journal struct {
	ID      string   `dynamodbav:"ID"`
	Lines   []string `dynamodbav:"Lines"`
	Version int      `dynamodbav:"Version"`
}

var Journals = singletable.MustDefine(singletable.Schema[Journal]{
	Type: "Journal", PK: "JOURNAL#{ID}", SK: "JOURNAL", Version: "Version",
})

// TestAppendToNullList: list_append cannot take a NULL, which is how a nil
// slice without omitempty is stored (by the library, or by another
// service). Append and Prepend then read the field and set the result, on
// condition that it is still what was read: the update succeeds, the
// attribute becomes a list, and a list appends in one request again.
func TestAppendToNullList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var journals *singletable.Repo[Journal]
	_, c := newTable(t, func(tbl *singletable.Table) { journals = singletable.MustBind(tbl, Journals) })
	_, err := journals.Create(ctx, Journal{ID: "j"})
	require.NoError(t, err)
	raw := func() map[string]types.AttributeValue {
		t.Helper()
		out, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(journals.Table().Name()), Key: journals.DeleteOp(Journal{ID: "j"}).Key()})
		require.NoError(t, err)
		return out.Item
	}
	require.IsType(t, &types.AttributeValueMemberNULL{}, raw()["Lines"], "a nil slice is stored as NULL")
	setNull := func() { // as another service stores an empty list
		t.Helper()
		_, err := c.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(journals.Table().Name()), Key: journals.DeleteOp(Journal{ID: "j"}).Key(),
			UpdateExpression:          aws.String("SET #l = :n"),
			ExpressionAttributeNames:  map[string]string{"#l": "Lines"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberNULL{Value: true}},
		})
		require.NoError(t, err)
	}

	c.requests.Store(0)
	j, err := journals.Update(Journal{ID: "j"}).Append("Lines", "a", "b").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, j.Lines)
	assert.Equal(t, 2, j.Version)
	assert.Equal(t, int64(4), c.requests.Load(), "the version read, the refused UpdateItem, the read of the list, the UpdateItem that sets it")
	assert.Equal(t, &types.AttributeValueMemberL{Value: []types.AttributeValue{
		&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberS{Value: "b"}}}, raw()["Lines"])

	c.requests.Store(0)
	j, err = journals.Update(Journal{ID: "j"}).Prepend("Lines", "z").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"z", "a", "b"}, j.Lines)
	assert.Equal(t, int64(2), c.requests.Load(), "the version read, then list_append: a list takes it")

	// Another service's NULL, and Prepend: the same.
	setNull()
	j, err = journals.Update(Journal{ID: "j"}).Prepend("Lines", "first").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"first"}, j.Lines)

	// An Idempotent update may not read: DynamoDB's refusal comes back.
	setNull()
	_, err = journals.Update(Journal{ID: "j"}).Append("Lines", "x").Idempotent("tok-1").Run(ctx)
	require.Error(t, err)
	assert.IsType(t, &types.AttributeValueMemberNULL{}, raw()["Lines"], "nothing written")
}

// TestOperatorOnForeignShapeRefused: an operator the library computes in
// Go on the value it read (Append on a NULL; any operator on a field an
// index key depends on) refuses a stored attribute of a type DynamoDB's
// operator would refuse (a list another service stored as a string set, a
// set it stored as a list) rather than rewrite it in the field's shape.
func TestOperatorOnForeignShapeRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var journals *singletable.Repo[Journal]
	var posts *singletable.Repo[BlogPost]
	tbl, c := newTable(t, func(tbl *singletable.Table) {
		journals = singletable.MustBind(tbl, Journals)
		posts = singletable.MustBind(tbl, BlogPosts)
	})
	rawSet := func(key map[string]types.AttributeValue, attr string, av types.AttributeValue) {
		t.Helper()
		_, err := c.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(tbl.Name()), Key: key, UpdateExpression: aws.String("SET #a = :v"),
			ExpressionAttributeNames: map[string]string{"#a": attr}, ExpressionAttributeValues: map[string]types.AttributeValue{":v": av},
		})
		require.NoError(t, err)
	}
	raw := func(key map[string]types.AttributeValue, attr string) types.AttributeValue {
		t.Helper()
		out, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: key, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		return out.Item[attr]
	}

	_, err := journals.Create(ctx, Journal{ID: "j"})
	require.NoError(t, err)
	jkey := journals.DeleteOp(Journal{ID: "j"}).Key()
	set := &types.AttributeValueMemberSS{Value: []string{"h"}}
	rawSet(jkey, "Lines", set)
	for _, u := range []*singletable.Update[Journal]{
		journals.Update(Journal{ID: "j"}).Append("Lines", "a"),
		journals.Update(Journal{ID: "j"}).Prepend("Lines", "a"),
	} {
		_, err := u.Run(ctx)
		require.Error(t, err)
		assert.Equal(t, set, raw(jkey, "Lines"), "the string set is left as it was")
	}

	// Labels (a string set) decides GSI1: Add and Delete read it. Another
	// service stored it as a list.
	_, err = posts.Create(ctx, BlogPost{Blog: "b", ID: "p", Labels: []string{"x"}})
	require.NoError(t, err)
	pkey := posts.DeleteOp(BlogPost{Blog: "b", ID: "p"}).Key()
	list := &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}}
	rawSet(pkey, "Labels", list)
	for _, u := range []*singletable.Update[BlogPost]{
		posts.Update(BlogPost{Blog: "b", ID: "p"}).Add("Labels", []string{"y"}),
		posts.Update(BlogPost{Blog: "b", ID: "p"}).Delete("Labels", []string{"x"}),
	} {
		_, err := u.Run(ctx)
		require.Error(t, err)
		assert.Equal(t, list, raw(pkey, "Labels"), "the list is left as it was")
	}
	// The shapes DynamoDB's operators take still work.
	rawSet(pkey, "Labels", &types.AttributeValueMemberSS{Value: []string{"x"}})
	p, err := posts.Update(BlogPost{Blog: "b", ID: "p"}).Add("Labels", []string{"y"}).Run(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"x", "y"}, p.Labels)
}
