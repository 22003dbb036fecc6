package elections_test

// The elections service's design is run by a Kotlin service too: these
// tests write items exactly as its code does (the design's PutItem calls,
// with its key strings, its JSON rankings, its epoch-second timestamps and
// its METADATA, SYNC and event items without entity_type) and read,
// query, update and extend them through the store; and they find the
// store's own writes with the Kotlin service's key expressions.

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/examples/elections"
	"github.com/singletable-go/singletable/migrate"
)

func TestSeedKeyStrings(t *testing.T) {
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	render := func(pk, sk string, err error) [2]string {
		require.NoError(t, err)
		return [2]string{pk, sk}
	}
	for _, c := range []struct {
		name string
		got  [2]string
		want [2]string
	}{
		{"user", render(elections.Users.RenderKeys(elections.User{Name: "alice"})), [2]string{"USER#alice", "METADATA"}},
		{"user GSI-1", render(elections.Users.RenderIndexKeys(elections.EmailIndex, elections.User{Name: "alice", Email: "alice@example.com"})), [2]string{"alice@example.com", "USER#alice"}},
		{"election", render(elections.Elections.RenderKeys(elections.Election{Name: "Favorite Language"})), [2]string{"ELECTION#Favorite Language", "METADATA"}},
		{"candidate", render(elections.Candidates.RenderKeys(elections.Candidate{ElectionName: "Favorite Language", CandidateName: "Kotlin"})), [2]string{"ELECTION#Favorite Language", "CANDIDATE#Kotlin"}},
		{"voter", render(elections.Voters.RenderKeys(elections.Voter{ElectionName: "Favorite Language", VoterName: "alice"})), [2]string{"ELECTION#Favorite Language", "VOTER#alice"}},
		{"ballot", render(elections.Ballots.RenderKeys(elections.Ballot{ElectionName: "Favorite Language", VoterName: "alice"})), [2]string{"ELECTION#Favorite Language", "BALLOT#alice"}},
		{"counts", render(elections.CountsItem.RenderKeys(elections.Counts{})), [2]string{"METADATA", "COUNTS"}},
		{"sync", render(elections.SyncItem.RenderKeys(elections.SyncState{})), [2]string{"METADATA", "SYNC"}},
		{"event", render(elections.Events.RenderKeys(elections.Event{EventID: 42, WhenOccurred: at})), [2]string{"EVENTS", "00000042#2025-01-15T10:30:00Z"}},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
	ev, err := elections.Events.ParseKeys("EVENTS", "00000042#2025-01-15T10:30:00Z")
	require.NoError(t, err)
	assert.Equal(t, elections.Event{EventID: 42, WhenOccurred: at}, ev)

	// What the formats cannot write is refused before the network.
	var ke *singletable.KeyError
	_, _, err = elections.Events.RenderKeys(elections.Event{EventID: 100_000_000, WhenOccurred: at})
	assert.ErrorAs(t, err, &ke, "wider than 8 digits")
	// WhenOccurred is stored as an rfc3339 attribute too (tag option), so
	// the field's value is the second it stores: the key agrees with it.
	_, sk, err := elections.Events.RenderKeys(elections.Event{EventID: 1, WhenOccurred: at.Add(time.Millisecond)})
	require.NoError(t, err)
	assert.Equal(t, "00000001#2025-01-15T10:30:00Z", sk)
}

func sv(s string) types.AttributeValue   { return &types.AttributeValueMemberS{Value: s} }
func nv(n string) types.AttributeValue   { return &types.AttributeValueMemberN{Value: n} }
func bv(b bool) types.AttributeValue     { return &types.AttributeValueMemberBOOL{Value: b} }
func sOf(av types.AttributeValue) string { s, _ := av.(*types.AttributeValueMemberS); return s.Value }

// kotlinTables creates the two tables with nothing in them, as the Kotlin
// service found them (for ByScan, the Kotlin service's own tables; for
// ByIndex, the store's, with GSI-2), and returns the store opened on
// them, with its raw client.
func kotlinTables(t *testing.T, l elections.Listing) (*elections.Store, singletable.Client, string, string) {
	t.Helper()
	client, data, log := createTables(t, l)
	s, err := elections.Open(context.Background(), client, data, log)
	require.NoError(t, err)
	require.Equal(t, l, s.Listing())
	s.Now = func() time.Time { return time.Date(2025, 1, 15, 11, 0, 0, 500_000_000, time.UTC) }
	s.NewConfirmation = func() string { return "conf-go" }
	return s, client, data, log
}

func rawPut(t *testing.T, c singletable.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	require.NoError(t, err)
}

// writeAsKotlin writes the design's items as the Kotlin service's code
// does: typed entities with entity_type, the COUNTS and SYNC items and
// the events without it.
func writeAsKotlin(t *testing.T, c singletable.Client, data, log string) {
	for _, u := range []string{"alice", "bob"} {
		rawPut(t, c, data, map[string]types.AttributeValue{
			"PK": sv("USER#" + u), "SK": sv("METADATA"), "entity_type": sv("USER"),
			"name": sv(u), "email": sv(u + "@example.com"), "salt": sv("s"), "hash": sv("h"), "role": sv("OWNER"),
			"GSI1PK": sv(u + "@example.com"), "GSI1SK": sv("USER#" + u)})
	}
	rawPut(t, c, data, map[string]types.AttributeValue{
		"PK": sv("ELECTION#Favorite Language"), "SK": sv("METADATA"), "entity_type": sv("ELECTION"),
		"name": sv("Favorite Language"), "owner_name": sv("alice"), "secret_ballot": bv(false),
		"allow_edit": bv(true), "allow_vote": bv(true)})
	for _, cand := range []string{"Java", "Kotlin", "Python", "Rust"} {
		rawPut(t, c, data, map[string]types.AttributeValue{
			"PK": sv("ELECTION#Favorite Language"), "SK": sv("CANDIDATE#" + cand), "entity_type": sv("CANDIDATE"),
			"election_name": sv("Favorite Language"), "candidate_name": sv(cand)})
	}
	for _, v := range []string{"alice", "bob"} {
		rawPut(t, c, data, map[string]types.AttributeValue{
			"PK": sv("ELECTION#Favorite Language"), "SK": sv("VOTER#" + v), "entity_type": sv("VOTER"),
			"election_name": sv("Favorite Language"), "voter_name": sv(v)})
	}
	// The design's "Cast Ballot" PutItem.
	rawPut(t, c, data, map[string]types.AttributeValue{
		"PK": sv("ELECTION#Favorite Language"), "SK": sv("BALLOT#alice"), "entity_type": sv("BALLOT"),
		"election_name": sv("Favorite Language"), "voter_name": sv("alice"), "confirmation": sv("uuid-1"),
		"when_cast": nv("1736937000"),
		"rankings":  sv(`[{"candidate_name":"Kotlin","rank":1},{"candidate_name":"Python","rank":2},{"candidate_name":"Rust","rank":3},{"candidate_name":"Java","rank":4}]`)})
	rawPut(t, c, data, map[string]types.AttributeValue{
		"PK": sv("METADATA"), "SK": sv("COUNTS"), "user_count": nv("2"), "election_count": nv("1"), "last_updated": nv("1736937000")})
	rawPut(t, c, data, map[string]types.AttributeValue{"PK": sv("METADATA"), "SK": sv("SYNC"), "last_event_id": nv("2")})
	for i, typ := range []string{"UserAdded", "ElectionAdded", "BallotCast"} {
		when := time.Date(2025, 1, 15, 10, 30+i, 0, 0, time.UTC).Format(time.RFC3339)
		rawPut(t, c, log, map[string]types.AttributeValue{
			"PK": sv("EVENTS"), "SK": sv("0000000" + string(rune('1'+i)) + "#" + when),
			"event_id": nv(string(rune('1' + i))), "actor": sv("alice"), "when_occurred": sv(when),
			"event_type": sv(typ), "event_data": sv(`{"n":` + string(rune('1'+i)) + `}`)})
	}
}

func TestSeedKotlinItemsThroughTheStore(t *testing.T) {
	for _, l := range []elections.Listing{elections.ByIndex, elections.ByScan} {
		t.Run(l.String(), func(t *testing.T) { t.Parallel(); testSeedKotlinItemsThroughTheStore(t, l) })
	}
}

func testSeedKotlinItemsThroughTheStore(t *testing.T, l elections.Listing) {
	ctx := context.Background()
	s, c, data, log := kotlinTables(t, l)
	writeAsKotlin(t, c, data, log)
	require.NoError(t, s.Init(ctx)) // adopts the log: the next event is 4

	u, err := s.FindUserByName(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, "alice@example.com", u.Email)
	u, err = s.FindUserByEmail(ctx, "bob@example.com")
	require.NoError(t, err)
	assert.Equal(t, "bob", u.Name)
	e, err := s.FindElection(ctx, "Favorite Language")
	require.NoError(t, err)
	assert.Equal(t, "alice", e.OwnerName)
	cands, err := s.ListCandidates(ctx, "Favorite Language")
	require.NoError(t, err)
	assert.Equal(t, []string{"Java", "Kotlin", "Python", "Rust"}, cands)
	rankings, err := s.ListRankings(ctx, "Favorite Language")
	require.NoError(t, err)
	require.Len(t, rankings, 1)
	assert.Equal(t, elections.Ranking{CandidateName: "Kotlin", Rank: 1}, rankings[0][0])
	b, err := s.Ballots.Get(ctx, elections.Ballot{ElectionName: "Favorite Language", VoterName: "alice"})
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1736937000, 0).UTC(), b.WhenCast.UTC())
	counts, err := s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, counts.UserCount)
	synced, err := s.LastSyncedEventID(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), synced)

	// Every sort operator at the boundaries, on the raw candidate names
	// and on the event log's zero-padded numbers and second-precision
	// times.
	names := func(q *singletable.Query[elections.Candidate]) []string {
		cs, err := q.Collect(ctx)
		require.NoError(t, err)
		var out []string
		for _, c := range cs {
			out = append(out, c.CandidateName)
		}
		return out
	}
	kotlin := elections.Candidate{ElectionName: "Favorite Language", CandidateName: "Kotlin"}
	cq := s.Candidates.Query(kotlin)
	assert.Equal(t, []string{"Kotlin"}, names(cq.Where("CandidateName", singletable.Eq, kotlin.CandidateName)))
	assert.Equal(t, []string{"Python", "Rust"}, names(cq.Where("CandidateName", singletable.Gt, kotlin.CandidateName)))
	assert.Equal(t, []string{"Kotlin", "Python", "Rust"}, names(cq.Where("CandidateName", singletable.Ge, kotlin.CandidateName)))
	assert.Equal(t, []string{"Java"}, names(cq.Where("CandidateName", singletable.Lt, kotlin.CandidateName)))
	assert.Equal(t, []string{"Java", "Kotlin"}, names(cq.Where("CandidateName", singletable.Le, kotlin.CandidateName)))
	assert.Equal(t, []string{"Kotlin", "Python"}, names(cq.Between("CandidateName", kotlin.CandidateName, "Python")))
	assert.Equal(t, []string{"Python"}, names(cq.BeginsWith("CandidateName", "Py")))

	ids := func(q *singletable.Query[elections.Event]) []int64 {
		es, err := q.Collect(ctx)
		require.NoError(t, err)
		var out []int64
		for _, e := range es {
			out = append(out, e.EventID)
		}
		return out
	}
	two := elections.Event{EventID: 2, WhenOccurred: time.Date(2025, 1, 15, 10, 31, 0, 0, time.UTC)}
	eq := s.Events.Query(two)
	assert.Equal(t, []int64{2}, ids(eq.Where("EventID", singletable.Eq, two.EventID)))
	assert.Equal(t, []int64{3}, ids(eq.Where("EventID", singletable.Gt, two.EventID)))
	assert.Equal(t, []int64{2, 3}, ids(eq.Where("EventID", singletable.Ge, two.EventID)))
	assert.Equal(t, []int64{1}, ids(eq.Where("EventID", singletable.Lt, two.EventID)))
	assert.Equal(t, []int64{1, 2}, ids(eq.Where("EventID", singletable.Le, two.EventID)))
	assert.Equal(t, []int64{2, 3}, ids(eq.Between("EventID", two.EventID, 3)))
	assert.Equal(t, []int64{2}, ids(eq.Where("WhenOccurred", singletable.Ge, two.WhenOccurred)), "same second")
	assert.Equal(t, []int64{2}, ids(eq.Where("WhenOccurred", singletable.Le, two.WhenOccurred)), "same second")
	late := two
	late.WhenOccurred = late.WhenOccurred.Add(time.Second)
	assert.Empty(t, ids(s.Events.Query(late).Where("WhenOccurred", singletable.Ge, late.WhenOccurred)), "one second later")
	assert.Equal(t, []int64{2}, ids(s.Events.Query(late).Where("WhenOccurred", singletable.Lt, late.WhenOccurred)))
	events, err := s.EventsSince(ctx, 1)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, "ElectionAdded", events[0].EventType)
	assert.Equal(t, `{"n":2}`, events[0].EventData)

	// Commands on the Kotlin service's items: the untyped COUNTS item is
	// updated in place, the event numbers continue at 4, the untyped SYNC
	// item moves.
	require.NoError(t, s.AddUser(ctx, "system", elections.User{Name: "carol smith", Email: "carol@example.com", Salt: "s", Hash: "h", Role: "USER"}))
	require.NoError(t, s.AddVoters(ctx, "alice", "Favorite Language", "carol smith"))
	conf, err := s.CastBallot(ctx, "carol smith", "Favorite Language", []elections.Ranking{{CandidateName: "Rust", Rank: 1}, {CandidateName: "Kotlin", Rank: 2}})
	require.NoError(t, err)
	require.NoError(t, s.SetLastSyncedEventID(ctx, 2, 6))
	counts, err = s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, counts.UserCount)
	assert.Equal(t, 1, counts.ElectionCount)

	// The Kotlin service's own reads find all of it.
	get := func(table, pk, sk string) map[string]types.AttributeValue {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": sv(pk), "SK": sv(sk)}})
		require.NoError(t, err)
		require.NotNil(t, out.Item, "%s / %s", pk, sk)
		return out.Item
	}
	assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, get(data, "METADATA", "COUNTS")["user_count"])
	assert.Equal(t, &types.AttributeValueMemberN{Value: "6"}, get(data, "METADATA", "SYNC")["last_event_id"])
	user := get(data, "USER#carol smith", "METADATA")
	assert.Equal(t, "carol@example.com", sOf(user["email"]))
	assert.Equal(t, "carol@example.com", sOf(user["GSI1PK"]))
	assert.Equal(t, "USER#carol smith", sOf(user["GSI1SK"]))
	byEmail, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(data), IndexName: aws.String("GSI-1"),
		KeyConditionExpression:    aws.String("GSI1PK = :email"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":email": sv("carol@example.com")}})
	require.NoError(t, err)
	require.Len(t, byEmail.Items, 1)

	// The design's "Tally Election" query and its JSON decoding.
	ballots, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(data), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv("ELECTION#Favorite Language"), ":sk": sv("BALLOT#")}})
	require.NoError(t, err)
	require.Len(t, ballots.Items, 2)
	carol := ballots.Items[1]
	assert.Equal(t, "BALLOT#carol smith", sOf(carol["SK"]))
	assert.Equal(t, conf, sOf(carol["confirmation"]))
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1736938800"}, carol["when_cast"], "epoch seconds")
	var rs []elections.Ranking
	require.NoError(t, json.Unmarshal([]byte(sOf(carol["rankings"])), &rs))
	assert.Equal(t, []elections.Ranking{{CandidateName: "Rust", Rank: 1}, {CandidateName: "Kotlin", Rank: 2}}, rs)
	voters, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(data), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv("ELECTION#Favorite Language"), ":sk": sv("VOTER#")}})
	require.NoError(t, err)
	var vs []string
	for _, it := range voters.Items {
		vs = append(vs, sOf(it["voter_name"]))
	}
	assert.Equal(t, []string{"alice", "bob", "carol smith"}, vs)

	// "Read events since last sync": Query(PK=EVENTS, SK >= {lastSeq}).
	since, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(log), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND SK >= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("EVENTS"), ":seq": sv("00000004")}})
	require.NoError(t, err)
	var sks []string
	for _, it := range since.Items {
		sks = append(sks, sOf(it["SK"]))
	}
	assert.Equal(t, []string{"00000004#2025-01-15T11:00:00Z", "00000005#2025-01-15T11:00:00Z", "00000006#2025-01-15T11:00:00Z"}, sks)
	assert.Equal(t, &types.AttributeValueMemberN{Value: "4"}, since.Items[0]["event_id"])
	assert.Equal(t, "2025-01-15T11:00:00Z", sOf(since.Items[0]["when_occurred"]))
	assert.Equal(t, "UserAdded", sOf(since.Items[0]["event_type"]))
	all, err := s.EventsSince(ctx, 0)
	require.NoError(t, err)
	var got []int64
	for _, e := range all {
		got = append(got, e.EventID)
	}
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, got, "one log, no gap, no duplicate")

	// Init again (a restart) leaves the sequence where it is.
	require.NoError(t, s.Init(ctx))
	require.NoError(t, s.AddCandidates(ctx, "alice", "Favorite Language", "Go"))
	all, err = s.EventsSince(ctx, 6)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, int64(7), all[0].EventID)
	cands, err = s.ListCandidates(ctx, "Favorite Language")
	require.NoError(t, err)
	assert.True(t, slices.Contains(cands, "Go"))

	// The store writes its items as the Kotlin service does, attribute
	// for attribute: on the Kotlin service's table exactly its shape, on
	// the store's own the listing keys of GSI-2 besides.
	require.NoError(t, s.AddElection(ctx, "alice", "Best Editor"))
	wantUser := map[string]types.AttributeValue{
		"PK": sv("USER#carol smith"), "SK": sv("METADATA"), "entity_type": sv("USER"),
		"name": sv("carol smith"), "email": sv("carol@example.com"), "salt": sv("s"), "hash": sv("h"), "role": sv("USER"),
		"GSI1PK": sv("carol@example.com"), "GSI1SK": sv("USER#carol smith")}
	wantElection := map[string]types.AttributeValue{
		"PK": sv("ELECTION#Best Editor"), "SK": sv("METADATA"), "entity_type": sv("ELECTION"),
		"name": sv("Best Editor"), "owner_name": sv("alice"), "secret_ballot": bv(false),
		"allow_edit": bv(true), "allow_vote": bv(false)}
	if l == elections.ByIndex {
		wantUser["GSI2PK"], wantUser["GSI2SK"] = sv("USERS"), sv("USER#carol smith")
		wantElection["GSI2PK"], wantElection["GSI2SK"] = sv("ELECTIONS"), sv("ELECTION#Best Editor")
	}
	assert.Equal(t, wantUser, get(data, "USER#carol smith", "METADATA"))
	assert.Equal(t, wantElection, get(data, "ELECTION#Best Editor", "METADATA"))
	assert.Equal(t, map[string]types.AttributeValue{
		"PK": sv("ELECTION#Favorite Language"), "SK": sv("BALLOT#carol smith"), "entity_type": sv("BALLOT"),
		"election_name": sv("Favorite Language"), "voter_name": sv("carol smith"), "confirmation": sv("conf-go"),
		"when_cast": nv("1736938800"),
		"rankings":  sv(`[{"candidate_name":"Rust","rank":1},{"candidate_name":"Kotlin","rank":2}]`)},
		get(data, "ELECTION#Favorite Language", "BALLOT#carol smith"))

	// The design's "list all users" and "list all elections" (PK
	// begins_with USER# or ELECTION#, SK = METADATA), run as the Scan they
	// are, find the store's users and elections with the Kotlin service's.
	assert.Equal(t, []string{"alice", "bob", "carol smith"}, kotlinList(t, c, data, "USER#"))
	assert.Equal(t, []string{"Best Editor", "Favorite Language"}, kotlinList(t, c, data, "ELECTION#"))
	// The store's listings: on the Kotlin service's table the Scan finds
	// every user and election, whoever wrote it; GSI-2 holds only what the
	// store wrote until a backfill adds the others (TestSeedAdoptUsers).
	users, err := s.ListUsers(ctx)
	require.NoError(t, err)
	es, err := s.ListElections(ctx)
	require.NoError(t, err)
	if l == elections.ByScan {
		assert.Equal(t, []string{"alice", "bob", "carol smith"}, userNames(users))
		assert.Equal(t, []string{"Best Editor", "Favorite Language"}, electionNames(es))
		assert.Equal(t, elections.User{Name: "alice", Email: "alice@example.com", Salt: "s", Hash: "h", Role: "OWNER"}, users[0])
	} else {
		assert.Equal(t, []string{"carol smith"}, userNames(users))
		assert.Equal(t, []string{"Best Editor"}, electionNames(es))
	}
}

