package singletable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/rawitems"
)

// Items another service wrote: the elections service's Kotlin code writes
// its METADATA/COUNTS and METADATA/SYNC items without entity_type, ballots
// with rankings as a JSON string and when_cast as epoch seconds; Python
// services write times with utcnow().isoformat(); usage logs and test
// cases keep fields only inside their keys.

type ElectionCounts struct {
	UserCount     int       `dynamodbav:"user_count"`
	ElectionCount int       `dynamodbav:"election_count"`
	LastUpdated   time.Time `dynamodbav:"last_updated"`
}

type SyncState struct {
	LastEventID int64 `dynamodbav:"last_event_id"`
}

type ForeignVoter struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"voter_name"`
}

type ForeignCandidate struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"candidate_name"`
}

type ForeignRanking struct {
	Candidate string `json:"candidate_name"`
	Rank      int    `json:"rank"`
}

type ForeignBallot struct {
	Election     string           `dynamodbav:"election_name"`
	Voter        string           `dynamodbav:"voter_name"`
	Confirmation string           `dynamodbav:"confirmation"`
	WhenCast     time.Time        `dynamodbav:"when_cast,unix"`
	Rankings     []ForeignRanking `dynamodbav:"rankings,json"`
}

var (
	ElectionCountsEntity = singletable.MustDefine(singletable.Schema[ElectionCounts]{
		Type: "COUNTS", PK: "METADATA", SK: "COUNTS", MatchKeys: true,
	})
	SyncStateEntity = singletable.MustDefine(singletable.Schema[SyncState]{
		Type: "SYNC", PK: "METADATA", SK: "SYNC", MatchKeys: true,
	})
	ForeignVoters = singletable.MustDefine(singletable.Schema[ForeignVoter]{
		Type: "VOTER", PK: "ELECTION#{Election}", SK: "VOTER#{Name}", MatchKeys: true,
	})
	ForeignCandidates = singletable.MustDefine(singletable.Schema[ForeignCandidate]{
		Type: "CANDIDATE", PK: "ELECTION#{Election}", SK: "CANDIDATE#{Name}", MatchKeys: true,
	})
	ForeignBallots = singletable.MustDefine(singletable.Schema[ForeignBallot]{
		Type: "BALLOT", PK: "ELECTION#{Election}", SK: "BALLOT#{Voter}",
	})
)

type foreignElections struct {
	tbl        *singletable.Table
	c          *countingClient
	counts     *singletable.Repo[ElectionCounts]
	sync       *singletable.Repo[SyncState]
	voters     *singletable.Repo[ForeignVoter]
	candidates *singletable.Repo[ForeignCandidate]
	ballots    *singletable.Repo[ForeignBallot]
}

