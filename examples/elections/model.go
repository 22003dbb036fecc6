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
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
// GSI-2, where the table has it, lists all users (see [Store.ListUsers]).
// Emails are unique.
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

// Index names: GSI-1 is the design's (sign-in by email), on every
// vote_data table; GSI-2 lists users and elections where the table has it
// (see [Listing]).
const (
	EmailIndex = "GSI-1"
	ListIndex  = "GSI-2"
)

// Listing is how a store lists users and elections, which depends on the
// vote_data table it runs on ([DetectListing] tells from the table).
type Listing int

const (
	// ByIndex lists them from GSI-2, a sparse index with one partition
	// each (USERS, ELECTIONS): the store writes GSI2PK and GSI2SK on its
	// users and elections. The tables [Store.CreateTables] makes from
	// [Users] and [Elections] have it.
	ByIndex Listing = iota
	// ByScan lists them as the design does: the Kotlin service's vote_data
	// has GSI-1 only, and the design's "Query where PK begins_with USER#"
	// is, as DynamoDB can run it, a Scan. The store scans the table for
	// the entity's items (entity_type = USER or ELECTION, the same items
	// as the design's PK prefix and SK = METADATA), in
	// [Store.ScanSegments] parallel segments, and sorts them by name. It
	// binds [DesignUsers] and [DesignElections], so it writes its users
	// and elections without GSI-2 keys, as the Kotlin service writes them.
	ByScan
)

// String is "GSI-2" or "scan".
func (l Listing) String() string {
	if l == ByScan {
		return "scan"
	}
	return ListIndex
}

// The entity declarations.
var (
	// Users and Elections are listed from GSI-2 ([ByIndex]).
	Users     = singletable.MustDefine(userSchema(ByIndex))
	Elections = singletable.MustDefine(electionSchema(ByIndex))
	// DesignUsers and DesignElections are the same entities as the design
	// declares them, without GSI-2 ([ByScan]): the Kotlin service's table.
	DesignUsers     = singletable.MustDefine(userSchema(ByScan))
	DesignElections = singletable.MustDefine(electionSchema(ByScan))

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

func userSchema(l Listing) singletable.Schema[User] {
	s := singletable.Schema[User]{
		Type: "USER", PK: "USER#{Name:raw}", SK: "METADATA",
		// GSI-1 finds a user by email but cannot make emails unique (an
		// index is eventually consistent); a guard item can, written in
		// the same transaction as the user.
		Unique: []singletable.Unique{{Fields: []string{"Email"}}},
		Indexes: []singletable.IndexSchema[User]{
			{Name: EmailIndex, PK: "{Email:raw}", SK: "USER#{Name:raw}", PKAttr: "GSI1PK", SKAttr: "GSI1SK"},
		},
	}
	if l == ByIndex {
		s.Indexes = append(s.Indexes, singletable.IndexSchema[User]{
			Name: ListIndex, PK: "USERS", SK: "USER#{Name:raw}", PKAttr: "GSI2PK", SKAttr: "GSI2SK"})
	}
	return s
}

func electionSchema(l Listing) singletable.Schema[Election] {
	s := singletable.Schema[Election]{Type: "ELECTION", PK: "ELECTION#{Name:raw}", SK: "METADATA"}
	if l == ByIndex {
		s.Indexes = []singletable.IndexSchema[Election]{
			{Name: ListIndex, PK: "ELECTIONS", SK: "ELECTION#{Name:raw}", PKAttr: "GSI2PK", SKAttr: "GSI2SK"}}
	}
	return s
}

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
	// ScanSegments is how many segments a [ByScan] listing reads at
	// once, one goroutine each; default 4. More segments make a listing
	// of a large table faster, not cheaper: it reads the whole table.
	ScanSegments int

	listing Listing
}

func entityType(o *singletable.TableOptions) { o.EntityTypeAttr = EntityTypeAttr }

