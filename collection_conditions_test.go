package singletable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

func candidateNames(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// TestCollectionSortConditions: a collection narrowed by a sort key
// condition stated through one member entity's fields reads only that
// range, in one request.
func TestCollectionSortConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := electionsTable(t)
	electionFixture(t, s)
	fav := s.elections.QueryCollection(Election{Name: "Favorite Language"})

	cases := []struct {
		name string
		cond singletable.SortCondition
		want []string
	}{
		{"shape", s.candidates.Query(Candidate{}), []string{"Java", "Kotlin", "Python", "Rust"}},
		{"ge", s.candidates.Query(Candidate{}).Where("Name", singletable.Ge, "P"), []string{"Python", "Rust"}},
		{"gt equal value excluded", s.candidates.Query(Candidate{}).Where("Name", singletable.Gt, "Python"), []string{"Rust"}},
		{"lt", s.candidates.Query(Candidate{}).Where("Name", singletable.Lt, "Kotlin"), []string{"Java"}},
		{"eq", s.candidates.Query(Candidate{}).Where("Name", singletable.Eq, "Rust"), []string{"Rust"}},
		{"between", s.candidates.Query(Candidate{}).Between("Name", "K", "Q"), []string{"Kotlin", "Python"}},
		{"begins with", s.candidates.Query(Candidate{}).BeginsWith("Name", "J"), []string{"Java"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []Candidate
			before := s.c.requests.Load()
			// Only a candidates target: the condition keeps the other
			// entities out, no SkipUnknown needed.
			_, err := fav.Where(tc.cond).Collect(ctx, s.candidates.AppendTo(&got))
			require.NoError(t, err)
			assert.Equal(t, tc.want, candidateNames(got))
			assert.Equal(t, int64(1), s.c.requests.Load()-before, "one Query")
		})
	}

	// A constant sort key narrows to that one item.
	var e Election
	one := s.elections.StoreOne(&e)
	_, err := fav.Where(s.elections.Query(Election{})).Collect(ctx, one)
	require.NoError(t, err)
	assert.Equal(t, 1, one.Count())
	assert.Equal(t, "alice", e.Owner)

	// A range that holds nothing sends nothing.
	before := s.c.requests.Load()
	got, err := fav.Where(s.candidates.Query(Candidate{}).Between("Name", "Z", "A")).Collect(ctx, s.candidates.Target())
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, before, s.c.requests.Load())

	// With a filter and a projection; Fields names Go fields of the
	// targets (Voter.Name is stored as voter_name).
	var voters []Voter
	_, err = s.elections.QueryCollection(Election{Name: "Favorite Language"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }).
		Where(s.voters.Query(Voter{})).
		Filter(expression.Name("Name").GreaterThan(expression.Value("bob"))).
		Collect(ctx, s.voters.AppendTo(&voters))
	require.NoError(t, err)
	require.Len(t, voters, 3)
	assert.Equal(t, "carol", voters[0].Name)

	var ballots []Ballot
	_, err = s.elections.QueryCollection(Election{Name: "Favorite Language"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Confirmation"} }).
		SkipUnknown().Collect(ctx, s.ballots.AppendTo(&ballots))
	require.NoError(t, err)
	require.Len(t, ballots, 3)
	assert.Equal(t, "c0", ballots[0].Confirmation)
	assert.Empty(t, ballots[0].Rankings, "not projected")
	assert.True(t, ballots[0].WhenCast.IsZero(), "not projected")

	// Limit pages within the range: exactly n, the last cursor empty,
	// and a cursor of another condition is ErrInvalidCursor.
	names := []string{}
	cursor, pages := "", 0
	cond := s.voters.Query(Voter{}).Where("Name", singletable.Ge, "b")
	for {
		var page []Voter
		p, err := fav.Where(cond).Limit(2).After(cursor).Page(ctx, s.voters.AppendTo(&page))
		require.NoError(t, err)
		for _, v := range page {
			names = append(names, v.Name)
		}
		pages++
		if cursor = p.Cursor; cursor == "" {
			break
		}
		if pages == 1 {
			_, err := fav.Where(s.voters.Query(Voter{}).Where("Name", singletable.Lt, "b")).After(cursor).Page(ctx, s.voters.Target())
			assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "a cursor outside the other condition")
		}
	}
	assert.Equal(t, []string{"bob", "carol", "dave", "eve"}, names)
	assert.Equal(t, 2, pages, "4 voters, Limit 2: no empty third page")
}

func TestCollectionSortConditionsOnIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, _ := skillsTable(t)
	last := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, u := range []string{"ann", "bob", "cid", "dan"} {
		level := "Expert"
		if i%2 == 1 {
			level = "Beginner"
		}
		_, err := skills.Create(ctx, UserSkill{Username: u, SkillName: "go", Level: level, Years: i + 1, LastUsed: last})
		require.NoError(t, err)
		_, err = users.Create(ctx, User{Username: u})
		require.NoError(t, err)
	}
	_, err := skills.Create(ctx, UserSkill{Username: "ann", SkillName: "sql", Level: "Expert", Years: 9})
	require.NoError(t, err)

	// A table collection: john's skills before "s".
	var list []UserSkill
	_, err = users.QueryCollection(User{Username: "ann"}).
		Where(skills.Query(UserSkill{}).Where("SkillName", singletable.Lt, "s")).
		Collect(ctx, skills.AppendTo(&list))
	require.NoError(t, err)
	assert.Equal(t, []string{"go"}, skillNames(list))

	// A templated index (GSI1: LEVEL#{Level}#USER#{Username}).
	var experts []UserSkill
	_, err = skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"}).
		Where(skills.QueryIndex("GSI1", UserSkill{}).Where("Level", singletable.Eq, "Expert")).
		Collect(ctx, skills.AppendTo(&experts))
	require.NoError(t, err)
	require.Len(t, experts, 2)
	assert.Equal(t, "ann", experts[0].Username)
	assert.Equal(t, "cid", experts[1].Username)

	// A multi-attribute index (GSI2: SkillName, Level | Years, LastUsed).
	var seasoned []UserSkill
	_, err = skills.QueryIndexCollection("GSI2", UserSkill{SkillName: "go", Level: "Beginner"}).
		Where(skills.QueryIndex("GSI2", UserSkill{}).Where("Years", singletable.Ge, 3)).
		Collect(ctx, skills.AppendTo(&seasoned))
	require.NoError(t, err)
	require.Len(t, seasoned, 1)
	assert.Equal(t, "dan", seasoned[0].Username)

	// Mistakes are typed errors before the network.
	var otherUsers *singletable.Repo[User]
	newTable(t, func(tbl *singletable.Table) { otherUsers = singletable.MustBind(tbl, Users) })
	coll := users.QueryCollection(User{Username: "ann"})
	errOf := func(_ []any, err error) error { return err }
	cases := []struct {
		name string
		err  error
	}{
		{"not a sort key field", errOf(coll.Where(skills.Query(UserSkill{}).Where("Level", singletable.Ge, nil)).Collect(ctx, skills.Target()))},
		{"not the first sort field", errOf(skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"}).Where(skills.QueryIndex("GSI1", UserSkill{}).Where("Username", singletable.Eq, nil)).Collect(ctx, skills.Target()))},
		{"entity without the index", errOf(skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"}).Where(users.QueryIndex("GSI1", User{})).Collect(ctx, skills.Target()))},
		{"a query of another index", errOf(skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"}).Where(skills.Query(UserSkill{}).Where("Level", singletable.Eq, "Expert")).Collect(ctx, skills.Target()))},
		{"a query with more than a sort condition", errOf(coll.Where(skills.Query(UserSkill{}).Where("SkillName", singletable.Lt, "s").Limit(1)).Collect(ctx, skills.Target()))},
		{"another table", errOf(coll.Where(otherUsers.Query(User{})).Collect(ctx, users.Target()))},
		{"two conditions", errOf(coll.Where(users.Query(User{})).Where(skills.Query(UserSkill{})).Collect(ctx, users.Target()))},
		{"nil condition", errOf(coll.Where(nil).Collect(ctx, users.Target()))},
		{"nil query", errOf(coll.Where((*singletable.Query[UserSkill])(nil)).Collect(ctx, users.Target()))},
		{"unknown projected field", errOf(users.QueryCollection(User{Username: "ann"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} }).Collect(ctx, users.Target()))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ve *singletable.ValidationError
			var ke *singletable.KeyError
			require.Error(t, tc.err)
			assert.True(t, errors.As(tc.err, &ve) || errors.As(tc.err, &ke), "typed error: %v", tc.err)
		})
	}
}

// TestCollectionExactFitPages: the last page's cursor is empty with
// PageSize, Filter and SkipUnknown, and on pages without Limit.
func TestCollectionExactFitPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := electionsTable(t)
	electionFixture(t, s)
	// The partition holds 13 items: 3 ballots, 4 candidates, the
	// election, 5 voters, in that sort order.
	fav := s.elections.QueryCollection(Election{Name: "Favorite Language"})
	all := []*singletable.Target{s.elections.Target(), s.candidates.Target(), s.voters.Target(), s.ballots.Target()}
	cases := []struct {
		name    string
		c       *singletable.Collection
		targets []*singletable.Target
		want    []int
	}{
		{"limit", fav.Limit(13), all, []int{13}},
		{"limit and page size", fav.Limit(4).PageSize(4), all, []int{4, 4, 4, 1}},
		{"page size ending at the last item", fav.Limit(13).PageSize(13), all, []int{13}},
		// The election item has no election_name: 12 items pass.
		{"filter", fav.Limit(4).Filter(expression.Name("Election").AttributeExists()), all, []int{4, 4, 4}},
		{"filter and page size", fav.Limit(3).PageSize(4).Filter(expression.Name("Election").AttributeExists()), all, []int{3, 3, 3, 3}},
		// The 4 candidates are followed by items no target takes.
		{"skip unknown", fav.Limit(4).SkipUnknown(), []*singletable.Target{s.candidates.Target()}, []int{4}},
		{"skip unknown across responses", fav.Limit(2).PageSize(3).SkipUnknown(), []*singletable.Target{s.candidates.Target()}, []int{2, 2}},
		{"no limit", fav.PageSize(13), all, []int{13}},
		{"no limit, pages", fav.PageSize(5), all, []int{5, 5, 3}},
		{"no limit, skip unknown", fav.PageSize(7).SkipUnknown(), []*singletable.Target{s.candidates.Target()}, []int{4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			cursor := ""
			for {
				page, err := tc.c.After(cursor).Page(ctx, tc.targets...)
				require.NoError(t, err)
				got = append(got, len(page.Items))
				if cursor = page.Cursor; cursor == "" {
					break
				}
				require.Less(t, len(got), 20)
			}
			assert.Equal(t, tc.want, got, "page sizes; the last page's cursor is empty")
		})
	}
}