// foreignElectionsTable is the elections service's vote_data table: PK,
// SK and an entity_type attribute.
func foreignElectionsTable(t *testing.T, optFns ...func(*singletable.TableOptions)) *foreignElections {
	s := &foreignElections{}
	opts := append([]func(*singletable.TableOptions){func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" }}, optFns...)
	s.tbl, s.c = newTable(t, func(tbl *singletable.Table) {
		s.counts = singletable.MustBind(tbl, ElectionCountsEntity)
		s.sync = singletable.MustBind(tbl, SyncStateEntity)
		s.voters = singletable.MustBind(tbl, ForeignVoters)
		s.candidates = singletable.MustBind(tbl, ForeignCandidates)
		if !tbl.Options().OmitEntityType {
			s.ballots = singletable.MustBind(tbl, ForeignBallots)
		}
	}, opts...)
	return s
}

// The other service's items, written and read with the SDK alone
// (internal/rawitems): attribute values, a put, a consistent get.
var (
	sAV    = rawitems.S
	nAV    = rawitems.N
	rawPut = rawitems.Put
	rawGet = rawitems.Get
)

func TestForeignUntypedGetUpdateDelete(t *testing.T) {
	ctx := context.Background()
	s := foreignElectionsTable(t)
	// As the Kotlin service writes them: no entity_type; last_updated
	// from Python's utcnow().isoformat() (no zone).
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("METADATA"), "SK": sAV("COUNTS"),
		"user_count": nAV("42"), "election_count": nAV("10"), "last_updated": sAV("2025-01-15T10:30:00.123456")})
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("METADATA"), "SK": sAV("SYNC"), "last_event_id": nAV("42")})

	got, err := s.counts.Get(ctx, ElectionCounts{})
	if err != nil {
		t.Fatal(err)
	}
	want := ElectionCounts{UserCount: 42, ElectionCount: 10, LastUpdated: time.Date(2025, 1, 15, 10, 30, 0, 123456000, time.UTC)}
	if got != want {
		t.Fatalf("counts: got %+v, want %+v", got, want)
	}
	if sy, err := s.sync.Get(ctx, SyncState{}); err != nil || sy.LastEventID != 42 {
		t.Fatalf("sync: %+v %v", sy, err)
	}

	// The ownership condition accepts the untyped item: increments work.
	c, err := s.counts.Update(SyncStateKeyless()).Add("UserCount", 1).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.UserCount != 43 || c.ElectionCount != 10 {
		t.Fatalf("after update: %+v", c)
	}
	raw := rawGet(t, s.tbl, "METADATA", "COUNTS")
	if n := raw["user_count"].(*types.AttributeValueMemberN).Value; n != "43" {
		t.Errorf("stored user_count %s", n)
	}

	// Put over the untyped item replaces it (the item is the entity's).
	if _, err := s.sync.Put(ctx, SyncState{LastEventID: 43}, func(o *singletable.WriteOptions) { o.MustExist = true }); err != nil {
		t.Fatal(err)
	}
	// Delete of an untyped item returns it.
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("METADATA"), "SK": sAV("SYNC"), "last_event_id": nAV("44")})
	old, err := s.sync.Delete(ctx, SyncState{}, func(o *singletable.WriteOptions) { o.MustExist = true })
	if err != nil || old.LastEventID != 44 {
		t.Fatalf("delete: %+v %v", old, err)
	}
	if _, err := s.sync.Get(ctx, SyncState{}); !errors.Is(err, singletable.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// An update of an absent item is still ErrNotFound.
	if _, err := s.sync.Update(SyncState{}).Set("LastEventID", int64(1)).Run(ctx); !errors.Is(err, singletable.ErrNotFound) {
		t.Fatalf("update of absent item: %v", err)
	}

	// An item carrying another entity's type is never this entity's.
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("METADATA"), "SK": sAV("SYNC"), "entity_type": sAV("OTHER"), "last_event_id": nAV("1")})
	if _, err := s.sync.Get(ctx, SyncState{}); !errors.Is(err, singletable.ErrNotFound) {
		t.Errorf("get of another entity's item: %v", err)
	}
	if _, err := s.sync.Put(ctx, SyncState{LastEventID: 2}); !errors.Is(err, singletable.ErrConditionFailed) {
		t.Errorf("put over another entity's item: %v", err)
	}
	if _, err := s.sync.Update(SyncState{}).Add("LastEventID", 1).Run(ctx); !errors.Is(err, singletable.ErrNotFound) {
		t.Errorf("update of another entity's item: %v", err)
	}
	if _, err := s.sync.Delete(ctx, SyncState{}); !errors.Is(err, singletable.ErrConditionFailed) && !errors.Is(err, singletable.ErrNotFound) {
		t.Errorf("delete of another entity's item: %v", err)
	}
	if raw := rawGet(t, s.tbl, "METADATA", "SYNC"); raw["entity_type"].(*types.AttributeValueMemberS).Value != "OTHER" {
		t.Errorf("another entity's item changed: %v", raw)
	}
}

// SyncStateKeyless is the key of an item whose templates have no fields.
func SyncStateKeyless() ElectionCounts { return ElectionCounts{} }

// An entity without MatchKeys does not see untyped items (as before).
func TestForeignUntypedNeedsMatchKeys(t *testing.T) {
	ctx := context.Background()
	s := foreignElectionsTable(t)
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("ELECTION#lang"), "SK": sAV("BALLOT#alice"), "voter_name": sAV("alice")})
	if _, err := s.ballots.Get(ctx, ForeignBallot{Election: "lang", Voter: "alice"}); !errors.Is(err, singletable.ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
	if _, err := s.ballots.Put(ctx, ForeignBallot{Election: "lang", Voter: "alice"}); !errors.Is(err, singletable.ErrConditionFailed) {
		t.Fatalf("put over an untyped item: %v, want ErrConditionFailed", err)
	}
}

