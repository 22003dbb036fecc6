package elections_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/elections"
	"github.com/singletable-go/singletable/singletabletest"
)

var update = flag.Bool("update", false, "rewrite the docs/ files the tests keep current")

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

func addUsers(t *testing.T, s *elections.Store, names ...string) {
	t.Helper()
	for _, n := range names {
		require.NoError(t, s.AddUser(context.Background(), "system", elections.User{Name: n, Email: n + "@example.com", Salt: "s", Hash: "h", Role: "USER"}))
	}
}

func TestUsers(t *testing.T) { t.Parallel(); onEachTable(t, testUsers) }

func testUsers(t *testing.T, s *elections.Store) {
	ctx := context.Background()
	addUsers(t, s, "carol", "alice", "bob")
	err := s.AddUser(ctx, "system", elections.User{Name: "alice", Email: "other@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	require.ErrorIs(t, s.AddUser(ctx, "system", elections.User{Name: "x"}), elections.ErrInvalid)
	// Emails are unique: a guard item in the same transaction.
	err = s.AddUser(ctx, "system", elections.User{Name: "alicia", Email: "alice@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Contains(t, err.Error(), "Email")
	ok0, err := s.UserNameExists(ctx, "alicia")
	require.NoError(t, err)
	assert.False(t, ok0, "the refused user was not written")

	u, err := s.FindUserByName(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, "alice@example.com", u.Email)
	_, err = s.FindUserByName(ctx, "zed")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	u, err = s.FindUserByEmail(ctx, "bob@example.com")
	require.NoError(t, err)
	assert.Equal(t, "bob", u.Name)
	_, err = s.FindUserByEmail(ctx, "zed@example.com")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	// Authenticate: by name first, then by email.
	for _, key := range []string{"carol", "carol@example.com"} {
		u, err = s.FindUserByNameOrEmail(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, "carol", u.Name)
	}
	_, err = s.FindUserByNameOrEmail(ctx, "nobody")
	require.ErrorIs(t, err, singletable.ErrNotFound)

	ok, err := s.UserNameExists(ctx, "bob")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.UserNameExists(ctx, "zed")
	require.NoError(t, err)
	assert.False(t, ok)

	all, err := s.ListUsers(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob", "carol"}, userNames(all))
	c, err := s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, c.UserCount, "the failed duplicate did not count")
}

func TestElectionLifecycle(t *testing.T) { t.Parallel(); onEachTable(t, testElectionLifecycle) }

func testElectionLifecycle(t *testing.T, s *elections.Store) {
	ctx := context.Background()
	addUsers(t, s, "alice", "bob", "carol")
	const fav = "Favorite Language"

	require.NoError(t, s.AddElection(ctx, "alice", fav))
	require.NoError(t, s.AddElection(ctx, "bob", "Best Editor"))
	require.ErrorIs(t, s.AddElection(ctx, "bob", fav), singletable.ErrAlreadyExists)
	require.ErrorIs(t, s.AddElection(ctx, "ghost", "Other"), singletable.ErrNotFound)
	e, err := s.FindElection(ctx, fav)
	require.NoError(t, err)
	assert.Equal(t, elections.Election{Name: fav, OwnerName: "alice", AllowEdit: true}, e)
	_, err = s.FindElection(ctx, "Nope")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	es, err := s.ListElections(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"Best Editor", fav}, electionNames(es))
	c, err := s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, c.ElectionCount)

	// Candidates and voters: owner only, while editable.
	require.NoError(t, s.AddCandidates(ctx, "alice", fav, "Kotlin", "Python", "Rust", "Java", "Go"))
	require.NoError(t, s.AddCandidates(ctx, "alice", fav, "Go")) // idempotent
	require.NoError(t, s.RemoveCandidates(ctx, "alice", fav, "Go"))
	require.ErrorIs(t, s.AddCandidates(ctx, "bob", fav, "COBOL"), elections.ErrNotOwner)
	require.ErrorIs(t, s.AddCandidates(ctx, "alice", "Nope", "COBOL"), singletable.ErrNotFound)
	require.ErrorIs(t, s.AddCandidates(ctx, "alice", fav, "A", "A"), elections.ErrInvalid)
	cands, err := s.ListCandidates(ctx, fav)
	require.NoError(t, err)
	assert.Equal(t, []string{"Java", "Kotlin", "Python", "Rust"}, cands)
	ok, err := s.CandidateExists(ctx, fav, "Rust")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.CandidateExists(ctx, fav, "Go")
	require.NoError(t, err)
	assert.False(t, ok)

	require.NoError(t, s.AddVoters(ctx, "alice", fav, "alice", "bob", "carol", "dave"))
	require.NoError(t, s.RemoveVoters(ctx, "alice", fav, "dave"))
	require.ErrorIs(t, s.AddVoters(ctx, "carol", fav, "carol"), elections.ErrNotOwner)
	voters, err := s.ListEligibleVoters(ctx, fav)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob", "carol"}, voters)
	ok, err = s.IsEligible(ctx, fav, "dave")
	require.NoError(t, err)
	assert.False(t, ok)

	// No voting before launch.
	rank := func(names ...string) []elections.Ranking {
		var r []elections.Ranking
		for i, n := range names {
			r = append(r, elections.Ranking{CandidateName: n, Rank: i + 1})
		}
		return r
	}
	_, err = s.CastBallot(ctx, "alice", fav, rank("Kotlin"))
	require.ErrorIs(t, err, elections.ErrVotingClosed)
	require.ErrorIs(t, s.LaunchElection(ctx, "bob", fav), elections.ErrNotOwner)
	require.NoError(t, s.LaunchElection(ctx, "alice", fav))
	require.ErrorIs(t, s.AddCandidates(ctx, "alice", fav, "Scala"), elections.ErrEditingClosed)

	// Ballots with embedded rankings.
	conf, err := s.CastBallot(ctx, "alice", fav, rank("Kotlin", "Python", "Rust", "Java"))
	require.NoError(t, err)
	_, err = s.CastBallot(ctx, "bob", fav, rank("Rust", "Kotlin"))
	require.NoError(t, err)
	_, err = s.CastBallot(ctx, "dave", fav, rank("Rust"))
	require.ErrorIs(t, err, elections.ErrNotEligible)
	_, err = s.CastBallot(ctx, "carol", fav, rank("COBOL"))
	require.ErrorIs(t, err, elections.ErrInvalid)
	_, err = s.CastBallot(ctx, "carol", fav, rank("Rust", "Rust"))
	require.ErrorIs(t, err, elections.ErrInvalid)
	_, err = s.CastBallot(ctx, "carol", "Nope", rank("Rust"))
	require.ErrorIs(t, err, singletable.ErrNotFound)

	b, err := s.SearchBallot(ctx, "alice", fav)
	require.NoError(t, err)
	require.NotNil(t, b)
	assert.Equal(t, conf, b.Confirmation)
	assert.Equal(t, rank("Kotlin", "Python", "Rust", "Java"), b.Rankings)
	b, err = s.SearchBallot(ctx, "carol", fav)
	require.NoError(t, err)
	assert.Nil(t, b)

	// Re-casting overwrites: still one ballot, new rankings and confirmation.
	conf2, err := s.CastBallot(ctx, "alice", fav, rank("Python", "Kotlin"))
	require.NoError(t, err)
	assert.NotEqual(t, conf, conf2)
	bs, err := s.ListBallots(ctx, fav)
	require.NoError(t, err)
	require.Len(t, bs, 2)
	assert.Equal(t, elections.RevealedBallot{VoterName: "alice", Confirmation: conf2, Rankings: rank("Python", "Kotlin")}, bs[0])
	assert.Equal(t, "bob", bs[1].VoterName)
	rs, err := s.ListRankings(ctx, fav)
	require.NoError(t, err)
	assert.Equal(t, [][]elections.Ranking{rank("Python", "Kotlin"), rank("Rust", "Kotlin")}, rs)

	// A secret ballot hides the names.
	require.NoError(t, s.SetSecretBallot(ctx, "alice", fav, true))
	require.ErrorIs(t, s.SetSecretBallot(ctx, "bob", fav, false), elections.ErrNotOwner)
	require.ErrorIs(t, s.SetSecretBallot(ctx, "alice", "Nope", false), singletable.ErrNotFound)
	bs, err = s.ListBallots(ctx, fav)
	require.NoError(t, err)
	assert.Empty(t, bs[0].VoterName)
	assert.Equal(t, conf2, bs[0].Confirmation)

	// The whole election partition in one Query.
	d, err := s.LoadElection(ctx, fav)
	require.NoError(t, err)
	assert.True(t, d.Election.AllowVote)
	assert.Len(t, d.Candidates, 4)
	assert.Len(t, d.Voters, 3)
	assert.Len(t, d.Ballots, 2)
	_, err = s.LoadElection(ctx, "Nope")
	require.ErrorIs(t, err, singletable.ErrNotFound)

	// The voting window.
	past := time.Now().Add(-time.Hour)
	require.NoError(t, s.SetVotingWindow(ctx, "alice", fav, nil, &past))
	_, err = s.CastBallot(ctx, "carol", fav, rank("Rust"))
	require.ErrorIs(t, err, elections.ErrVotingClosed)
	future := time.Now().Add(time.Hour)
	require.NoError(t, s.SetVotingWindow(ctx, "alice", fav, &past, &future))
	_, err = s.CastBallot(ctx, "carol", fav, rank("Rust"))
	require.NoError(t, err)
	require.ErrorIs(t, s.SetVotingWindow(ctx, "alice", fav, &future, &past), elections.ErrInvalid)
	require.NoError(t, s.SetVotingWindow(ctx, "alice", fav, nil, nil))
	e, err = s.FindElection(ctx, fav)
	require.NoError(t, err)
	assert.Nil(t, e.NoVotingBefore)
	assert.Nil(t, e.NoVotingAfter)

	// Finalized: no more ballots.
	require.NoError(t, s.FinalizeElection(ctx, "alice", fav))
	_, err = s.CastBallot(ctx, "carol", fav, rank("Kotlin"))
	require.ErrorIs(t, err, elections.ErrVotingClosed)

	tally, err := s.Tally(ctx, fav)
	require.NoError(t, err)
	// alice: Python > Kotlin; bob: Rust > Kotlin; carol: Rust. Unranked
	// candidates rank last, so bob and carol prefer Rust to every other
	// candidate: Rust beats each 2:1 or better.
	assert.Equal(t, []string{"Rust"}, tally.Winners())
}

// The Wikipedia Schulze example, cast through the store by 45 voters.
func TestTallyWikipediaExample(t *testing.T) { t.Parallel(); onEachTable(t, testTallyWikipediaExample) }

func testTallyWikipediaExample(t *testing.T, s *elections.Store) {
	ctx := context.Background()
	addUsers(t, s, "owner")
	const name = "Wikipedia"
	require.NoError(t, s.AddElection(ctx, "owner", name))
	require.NoError(t, s.AddCandidates(ctx, "owner", name, "A", "B", "C", "D", "E"))
	groups := []struct {
		order string
		n     int
	}{{"ACBED", 5}, {"ADECB", 5}, {"BEDAC", 8}, {"CABED", 3}, {"CAEBD", 7}, {"CBADE", 2}, {"DCEBA", 7}, {"EBADC", 8}}
	var voters []string
	var votes []func() error
	for _, g := range groups {
		var r []elections.Ranking
		for i, c := range strings.Split(g.order, "") {
			r = append(r, elections.Ranking{CandidateName: c, Rank: i + 1})
		}
		for range g.n {
			v := fmt.Sprintf("voter%02d", len(voters)+1)
			voters = append(voters, v)
			votes = append(votes, func() error { _, err := s.CastBallot(ctx, v, name, r); return err })
		}
	}
	require.Len(t, voters, 45)
	require.NoError(t, s.AddVoters(ctx, "owner", name, voters...))
	require.NoError(t, s.LaunchElection(ctx, "owner", name))
	// Cast concurrently: every ballot is a transaction through the shared
	// event sequence.
	var wg sync.WaitGroup
	for _, vote := range votes {
		wg.Add(1)
		go func() { defer wg.Done(); assert.NoError(t, vote()) }()
	}
	wg.Wait()
	tally, err := s.Tally(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, []string{"E"}, tally.Winners())
	assert.Equal(t, [][]string{{"E"}, {"A"}, {"C"}, {"B"}, {"D"}}, tally.Places)
	assert.Equal(t, 30, tally.Preferences[0][3], "d[A,D] from the article")
}

func TestEventLog(t *testing.T) { t.Parallel(); onEachTable(t, testEventLog) }

func testEventLog(t *testing.T, s *elections.Store) {
	ctx := context.Background()
	addUsers(t, s, "alice")
	require.NoError(t, s.AddElection(ctx, "alice", "E1"))
	require.ErrorIs(t, s.AddElection(ctx, "alice", "E1"), singletable.ErrAlreadyExists) // no event for a refused command
	require.NoError(t, s.AddCandidates(ctx, "alice", "E1", "X", "Y"))

	evs, err := s.EventsSince(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, eventIDs(evs))
	assert.Equal(t, []string{"UserAdded", "ElectionAdded", "CandidatesAdded"}, eventTypes(evs))
	assert.Equal(t, "alice", evs[1].Actor)
	assert.JSONEq(t, `{"election":"E1","names":["X","Y"]}`, evs[2].EventData)
	later, err := s.EventsSince(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, eventIDs(later))
	n, err := s.EventCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	// 20 goroutines appending at once: IDs 1..N, no gap, no duplicate, and
	// the counts match.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, s.AddUser(ctx, "system", elections.User{Name: fmt.Sprintf("u%02d", i), Email: fmt.Sprintf("u%02d@example.com", i)}))
		}()
	}
	wg.Wait()
	evs, err = s.EventsSince(ctx, 0)
	require.NoError(t, err)
	ids := eventIDs(evs)
	want := make([]int64, 23)
	for i := range want {
		want[i] = int64(i + 1)
	}
	assert.Equal(t, want, ids)
	assert.True(t, sort.SliceIsSorted(evs, func(i, j int) bool { return evs[i].EventID < evs[j].EventID }))
	c, err := s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 21, c.UserCount)
	assert.Equal(t, 1, c.ElectionCount)

	// Sync state: apply everything once; a stale consumer cannot move it.
	var applied []int64
	got, err := s.SyncEvents(ctx, func(e elections.Event) error { applied = append(applied, e.EventID); return nil })
	require.NoError(t, err)
	assert.Equal(t, 23, got)
	assert.Equal(t, want, applied)
	last, err := s.LastSyncedEventID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(23), last)
	got, err = s.SyncEvents(ctx, func(elections.Event) error { return errors.New("nothing to apply") })
	require.NoError(t, err)
	assert.Zero(t, got)
	require.ErrorIs(t, s.SetLastSyncedEventID(ctx, 5, 6), singletable.ErrConditionFailed)
	// A failing consumer records what it applied before the failure.
	addUsers(t, s, "late1", "late2")
	boom := errors.New("boom")
	got, err = s.SyncEvents(ctx, func(e elections.Event) error {
		if e.EventID == 25 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 1, got)
	last, err = s.LastSyncedEventID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(24), last)
}

