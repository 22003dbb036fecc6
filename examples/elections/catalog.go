package elections

import (
	"fmt"

	"github.com/singletable-go/singletable/catalog"
)

// AccessPatterns lists the elections service's access patterns as the
// store runs them, for the two tables' catalogs in docs/catalog.md (a
// [ByScan] store's, listing by Scan, in docs/catalog-kotlin-table.md).
func (s *Store) AccessPatterns() (data, log []catalog.Pattern) {
	cmd := func(name, desc, entity, cond string) catalog.Pattern {
		return catalog.Pattern{Name: name, Description: desc, Entity: entity, Operation: "TransactWriteItems",
			Condition: cond + "; Update SEQUENCE/EVENTS if last_event_id unchanged; Put EVENTS/{EventID:%08d}#{WhenOccurred:rfc3339} in vote_event_log"}
	}
	data = []catalog.Pattern{
		catalog.Item("U1", "Lookup user by name", catalog.OpGet, s.Users),
		catalog.Query("U2", "Lookup user by email", s.byEmail("")),
		s.listPattern("U3", "List all users (sparse listing index; the design's begins_with on PK is not a valid Query)", "List all users", s.Users, s.allUsers()),
		catalog.Item("U4", "Check user name exists (projection)", catalog.OpGet, s.Users),
		cmd("U5", "Add user, count it", "USER", "Put USER#{Name:raw}/METADATA if absent; Update METADATA/COUNTS ADD user_count 1"),
		catalog.Item("E1", "Lookup election by name", catalog.OpGet, s.Elections),
		s.listPattern("E2", "List all elections", "List all elections", s.Elections, s.allElections()),
		cmd("E3", "Add election, count it", "ELECTION", "ConditionCheck USER#{OwnerName:raw}/METADATA; Put ELECTION#{Name:raw}/METADATA if absent; Update METADATA/COUNTS ADD election_count 1"),
		cmd("E4", "Change an election (owner only: secret ballot, window, launch, finalize)", "ELECTION", "Update ELECTION#{Name:raw}/METADATA if owner_name = actor"),
		catalog.Collection("E5", "Whole election: metadata, candidates, voters, ballots (item collection)", s.Elections),
		catalog.Query("C1", "List candidates for election", s.candidates("")),
		catalog.Item("C2", "Check candidate exists", catalog.OpGet, s.Candidates),
		cmd("C3", "Add or remove candidates", "CANDIDATE", "ConditionCheck ELECTION#{ElectionName:raw}/METADATA allow_edit and owner; Put or Delete ELECTION#{ElectionName:raw}/CANDIDATE#{CandidateName:raw}"),
		catalog.Query("V1", "List voters for election", s.voters("")),
		catalog.Item("V2", "Check eligibility", catalog.OpGet, s.Voters),
		cmd("V3", "Add or remove voters", "VOTER", "ConditionCheck ELECTION#{ElectionName:raw}/METADATA allow_edit and owner; Put or Delete ELECTION#{ElectionName:raw}/VOTER#{VoterName:raw}"),
		catalog.Item("B1", "Get ballot by voter and election", catalog.OpGet, s.Ballots),
		catalog.Query("B2", "List all ballots (and their embedded rankings) for election", s.ballots("")),
		cmd("B3", "Cast ballot, overwriting a previous one", "BALLOT", "ConditionCheck ELECTION#{ElectionName:raw}/VOTER#{VoterName:raw}; ConditionCheck ELECTION#{ElectionName:raw}/METADATA allow_vote; Put ELECTION#{ElectionName:raw}/BALLOT#{VoterName:raw}"),
		catalog.Item("M1", "Get counts", catalog.OpGet, s.CountsRepo),
		catalog.Item("S1", "Get sync state", catalog.OpGet, s.SyncRepo),
		catalog.Item("S2", "Move sync state (conditional on the value read)", catalog.OpUpdate, s.SyncRepo),
	}
	log = []catalog.Pattern{
		catalog.Item("L1", "Read the event sequence (consistent)", catalog.OpGet, s.Sequence),
		catalog.Query("L2", "Read events since last sync", s.eventsAfter(0)),
		catalog.Count("L3", "Count events", s.Events.Query(Event{})),
		{Name: "L4", Description: "Append an event, moving the sequence (in every command's transaction)", Entity: "EVENT", Operation: "TransactWriteItems",
			Condition: "Update SEQUENCE/EVENTS if last_event_id unchanged; Put EVENTS/{EventID:%08d}#{WhenOccurred:rfc3339} if absent"},
	}
	return data, log
}

