package workbench_test

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/examples/elections"
	"github.com/singletable-go/singletable/examples/goals"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/examples/tasks"
	"github.com/singletable-go/singletable/singletabletest"
	"github.com/singletable-go/singletable/workbench"
)

var update = flag.Bool("update", false, "rewrite the example apps' docs/workbench*.json")

// exportDate is the models' date, fixed so that the golden files stay put.
var exportDate = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// exampleModel is one example app's table with its sample values.
type exampleModel struct {
	path    string // the golden file, beside the app's catalog
	table   *singletable.Table
	samples []workbench.Sample
}

// exampleModels are the example apps' tables, each with a few items of
// every entity, as the apps' own tests write them.
func exampleModels() []exampleModel {
	g := goals.New(nil, "goals")
	t := tasks.New(nil, "tasks")
	s := skills.NewStore(nil, "skills")
	e := elections.New(nil, elections.DataTableName, elections.EventTableName)
	created := at("2024-01-07T10:00:00Z")
	noBefore := at("2025-03-01T08:00:00Z")
	return []exampleModel{
		{path: "../examples/goals/docs/workbench.json", table: g.Table, samples: []workbench.Sample{
			workbench.Samples(g.Profiles,
				goals.Profile{UserID: "123", Email: "ann@example.com", Name: "Ann"},
				goals.Profile{UserID: "124", Email: "bob@example.com", Name: "Bob"}),
			workbench.Samples(g.Goals,
				goals.Goal{UserID: "123", GoalID: "456", Title: "Run 5k", Status: goals.GoalActive, Target: 5, CreatedAt: created},
				goals.Goal{UserID: "123", GoalID: "457", Title: "Sleep 8h", Status: goals.GoalCompleted, Target: 8, CreatedAt: at("2024-01-08T06:15:00.5Z")}),
			workbench.Samples(g.Meals,
				goals.Meal{UserID: "123", MealID: "789", EatenAt: at("2024-01-07T12:30:00Z"), Category: "breakfast", Calories: 420},
				goals.Meal{UserID: "124", MealID: "790", EatenAt: at("2024-01-07T19:00:00Z"), Calories: 650, Notes: "late"}),
			workbench.Samples(g.Activities,
				goals.Activity{UserID: "123", GoalID: "456", Date: at("2024-01-07T00:00:00Z"), ActivityID: "a1", Kind: "run", Amount: 2.5},
				goals.Activity{UserID: "123", GoalID: "456", Date: at("2024-01-08T00:00:00Z"), ActivityID: "a2", Kind: "run", Amount: 3}),
		}},
		{path: "../examples/tasks/docs/workbench.json", table: t.Table, samples: []workbench.Sample{
			workbench.Samples(t.Tasks,
				tasks.Task{TaskID: "t1", Title: "Write docs", Description: "The guide", Priority: tasks.PriorityHigh, Status: tasks.StatusOpen,
					CreatedBy: "u1", CreatedAt: at("2025-01-10T09:00:00.125Z"), UpdatedAt: at("2025-01-10T09:00:00.125Z")},
				tasks.Task{TaskID: "t2", Title: "Review", Priority: tasks.PriorityLow, Status: tasks.StatusCompleted,
					CreatedBy: "u2", CreatedAt: at("2025-01-11T14:30:00Z"), UpdatedAt: at("2025-01-12T08:00:00Z")}),
			workbench.Samples(t.Users,
				tasks.User{UserID: "u1", Email: "ann@example.com", UserStatus: tasks.UserActive, Groups: []string{"Admins"}, CreatedAt: at("2025-01-01T00:00:00Z")},
				tasks.User{UserID: "u2", Email: "bob@example.com", UserStatus: tasks.UserActive, Groups: []string{"Members"}, CreatedAt: at("2025-01-02T00:00:00Z")}),
			workbench.Samples(t.Assignments,
				tasks.Assignment{TaskID: "t1", UserID: "u2", AssignedBy: "u1", AssignedAt: at("2025-01-10T09:05:00Z")},
				tasks.Assignment{TaskID: "t2", UserID: "u1", AssignedBy: "u2", AssignedAt: at("2025-01-11T15:00:00Z")}),
		}},
		{path: "../examples/skills/docs/workbench.json", table: s.Table, samples: []workbench.Sample{
			workbench.Samples(s.Users,
				skills.User{Username: "john", Name: "John", PasswordHash: "h1", CreatedAt: created, UpdatedAt: created},
				skills.User{Username: "mary", Name: "Mary", PasswordHash: "h2", CreatedAt: created, UpdatedAt: created},
				skills.User{Username: "ann", Name: "Ann", PasswordHash: "h3", CreatedAt: created, UpdatedAt: created},
				skills.User{Username: "bob", Name: "Bob", PasswordHash: "h4", CreatedAt: created, UpdatedAt: created}),
			workbench.Samples(s.Skills,
				skills.UserSkill{Username: "john", SkillName: "python", Level: "Expert", Years: 8, Endorsements: 3,
					LastUsed: at("2024-03-01T00:00:00Z"), CreatedAt: created, UpdatedAt: created},
				skills.UserSkill{Username: "mary", SkillName: "go", Level: "Advanced", Years: 4, CreatedAt: created, UpdatedAt: created}),
			workbench.Samples(s.Counts, skills.EntityCount{Entity: "User", Count: 4}),
		}},
		{path: "../examples/elections/docs/workbench-vote_data.json", table: e.Data, samples: []workbench.Sample{
			workbench.Samples(e.Users,
				elections.User{Name: "ann", Email: "ann@example.com", Salt: "s1", Hash: "h1", Role: "admin"},
				elections.User{Name: "bob", Email: "bob@example.com", Salt: "s2", Hash: "h2", Role: "voter"}),
			workbench.Samples(e.Elections,
				elections.Election{Name: "board", OwnerName: "ann", SecretBallot: true, NoVotingBefore: &noBefore, AllowVote: true},
				elections.Election{Name: "lunch", OwnerName: "bob", AllowEdit: true}),
			workbench.Samples(e.Candidates,
				elections.Candidate{ElectionName: "board", CandidateName: "carol"},
				elections.Candidate{ElectionName: "board", CandidateName: "dave"}),
			workbench.Samples(e.Voters,
				elections.Voter{ElectionName: "board", VoterName: "ann"},
				elections.Voter{ElectionName: "board", VoterName: "bob"}),
			workbench.Samples(e.Ballots,
				elections.Ballot{ElectionName: "board", VoterName: "ann", Confirmation: "c1", WhenCast: at("2025-03-02T09:00:00Z"),
					Rankings: []elections.Ranking{{CandidateName: "carol", Rank: 1}, {CandidateName: "dave", Rank: 2}}},
				elections.Ballot{ElectionName: "board", VoterName: "bob", Confirmation: "c2", WhenCast: at("2025-03-02T10:30:00Z"),
					Rankings: []elections.Ranking{{CandidateName: "dave", Rank: 1}}}),
			workbench.Samples(e.CountsRepo, elections.Counts{UserCount: 2, ElectionCount: 2, LastUpdated: at("2025-03-02T11:00:00Z")}),
			workbench.Samples(e.SyncRepo, elections.SyncState{LastEventID: 2}),
		}},
		{path: "../examples/elections/docs/workbench-vote_event_log.json", table: e.Log, samples: []workbench.Sample{
			workbench.Samples(e.Events,
				elections.Event{EventID: 1, WhenOccurred: at("2025-03-01T08:00:00Z"), Actor: "ann", EventType: "ElectionCreated", EventData: `{"name":"board"}`},
				elections.Event{EventID: 2, WhenOccurred: at("2025-03-02T09:00:00Z"), Actor: "ann", EventType: "BallotCast", EventData: `{"election":"board"}`}),
			workbench.Samples(e.Sequence, elections.EventSequence{LastEventID: 2}),
		}},
	}
}

func exportExample(t *testing.T, x exampleModel) *workbench.Model {
	t.Helper()
	m, err := workbench.Export(x.table, func(o *workbench.ExportOptions) {
		o.Author, o.Date, o.Samples = "singletable examples", exportDate, x.samples
	})
	require.NoError(t, err)
	return m
}

// TestExampleModelsAreCurrent keeps each example app's Workbench model
// in its docs/ current, and checks that it reads back strictly.
func TestExampleModelsAreCurrent(t *testing.T) {
	for _, x := range exampleModels() {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(x.path)))+"/"+filepath.Base(x.path), func(t *testing.T) {
			m := exportExample(t, x)
			var b bytes.Buffer
			require.NoError(t, m.Write(&b))
			back, err := workbench.Read(bytes.NewReader(b.Bytes()))
			require.NoError(t, err, "the export reads back strictly")
			require.Equal(t, m, back)
			singletabletest.Golden(t, x.path, b.String(), *update)
		})
	}
}