// New returns a store on the two named tables, reached through client,
// listing users and elections from GSI-2 ([ByIndex]); optFns tune both
// tables (an Observe hook, for one). Every request of the query and
// command models names its access pattern on its context (U1, B3, ...:
// see [Store.AccessPatterns]), for the hook. [Open] picks the listing
// from the table instead, [NewListing] takes it.
func New(client singletable.Client, dataTable, eventTable string, optFns ...func(*singletable.TableOptions)) *Store {
	return NewListing(ByIndex, client, dataTable, eventTable, optFns...)
}

// NewListing is [New] with the listing given: [ByScan] for a vote_data
// table without GSI-2, as the Kotlin service creates it.
func NewListing(l Listing, client singletable.Client, dataTable, eventTable string, optFns ...func(*singletable.TableOptions)) *Store {
	opts := append([]func(*singletable.TableOptions){entityType}, optFns...)
	data := singletable.NewTable(client, dataTable, opts...)
	log := singletable.NewTable(client, eventTable, opts...)
	users, elections := Users, Elections
	if l == ByScan {
		users, elections = DesignUsers, DesignElections
	}
	return &Store{
		Data: data, Log: log, listing: l, ScanSegments: 4,
		Users:           singletable.MustBind(data, users),
		Elections:       singletable.MustBind(data, elections),
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

// Open returns a store on the two named tables as they are: it reads the
// data table's description ([DetectListing]) to list users and elections
// from GSI-2 where the table has it and by Scan where it does not, then
// checks that both tables have the keys and indexes the store's
// declarations need ([singletable.Table.Check]). It writes nothing; call
// [Store.Init] to create the singleton items a new table lacks.
func Open(ctx context.Context, client singletable.Client, dataTable, eventTable string, optFns ...func(*singletable.TableOptions)) (*Store, error) {
	l, err := DetectListing(ctx, client, dataTable)
	if err != nil {
		return nil, err
	}
	s := NewListing(l, client, dataTable, eventTable, optFns...)
	if err := errors.Join(s.Data.Check(ctx), s.Log.Check(ctx)); err != nil {
		return nil, err
	}
	return s, nil
}

// DetectListing tells how users and elections can be listed on the named
// vote_data table, from one DescribeTable: [ByIndex] when it has an
// ACTIVE index GSI-2 keyed GSI2PK (hash) and GSI2SK (range), [ByScan]
// when it has no GSI-2 (the Kotlin service's table) or one still being
// created or backfilled (a Query of it would fail or miss items). A GSI-2
// with other keys is an error: neither listing can use the table.
func DetectListing(ctx context.Context, client singletable.Client, dataTable string) (Listing, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(dataTable)})
	if err != nil {
		return 0, fmt.Errorf("elections: describe table %s: %w", dataTable, err)
	}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) != ListIndex {
			continue
		}
		if !keyedBy(g.KeySchema, "GSI2PK", "GSI2SK") {
			return 0, fmt.Errorf("elections: table %s: index %s is not keyed GSI2PK (hash), GSI2SK (range)", dataTable, ListIndex)
		}
		if g.IndexStatus != types.IndexStatusActive || g.Backfilling != nil && *g.Backfilling {
			return ByScan, nil
		}
		return ByIndex, nil
	}
	return ByScan, nil
}

func keyedBy(ks []types.KeySchemaElement, hash, rng string) bool {
	return len(ks) == 2 &&
		aws.ToString(ks[0].AttributeName) == hash && ks[0].KeyType == types.KeyTypeHash &&
		aws.ToString(ks[1].AttributeName) == rng && ks[1].KeyType == types.KeyTypeRange
}

// Listing is how the store lists users and elections.
func (s *Store) Listing() Listing { return s.listing }

// CreateTables creates both tables from the declarations and writes the
// singleton items (counts, sync state, event sequence) with zero values.
// A [ByScan] store creates vote_data as the Kotlin service does: GSI-1
// only.
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