// Workload is an illustrative load of the elections service, for the cost
// reports of both tables in docs/cost.md: the design gives no traffic
// figures, so these are assumptions, chosen to show where the design's
// capacity goes, not measurements. They describe a voting day of one large
// election:
//
//   - 100 ballots cast a second, all into the one election, so its
//     partition ELECTION#<name> takes them all. Casting reads the
//     election (E1) and its candidates (C1), then runs one transaction
//     (B3): two condition checks (the voter, the election) and the ballot
//     put in vote_data, the sequence update and the event put in
//     vote_event_log (L4). Every command reads the sequence first,
//     strongly consistent (L1).
//   - 10 more election lookups, candidate lists and eligibility checks a
//     second from people browsing; 20 sign-ins by name and 5 by email; 20
//     ballot look-ups; the published rankings, all 10,000 ballots, read
//     once a minute; the counts read once a second and the event log
//     synced once a second, 100 events a read (both strongly consistent,
//     as the store reads them).
//   - Slow writes: one new user a second (the user, its email guard and
//     the counts: one item and two others), an election every ten
//     seconds (the owner check, the election, the counts).
//   - Item sizes: users and ballots 0.5 KB, elections 0.3 KB, candidates
//     and voters 0.2 KB, events 0.5 KB; everything else under 1 KB.
//   - At rest: 100,000 users, 1,000 elections, 10,000 candidates, a
//     million voters and a million ballots in vote_data; five million
//     events in vote_event_log.
//
// The figures checked by hand in cost_test.go: casting takes (1 ballot +
// 2 checks) × 1 write unit × 2 (a transaction) = 6 write units in
// vote_data, 600 a second, and 4 in vote_event_log; one election's
// partition therefore takes at most 1,000 / 6 ≈ 166 ballots a second, and
// the whole service at most 500 commands a second (each writes the
// sequence item twice over, transactionally).
func Workload() (data, log catalog.Workload) {
	const (
		ballots   = 100.0
		users     = 1.0
		elections = 0.1
		commands  = ballots + users + elections
	)
	data = catalog.Workload{
		Loads: []catalog.Load{
			{Pattern: "U1", PerSecond: 20, ItemKB: 0.5},
			{Pattern: "U2", PerSecond: 5, ItemKB: 0.5},
			{Pattern: "U5", PerSecond: users, ItemKB: 0.5, OtherItems: 2},
			{Pattern: "E1", PerSecond: ballots + 10, ItemKB: 0.3, Partitions: 1},
			{Pattern: "E2", PerSecond: 1, ItemKB: 0.3, Items: 50},
			{Pattern: "E3", PerSecond: elections, ItemKB: 0.3, OtherItems: 2},
			{Pattern: "C1", PerSecond: ballots + 10, ItemKB: 0.2, Items: 10, Partitions: 1},
			{Pattern: "V2", PerSecond: 10, ItemKB: 0.2, Partitions: 1},
			{Pattern: "B1", PerSecond: 20, ItemKB: 0.5},
			{Pattern: "B2", PerSecond: 1.0 / 60, ItemKB: 0.5, Items: 10_000, Partitions: 1},
			{Pattern: "B3", PerSecond: ballots, ItemKB: 0.5, OtherItems: 2, Partitions: 1},
			{Pattern: "M1", PerSecond: 1, ItemKB: 0.1, Consistent: true},
		},
		Storage: []catalog.Stored{
			{Entity: "USER", Items: 100_000, ItemKB: 0.5},
			{Entity: "ELECTION", Items: 1_000, ItemKB: 0.3},
			{Entity: "CANDIDATE", Items: 10_000, ItemKB: 0.2},
			{Entity: "VOTER", Items: 1_000_000, ItemKB: 0.2},
			{Entity: "BALLOT", Items: 1_000_000, ItemKB: 0.5},
		},
	}
	log = catalog.Workload{
		Loads: []catalog.Load{
			{Pattern: "L1", PerSecond: commands, ItemKB: 0.1, Consistent: true},
			// the sequence item and the event: two items, each in its own
			// constant partition (SEQUENCE, EVENTS)
			{Pattern: "L4", PerSecond: commands, ItemKB: 0.5, Items: 2, Partitions: 2},
			{Pattern: "L2", PerSecond: 1, ItemKB: 0.5, Items: 100, Consistent: true},
		},
		Storage: []catalog.Stored{{Entity: "EVENT", Items: 5_000_000, ItemKB: 0.5}},
	}
	return data, log
}

// Accepted are the lint findings the design keeps on the two tables'
// catalogs, with the reason (docs/catalog.md lists them apart).
func (s *Store) Accepted() (data, log []catalog.Acceptance) {
	if s.listing == ByIndex {
		for _, e := range []string{"USER", "ELECTION"} {
			data = append(data, catalog.Acceptance{Rule: catalog.RuleHotPartition, Entity: e, Index: ListIndex,
				Reason: "the listing is one GSI-2 partition by design, read in name order; registrations and new elections are rare, far under 1,000 writes per second (README: where the implementation departs)"})
		}
	}
	log = []catalog.Acceptance{{Rule: catalog.RuleHotPartition, Entity: "EVENT",
		Reason: "the event log is one gap-free sequence: each event is written in one transaction with the SEQUENCE item, so its writes are serial anyway, and consumers read it in order from one partition"}}
	return data, log
}

// listPattern is the pattern of a listing: the GSI-2 query q, or on a
// table without GSI-2 a Scan of the table for r's entity type.
func (s *Store) listPattern(name, byIndex, byScan string, r catalog.Repo, q catalog.Querier) catalog.Pattern {
	if s.listing == ByIndex {
		return catalog.Query(name, byIndex, q)
	}
	e := r.Describe()
	return catalog.Pattern{Name: name, Description: byScan + " (the design's begins_with on PK, run as a Scan; sorted by name)",
		Entity: e.Type, Operation: "Scan",
		Condition: fmt.Sprintf("filter %s = %s (the whole table, %d parallel segments)", EntityTypeAttr, e.Type, max(s.ScanSegments, 1))}
}
