package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

func TestCollectionUserWithSkills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	_, err := users.Create(ctx, User{Username: "john", Name: "John"})
	require.NoError(t, err)
	_, err = users.Create(ctx, User{Username: "johnny", Name: "Johnny"})
	require.NoError(t, err)
	for _, s := range []string{"golang", "python", "sql"} {
		_, err := skills.Create(ctx, UserSkill{Username: "john", SkillName: s, Level: "Expert", Years: len(s)})
		require.NoError(t, err)
		_, err = skills.Create(ctx, UserSkill{Username: "johnny", SkillName: s, Level: "Beginner"})
		require.NoError(t, err)
	}
	c.requests.Store(0)

	var profile User
	var list []UserSkill
	p := users.StoreOne(&profile)
	_, err = users.QueryCollection(User{Username: "john"}).Collect(ctx, p, skills.AppendTo(&list))
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.requests.Load(), "one Query")
	assert.Equal(t, 1, p.Count())
	assert.Equal(t, "John", profile.Name)
	assert.Equal(t, []string{"golang", "python", "sql"}, skillNames(list))
	for _, s := range list {
		assert.Equal(t, "john", s.Username)
		assert.Equal(t, "Expert", s.Level)
	}

	// A user without a profile item: the target says so.
	var nobody User
	np := users.StoreOne(&nobody)
	var none []UserSkill
	_, err = users.QueryCollection(User{Username: "ghost"}).Collect(ctx, np, skills.AppendTo(&none))
	require.NoError(t, err)
	assert.Zero(t, np.Count())
	assert.Empty(t, none)
}

func electionFixture(t *testing.T, s *electionsFixture) {
	ctx := context.Background()
	var ops []singletable.WriteOp
	ops = append(ops, s.elections.PutOp(Election{Name: "Favorite Language", Owner: "alice", AllowVote: true}))
	for _, c := range []string{"Kotlin", "Python", "Rust", "Java"} {
		ops = append(ops, s.candidates.PutOp(Candidate{Election: "Favorite Language", Name: c}))
	}
	for _, v := range []string{"alice", "bob", "carol", "dave", "eve"} {
		ops = append(ops, s.voters.PutOp(Voter{Election: "Favorite Language", Name: v}))
	}
	for i, v := range []string{"alice", "bob", "carol"} {
		ops = append(ops, s.ballots.PutOp(Ballot{Election: "Favorite Language", Voter: v, Confirmation: fmt.Sprint("c", i),
			WhenCast: time.Date(2025, 1, 15, 10, i, 0, 0, time.UTC),
			Rankings: []Ranking{{"Kotlin", 1}, {"Python", 2}}}))
	}
	// Another election's items must stay out.
	ops = append(ops, s.elections.PutOp(Election{Name: "Other"}), s.candidates.PutOp(Candidate{Election: "Other", Name: "Go"}))
	require.NoError(t, singletable.BatchWrite(ctx, ops))
}

