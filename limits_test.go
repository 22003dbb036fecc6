package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/itemsize"
)

// Blob is an item whose size the test chooses.
type Blob struct {
	Bucket string `dynamodbav:"Bucket"`
	ID     int    `dynamodbav:"ID"`
	Data   string `dynamodbav:"Data"`
}

var Blobs = singletable.MustDefine(singletable.Schema[Blob]{Type: "Blob", PK: "BUCKET#{Bucket}", SK: "BLOB#{ID}"})

// An item of exactly 400 KB, as DynamoDB counts it, goes through the
// library and DynamoDB Local accepts it; one byte more is a
// *ValidationError and no request is sent. So is an update whose key and
// values set are alone over 400 KB.
func TestItemSizeLimitEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blobs *singletable.Repo[Blob]
	_, c := newTable(t, func(tbl *singletable.Table) { blobs = singletable.MustBind(tbl, Blobs) })

	const limit = 400 * 1024
	sized := func(id, n int) Blob { return Blob{Bucket: "b", ID: id, Data: strings.Repeat("x", n)} }
	op := blobs.PutOp(sized(1, 0))
	require.NoError(t, op.Err())
	overhead := itemsize.Of(op.Item())
	atLimit := sized(1, limit-overhead)
	op = blobs.PutOp(atLimit)
	require.NoError(t, op.Err())
	require.Equal(t, limit, itemsize.Of(op.Item()), "the item is exactly 400 KB")

	_, err := blobs.Create(ctx, atLimit)
	require.NoError(t, err, "DynamoDB Local accepts an item of exactly 400 KB")
	got, err := blobs.Get(ctx, Blob{Bucket: "b", ID: 1})
	require.NoError(t, err)
	assert.Equal(t, atLimit, got)

	before := c.requests.Load()
	over := sized(2, limit-overhead+1)
	for name, write := range map[string]func() error{
		"Create": func() error { _, err := blobs.Create(ctx, over); return err },
		"Put":    func() error { _, err := blobs.Put(ctx, over); return err },
		"Update": func() error {
			_, err := blobs.Update(Blob{Bucket: "b", ID: 1}).Set("Data", over.Data+"xx").Run(ctx)
			return err
		},
		"Update setting 400 KB": func() error {
			// The key and the value set alone are over the limit.
			_, err := blobs.Update(Blob{Bucket: "b", ID: 1}).Set("Data", strings.Repeat("x", limit)).Run(ctx)
			return err
		},
	} {
		err := write()
		var ve *singletable.ValidationError
		if name == "Update" {
			// An update's result size depends on the stored item: past what
			// the update itself holds, DynamoDB decides, and the library
			// passes its refusal on.
			require.Error(t, err, name)
			continue
		}
		require.ErrorAs(t, err, &ve, name)
		var tl *itemsize.TooLargeError
		require.ErrorAs(t, err, &tl, name)
		assert.True(t, strings.HasPrefix(err.Error(), "singletable:"), "%s: %v", name, err)
	}
	assert.Equal(t, before+1, c.requests.Load(), "only the update whose size DynamoDB decides reached DynamoDB Local")
	_, err = blobs.Get(ctx, Blob{Bucket: "b", ID: 2})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