func TestQueryModelHidesKeys(t *testing.T) { t.Parallel(); onEachTable(t, testQueryModelHidesKeys) }

func testQueryModelHidesKeys(t *testing.T, s *elections.Store) {
	// Everything a caller needs goes through the interfaces, in natural keys.
	var q elections.QueryModel = s
	var c elections.CommandModel = s
	ctx := context.Background()
	require.NoError(t, c.AddUser(ctx, "system", elections.User{Name: "Ann #1", Email: "ann@example.com"}))
	u, err := q.FindUserByName(ctx, "Ann #1") // a raw name ends its key: a '#' in it is verbatim
	require.NoError(t, err)
	assert.Equal(t, "ann@example.com", u.Email)
	require.NoError(t, c.AddElection(ctx, "Ann #1", "Q#1"))
	require.NoError(t, c.AddCandidates(ctx, "Ann #1", "Q#1", "CANDIDATE#x", "y"))
	cands, err := q.ListCandidates(ctx, "Q#1")
	require.NoError(t, err)
	assert.Equal(t, []string{"CANDIDATE#x", "y"}, cands)
	voters, err := q.ListEligibleVoters(ctx, "Q#1")
	require.NoError(t, err)
	assert.Empty(t, voters, "candidates never leak into the voter query")
	users, err := q.ListUsers(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"Ann #1"}, userNames(users))
	es, err := q.ListElections(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"Q#1"}, electionNames(es))
}

