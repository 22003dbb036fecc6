// Package elections implements the elections service, the ranked-choice voting system's
// DynamoDB design: users (with email lookup), elections, candidates,
// eligible voters and ballots with embedded rankings in the table
// vote_data; an append-only event log with gap-free sequence numbers in
// vote_event_log; counts and sync state as metadata items. The design's
// natural-key QueryModel and CommandModel are implemented on the library
// ([Store]), and [Schulze] tallies an election's ballots.
package elections

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
)

// Table names from the design.
const (
	DataTableName  = "vote_data"
	EventTableName = "vote_event_log"
)

// EntityTypeAttr is the design's entity type attribute.
const EntityTypeAttr = "entity_type"

// User is a user: PK USER#<name>, SK METADATA. GSI-1 holds it under its
// email (GSI1PK = <email>, GSI1SK = USER#<name>) for sign-in by email;
// GSI-2 lists all users (see [Store.ListUsers]). Emails are unique.
type User struct {
	Name  string `dynamodbav:"name"`
	Email string `dynamodbav:"email"`
	Salt  string `dynamodbav:"salt"`
	Hash  string `dynamodbav:"hash"`
	Role  string `dynamodbav:"role"`
}

// Election is an election's metadata: PK ELECTION#<name>, SK METADATA.
type Election struct {
	Name           string     `dynamodbav:"name"`
	OwnerName      string     `dynamodbav:"owner_name"`
	SecretBallot   bool       `dynamodbav:"secret_ballot"`
	NoVotingBefore *time.Time `dynamodbav:"no_voting_before,unix,omitempty"`
	NoVotingAfter  *time.Time `dynamodbav:"no_voting_after,unix,omitempty"`
	AllowEdit      bool       `dynamodbav:"allow_edit"`
	AllowVote      bool       `dynamodbav:"allow_vote"`
}

// Candidate is a candidate of an election: PK ELECTION#<election>, SK
// CANDIDATE#<candidate>.
type Candidate struct {
	ElectionName  string `dynamodbav:"election_name"`
	CandidateName string `dynamodbav:"candidate_name"`
}

// Voter is an eligible voter: PK ELECTION#<election>, SK VOTER#<voter>.
type Voter struct {
	ElectionName string `dynamodbav:"election_name"`
	VoterName    string `dynamodbav:"voter_name"`
}

// Ballot is a cast ballot with its rankings embedded: PK
// ELECTION#<election>, SK BALLOT#<voter>. Casting again overwrites it.
type Ballot struct {
	ElectionName string    `dynamodbav:"election_name"`
	VoterName    string    `dynamodbav:"voter_name"`
	Confirmation string    `dynamodbav:"confirmation"`
	WhenCast     time.Time `dynamodbav:"when_cast,unix"`
	Rankings     []Ranking `dynamodbav:"rankings,json"`
}

// Counts is the METADATA / COUNTS item, updated with atomic ADDs in the
// same transaction as the user or election it counts, so it is exact.
type Counts struct {
	UserCount     int       `dynamodbav:"user_count"`
	ElectionCount int       `dynamodbav:"election_count"`
	LastUpdated   time.Time `dynamodbav:"last_updated,unix"`
}

// SyncState is the METADATA / SYNC item (the design's option B): the last
// event a consumer of the event log has applied.
type SyncState struct {
	LastEventID int64 `dynamodbav:"last_event_id"`
}

// Event is an entry of the append-only event log: PK EVENTS, SK
// <sequence>#<timestamp>; sequence numbers start at 1 and have no gaps.
type Event struct {
	EventID      int64     `dynamodbav:"event_id"`
	WhenOccurred time.Time `dynamodbav:"when_occurred,rfc3339"`
	Actor        string    `dynamodbav:"actor"`
	EventType    string    `dynamodbav:"event_type"`
	EventData    string    `dynamodbav:"event_data"` // JSON
}

// EventSequence is the log's allocator: the last sequence number used. It
// is written in the same transaction as each event, conditional on the
// value read, which makes the sequence gap-free under concurrency.
type EventSequence struct {
	LastEventID int64 `dynamodbav:"last_event_id"`
}

// Index names from the design (GSI-1) and for listing (GSI-2).
const (
	EmailIndex = "GSI-1"
	ListIndex  = "GSI-2"
)

