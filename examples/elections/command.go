package elections

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
)

// CommandModel is the design's write side, in natural keys. Every command is
// one DynamoDB transaction that changes the data, keeps the counts exact
// and appends one event to the log with the next sequence number, so the
// log and the data never disagree.
type CommandModel interface {
	AddUser(ctx context.Context, actor string, u User) error
	AddElection(ctx context.Context, owner, name string) error
	SetSecretBallot(ctx context.Context, actor, election string, secret bool) error
	SetVotingWindow(ctx context.Context, actor, election string, noVotingBefore, noVotingAfter *time.Time) error
	LaunchElection(ctx context.Context, actor, election string) error
	FinalizeElection(ctx context.Context, actor, election string) error
	AddCandidates(ctx context.Context, actor, election string, candidates ...string) error
	RemoveCandidates(ctx context.Context, actor, election string, candidates ...string) error
	AddVoters(ctx context.Context, actor, election string, voters ...string) error
	RemoveVoters(ctx context.Context, actor, election string, voters ...string) error
	CastBallot(ctx context.Context, voter, election string, rankings []Ranking) (confirmation string, err error)
	SetLastSyncedEventID(ctx context.Context, from, to int64) error
}

var _ CommandModel = (*Store)(nil)

// Errors of the voting rules.
var (
	ErrNotOwner      = errors.New("elections: only the election's owner may do this")
	ErrNotEligible   = errors.New("elections: voter is not eligible in this election")
	ErrVotingClosed  = errors.New("elections: voting is not open")
	ErrEditingClosed = errors.New("elections: the election can no longer be edited")
	ErrInvalid       = errors.New("elections: invalid input")
)

// maxNamesPerCommand keeps a command's transaction under DynamoDB's 100
// items: the names plus the election check, the sequence and the event.
const maxNamesPerCommand = 90

// command runs one transaction made of the sequence allocation (op 0), the
// event append (op 1) and ops (op 2 and up). A lost race for
// the sequence number (another command took it first) is retried with a
// fresh number, so numbers are consecutive and each is used once. mapErr,
// if set, turns the failure of op i (counted from ops' first) into a
// domain error.
func (s *Store) command(ctx context.Context, actor, eventType string, data any, ops []singletable.WriteOp, mapErr func(i int, reason error) error) (int64, error) {
	payload, err := json.Marshal(data)
	if err != nil {
		return 0, err
	}
	for attempt := 0; ; attempt++ {
		seq, err := s.Sequence.Get(singletable.WithPattern(ctx, "L1"), EventSequence{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		if err != nil {
			return 0, fmt.Errorf("read event sequence: %w", err)
		}
		next := seq.LastEventID + 1
		ev := Event{EventID: next, WhenOccurred: s.now(), Actor: actor, EventType: eventType, EventData: string(payload)}
		err = singletable.Tx(ctx, append([]singletable.WriteOp{
			s.Sequence.Update(EventSequence{}).Set("LastEventID", next).
				If(expression.Name("LastEventID").Equal(expression.Value(seq.LastEventID))).Op(),
			s.Events.CreateOp(ev),
		}, ops...))
		var te *singletable.TransactionError
		switch {
		case err == nil:
			return next, nil
		case errors.As(err, &te) && te.Index == 0 && attempt < 200:
			// Another command took this number: back off a little, then
			// read the sequence again.
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(time.Duration(mrand.IntN(10)+1) * time.Millisecond):
			}
			continue
		case errors.As(err, &te) && te.Index >= 2 && mapErr != nil:
			if e := mapErr(te.Index-2, te.TxReason.Err); e != nil {
				return 0, e
			}
		}
		return 0, err
	}
}

// AddUser registers a user; the name and the email must be new (either
// taken is singletable.ErrAlreadyExists). user_count goes up in the same
// transaction.
func (s *Store) AddUser(ctx context.Context, actor string, u User) error {
	if u.Name == "" || u.Email == "" {
		return fmt.Errorf("%w: a user needs a name and an email", ErrInvalid)
	}
	now := s.now()
	_, err := s.command(singletable.WithPattern(ctx, "U5"), actor, "UserAdded", map[string]string{"name": u.Name, "email": u.Email, "role": u.Role}, []singletable.WriteOp{
		s.Users.CreateOp(u),
		s.CountsRepo.Update(Counts{}).Add("UserCount", 1).Set("LastUpdated", now).Op(),
	}, nil)
	return err
}

// AddElection creates an election owned by an existing user; it is open
// for editing and closed for voting until launched.
func (s *Store) AddElection(ctx context.Context, owner, name string) error {
	if name == "" {
		return fmt.Errorf("%w: an election needs a name", ErrInvalid)
	}
	now := s.now()
	_, err := s.command(singletable.WithPattern(ctx, "E3"), owner, "ElectionAdded", map[string]string{"owner": owner, "name": name}, []singletable.WriteOp{
		s.Users.CheckOp(User{Name: owner}, s.exists(s.Data)),
		s.Elections.CreateOp(Election{Name: name, OwnerName: owner, AllowEdit: true}),
		s.CountsRepo.Update(Counts{}).Add("ElectionCount", 1).Set("LastUpdated", now).Op(),
	}, func(i int, reason error) error {
		if i == 0 {
			return fmt.Errorf("owner %q: %w", owner, singletable.ErrNotFound)
		}
		return nil
	})
	return err
}

func (s *Store) exists(t *singletable.Table) expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name(t.Options().PartitionKey))
}