func TestCatalogIsCurrent(t *testing.T) {
	t.Parallel()
	s := elections.New(nil, elections.DataTableName, elections.EventTableName)
	data, log := s.AccessPatterns()
	dataOK, logOK := s.Accepted()
	got := catalog.New(s.Data, data...).Accept(dataOK...).Markdown() + "\n" + catalog.New(s.Log, log...).Accept(logOK...).Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "catalog.md"), got, *update)
	assert.NotContains(t, got, "- error")
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "- warning") {
			assert.Contains(t, line, "; accepted: ", "every warning is accepted, with its reason")
		}
	}
	assert.Contains(t, got, "Accepted by the design, with its reasons:")
	dataItems, logItems := sampleItems(t, s)
	singletabletest.Golden(t, filepath.Join("docs", "table-"+elections.DataTableName+".svg"), catalog.Picture(s.Data, dataItems), *update)
	singletabletest.Golden(t, filepath.Join("docs", "table-"+elections.EventTableName+".svg"), catalog.Picture(s.Log, logItems), *update)

	// On the Kotlin service's vote_data (GSI-1 only) the listings are Scans.
	k := elections.NewListing(elections.ByScan, nil, elections.DataTableName, elections.EventTableName)
	data, _ = k.AccessPatterns()
	dataOK, _ = k.Accepted()
	got = catalog.New(k.Data, data...).Accept(dataOK...).Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "catalog-kotlin-table.md"), got, *update)
	assert.NotContains(t, got, "- error")
	assert.NotContains(t, got, elections.ListIndex)
}

func userNames(us []elections.User) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.Name)
	}
	return out
}

func electionNames(es []elections.Election) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func eventIDs(es []elections.Event) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.EventID)
	}
	return out
}

func eventTypes(es []elections.Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.EventType)
	}
	return slices.Clip(out)
}
