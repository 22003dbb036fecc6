package elections

import (
	"github.com/singletable-go/singletable"
)

// AccessPatterns lists the design's access patterns as the store runs them,
// for the two tables' catalogs in docs/catalog.md.
func (s *Store) AccessPatterns() (data, log []singletable.AccessPattern) {
	cmd := func(name, desc, entity, cond string) singletable.AccessPattern {
		return singletable.AccessPattern{Name: name, Description: desc, Entity: entity, Operation: "TransactWriteItems",
			Condition: cond + "; Update SEQUENCE/EVENTS if last_event_id unchanged; Put EVENTS/{EventID}#{WhenOccurred} in vote_event_log"}
	}
	data = []singletable.AccessPattern{
		s.Users.AccessPattern("U1", "Lookup user by name", singletable.OpGet),
		s.byEmail("").AccessPattern("U2", "Lookup user by email"),
		s.allUsers().AccessPattern("U3", "List all users (sparse listing index; the design's begins_with on PK is not a valid Query)"),
		s.Users.AccessPattern("U4", "Check user name exists (projection)", singletable.OpGet),
		cmd("U5", "Add user, count it", "USER", "Put USER#{Name}/METADATA if absent; Update METADATA/COUNTS ADD user_count 1"),
		s.Elections.AccessPattern("E1", "Lookup election by name", singletable.OpGet),
		s.allElections().AccessPattern("E2", "List all elections"),
		cmd("E3", "Add election, count it", "ELECTION", "ConditionCheck USER#{OwnerName}/METADATA; Put ELECTION#{Name}/METADATA if absent; Update METADATA/COUNTS ADD election_count 1"),
		cmd("E4", "Change an election (owner only: secret ballot, window, launch, finalize)", "ELECTION", "Update ELECTION#{Name}/METADATA if owner_name = actor"),
		{Name: "E5", Description: "Whole election: metadata, candidates, voters, ballots (item collection)", Entity: "ELECTION",
			Operation: singletable.OpQuery, Condition: "PK = ELECTION#{Name}"},
		s.candidates("").AccessPattern("C1", "List candidates for election"),
		s.Candidates.AccessPattern("C2", "Check candidate exists", singletable.OpGet),
		cmd("C3", "Add or remove candidates", "CANDIDATE", "ConditionCheck ELECTION#{ElectionName}/METADATA allow_edit and owner; Put or Delete ELECTION#{ElectionName}/CANDIDATE#{CandidateName}"),
		s.voters("").AccessPattern("V1", "List voters for election"),
		s.Voters.AccessPattern("V2", "Check eligibility", singletable.OpGet),
		cmd("V3", "Add or remove voters", "VOTER", "ConditionCheck ELECTION#{ElectionName}/METADATA allow_edit and owner; Put or Delete ELECTION#{ElectionName}/VOTER#{VoterName}"),
		s.Ballots.AccessPattern("B1", "Get ballot by voter and election", singletable.OpGet),
		s.ballots("").AccessPattern("B2", "List all ballots (and their embedded rankings) for election"),
		cmd("B3", "Cast ballot, overwriting a previous one", "BALLOT", "ConditionCheck ELECTION#{ElectionName}/VOTER#{VoterName}; ConditionCheck ELECTION#{ElectionName}/METADATA allow_vote; Put ELECTION#{ElectionName}/BALLOT#{VoterName}"),
		s.CountsRepo.AccessPattern("M1", "Get counts", singletable.OpGet),
		s.SyncRepo.AccessPattern("S1", "Get sync state", singletable.OpGet),
		s.SyncRepo.AccessPattern("S2", "Move sync state (conditional on the value read)", singletable.OpUpdate),
	}
	log = []singletable.AccessPattern{
		s.Sequence.AccessPattern("L1", "Read the event sequence (consistent)", singletable.OpGet),
		s.eventsAfter(0).AccessPattern("L2", "Read events since last sync"),
		s.Events.Query(Event{}).AccessPattern("L3", "Count events"),
	}
	log[2].Operation = singletable.OpCount
	return data, log
}