// ownerUpdate runs an update of an election's metadata that only its owner
// may make: the ownership is a condition of the update itself.
func (s *Store) ownerUpdate(ctx context.Context, actor, election, eventType string, data any, edit func(u *singletable.Update[Election]) *singletable.Update[Election]) error {
	u := s.Elections.Update(Election{Name: election}).If(expression.Name("OwnerName").Equal(expression.Value(actor)))
	_, err := s.command(singletable.WithPattern(ctx, "E4"), actor, eventType, data, []singletable.WriteOp{edit(u).Op()}, func(i int, reason error) error {
		if errors.Is(reason, singletable.ErrNotFound) {
			return fmt.Errorf("election %q: %w", election, singletable.ErrNotFound)
		}
		return ErrNotOwner
	})
	return err
}

// SetSecretBallot chooses whether ballots are published with voter names.
func (s *Store) SetSecretBallot(ctx context.Context, actor, election string, secret bool) error {
	return s.ownerUpdate(ctx, actor, election, "SecretBallotChanged", map[string]any{"election": election, "secret": secret},
		func(u *singletable.Update[Election]) *singletable.Update[Election] {
			return u.Set("SecretBallot", secret)
		})
}

// SetVotingWindow sets (or, with nil, clears) the times outside which no
// ballot is accepted.
func (s *Store) SetVotingWindow(ctx context.Context, actor, election string, noVotingBefore, noVotingAfter *time.Time) error {
	if noVotingBefore != nil && noVotingAfter != nil && noVotingAfter.Before(*noVotingBefore) {
		return fmt.Errorf("%w: the voting window ends before it starts", ErrInvalid)
	}
	return s.ownerUpdate(ctx, actor, election, "VotingWindowChanged",
		map[string]any{"election": election, "no_voting_before": noVotingBefore, "no_voting_after": noVotingAfter},
		func(u *singletable.Update[Election]) *singletable.Update[Election] {
			return u.Set("NoVotingBefore", noVotingBefore).Set("NoVotingAfter", noVotingAfter)
		})
}

// LaunchElection opens voting and freezes candidates and voters.
func (s *Store) LaunchElection(ctx context.Context, actor, election string) error {
	return s.ownerUpdate(ctx, actor, election, "ElectionLaunched", map[string]string{"election": election},
		func(u *singletable.Update[Election]) *singletable.Update[Election] {
			return u.Set("AllowVote", true).Set("AllowEdit", false)
		})
}

// FinalizeElection closes voting for good.
func (s *Store) FinalizeElection(ctx context.Context, actor, election string) error {
	return s.ownerUpdate(ctx, actor, election, "ElectionFinalized", map[string]string{"election": election},
		func(u *singletable.Update[Election]) *singletable.Update[Election] { return u.Set("AllowVote", false) })
}

// editCheck is the condition of every candidate or voter change: the
// election exists, is still editable and belongs to the actor.
func (s *Store) editCheck(actor string) expression.ConditionBuilder {
	return s.exists(s.Data).
		And(expression.Name("AllowEdit").Equal(expression.Value(true))).
		And(expression.Name("OwnerName").Equal(expression.Value(actor)))
}

// editNames runs a candidate (pattern C3) or voter (V3) change.
func (s *Store) editNames(ctx context.Context, pattern, actor, election, eventType string, names []string, op func(name string) singletable.WriteOp) error {
	if len(names) == 0 || len(names) > maxNamesPerCommand {
		return fmt.Errorf("%w: give 1 to %d names", ErrInvalid, maxNamesPerCommand)
	}
	for i, n := range names {
		if n == "" || slices.Contains(names[:i], n) {
			return fmt.Errorf("%w: empty or repeated name %q", ErrInvalid, n)
		}
	}
	ops := []singletable.WriteOp{s.Elections.CheckOp(Election{Name: election}, s.editCheck(actor))}
	for _, n := range names {
		ops = append(ops, op(n))
	}
	_, err := s.command(singletable.WithPattern(ctx, pattern), actor, eventType, map[string]any{"election": election, "names": names}, ops, func(i int, reason error) error {
		if i != 0 {
			return nil
		}
		if errors.Is(reason, singletable.ErrNotFound) {
			return fmt.Errorf("election %q: %w", election, singletable.ErrNotFound)
		}
		e, err := s.FindElection(ctx, election)
		if err == nil && e.OwnerName != actor {
			return ErrNotOwner
		}
		return ErrEditingClosed
	})
	return err
}