func TestForeignUntypedQuery(t *testing.T) {
	ctx := context.Background()
	s := foreignElectionsTable(t)
	pk := sAV("ELECTION#lang")
	for _, name := range []string{"alice", "bob", "carol", "dave", "erin"} {
		rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": pk, "SK": sAV("VOTER#" + name),
			"election_name": sAV("lang"), "voter_name": sAV(name)})
	}
	// A typed voter written by the library.
	if _, err := s.voters.Create(ctx, ForeignVoter{Election: "lang", Name: "frank"}); err != nil {
		t.Fatal(err)
	}
	// Untyped items of other shapes in the partition: candidates, and an
	// item whose SK starts like a voter's but does not parse as one.
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": pk, "SK": sAV("CANDIDATE#Kotlin"), "election_name": sAV("lang"), "candidate_name": sAV("Kotlin")})
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": pk, "SK": sAV("VOTER#bob#note"), "text": sAV("not a voter")})
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": pk, "SK": sAV("VOTER#zed#note"), "text": sAV("not a voter")})

	all, err := s.voters.Query(ForeignVoter{Election: "lang"}).Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range all {
		names = append(names, v.Name)
	}
	if want := []string{"alice", "bob", "carol", "dave", "erin", "frank"}; !equalStrings(names, want) {
		t.Fatalf("voters %v, want %v", names, want)
	}
	n, err := s.voters.Query(ForeignVoter{Election: "lang"}).Count(ctx)
	if err != nil || n != 6 {
		t.Fatalf("count %d %v, want 6", n, err)
	}
	// Pages of exactly Limit items; the last has no cursor although an
	// untyped item that is not a voter follows it.
	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("too many pages")
		}
		p, err := s.voters.Query(ForeignVoter{Election: "lang"}).Limit(2).After(cursor).Page(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 2 {
			t.Fatalf("page %d has %d items", pages, len(p.Items))
		}
		for _, v := range p.Items {
			paged = append(paged, v.Name)
		}
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	if !equalStrings(paged, names) {
		t.Errorf("pages %v, want %v", paged, names)
	}
	// Sort conditions hold on untyped items too.
	after, err := s.voters.Query(ForeignVoter{Election: "lang"}).Where("Name", singletable.Gt, "carol").Collect(ctx)
	if err != nil || len(after) != 3 || after[0].Name != "dave" {
		t.Errorf("Where Gt: %+v %v", after, err)
	}
	// A filter by Go field name is ANDed with the entity test.
	f, err := s.voters.Query(ForeignVoter{Election: "lang"}).Filter(expression.Name("Name").Equal(expression.Value("bob"))).Collect(ctx)
	if err != nil || len(f) != 1 || f[0].Name != "bob" {
		t.Errorf("filter: %+v %v", f, err)
	}

	// A collection routes untyped items by key shape and refuses the one
	// no target parses.
	var voters []ForeignVoter
	var candidates []ForeignCandidate
	_, err = s.voters.QueryCollection(ForeignVoter{Election: "lang"}).Collect(ctx, s.voters.AppendTo(&voters), s.candidates.AppendTo(&candidates))
	var ute *singletable.UnknownTypeError
	if !errors.As(err, &ute) || ute.Type != "" {
		t.Fatalf("collection with a stray item: %v", err)
	}
	voters, candidates = nil, nil
	_, err = s.voters.QueryCollection(ForeignVoter{Election: "lang"}).SkipUnknown().Collect(ctx, s.voters.AppendTo(&voters), s.candidates.AppendTo(&candidates))
	if err != nil || len(voters) != 6 || len(candidates) != 1 || candidates[0].Name != "Kotlin" {
		t.Fatalf("collection: %v voters %d candidates %+v", err, len(voters), candidates)
	}
}

