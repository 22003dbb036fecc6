package elections

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/singletable-go/singletable"
)

// QueryModel is the design's relational projection: every method takes
// natural keys (user, election, candidate and voter names) and hides how
// the single table stores them. Methods return singletable.ErrNotFound
// (matched with errors.Is) for a missing user or election.
type QueryModel interface {
	FindUserByName(ctx context.Context, name string) (User, error)
	FindUserByEmail(ctx context.Context, email string) (User, error)
	// FindUserByNameOrEmail tries the name, then the email (sign-in).
	FindUserByNameOrEmail(ctx context.Context, nameOrEmail string) (User, error)
	UserNameExists(ctx context.Context, name string) (bool, error)
	ListUsers(ctx context.Context) ([]User, error)
	FindElection(ctx context.Context, name string) (Election, error)
	ListElections(ctx context.Context) ([]Election, error)
	ListCandidates(ctx context.Context, election string) ([]string, error)
	CandidateExists(ctx context.Context, election, candidate string) (bool, error)
	ListEligibleVoters(ctx context.Context, election string) ([]string, error)
	IsEligible(ctx context.Context, election, voter string) (bool, error)
	// SearchBallot returns the voter's ballot, or nil if they have not voted.
	SearchBallot(ctx context.Context, voter, election string) (*BallotSummary, error)
	ListBallots(ctx context.Context, election string) ([]RevealedBallot, error)
	ListRankings(ctx context.Context, election string) ([][]Ranking, error)
	Tally(ctx context.Context, election string) (Tally, error)
	Counts(ctx context.Context) (Counts, error)
	EventsSince(ctx context.Context, afterEventID int64) ([]Event, error)
	EventCount(ctx context.Context) (int, error)
	LastSyncedEventID(ctx context.Context) (int64, error)
}

// BallotSummary is what a voter sees of their own ballot.
type BallotSummary struct {
	VoterName    string
	ElectionName string
	Confirmation string
	WhenCast     string
	Rankings     []Ranking
}

// RevealedBallot is a ballot as published after the vote: the voter's name
// is empty for a secret-ballot election.
type RevealedBallot struct {
	VoterName    string
	Confirmation string
	Rankings     []Ranking
}

var _ QueryModel = (*Store)(nil)

// FindUserByName looks a user up by name: GetItem USER#<name> / METADATA.
func (s *Store) FindUserByName(ctx context.Context, name string) (User, error) {
	ctx = singletable.WithPattern(ctx, "U1")
	u, err := s.Users.Get(ctx, User{Name: name})
	if err != nil {
		return User{}, fmt.Errorf("user %q: %w", name, err)
	}
	return u, nil
}

// byEmail is the GSI-1 lookup.
func (s *Store) byEmail(email string) *singletable.Query[User] {
	return s.Users.QueryIndex(EmailIndex, User{Email: email})
}

// FindUserByEmail looks a user up by email on GSI-1.
func (s *Store) FindUserByEmail(ctx context.Context, email string) (User, error) {
	ctx = singletable.WithPattern(ctx, "U2")
	page, err := s.byEmail(email).Limit(1).Page(ctx)
	if err != nil {
		return User{}, err
	}
	if len(page.Items) == 0 {
		return User{}, fmt.Errorf("email %q: %w", email, singletable.ErrNotFound)
	}
	return page.Items[0], nil
}

// FindUserByNameOrEmail is the design's "authenticate user" lookup: by name
// first, then by email.
func (s *Store) FindUserByNameOrEmail(ctx context.Context, nameOrEmail string) (User, error) {
	u, err := s.FindUserByName(ctx, nameOrEmail)
	if !errors.Is(err, singletable.ErrNotFound) {
		return u, err
	}
	return s.FindUserByEmail(ctx, nameOrEmail)
}

// UserNameExists reports whether a user name is taken.
func (s *Store) UserNameExists(ctx context.Context, name string) (bool, error) {
	ctx = singletable.WithPattern(ctx, "U4")
	return exists(s.Users.Get(ctx, User{Name: name}, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }))
}

func exists[T any](_ T, err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, singletable.ErrNotFound):
		return false, nil
	}
	return false, err
}