// A query over more than 1 MB of items: DynamoDB returns at most 1 MB per
// request, and the library follows LastEvaluatedKey so that All, Collect
// and a Page with a Limit return every item.
func TestQueryOverOneMegabyte(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var blobs *singletable.Repo[Blob]
	_, c := newTable(t, func(tbl *singletable.Table) { blobs = singletable.MustBind(tbl, Blobs) })
	const n, size = 40, 75 * 1024 // 3 MB in one partition
	var ops []singletable.WriteOp
	for i := range n {
		ops = append(ops, blobs.PutOp(Blob{Bucket: "big", ID: i, Data: strings.Repeat(string(rune('a'+i%26)), size)}))
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops))

	c.requests.Store(0)
	var ids []int
	for b, err := range blobs.Query(Blob{Bucket: "big"}).All(ctx) {
		require.NoError(t, err)
		require.Len(t, b.Data, size)
		ids = append(ids, b.ID)
	}
	require.Len(t, ids, n, "All returns every item")
	for i, id := range ids {
		assert.Equal(t, i, id, "in sort key order")
	}
	assert.GreaterOrEqual(t, c.requests.Load(), int64(3), "3 MB take at least three 1 MB pages")

	c.requests.Store(0)
	page, err := blobs.Query(Blob{Bucket: "big"}).Limit(n).Page(ctx)
	require.NoError(t, err)
	assert.Len(t, page.Items, n, "Limit(n) is n items, however many requests it takes")
	assert.GreaterOrEqual(t, c.requests.Load(), int64(3))

	// Pages of 15 across the 1 MB boundaries: every item once.
	seen := map[int]bool{}
	var cur string
	for {
		p, err := blobs.Query(Blob{Bucket: "big"}).Limit(15).After(cur).Page(ctx)
		require.NoError(t, err)
		for _, b := range p.Items {
			assert.False(t, seen[b.ID], "item %d twice", b.ID)
			seen[b.ID] = true
		}
		if cur = p.Cursor; cur == "" {
			break
		}
	}
	assert.Len(t, seen, n)
}

// Expressions the library would build over DynamoDB's documented limits
// are refused before the network with a *ValidationError.
func TestExpressionLimitsBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)

	// A filter of 400 conditions: its expression is over 4 KB.
	var conds []expression.ConditionBuilder
	for i := range 400 {
		conds = append(conds, expression.Name("YearsOfExperience").NotEqual(expression.Value(i)))
	}
	bigFilter := expression.And(conds[0], conds[1], conds[2:]...)
	// An IN with 150 operands: DynamoDB allows 100.
	in := make([]expression.OperandBuilder, 150)
	for i := range in {
		in[i] = expression.Value(fmt.Sprint("skill", i))
	}
	bigIn := expression.Name("SkillName").In(in[0], in[1:]...)
	// Substitution values over 2 MB: six values of 350 KB.
	var huge []expression.ConditionBuilder
	for i := range 6 {
		huge = append(huge, expression.Name("Name").NotEqual(expression.Value(strings.Repeat(fmt.Sprint(i), 350*1024))))
	}
	hugeValues := expression.And(huge[0], huge[1], huge[2:]...)

	cases := []struct {
		name string
		run  func() error
	}{
		{"query filter over 4 KB", func() error {
			_, err := skills.Query(UserSkill{Username: "john"}).Filter(bigFilter).Collect(ctx)
			return err
		}},
		{"query filter with IN of 150", func() error {
			_, err := skills.Query(UserSkill{Username: "john"}).Filter(bigIn).Collect(ctx)
			return err
		}},
		{"put condition over 4 KB", func() error {
			_, err := users.Put(ctx, User{Username: "john"}, func(o *singletable.WriteOptions) { o.If = bigFilter })
			return err
		}},
		{"delete condition with values over 2 MB", func() error {
			_, err := users.Delete(ctx, User{Username: "john"}, func(o *singletable.WriteOptions) { o.If = hugeValues })
			return err
		}},
		{"update condition over 4 KB", func() error {
			_, err := users.Update(User{Username: "john"}).Set("Name", "J").If(bigFilter).Run(ctx)
			return err
		}},
		{"transaction check over 4 KB", func() error {
			return singletable.Tx(ctx, []singletable.WriteOp{users.CheckOp(User{Username: "john"}, bigFilter)})
		}},
	}
	for _, tc := range cases {
		err := tc.run()
		var ve *singletable.ValidationError
		require.True(t, errors.As(err, &ve), "%s: got %T %v", tc.name, err, err)
		assert.True(t, strings.HasPrefix(err.Error(), "singletable:"), "%s: %v", tc.name, err)
	}
	assert.Zero(t, c.requests.Load(), "requests sent")
	reportInputs(inputRow{Suite: "expressions over DynamoDB's limits (4 KB expression, 100 IN operands, 2 MB substitutions) in filters, conditions, updates, transactions",
		Tried: len(cases), Outcomes: fmt.Sprintf("%d *ValidationError; 0 requests sent", len(cases))})
}