// Two entities matching keys whose templates both parse an untyped key:
// the collection refuses to guess.
func TestForeignCollectionAmbiguous(t *testing.T) {
	ctx := context.Background()
	type Note struct {
		Election string `dynamodbav:"election_name"`
		Name     string `dynamodbav:"voter_name"`
	}
	notes := singletable.MustDefine(singletable.Schema[Note]{Type: "NOTE", PK: "ELECTION#{Election}", SK: "VOTER#{Name}", MatchKeys: true})
	var nr *singletable.Repo[Note]
	var vr *singletable.Repo[ForeignVoter]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		vr = singletable.MustBind(tbl, ForeignVoters)
		nr = singletable.MustBind(tbl, notes)
	})
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("ELECTION#x"), "SK": sAV("VOTER#a")})
	var vs []ForeignVoter
	var ns []Note
	_, err := vr.QueryCollection(ForeignVoter{Election: "x"}).Collect(ctx, vr.AppendTo(&vs), nr.AppendTo(&ns))
	var ute *singletable.UnknownTypeError
	if !errors.As(err, &ute) || len(ute.Ambiguous) != 2 || len(vs)+len(ns) != 0 {
		t.Fatalf("got %v (%d, %d), want an ambiguous *UnknownTypeError", err, len(vs), len(ns))
	}
	// A typed item still goes by its type.
	if _, err := nr.Create(ctx, Note{Election: "x", Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := vr.QueryCollection(ForeignVoter{Election: "x"}).SkipUnknown().Collect(ctx, vr.AppendTo(&vs), nr.AppendTo(&ns)); err != nil || len(ns) != 1 || len(vs) != 0 {
		t.Fatalf("typed: %v %d %d", err, len(vs), len(ns))
	}
}

// Ballots as the Kotlin service writes them: rankings as a JSON string,
// when_cast as epoch seconds; and the library writes them the same way.
func TestForeignAttributeShapes(t *testing.T) {
	ctx := context.Background()
	s := foreignElectionsTable(t)
	rankings := `[{"candidate_name":"Kotlin","rank":1},{"candidate_name":"Python","rank":2}]`
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("ELECTION#lang"), "SK": sAV("BALLOT#alice"), "entity_type": sAV("BALLOT"),
		"election_name": sAV("lang"), "voter_name": sAV("alice"), "confirmation": sAV("uuid-1"),
		"when_cast": nAV("1736937000"), "rankings": sAV(rankings)})
	b, err := s.ballots.Get(ctx, ForeignBallot{Election: "lang", Voter: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !b.WhenCast.Equal(time.Unix(1736937000, 0)) || len(b.Rankings) != 2 || b.Rankings[1] != (ForeignRanking{"Python", 2}) {
		t.Fatalf("ballot %+v", b)
	}
	cast := time.Date(2025, 1, 15, 10, 30, 0, 999, time.UTC)
	w, err := s.ballots.Put(ctx, ForeignBallot{Election: "lang", Voter: "bob", Confirmation: "uuid-2", WhenCast: cast,
		Rankings: []ForeignRanking{{"Rust", 1}}})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, s.tbl, "ELECTION#lang", "BALLOT#bob")
	if n, ok := raw["when_cast"].(*types.AttributeValueMemberN); !ok || n.Value != "1736937000" {
		t.Errorf("when_cast stored as %#v", raw["when_cast"])
	}
	// The Kotlin service reads the rankings with Json.decodeFromString.
	var rs []map[string]any
	if err := json.Unmarshal([]byte(raw["rankings"].(*types.AttributeValueMemberS).Value), &rs); err != nil || rs[0]["candidate_name"] != "Rust" || rs[0]["rank"] != 1.0 {
		t.Errorf("rankings stored as %#v (%v)", raw["rankings"], err)
	}
	// Put returns the ballot as a Get reads it back.
	back, err := s.ballots.Get(ctx, ForeignBallot{Election: "lang", Voter: "bob"})
	if err != nil || !back.WhenCast.Equal(w.WhenCast) || w.WhenCast.Nanosecond() != 0 {
		t.Errorf("put returned %v, get %v (%v)", w.WhenCast, back.WhenCast, err)
	}
	// Both ballots in one query, one bad item fails the query with a
	// decode error naming the attribute.
	all, err := s.ballots.Query(ForeignBallot{Election: "lang"}).Collect(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("query: %d %v", len(all), err)
	}
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("ELECTION#lang"), "SK": sAV("BALLOT#carol"), "entity_type": sAV("BALLOT"),
		"rankings": sAV("[not json")})
	_, err = s.ballots.Query(ForeignBallot{Election: "lang"}).Collect(ctx)
	var ve *singletable.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("bad rankings: %v", err)
	}
}

