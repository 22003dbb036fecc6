package elections_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/examples/elections"
)

// sampleItems are the items docs/table-vote_data.svg and
// docs/table-vote_event_log.svg picture, as the store's writes render
// them: in vote_data two users (each with the guard item of its email),
// an election with its candidates, voters and a ballot, another
// election, the counts and the sync state; in vote_event_log the events
// of those writes and the event sequence.
func sampleItems(t *testing.T, s *elections.Store) (data, log []map[string]types.AttributeValue) {
	t.Helper()
	at := func(m int) time.Time { return time.Date(2024, 11, 5, 9, m, 0, 0, time.UTC) }
	preview := func(fn func(ctx context.Context) error) []map[string]types.AttributeValue {
		items, err := catalog.PreviewItems(context.Background(), s.Data, fn)
		require.NoError(t, err)
		return items
	}
	data = preview(func(ctx context.Context) error {
		for _, u := range []elections.User{
			{Name: "alice", Email: "alice@example.com", Salt: "c2FsdC1hbGljZQ", Hash: "aGFzaC1vZi1hbGljZXMtcGFzc3dvcmQ", Role: "admin"},
			{Name: "bob", Email: "bob@example.com", Salt: "c2FsdC1ib2I", Hash: "aGFzaC1vZi1ib2JzLXBhc3N3b3Jk", Role: "user"},
		} {
			if _, err := s.Users.Create(ctx, u); err != nil {
				return err
			}
		}
		for _, e := range []elections.Election{
			{Name: "Best pie", OwnerName: "alice", AllowVote: true},
			{Name: "Team name", OwnerName: "bob", SecretBallot: true, AllowEdit: true},
		} {
			if _, err := s.Elections.Create(ctx, e); err != nil {
				return err
			}
		}
		for _, c := range []string{"apple", "cherry", "pecan"} {
			if _, err := s.Candidates.Create(ctx, elections.Candidate{ElectionName: "Best pie", CandidateName: c}); err != nil {
				return err
			}
		}
		for _, v := range []string{"alice", "bob"} {
			if _, err := s.Voters.Create(ctx, elections.Voter{ElectionName: "Best pie", VoterName: v}); err != nil {
				return err
			}
		}
		if _, err := s.Ballots.Create(ctx, elections.Ballot{ElectionName: "Best pie", VoterName: "bob",
			Confirmation: "7d9f2c1e-8a4b-4c3d-9e6f-0a1b2c3d4e5f", WhenCast: at(30),
			Rankings: []elections.Ranking{{CandidateName: "cherry", Rank: 1}, {CandidateName: "apple", Rank: 2}}}); err != nil {
			return err
		}
		if _, err := s.CountsRepo.Create(ctx, elections.Counts{UserCount: 2, ElectionCount: 2, LastUpdated: at(31)}); err != nil {
			return err
		}
		_, err := s.SyncRepo.Create(ctx, elections.SyncState{LastEventID: 3})
		return err
	})
	log, err := catalog.PreviewItems(context.Background(), s.Log, func(ctx context.Context) error {
		for i, e := range []elections.Event{
			{EventID: 1, Actor: "alice", EventType: "USER_CREATED", EventData: `{"name":"alice"}`},
			{EventID: 2, Actor: "alice", EventType: "ELECTION_CREATED", EventData: `{"name":"Best pie","allow_vote":true}`},
			{EventID: 3, Actor: "bob", EventType: "BALLOT_CAST", EventData: `{"election_name":"Best pie","voter_name":"bob"}`},
		} {
			e.WhenOccurred = at(i)
			if _, err := s.Events.Create(ctx, e); err != nil {
				return err
			}
		}
		_, err := s.Sequence.Create(ctx, elections.EventSequence{LastEventID: 3})
		return err
	})
	require.NoError(t, err)
	return data, log
}
