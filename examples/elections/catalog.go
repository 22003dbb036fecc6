package elections

import (
	"github.com/singletable-go/singletable/catalog"
)

// AccessPatterns lists the elections service's access patterns as the
// store runs them, for the two tables' catalogs in docs/catalog.md.
func (s *Store) AccessPatterns() (data, log []catalog.Pattern) {
	cmd := func(name, desc, entity, cond string) catalog.Pattern {
		return catalog.Pattern{Name: name, Description: desc, Entity: entity, Operation: "TransactWriteItems",
			Condition: cond + "; Update SEQUENCE/EVENTS if last_event_id unchanged; Put EVENTS/{EventID:%08d}#{WhenOccurred:rfc3339} in vote_event_log"}
	}
	data = []catalog.Pattern{
		catalog.Item("U1", "Lookup user by name", catalog.OpGet, s.Users),
		catalog.Query("U2", "Lookup user by email", s.byEmail("")),
		catalog.Query("U3", "List all users (sparse listing index; the design's begins_with on PK is not a valid Query)", s.allUsers()),
		catalog.Item("U4", "Check user name exists (projection)", catalog.OpGet, s.Users),
		cmd("U5", "Add user, count it", "USER", "Put USER#{Name:raw}/METADATA if absent; Update METADATA/COUNTS ADD user_count 1"),
		catalog.Item("E1", "Lookup election by name", catalog.OpGet, s.Elections),
		catalog.Query("E2", "List all elections", s.allElections()),
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
	}
	return data, log
}