func TestCollectionElection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := electionsTable(t)
	electionFixture(t, s)
	coll := s.elections.QueryCollection(Election{Name: "Favorite Language"})

	var e Election
	var cands []Candidate
	var voters []Voter
	var ballots []Ballot
	s.c.requests.Store(0)
	all, err := coll.Collect(ctx, s.elections.StoreOne(&e), s.candidates.AppendTo(&cands),
		s.voters.AppendTo(&voters), s.ballots.AppendTo(&ballots))
	require.NoError(t, err)
	assert.Len(t, all, 13, "every item delivered, as decoded values")
	assert.Equal(t, int64(1), s.c.requests.Load())
	assert.Equal(t, Election{Name: "Favorite Language", Owner: "alice", AllowVote: true}, e)
	assert.Len(t, cands, 4)
	assert.Len(t, voters, 5)
	require.Len(t, ballots, 3)
	assert.Equal(t, []Ranking{{"Kotlin", 1}, {"Python", 2}}, ballots[0].Rankings)
	assert.Equal(t, "alice", ballots[0].Voter)

	t.Run("unknown type is an error", func(t *testing.T) {
		var cs []Candidate
		_, err := coll.Collect(ctx, s.candidates.AppendTo(&cs))
		var ute *singletable.UnknownTypeError
		require.ErrorAs(t, err, &ute)
		assert.Contains(t, []string{"BALLOT", "ELECTION"}, ute.Type, "first item in key order not a candidate")
	})
	t.Run("skip unknown", func(t *testing.T) {
		var cs []Candidate
		_, err := coll.SkipUnknown().Collect(ctx, s.candidates.AppendTo(&cs))
		require.NoError(t, err)
		assert.Len(t, cs, 4)
	})
	t.Run("StoreOne refuses a second item", func(t *testing.T) {
		var c Candidate
		_, err := coll.SkipUnknown().Collect(ctx, s.candidates.StoreOne(&c))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "more than one CANDIDATE")
	})
	t.Run("iterator with a type switch", func(t *testing.T) {
		kinds := map[string]int{}
		for v, err := range coll.All(ctx, s.elections.Target(), s.candidates.Target(),
			s.voters.Target(), s.ballots.Target()) {
			require.NoError(t, err)
			switch v := v.(type) {
			case Election:
				kinds["election"]++
			case Candidate:
				assert.Equal(t, "Favorite Language", v.Election)
				kinds["candidate"]++
			case Voter:
				kinds["voter"]++
			case Ballot:
				kinds["ballot"]++
			default:
				t.Fatalf("unexpected %T", v)
			}
		}
		assert.Equal(t, map[string]int{"election": 1, "candidate": 4, "voter": 5, "ballot": 3}, kinds)
		// Breaking early stops reading.
		n := 0
		for range coll.Desc().All(ctx, s.elections.Target(), s.candidates.Target(),
			s.voters.Target(), s.ballots.Target()) {
			n++
			if n == 2 {
				break
			}
		}
		assert.Equal(t, 2, n)
	})
	t.Run("pages with cursors across types", func(t *testing.T) {
		for _, size := range []int{1, 3, 4, 13, 20} {
			var es []Election
			var cs []Candidate
			var vs []Voter
			var bs []Ballot
			targets := []*singletable.Target{s.elections.AppendTo(&es), s.candidates.AppendTo(&cs),
				s.voters.AppendTo(&vs), s.ballots.AppendTo(&bs)}
			cursor, pages := "", 0
			for {
				before := len(es) + len(cs) + len(vs) + len(bs)
				next, err := coll.Limit(size).After(cursor).Page(ctx, targets...)
				require.NoError(t, err)
				got := len(es) + len(cs) + len(vs) + len(bs) - before
				assert.Len(t, next.Items, got, "the page holds what the targets received")
				pages++
				if next.Cursor == "" {
					assert.LessOrEqual(t, got, size)
					break
				}
				assert.Equal(t, size, got, "a full page")
				cursor = next.Cursor
			}
			assert.Equal(t, (13+size-1)/size, pages, "size %d", size)
			assert.Len(t, es, 1)
			assert.Len(t, cs, 4)
			assert.Len(t, vs, 5)
			assert.Len(t, bs, 3)
			assert.Equal(t, []string{"alice", "bob", "carol"}, []string{bs[0].Voter, bs[1].Voter, bs[2].Voter}, "no duplicate, no gap")
		}
		// Skipping unknown types: pages of candidates and voters only,
		// reading past ballots and the election.
		var cs []Candidate
		var vs []Voter
		cursor, pages := "", 0
		for {
			next, err := coll.SkipUnknown().Limit(2).PageSize(3).After(cursor).Page(ctx, s.candidates.AppendTo(&cs), s.voters.AppendTo(&vs))
			require.NoError(t, err)
			pages++
			if next.Cursor == "" {
				break
			}
			cursor = next.Cursor
		}
		assert.Len(t, cs, 4)
		assert.Len(t, vs, 5)
		assert.GreaterOrEqual(t, pages, 5)
	})
	t.Run("foreign cursors", func(t *testing.T) {
		var cs []Candidate
		page, err := coll.SkipUnknown().Limit(1).Page(ctx, s.candidates.AppendTo(&cs))
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		assert.IsType(t, Candidate{}, page.Items[0])
		cursor := page.Cursor
		require.NotEmpty(t, cursor)
		other := s.elections.QueryCollection(Election{Name: "Other"})
		_, err = other.After(cursor).Page(ctx, s.candidates.AppendTo(&cs))
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
		_, err = coll.Desc().After(cursor).Page(ctx, s.candidates.AppendTo(&cs))
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
		_, err = s.candidates.Query(Candidate{Election: "Favorite Language"}).After(cursor).Page(ctx)
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor, "a collection cursor does not resume a typed query")
		_, err = coll.After("garbage").Page(ctx, s.candidates.AppendTo(&cs))
		assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
	})
}

// Tag is a second entity in GSI1's SKILL# partitions, so that an index
// partition holds two entity types.
type Tag struct {
	SkillName string
	Tag       string
}

var Tags = singletable.MustDefine(singletable.Schema[Tag]{
	Type: "Tag", PK: "TAG#{Tag}", SK: "SKILL#{SkillName}",
	Indexes: []singletable.IndexSchema[Tag]{{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "TAG#{Tag}"}},
})

func TestCollectionOnIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var skills *singletable.Repo[UserSkill]
	var tags *singletable.Repo[Tag]
	newTable(t, func(tbl *singletable.Table) {
		skills = singletable.MustBind(tbl, UserSkills)
		tags = singletable.MustBind(tbl, Tags)
	})
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		skills.PutOp(UserSkill{Username: "ann", SkillName: "go", Level: "Expert"}),
		skills.PutOp(UserSkill{Username: "bob", SkillName: "go", Level: "Beginner"}),
		skills.PutOp(UserSkill{Username: "cid", SkillName: "rust", Level: "Expert"}),
		tags.PutOp(Tag{SkillName: "go", Tag: "backend"}),
		tags.PutOp(Tag{SkillName: "go", Tag: "cloud"}),
		tags.PutOp(Tag{SkillName: "rust", Tag: "systems"}),
	}))
	var ss []UserSkill
	var ts []Tag
	coll := skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"})
	_, err := coll.Collect(ctx, skills.AppendTo(&ss), tags.AppendTo(&ts))
	require.NoError(t, err)
	assert.Equal(t, []string{"bob", "ann"}, usernames(ss), "LEVEL#Beginner sorts before LEVEL#Expert")
	assert.Equal(t, []Tag{{"go", "backend"}, {"go", "cloud"}}, ts)

	// Pages through the index.
	ss, ts = nil, nil
	cur := ""
	for {
		next, err := coll.Limit(1).After(cur).Page(ctx, skills.AppendTo(&ss), tags.AppendTo(&ts))
		require.NoError(t, err)
		if next.Cursor == "" {
			break
		}
		cur = next.Cursor
	}
	assert.Len(t, ss, 2)
	assert.Len(t, ts, 2)

	// Multi-attribute index partition.
	var experts []UserSkill
	_, err = skills.QueryIndexCollection("GSI2", UserSkill{SkillName: "go", Level: "Expert"}).
		Collect(ctx, skills.AppendTo(&experts))
	require.NoError(t, err)
	assert.Equal(t, []string{"ann"}, usernames(experts))

	_, err = skills.QueryIndexCollection("GSI1", UserSkill{SkillName: "go"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Request(skills.Target())
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)
}

func TestCollectionValidatesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	var otherUsers *singletable.Repo[User]
	newTable(t, func(tbl *singletable.Table) { otherUsers = singletable.MustBind(tbl, Users) })
	var u User
	var list []UserSkill
	errOf := func(_ []any, err error) error { return err }
	cases := []struct {
		name string
		err  error
	}{
		{"no key", errOf(users.QueryCollection(User{}).Collect(ctx, users.StoreOne(&u)))},
		{"no targets", errOf(users.QueryCollection(User{Username: "a"}).Collect(ctx))},
		{"two targets for a type", errOf(users.QueryCollection(User{Username: "a"}).Collect(ctx, skills.AppendTo(&list), skills.AppendTo(&list)))},
		{"target of another table", errOf(users.QueryCollection(User{Username: "a"}).Collect(ctx, otherUsers.StoreOne(&u)))},
		{"unknown index", errOf(users.QueryIndexCollection("GSI9", User{Username: "a"}).Collect(ctx, users.StoreOne(&u)))},
		{"negative limit", errOf(users.QueryCollection(User{Username: "a"}).Limit(-1).Collect(ctx, users.StoreOne(&u)))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			var ve *singletable.ValidationError
			var ke *singletable.KeyError
			assert.True(t, errors.As(tc.err, &ve) || errors.As(tc.err, &ke), "typed error: %v", tc.err)
		})
	}
	assert.Zero(t, c.requests.Load(), "nothing sent")

	in, err := users.QueryCollection(User{Username: "a"}).Limit(5).Request()
	require.NoError(t, err)
	assert.Equal(t, int32(6), *in.Limit, "a Limit(5) page asks for one more, to know whether the collection continues")
	assert.Nil(t, in.FilterExpression, "no entity filter: the whole collection is read")
}

// TestShardedIndexCollectionRefused: a collection on a write-sharded index
// would read only the unsuffixed partition and return nothing while
// QueryIndex returns the items; it is a *ValidationError before any
// request instead.
func TestShardedIndexCollectionRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var posts *singletable.Repo[Post]
	_, c := newTable(t, func(tbl *singletable.Table) { posts = singletable.MustBind(tbl, Posts) })
	_, err := posts.Put(ctx, Post{Author: "a", ID: 1, At: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	items, err := posts.QueryIndex("GSI1", Post{}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, items, 1)

	c.requests.Store(0)
	_, err = posts.QueryIndexCollection("GSI1", Post{}).Collect(ctx, posts.Target())
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.Error(), "write-sharded")
	_, err = posts.QueryIndexCollection("GSI1", Post{}).Page(ctx, posts.Target())
	require.ErrorAs(t, err, &ve)
	assert.Zero(t, c.requests.Load(), "refused before any request")
}