// A table whose other services reject the entity type attribute.
func TestForeignOmitEntityType(t *testing.T) {
	ctx := context.Background()
	s := foreignElectionsTable(t, func(o *singletable.TableOptions) { o.OmitEntityType = true })
	if _, err := s.voters.Create(ctx, ForeignVoter{Election: "lang", Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, s.tbl, "ELECTION#lang", "VOTER#alice")
	if _, ok := raw["entity_type"]; ok || raw["voter_name"] == nil {
		t.Fatalf("stored %v", raw)
	}
	if _, err := s.voters.Create(ctx, ForeignVoter{Election: "lang", Name: "alice"}); !errors.Is(err, singletable.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.counts.Update(ElectionCounts{}).Add("UserCount", 2).Upsert().Run(ctx); err != nil {
		t.Fatal(err)
	}
	if raw := rawGet(t, s.tbl, "METADATA", "COUNTS"); raw["entity_type"] != nil || raw["user_count"].(*types.AttributeValueMemberN).Value != "2" {
		t.Fatalf("counts stored %v", raw)
	}
	vs, err := s.voters.Query(ForeignVoter{Election: "lang"}).Collect(ctx)
	if err != nil || len(vs) != 1 {
		t.Fatalf("query: %v %v", vs, err)
	}
	if _, err := s.voters.Delete(ctx, ForeignVoter{Election: "lang", Name: "alice"}, func(o *singletable.WriteOptions) { o.MustExist = true }); err != nil {
		t.Fatal(err)
	}
	// An entity that cannot recognise its items is refused at Bind.
	_, err = singletable.Bind(s.tbl, ForeignBallots)
	var ve *singletable.ValidationError
	if !errors.As(err, &ve) || ve.Field != "MatchKeys" {
		t.Fatalf("bind: %v", err)
	}
	if s.c.requests.Load() == 0 {
		t.Error("no requests counted")
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A usage log as another service writes it: the day and the action only
// in the sort key.
type UsageLog struct {
	User   string `dynamodbav:"username"`
	Day    string
	Action string
	Count  int `dynamodbav:"count"`
}

// A test case whose platform and problem id are only in its partition key.
type TestCase struct {
	Platform  string `dynamodbav:"platform"`
	ProblemID string `dynamodbav:"problem_id"`
	Case      int    `dynamodbav:"case_no"`
	Input     string `dynamodbav:"input"`
}

var (
	UsageLogs = singletable.MustDefine(singletable.Schema[UsageLog]{
		Type: "UsageLog", PK: "USER#{User}", SK: "USAGE#{Day}#{Action}", KeyOnly: []string{"Day", "Action"},
	})
	TestCases = singletable.MustDefine(singletable.Schema[TestCase]{
		Type: "TestCase", PK: "PROBLEM#{Platform}#{ProblemID}", SK: "CASE#{Case}",
	})
)

func TestForeignKeyOnlyFields(t *testing.T) {
	ctx := context.Background()
	var logs *singletable.Repo[UsageLog]
	var cases *singletable.Repo[TestCase]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		logs = singletable.MustBind(tbl, UsageLogs)
		cases = singletable.MustBind(tbl, TestCases)
	})
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("USER#john"), "SK": sAV("USAGE#2024-03-01#login"),
		"EntityType": sAV("UsageLog"), "username": sAV("john"), "count": nAV("3")})
	got, err := logs.Get(ctx, UsageLog{User: "john", Day: "2024-03-01", Action: "login"})
	if err != nil || got != (UsageLog{User: "john", Day: "2024-03-01", Action: "login", Count: 3}) {
		t.Fatalf("get: %+v %v", got, err)
	}
	// The library's writes leave the key-only fields out, as the other
	// service does.
	if _, err := logs.Create(ctx, UsageLog{User: "john", Day: "2024-03-02", Action: "search", Count: 1}); err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, tbl, "USER#john", "USAGE#2024-03-02#search")
	if _, ok := raw["Day"]; ok || raw["Action"] != nil || raw["username"] == nil {
		t.Fatalf("stored %v", raw)
	}
	// Queries, updates and projections fill them from the key.
	all, err := logs.Query(UsageLog{User: "john", Day: "2024-03"}).BeginsWith("Day", "2024-03").Collect(ctx)
	if err != nil || len(all) != 2 || all[1].Day != "2024-03-02" || all[1].Action != "search" {
		t.Fatalf("query: %+v %v", all, err)
	}
	u, err := logs.Update(UsageLog{User: "john", Day: "2024-03-01", Action: "login"}).Add("Count", 1).Run(ctx)
	if err != nil || u.Count != 4 || u.Action != "login" {
		t.Fatalf("update: %+v %v", u, err)
	}
	if raw := rawGet(t, tbl, "USER#john", "USAGE#2024-03-01#login"); raw["Day"] != nil {
		t.Errorf("update stored the key-only field: %v", raw)
	}
	p, err := logs.Get(ctx, UsageLog{User: "john", Day: "2024-03-01", Action: "login"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Count"} })
	if err != nil || p != (UsageLog{User: "john", Day: "2024-03-01", Action: "login", Count: 4}) {
		t.Fatalf("projection: %+v %v", p, err)
	}

	// Without KeyOnly, an item another service wrote without the key's
	// attributes decodes whole too; a stored attribute wins over the key.
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("PROBLEM#leetcode#two-sum"), "SK": sAV("CASE#1"),
		"EntityType": sAV("TestCase"), "case_no": nAV("1"), "input": sAV("[2,7,11,15]")})
	tc, err := cases.Query(TestCase{Platform: "leetcode", ProblemID: "two-sum"}).Collect(ctx)
	if err != nil || len(tc) != 1 || tc[0] != (TestCase{Platform: "leetcode", ProblemID: "two-sum", Case: 1, Input: "[2,7,11,15]"}) {
		t.Fatalf("test cases: %+v %v", tc, err)
	}
}

