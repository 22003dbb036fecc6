package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// scanInputs records every Scan request sent, to compare with Request().
type scanInputs struct {
	*countingClient
	mu   sync.Mutex
	sent []*dynamodb.ScanInput
}

func (c *scanInputs) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.mu.Lock()
	cp := *in
	c.sent = append(c.sent, &cp)
	c.mu.Unlock()
	return c.countingClient.Scan(ctx, in, o...)
}

// skillsFixture writes n users, each with skills golang and sql, in
// batches.
func skillsFixture(t testing.TB, users *singletable.Repo[User], skills *singletable.Repo[UserSkill], n int) {
	t.Helper()
	var ops []singletable.WriteOp
	for i := range n {
		u := fmt.Sprintf("u%05d", i)
		ops = append(ops, users.PutOp(User{Username: u, Name: fmt.Sprint("User ", i)}),
			skills.PutOp(UserSkill{Username: u, SkillName: "golang", Level: "Expert", Years: i % 10}),
			skills.PutOp(UserSkill{Username: u, SkillName: "sql", Level: "Beginner", Years: 1}))
	}
	require.NoError(t, singletable.BatchWrite(context.Background(), ops))
}

// TestScanSegmentsEveryItemOnce: 10,000 users (and 1,000 items of
// another entity beside them) scanned in 4 segments, in parallel by
// Segments(4) and page by page per Segment(i, 4): every user exactly once.
func TestScanSegmentsEveryItemOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 11,000 items")
	}
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	const n = 10000
	var ops []singletable.WriteOp
	for i := range n {
		u := fmt.Sprintf("u%05d", i)
		ops = append(ops, users.PutOp(User{Username: u}))
		if i%10 == 0 {
			ops = append(ops, skills.PutOp(UserSkill{Username: u, SkillName: "sql"}))
		}
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops))

	seen := make(map[string]int, n)
	c.requests.Store(0)
	got, err := users.Scan().Segments(4).Collect(ctx)
	require.NoError(t, err)
	for _, u := range got {
		seen[u.Username]++
	}
	assert.Len(t, got, n)
	assert.Len(t, seen, n)
	for u, k := range seen {
		if k != 1 {
			t.Fatalf("%s read %d times", u, k)
		}
	}
	assert.GreaterOrEqual(t, c.requests.Load(), int64(4), "one request per segment at least")

	// Four workers, each paging its own segment with cursors.
	perSegment := make([]int, 4)
	clear(seen)
	for seg := range 4 {
		cursor := ""
		for {
			page, err := users.Scan().Segment(seg, 4).PageSize(700).After(cursor).Page(ctx)
			require.NoError(t, err)
			for _, u := range page.Items {
				seen[u.Username]++
			}
			perSegment[seg] += len(page.Items)
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
	}
	assert.Len(t, seen, n)
	total := 0
	for seg, k := range perSegment {
		assert.Positive(t, k, "segment %d holds items", seg)
		total += k
	}
	assert.Equal(t, n, total, "no item in two segments")

	count, err := users.Scan().Segments(4).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, n, count)
	// Limit across segments: All stops at 10 and the workers stop.
	k := 0
	for _, err := range users.Scan().Segments(4).Limit(10).All(ctx) {
		require.NoError(t, err)
		k++
	}
	assert.Equal(t, 10, k)
	count, err = skills.Scan().Filter(expression.Name("SkillName").Equal(expression.Value("sql"))).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, n/10, count)
}

func TestScanFilterFieldsLimitPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	skillsFixture(t, users, skills, 30)

	// Filter and Fields name Go fields (Level is stored as ProficiencyLevel).
	experts := skills.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"Years"} }).
		Filter(expression.Name("Level").Equal(expression.Value("Expert"))).
		Filter(expression.Name("Years").GreaterThanEqual(expression.Value(5)))
	got, err := experts.Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 15)
	for _, s := range got {
		assert.GreaterOrEqual(t, s.Years, 5)
		assert.Empty(t, s.Level, "not projected")
	}

	// Limit pages: exactly n items, the last page's cursor empty (15 = 5+5+5).
	c.requests.Store(0)
	var pages []int
	cursor := ""
	for {
		page, err := experts.Limit(5).After(cursor).Page(ctx)
		require.NoError(t, err)
		pages = append(pages, len(page.Items))
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	assert.Equal(t, []int{5, 5, 5}, pages, "exact fit: no empty page after the last")

	// Without a filter the first request asks for one more than Limit.
	page, err := users.Scan().Limit(30).Page(ctx)
	require.NoError(t, err)
	assert.Len(t, page.Items, 30)
	assert.Empty(t, page.Cursor, "30 users, Limit 30: the last page")
	page, err = users.Scan().Limit(29).Page(ctx)
	require.NoError(t, err)
	assert.Len(t, page.Items, 29)
	assert.NotEmpty(t, page.Cursor)
	rest, err := users.Scan().Limit(29).After(page.Cursor).Page(ctx)
	require.NoError(t, err)
	assert.Len(t, rest.Items, 1)
	assert.Empty(t, rest.Cursor)

	// Pages without Limit: PageSize 10 over 30 users, the third page ends
	// the scan and says so (the scan reads 90 items: the type filter
	// drops the others).
	cursor, n, np := "", 0, 0
	for {
		page, err := users.Scan().PageSize(30).After(cursor).Page(ctx)
		require.NoError(t, err)
		n += len(page.Items)
		np++
		if cursor = page.Cursor; cursor == "" {
			break
		}
		require.NotEmpty(t, page.Items)
	}
	assert.Equal(t, 30, n)

	// All stops at Limit; Count ignores it.
	k := 0
	for u, err := range users.Scan().Limit(7).All(ctx) {
		require.NoError(t, err)
		assert.NotEmpty(t, u.Username)
		k++
	}
	assert.Equal(t, 7, k)
	count, err := users.Scan().Limit(7).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 30, count)

	// A cursor of another scan is ErrInvalidCursor.
	p1, err := users.Scan().Limit(3).Page(ctx)
	require.NoError(t, err)
	_, err = skills.Scan().After(p1.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	_, err = users.Scan().Segment(1, 2).After(p1.Cursor).Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "another segment")
}

// TestScanRequestIsWhatIsSent: Request() shows the n+1 a Limit page
// sends, through a client recording the requests.
func TestScanRequestIsWhatIsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	skillsFixture(t, users, skills, 5)
	rec := &scanInputs{countingClient: c}
	tbl2 := singletable.NewTable(rec, users.Table().Name())
	users2 := singletable.MustBind(tbl2, Users)
	singletable.MustBind(tbl2, UserSkills)

	for _, s := range []*singletable.Scan[User]{
		users2.Scan().Limit(3),
		users2.Scan().Limit(3).Filter(expression.Name("Name").BeginsWith("User")),
		users2.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }).Segment(1, 3).PageSize(2),
	} {
		want, err := s.Request()
		require.NoError(t, err)
		rec.sent = nil
		_, err = s.Page(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, rec.sent)
		assert.Equal(t, want, rec.sent[0])
	}
	in, err := users2.Scan().Limit(3).Request()
	require.NoError(t, err)
	assert.Equal(t, int32(4), aws.ToInt32(in.Limit), "a Limit(3) page asks for 4")

	want, err := tbl2.Scan().Limit(4).Request()
	require.NoError(t, err)
	rec.sent = nil
	_, err = tbl2.Scan().Limit(4).Page(ctx, users2.Target(), users2.Target())
	require.Error(t, err, "two targets for one type")
	assert.Empty(t, rec.sent, "nothing sent")
	_, err = tbl2.Scan().Limit(4).SkipUnknown().Page(ctx, users2.Target())
	require.NoError(t, err)
	assert.Nil(t, want.FilterExpression)
	assert.Equal(t, int32(5), aws.ToInt32(want.Limit))
}