// allUsers and allElections are the listing queries on GSI-2. The design's
// "Query where PK begins_with USER#" is not a valid key condition (a
// partition key takes only equality), so users and elections are listed
// from a sparse index partition each, or where the table has no GSI-2
// ([ByScan]) by a Scan of the table (scanAll).
func (s *Store) allUsers() *singletable.Query[User] { return s.Users.QueryIndex(ListIndex, User{}) }

func (s *Store) allElections() *singletable.Query[Election] {
	return s.Elections.QueryIndex(ListIndex, Election{})
}

// scanAll reads every item of r's entity with a Scan of the table in
// s.ScanSegments parallel segments (the entity's type filter keeps the
// others out), sorted by name as GSI-2 returns them (its sort key is the
// name after a constant prefix, compared byte by byte).
func scanAll[T any](ctx context.Context, s *Store, r *singletable.Repo[T], name func(T) string) ([]T, error) {
	items, err := r.Scan().Segments(max(s.ScanSegments, 1)).Collect(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return items, nil
}

// ListUsers lists every user by name, from GSI-2 or, on a table without
// it, by Scan ([Listing]).
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	ctx = singletable.WithPattern(ctx, "U3")
	if s.listing == ByScan {
		return scanAll(ctx, s, s.Users, func(u User) string { return u.Name })
	}
	return s.allUsers().Collect(ctx)
}

// FindElection looks an election up by name.
func (s *Store) FindElection(ctx context.Context, name string) (Election, error) {
	ctx = singletable.WithPattern(ctx, "E1")
	e, err := s.Elections.Get(ctx, Election{Name: name})
	if err != nil {
		return Election{}, fmt.Errorf("election %q: %w", name, err)
	}
	return e, nil
}

// ListElections lists every election by name, from GSI-2 or, on a table
// without it, by Scan ([Listing]).
func (s *Store) ListElections(ctx context.Context) ([]Election, error) {
	ctx = singletable.WithPattern(ctx, "E2")
	if s.listing == ByScan {
		return scanAll(ctx, s, s.Elections, func(e Election) string { return e.Name })
	}
	return s.allElections().Collect(ctx)
}

func (s *Store) candidates(election string) *singletable.Query[Candidate] {
	return s.Candidates.Query(Candidate{ElectionName: election})
}

// ListCandidates lists an election's candidates by name.
func (s *Store) ListCandidates(ctx context.Context, election string) ([]string, error) {
	cs, err := s.candidates(election).Collect(singletable.WithPattern(ctx, "C1"))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.CandidateName
	}
	return out, nil
}

// CandidateExists reports whether an election has a candidate.
func (s *Store) CandidateExists(ctx context.Context, election, candidate string) (bool, error) {
	return exists(s.Candidates.Get(singletable.WithPattern(ctx, "C2"), Candidate{ElectionName: election, CandidateName: candidate}))
}

func (s *Store) voters(election string) *singletable.Query[Voter] {
	return s.Voters.Query(Voter{ElectionName: election})
}

// ListEligibleVoters lists an election's eligible voters by name.
func (s *Store) ListEligibleVoters(ctx context.Context, election string) ([]string, error) {
	vs, err := s.voters(election).Collect(singletable.WithPattern(ctx, "V1"))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.VoterName
	}
	return out, nil
}

// IsEligible reports whether a voter may vote in an election.
func (s *Store) IsEligible(ctx context.Context, election, voter string) (bool, error) {
	return exists(s.Voters.Get(singletable.WithPattern(ctx, "V2"), Voter{ElectionName: election, VoterName: voter}))
}