// AddCandidates adds candidates (adding one twice changes nothing).
func (s *Store) AddCandidates(ctx context.Context, actor, election string, candidates ...string) error {
	return s.editNames(ctx, "C3", actor, election, "CandidatesAdded", candidates, func(n string) singletable.WriteOp {
		return s.Candidates.PutOp(Candidate{ElectionName: election, CandidateName: n})
	})
}

// RemoveCandidates removes candidates.
func (s *Store) RemoveCandidates(ctx context.Context, actor, election string, candidates ...string) error {
	return s.editNames(ctx, "C3", actor, election, "CandidatesRemoved", candidates, func(n string) singletable.WriteOp {
		return s.Candidates.DeleteOp(Candidate{ElectionName: election, CandidateName: n})
	})
}

// AddVoters makes users eligible to vote.
func (s *Store) AddVoters(ctx context.Context, actor, election string, voters ...string) error {
	return s.editNames(ctx, "V3", actor, election, "VotersAdded", voters, func(n string) singletable.WriteOp {
		return s.Voters.PutOp(Voter{ElectionName: election, VoterName: n})
	})
}

// RemoveVoters removes eligibility.
func (s *Store) RemoveVoters(ctx context.Context, actor, election string, voters ...string) error {
	return s.editNames(ctx, "V3", actor, election, "VotersRemoved", voters, func(n string) singletable.WriteOp {
		return s.Voters.DeleteOp(Voter{ElectionName: election, VoterName: n})
	})
}

// CastBallot records a voter's rankings. Casting again overwrites the
// ballot (a new confirmation is issued). The transaction checks that the
// voter is eligible and that voting is open, so a ballot can never be
// written for an ineligible voter or into a closed election.
func (s *Store) CastBallot(ctx context.Context, voter, election string, rankings []Ranking) (string, error) {
	ctx = singletable.WithPattern(ctx, "B3") // its reads name their own
	e, err := s.FindElection(ctx, election)
	if err != nil {
		return "", err
	}
	now := s.now()
	if !e.AllowVote || e.NoVotingBefore != nil && now.Before(*e.NoVotingBefore) || e.NoVotingAfter != nil && now.After(*e.NoVotingAfter) {
		return "", fmt.Errorf("election %q: %w", election, ErrVotingClosed)
	}
	cands, err := s.ListCandidates(ctx, election)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for _, r := range rankings {
		if !slices.Contains(cands, r.CandidateName) {
			return "", fmt.Errorf("%w: %q is not a candidate of %q", ErrInvalid, r.CandidateName, election)
		}
		if seen[r.CandidateName] || r.Rank < 1 {
			return "", fmt.Errorf("%w: candidate %q ranked twice or with a rank below 1", ErrInvalid, r.CandidateName)
		}
		seen[r.CandidateName] = true
	}
	b := Ballot{ElectionName: election, VoterName: voter, Confirmation: s.NewConfirmation(), WhenCast: now, Rankings: rankings}
	_, err = s.command(ctx, voter, "BallotCast", map[string]any{"election": election, "voter": voter, "confirmation": b.Confirmation, "rankings": rankings},
		[]singletable.WriteOp{
			s.Voters.CheckOp(Voter{ElectionName: election, VoterName: voter}, s.exists(s.Data)),
			s.Elections.CheckOp(Election{Name: election}, expression.Name("AllowVote").Equal(expression.Value(true))),
			s.Ballots.PutOp(b),
		}, func(i int, reason error) error {
			switch i {
			case 0:
				return fmt.Errorf("voter %q, election %q: %w", voter, election, ErrNotEligible)
			case 1:
				return fmt.Errorf("election %q: %w", election, ErrVotingClosed)
			}
			return nil
		})
	if err != nil {
		return "", err
	}
	return b.Confirmation, nil
}

// SetLastSyncedEventID moves the sync state from one event ID to another;
// it fails with singletable.ErrConditionFailed if another consumer moved
// it first.
func (s *Store) SetLastSyncedEventID(ctx context.Context, from, to int64) error {
	_, err := s.SyncRepo.Update(SyncState{}).Set("LastEventID", to).
		If(expression.Name("LastEventID").Equal(expression.Value(from))).Run(singletable.WithPattern(ctx, "S2"))
	return err
}

// SyncEvents applies the events after the sync state, in order, with
// apply, then records the last one applied. It returns how many it
// applied. When apply fails the sync state records the events before the
// failure.
func (s *Store) SyncEvents(ctx context.Context, apply func(Event) error) (int, error) {
	from, err := s.LastSyncedEventID(ctx)
	if err != nil {
		return 0, err
	}
	events, err := s.EventsSince(ctx, from)
	if err != nil {
		return 0, err
	}
	last, n := from, 0
	var applyErr error
	for _, ev := range events {
		if applyErr = apply(ev); applyErr != nil {
			break
		}
		last, n = ev.EventID, n+1
	}
	if last != from {
		if err := s.SetLastSyncedEventID(ctx, from, last); err != nil {
			return 0, err
		}
	}
	return n, applyErr
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
