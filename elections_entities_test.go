package singletable_test

import (
	"testing"
	"time"

	"github.com/singletable-go/singletable"
)

// The elections service's design: elections with candidates, eligible voters and
// ballots in one partition, a counts item, and an append-only event log
// with gap-free sequence numbers.

type Election struct {
	Name         string `dynamodbav:"name"`
	Owner        string `dynamodbav:"owner_name"`
	SecretBallot bool   `dynamodbav:"secret_ballot"`
	AllowVote    bool   `dynamodbav:"allow_vote"`
}

type Candidate struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"candidate_name"`
}

type Voter struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"voter_name"`
}

type Ranking struct {
	Candidate string `dynamodbav:"candidate_name"`
	Rank      int    `dynamodbav:"rank"`
}

type Ballot struct {
	Election     string    `dynamodbav:"election_name"`
	Voter        string    `dynamodbav:"voter_name"`
	Confirmation string    `dynamodbav:"confirmation"`
	WhenCast     time.Time `dynamodbav:"when_cast"`
	Rankings     []Ranking `dynamodbav:"rankings"`
}

var (
	Elections = singletable.MustDefine(singletable.Schema[Election]{
		Type: "ELECTION", PK: "ELECTION#{Name}", SK: "METADATA",
	})
	Candidates = singletable.MustDefine(singletable.Schema[Candidate]{
		Type: "CANDIDATE", PK: "ELECTION#{Election}", SK: "CANDIDATE#{Name}",
	})
	Voters = singletable.MustDefine(singletable.Schema[Voter]{
		Type: "VOTER", PK: "ELECTION#{Election}", SK: "VOTER#{Name}",
	})
	Ballots = singletable.MustDefine(singletable.Schema[Ballot]{
		Type: "BALLOT", PK: "ELECTION#{Election}", SK: "BALLOT#{Voter}",
	})
)

type electionsFixture struct {
	tbl        *singletable.Table
	c          *countingClient
	elections  *singletable.Repo[Election]
	candidates *singletable.Repo[Candidate]
	voters     *singletable.Repo[Voter]
	ballots    *singletable.Repo[Ballot]
}

func electionsTable(t *testing.T) *electionsFixture {
	s := &electionsFixture{}
	s.tbl, s.c = newTable(t, func(tbl *singletable.Table) {
		s.elections = singletable.MustBind(tbl, Elections)
		s.candidates = singletable.MustBind(tbl, Candidates)
		s.voters = singletable.MustBind(tbl, Voters)
		s.ballots = singletable.MustBind(tbl, Ballots)
	})
	return s
}