func TestForeignKeyOnlyRefused(t *testing.T) {
	type L struct {
		User, Day string
		Version   int64
	}
	cases := map[string]singletable.Schema[L]{
		"unknown field": {Type: "L", PK: "U#{User}", SK: "D#{Day}", KeyOnly: []string{"Nope"}},
		"not in a key":  {Type: "L", PK: "U#{User}", SK: "D", KeyOnly: []string{"Day"}},
		"managed":       {Type: "L", PK: "U#{User}", SK: "D#{Version}", Version: "Version", KeyOnly: []string{"Version"}},
	}
	for name, s := range cases {
		_, err := singletable.Define(s)
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want a *ValidationError", name, err)
		}
	}
}

// Times as Python and JavaScript services write them, and in the shapes
// the tag options give.
func TestForeignTimes(t *testing.T) {
	ctx := context.Background()
	type Goal struct {
		User      string     `dynamodbav:"user_id"`
		ID        string     `dynamodbav:"goal_id"`
		CreatedAt time.Time  `dynamodbav:"created_at"`
		DueDate   time.Time  `dynamodbav:"due_date,date"`
		DoneAt    *time.Time `dynamodbav:"done_at,rfc3339milli,omitempty"`
		SeenAt    time.Time  `dynamodbav:"seen_at,unixmilli"`
	}
	ny := time.FixedZone("EST", -5*3600)
	goals := singletable.MustDefine(singletable.Schema[Goal]{Type: "Goal", PK: "USER#{User}", SK: "GOAL#{ID}", Location: ny})
	var r *singletable.Repo[Goal]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { r = singletable.MustBind(tbl, goals) })
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("USER#123"), "SK": sAV("GOAL#456"), "EntityType": sAV("Goal"),
		"user_id": sAV("123"), "goal_id": sAV("456"),
		"created_at": sAV("2024-01-07T10:00:00.250000"), // Python datetime.utcnow().isoformat() in a New York service
		"due_date":   sAV("2024-03-01"),
		"done_at":    sAV("2024-02-01T12:00:00.000Z"), // JavaScript toISOString()
		"seen_at":    nAV("1704621600000")})
	g, err := r.Get(ctx, Goal{User: "123", ID: "456"})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2024, 1, 7, 10, 0, 0, 250000000, ny); !g.CreatedAt.Equal(want) {
		t.Errorf("created_at %v, want %v (read in the schema's location)", g.CreatedAt, want)
	}
	if want := time.Date(2024, 3, 1, 0, 0, 0, 0, ny); !g.DueDate.Equal(want) {
		t.Errorf("due_date %v, want %v", g.DueDate, want)
	}
	if g.DoneAt == nil || !g.DoneAt.Equal(time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC)) || !g.SeenAt.Equal(time.UnixMilli(1704621600000)) {
		t.Errorf("done_at %v seen_at %v", g.DoneAt, g.SeenAt)
	}
	// Written back in the same shapes; Put returns what Get reads.
	g.ID = "457"
	done := time.Date(2024, 2, 1, 12, 0, 0, 123456789, time.UTC)
	g.DoneAt = &done
	w, err := r.Put(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, tbl, "USER#123", "GOAL#457")
	for attr, want := range map[string]types.AttributeValue{
		"due_date": sAV("2024-03-01"), "done_at": sAV("2024-02-01T12:00:00.123Z"), "seen_at": nAV("1704621600000"),
	} {
		if !avEq(raw[attr], want) {
			t.Errorf("%s stored as %#v, want %#v", attr, raw[attr], want)
		}
	}
	back, err := r.Get(ctx, Goal{User: "123", ID: "457"})
	if err != nil || !back.DueDate.Equal(w.DueDate) || !back.DoneAt.Equal(*w.DoneAt) || !back.SeenAt.Equal(w.SeenAt) {
		t.Errorf("put returned %+v, get %+v (%v)", w, back, err)
	}
	// One unreadable time fails the query with a decode error.
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("USER#123"), "SK": sAV("GOAL#458"), "EntityType": sAV("Goal"), "created_at": sAV("yesterday")})
	if _, err := r.Query(Goal{User: "123"}).Collect(ctx); err == nil {
		t.Error("query with an unreadable time: no error")
	}
}