// kotlinList is the design's listing query as the Kotlin service can run
// it: a Scan filtered on PK begins_with prefix and SK = METADATA, every
// page; it returns the items' names in key order.
func kotlinList(t *testing.T, c singletable.Client, table, prefix string) []string {
	t.Helper()
	pages := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String(table),
		FilterExpression:          aws.String("begins_with(PK, :p) AND SK = :m"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": sv(prefix), ":m": sv("METADATA")}})
	var names []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			names = append(names, sOf(it["name"]))
		}
	}
	slices.Sort(names)
	return names
}

// The Kotlin service's users get guards and listing keys by migrations:
// afterwards their emails are unique for the store, and they are listed.
// The table starts as the Kotlin service's, listed by Scan; GSI-2 is added
// to it (UpdateTable), and once it is ACTIVE a store opened on the table
// lists from it, which holds the Kotlin service's users only after the
// backfill.
func TestSeedAdoptUsers(t *testing.T) {
	ctx := context.Background()
	scanning, c, data, log := kotlinTables(t, elections.ByScan)
	writeAsKotlin(t, c, data, log)
	require.NoError(t, scanning.Init(ctx))
	users, err := scanning.ListUsers(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob"}, userNames(users), "listed by Scan")

	addListIndex(t, c.(*dynamodb.Client), data)
	s, err := elections.Open(ctx, c, data, log)
	require.NoError(t, err)
	require.Equal(t, elections.ByIndex, s.Listing())

	// Before: the store knows nothing of alice's email or listing.
	users, err = s.ListUsers(ctx)
	require.NoError(t, err)
	assert.Empty(t, users, "the Kotlin service writes no GSI2PK")

	m, err := migrate.New(s.Data,
		migrate.UniqueGuards("users-email-guards", s.Users),
		migrate.Backfill("users-listing", s.Users))
	require.NoError(t, err)
	_, err = m.Run(ctx, "users-email-guards")
	require.NoError(t, err)
	_, err = m.Run(ctx, "users-listing")
	require.NoError(t, err)

	users, err = s.ListUsers(ctx)
	require.NoError(t, err)
	assert.Len(t, users, 2)
	err = s.AddUser(ctx, "system", elections.User{Name: "mallory", Email: "alice@example.com", Salt: "s", Hash: "h", Role: "USER"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "alice's email is guarded now")
}

// addListIndex adds GSI-2 to a vote_data table, as a migration from the
// Kotlin service's table to the store's listing index would, and waits
// until it is ACTIVE.
func addListIndex(t *testing.T, c *dynamodb.Client, table string) {
	t.Helper()
	_, err := c.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("GSI2PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI2SK"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: aws.String(elections.ListIndex),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("GSI2PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("GSI2SK"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}}})
	require.NoError(t, err)
	waitIndexActive(t, c, table, elections.ListIndex)
}
