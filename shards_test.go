package singletable_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

type Post struct {
	Author string    `dynamodbav:"Author"`
	ID     int       `dynamodbav:"ID"`
	At     time.Time `dynamodbav:"At"`
	Likes  int       `dynamodbav:"Likes"`
}

// Every post goes to one global feed partition, which would run hot:
// GSI1 is write-sharded over 4 partitions.
var Posts = singletable.MustDefine(singletable.Schema[Post]{
	Type: "Post", PK: "AUTHOR#{Author}", SK: "POST#{ID}",
	Indexes: []singletable.IndexSchema[Post]{
		{Name: "GSI1", PK: "FEED", SK: "AT#{At}#POST#{ID}", Shards: 4},
	},
})

func TestWriteShardedIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var posts *singletable.Repo[Post]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { posts = singletable.MustBind(tbl, Posts) })
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var items []Post
	for i := 0; i < 300; i++ {
		items = append(items, Post{Author: fmt.Sprintf("a%d", i%17), ID: i, At: base.Add(time.Duration((i*7919)%300) * time.Minute), Likes: i % 5})
	}
	putEach(t, posts, items)

	// The items are spread over the shards.
	perShard := map[int]int{}
	for s := 0; s < 4; s++ {
		out, err := tbl.Client().Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(tbl.Name()), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("FEED#shard_%d", s)}},
			Select:                    types.SelectCount,
		})
		require.NoError(t, err)
		perShard[s] = int(out.Count)
	}
	t.Logf("items per shard: %v", perShard)
	for s := 0; s < 4; s++ {
		assert.Greater(t, perShard[s], 40, "shard %d", s)
	}

	byTime := slices.Clone(items)
	slices.SortFunc(byTime, func(a, b Post) int { return a.At.Compare(b.At) })
	ids := func(ps []Post) []int {
		out := []int{}
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		limit int
		desc  bool
		likes int // filter Likes = likes; -1 none
	}{{"limit 7", 7, false, -1}, {"limit 50 desc", 50, true, -1}, {"limit 9 filtered", 9, false, 3}, {"no limit", 0, false, -1}} {
		t.Run(tc.name, func(t *testing.T) {
			want := []Post{}
			for _, p := range byTime {
				if tc.likes < 0 || p.Likes == tc.likes {
					want = append(want, p)
				}
			}
			if tc.desc {
				slices.Reverse(want)
			}
			q := posts.QueryIndex("GSI1", Post{})
			if tc.limit > 0 {
				q = q.Limit(tc.limit)
			}
			if tc.desc {
				q = q.Desc()
			}
			if tc.likes >= 0 {
				q = q.Filter(expression.Name("Likes").Equal(expression.Value(tc.likes)))
			}
			var got []Post
			cursor := ""
			for pages := 0; pages < 500; pages++ {
				page, err := q.After(cursor).Page(ctx)
				require.NoError(t, err)
				if page.Cursor != "" && tc.limit > 0 {
					require.Len(t, page.Items, tc.limit)
				}
				got = append(got, page.Items...)
				if page.Cursor == "" {
					break
				}
				cursor = page.Cursor
			}
			assert.Equal(t, ids(want), ids(got))
			all, err := q.Limit(0).Collect(ctx)
			require.NoError(t, err)
			assert.Equal(t, ids(want), ids(all))
			n, err := q.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, len(want), n)
		})
	}

	// A time range over all shards.
	from := Post{At: base.Add(100 * time.Minute)}
	got, err := posts.QueryIndex("GSI1", from).Where("At", singletable.Ge, from.At).Limit(10).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, got, 10)
	for i, p := range got {
		assert.False(t, p.At.Before(from.At))
		if i > 0 {
			assert.False(t, p.At.Before(got[i-1].At))
		}
	}

	// An update keeps the item in its shard (the shard is a hash of the
	// primary key) and recomputes the index sort key.
	_, err = posts.Update(Post{Author: "a1", ID: 1}).Set("At", base.Add(-time.Hour)).Run(ctx)
	require.NoError(t, err)
	first, err := posts.QueryIndex("GSI1", Post{}).Limit(1).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, first, 1)
	assert.Equal(t, 1, first[0].ID)
	n, err := posts.QueryIndex("GSI1", Post{}).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 300, n)

	// A cursor from an unsharded query of the same table is refused.
	page, err := posts.Query(Post{Author: "a1"}).Limit(2).Page(ctx)
	require.NoError(t, err)
	_, err = posts.QueryIndex("GSI1", Post{}).After(page.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
}