// The entity declarations.
var (
	Users = singletable.MustDefine(singletable.Schema[User]{
		Type: "USER", PK: "USER#{Name:raw}", SK: "METADATA",
		// GSI-1 finds a user by email but cannot make emails unique (an
		// index is eventually consistent); a guard item can, written in
		// the same transaction as the user.
		Unique: []singletable.Unique{{Fields: []string{"Email"}}},
		Indexes: []singletable.IndexSchema[User]{
			{Name: EmailIndex, PK: "{Email:raw}", SK: "USER#{Name:raw}", PKAttr: "GSI1PK", SKAttr: "GSI1SK"},
			{Name: ListIndex, PK: "USERS", SK: "USER#{Name:raw}", PKAttr: "GSI2PK", SKAttr: "GSI2SK"},
		},
	})
	Elections = singletable.MustDefine(singletable.Schema[Election]{
		Type: "ELECTION", PK: "ELECTION#{Name:raw}", SK: "METADATA",
		Indexes: []singletable.IndexSchema[Election]{
			{Name: ListIndex, PK: "ELECTIONS", SK: "ELECTION#{Name:raw}", PKAttr: "GSI2PK", SKAttr: "GSI2SK"},
		},
	})
	Candidates = singletable.MustDefine(singletable.Schema[Candidate]{
		Type: "CANDIDATE", PK: "ELECTION#{ElectionName:raw}", SK: "CANDIDATE#{CandidateName:raw}",
	})
	Voters = singletable.MustDefine(singletable.Schema[Voter]{
		Type: "VOTER", PK: "ELECTION#{ElectionName:raw}", SK: "VOTER#{VoterName:raw}",
	})
	Ballots = singletable.MustDefine(singletable.Schema[Ballot]{
		Type: "BALLOT", PK: "ELECTION#{ElectionName:raw}", SK: "BALLOT#{VoterName:raw}",
	})
	CountsItem = singletable.MustDefine(singletable.Schema[Counts]{
		Type: "COUNTS", PK: "METADATA", SK: "COUNTS", MatchKeys: true,
	})
	SyncItem = singletable.MustDefine(singletable.Schema[SyncState]{
		Type: "SYNC", PK: "METADATA", SK: "SYNC", MatchKeys: true,
	})
	Events = singletable.MustDefine(singletable.Schema[Event]{
		Type: "EVENT", PK: "EVENTS", SK: "{EventID:%08d}#{WhenOccurred:rfc3339}", MatchKeys: true,
	})
	Sequences = singletable.MustDefine(singletable.Schema[EventSequence]{
		Type: "EVENT_SEQUENCE", PK: "SEQUENCE", SK: "EVENTS",
	})
)

// Store holds both tables and a repository per entity. It implements
// [QueryModel] and [CommandModel].
type Store struct {
	Data, Log *singletable.Table

	Users      *singletable.Repo[User]
	Elections  *singletable.Repo[Election]
	Candidates *singletable.Repo[Candidate]
	Voters     *singletable.Repo[Voter]
	Ballots    *singletable.Repo[Ballot]
	CountsRepo *singletable.Repo[Counts]
	SyncRepo   *singletable.Repo[SyncState]
	Events     *singletable.Repo[Event]
	Sequence   *singletable.Repo[EventSequence]

	// Now returns the current time; tests replace it.
	Now func() time.Time
	// NewConfirmation makes a ballot's confirmation code; default a random
	// UUID (version 4).
	NewConfirmation func() string
}

func entityType(o *singletable.TableOptions) { o.EntityTypeAttr = EntityTypeAttr }

// New returns a store on the two named tables, reached through client;
// optFns tune both tables (an Observe hook, for one). Every request of the
// query and command models names its access pattern on its context (U1,
// B3, ...: see [Store.AccessPatterns]), for the hook.
func New(client singletable.Client, dataTable, eventTable string, optFns ...func(*singletable.TableOptions)) *Store {
	opts := append([]func(*singletable.TableOptions){entityType}, optFns...)
	data := singletable.NewTable(client, dataTable, opts...)
	log := singletable.NewTable(client, eventTable, opts...)
	return &Store{
		Data: data, Log: log,
		Users:           singletable.MustBind(data, Users),
		Elections:       singletable.MustBind(data, Elections),
		Candidates:      singletable.MustBind(data, Candidates),
		Voters:          singletable.MustBind(data, Voters),
		Ballots:         singletable.MustBind(data, Ballots),
		CountsRepo:      singletable.MustBind(data, CountsItem),
		SyncRepo:        singletable.MustBind(data, SyncItem),
		Events:          singletable.MustBind(log, Events),
		Sequence:        singletable.MustBind(log, Sequences),
		Now:             time.Now,
		NewConfirmation: newUUID,
	}
}

// CreateTables creates both tables from the declarations and writes the
// singleton items (counts, sync state, event sequence) with zero values.
func (s *Store) CreateTables(ctx context.Context) error {
	if err := s.Data.CreateTable(ctx); err != nil {
		return err
	}
	if err := s.Log.CreateTable(ctx); err != nil {
		return err
	}
	return s.Init(ctx)
}

// Init writes the singleton items that do not exist yet; it is safe to
// call on a table in use. The event sequence adopts the log: it starts
// after the highest event already stored (another service's events
// 1..3 make the next one 4), and a sequence behind the log is moved up
// to it, never back.
func (s *Store) Init(ctx context.Context) error {
	_, errCounts := s.CountsRepo.Create(ctx, Counts{LastUpdated: s.now()})
	_, errSync := s.SyncRepo.Create(ctx, SyncState{})
	for _, err := range []error{errCounts, errSync} {
		if err != nil && !errors.Is(err, singletable.ErrAlreadyExists) {
			return err
		}
	}
	return s.adoptEventLog(ctx)
}

// adoptEventLog makes the event sequence at least the highest event
// number stored in the log.
func (s *Store) adoptEventLog(ctx context.Context) error {
	last, err := s.Events.Query(Event{}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Desc().Limit(1).Collect(ctx)
	if err != nil {
		return err
	}
	var highest int64
	if len(last) == 1 {
		highest = last[0].EventID
	}
	_, err = s.Sequence.Create(ctx, EventSequence{LastEventID: highest})
	if !errors.Is(err, singletable.ErrAlreadyExists) {
		return err
	}
	_, err = s.Sequence.Update(EventSequence{}).Set("LastEventID", highest).
		If(expression.Name("LastEventID").LessThan(expression.Value(highest))).Run(ctx)
	if errors.Is(err, singletable.ErrConditionFailed) {
		return nil // already there or beyond
	}
	return err
}

// now is the store's clock in UTC, cut to the second: the design stores
// times as epoch seconds and event keys with second precision.
func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Second) }