func avEq(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && x.Value == y.Value
	}
	return false
}

// ForeignShelfBook holds a map of counts that another service stores with
// a value of another type.
type ForeignShelfBook struct {
	Shelf string         `dynamodbav:"shelf"`
	ISBN  string         `dynamodbav:"isbn"`
	Hist  []string       `dynamodbav:"hist"`
	Props map[string]int `dynamodbav:"props"`
}

var ForeignShelfBooks = singletable.MustDefine(singletable.Schema[ForeignShelfBook]{
	Type: "BOOK", PK: "SHELF#{Shelf:raw}", SK: "BOOK#{ISBN:raw}", MatchKeys: true,
})

// An Update or Delete applied to an item that does not decode reports an
// error that is not a *ValidationError (which says nothing was sent): the
// caller must not send an Append again. A read of it stays a
// *ValidationError.
func TestForeignUndecodableAfterWrite(t *testing.T) {
	ctx := context.Background()
	var books *singletable.Repo[ForeignShelfBook]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { books = singletable.MustBind(tbl, ForeignShelfBooks) },
		func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" })
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("SHELF#s"), "SK": sAV("BOOK#1"),
		"props": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": sAV("not a number")}}})
	key := ForeignShelfBook{Shelf: "s", ISBN: "1"}
	var ve *singletable.ValidationError
	if _, err := books.Get(ctx, key); !errors.As(err, &ve) {
		t.Errorf("get: %v, want a *ValidationError", err)
	}
	_, err := books.Update(key).Append("Hist", "h").Run(ctx)
	if err == nil || errors.As(err, &ve) {
		t.Errorf("update: %v, want an error that is not a *ValidationError", err)
	}
	if l, ok := rawGet(t, tbl, "SHELF#s", "BOOK#1")["hist"].(*types.AttributeValueMemberL); !ok || len(l.Value) != 1 {
		t.Errorf("the update was applied once: hist %v", l)
	}
	_, err = books.Delete(ctx, key)
	if err == nil || errors.As(err, &ve) {
		t.Errorf("delete: %v, want an error that is not a *ValidationError", err)
	}
	if raw := rawGet(t, tbl, "SHELF#s", "BOOK#1"); raw != nil {
		t.Errorf("the delete was applied: %v", raw)
	}
}

// TestForeignCountSegmentsManyPages: counting the items of an entity that
// matches keys reads them (on the direct wire path, into one sink per
// segment, reused page after page); with parallel segments of many pages
// each, every item is counted once (under -race: no page is counted while
// its segment reads the next).
func TestForeignCountSegmentsManyPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := foreignElectionsTable(t)
	var ops []singletable.WriteOp
	for i := range 60 {
		ops = append(ops, s.voters.PutOp(ForeignVoter{Election: fmt.Sprint("e", i%4), Name: fmt.Sprint("v", i)}),
			s.candidates.PutOp(ForeignCandidate{Election: fmt.Sprint("e", i%4), Name: fmt.Sprint("c", i)}))
	}
	if err := singletable.BatchWrite(ctx, ops); err != nil {
		t.Fatal(err)
	}
	for _, segments := range []int{1, 3} {
		n, err := s.voters.Scan().Segments(segments).PageSize(7).Count(ctx)
		if err != nil || n != 60 {
			t.Fatalf("%d segments: count %d %v, want 60", segments, n, err)
		}
	}
}