// SearchBallot returns a voter's ballot in an election, or nil.
func (s *Store) SearchBallot(ctx context.Context, voter, election string) (*BallotSummary, error) {
	b, err := s.Ballots.Get(singletable.WithPattern(ctx, "B1"), Ballot{ElectionName: election, VoterName: voter})
	if errors.Is(err, singletable.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &BallotSummary{VoterName: b.VoterName, ElectionName: b.ElectionName, Confirmation: b.Confirmation,
		WhenCast: b.WhenCast.Format("2006-01-02T15:04:05Z07:00"), Rankings: b.Rankings}, nil
}

func (s *Store) ballots(election string) *singletable.Query[Ballot] {
	return s.Ballots.Query(Ballot{ElectionName: election})
}

// ListBallots lists an election's ballots by voter; voter names are
// hidden for a secret ballot.
func (s *Store) ListBallots(ctx context.Context, election string) ([]RevealedBallot, error) {
	e, err := s.FindElection(ctx, election)
	if err != nil {
		return nil, err
	}
	bs, err := s.ballots(election).Collect(singletable.WithPattern(ctx, "B2"))
	if err != nil {
		return nil, err
	}
	out := make([]RevealedBallot, len(bs))
	for i, b := range bs {
		out[i] = RevealedBallot{Confirmation: b.Confirmation, Rankings: b.Rankings}
		if !e.SecretBallot {
			out[i].VoterName = b.VoterName
		}
	}
	return out, nil
}

// ListRankings returns the rankings of every ballot of an election: one
// Query of the BALLOT# items, whose rankings are embedded.
func (s *Store) ListRankings(ctx context.Context, election string) ([][]Ranking, error) {
	var out [][]Ranking
	for b, err := range s.ballots(election).All(singletable.WithPattern(ctx, "B2")) {
		if err != nil {
			return nil, err
		}
		out = append(out, b.Rankings)
	}
	return out, nil
}

// ElectionData is an election with everything in its partition.
type ElectionData struct {
	Election   Election
	Candidates []Candidate
	Voters     []Voter
	Ballots    []Ballot
}

// LoadElection reads an election's whole partition (metadata, candidates,
// voters, ballots) with one Query, decoding each item by its entity type.
func (s *Store) LoadElection(ctx context.Context, name string) (ElectionData, error) {
	var d ElectionData
	meta := s.Elections.StoreOne(&d.Election)
	_, err := s.Elections.QueryCollection(Election{Name: name}).Collect(singletable.WithPattern(ctx, "E5"), meta,
		s.Candidates.AppendTo(&d.Candidates), s.Voters.AppendTo(&d.Voters), s.Ballots.AppendTo(&d.Ballots))
	if err != nil {
		return ElectionData{}, err
	}
	if meta.Count() == 0 {
		return ElectionData{}, fmt.Errorf("election %q: %w", name, singletable.ErrNotFound)
	}
	return d, nil
}

// Tally reads an election's candidates and ballots in one Query and runs
// the Schulze method on them.
func (s *Store) Tally(ctx context.Context, election string) (Tally, error) {
	d, err := s.LoadElection(ctx, election)
	if err != nil {
		return Tally{}, err
	}
	names := make([]string, len(d.Candidates))
	for i, c := range d.Candidates {
		names[i] = c.CandidateName
	}
	rankings := make([][]Ranking, len(d.Ballots))
	for i, b := range d.Ballots {
		rankings[i] = b.Rankings
	}
	return Schulze(names, rankings), nil
}

// Counts reads the METADATA / COUNTS item.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	return s.CountsRepo.Get(singletable.WithPattern(ctx, "M1"), Counts{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
}

// eventsAfter is "read events since last sync": PK = EVENTS, SK > <id>.
func (s *Store) eventsAfter(id int64) *singletable.Query[Event] {
	return s.Events.Query(Event{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Where("EventID", singletable.Gt, id)
}

// EventsSince returns the events after afterEventID, in sequence order.
func (s *Store) EventsSince(ctx context.Context, afterEventID int64) ([]Event, error) {
	return s.eventsAfter(afterEventID).Collect(singletable.WithPattern(ctx, "L2"))
}

// EventCount counts the events (a Query with Select COUNT).
func (s *Store) EventCount(ctx context.Context) (int, error) {
	return s.Events.Query(Event{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Count(singletable.WithPattern(ctx, "L3"))
}

// LastSyncedEventID reads the sync state.
func (s *Store) LastSyncedEventID(ctx context.Context) (int64, error) {
	st, err := s.SyncRepo.Get(singletable.WithPattern(ctx, "S1"), SyncState{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	return st.LastEventID, err
}