// TestTableScanRoutesToTargets: a table scan routes every item to its
// entity's target, as a collection does.
func TestTableScanRoutesToTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, users, skills, _ := skillsTable(t)
	skillsFixture(t, users, skills, 20)

	var us []User
	var ss []UserSkill
	got, err := tbl.Scan().Segments(3).Collect(ctx, users.AppendTo(&us), skills.AppendTo(&ss))
	require.NoError(t, err)
	assert.Len(t, got, 60)
	assert.Len(t, us, 20)
	assert.Len(t, ss, 40)

	// Without a target for skills: an *UnknownTypeError, or skipped.
	_, err = tbl.Scan().Collect(ctx, users.Target())
	var ute *singletable.UnknownTypeError
	require.ErrorAs(t, err, &ute)
	assert.Equal(t, "UserSkill", ute.Type)
	n := 0
	for v, err := range tbl.Scan().SkipUnknown().All(ctx, users.Target()) {
		require.NoError(t, err)
		_, isUser := v.(User)
		assert.True(t, isUser)
		n++
	}
	assert.Equal(t, 20, n)

	// Limit counts delivered items; skipped ones do not count, and the
	// last page's cursor is empty.
	cursor, pages, total := "", 0, 0
	for {
		page, err := tbl.Scan().SkipUnknown().Limit(5).After(cursor).Page(ctx, users.Target())
		require.NoError(t, err)
		total += len(page.Items)
		pages++
		if cursor = page.Cursor; cursor == "" {
			break
		}
		assert.Len(t, page.Items, 5)
	}
	assert.Equal(t, 20, total)
	assert.Equal(t, 4, pages, "no empty page after the last")

	// Filter and Fields resolve Go field names against the targets.
	var experts []UserSkill
	_, err = tbl.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"Years"} }).SkipUnknown().
		Filter(expression.Name("Level").Equal(expression.Value("Expert"))).
		Collect(ctx, skills.AppendTo(&experts))
	require.NoError(t, err)
	assert.Len(t, experts, 20)
	for _, s := range experts {
		assert.Empty(t, s.Level, "not projected")
		assert.GreaterOrEqual(t, s.Years, 0)
	}
	count, err := tbl.Scan().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 60, count)
}

func TestScanValidatesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, users, _, c := skillsTable(t)
	errOf := func(_ any, err error) error { return err }
	cases := []struct {
		name string
		err  error
	}{
		{"segment out of range", errOf(users.Scan().Segment(4, 4).Page(ctx))},
		{"zero total", errOf(users.Scan().Segment(0, 0).Page(ctx))},
		{"segment and segments", errOf(users.Scan().Segment(0, 2).Segments(2).Collect(ctx))},
		{"page of a parallel scan", errOf(users.Scan().Segments(2).Page(ctx))},
		{"after with segments", errOf(users.Scan().Segments(2).After("x").Collect(ctx))},
		{"negative limit", errOf(users.Scan().Limit(-1).Collect(ctx))},
		{"page size", errOf(users.Scan().PageSize(0).Collect(ctx))},
		{"unknown filter field", errOf(users.Scan().Filter(expression.Name("Nope").AttributeExists()).Collect(ctx))},
		{"unknown projected field", errOf(users.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} }).Collect(ctx))},
		{"table scan without targets", errOf(tbl.Scan().Collect(ctx))},
		{"table scan unknown field", errOf(tbl.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} }).Collect(ctx, users.Target()))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			var ve *singletable.ValidationError
			assert.True(t, errors.As(tc.err, &ve), "typed error: %v", tc.err)
		})
	}
	_, err := users.Scan().After("not a cursor").Page(ctx)
	assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	assert.Zero(t, c.requests.Load(), "nothing sent")
}
