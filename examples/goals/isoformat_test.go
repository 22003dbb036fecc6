package goals_test

// Goals keyed exactly as the playbook's create_goal writes them:
// gsi1_sk is f'{goal.created_at.isoformat()}#{goal.goal_id}' and
// created_at is pydantic's model_dump(mode='json'). For a UTC-aware
// datetime those are 2024-01-07T10:00:00+00:00#<id> and
// 2024-01-07T10:00:00Z, with microseconds …T10:00:00.500000+00:00#<id>
// and …T10:00:00.500000Z; for a naive datetime.utcnow() both have no
// offset (…T10:00:00.250000). The repository declares gsi1_sk as
// {CreatedAt:isoformat}#{GoalID:raw}: it writes the aware form and reads
// all three.

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/goals"
	"github.com/singletable-go/singletable/migrate"
)

// updateRecorder passes every request to DynamoDB Local and keeps the
// UpdateItem inputs it sent.
type updateRecorder struct {
	*dynamodb.Client
	updates []*dynamodb.UpdateItemInput
}

func (u *updateRecorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	u.updates = append(u.updates, in)
	return u.Client.UpdateItem(ctx, in, optFns...)
}

// pythonGoal writes a goal as create_goal does, with the given created_at
// (pydantic's JSON) and gsi1_sk (isoformat()), and a description the Go
// type does not have.
func pythonGoal(t *testing.T, c *dynamodb.Client, table, id, createdAt, gsi1sk string) {
	t.Helper()
	rawPut(t, c, table, map[string]types.AttributeValue{
		"pk": sv("USER#123"), "sk": sv("GOAL#" + id), "EntityType": sv("Goal"),
		"gsi1_pk": sv("GOALS#ACTIVE"), "gsi1_sk": sv(gsi1sk),
		"goal_id": sv(id), "title": sv("goal " + id), "status": sv("ACTIVE"), "target": nv("5"),
		"created_at": sv(createdAt), "description": null()})
}

func rawGoal(t *testing.T, c *dynamodb.Client, table, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": sv("USER#123"), "sk": sv("GOAL#" + id)}})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "goal %s", id)
	return out.Item
}

// equalities maps the attribute names to the string values of an
// expression's "#name = :value" parts: the SET clauses of an update
// expression, the equality checks of a condition.
func equalities(expr string, in *dynamodb.UpdateItemInput) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(#\w+) = (:\w+)`).FindAllStringSubmatch(expr, -1) {
		out[in.ExpressionAttributeNames[m[1]]] = sOf(in.ExpressionAttributeValues[m[2]])
	}
	return out
}

// A status change sends the status only: created_at, which a Python goal
// holds with microseconds, is read (to render gsi1_sk, microseconds and
// all) and checked, never written back.
func TestSetGoalStatusKeepsPythonCreatedAt(t *testing.T) {
	ctx := context.Background()
	ddb := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	rec := &updateRecorder{Client: ddb}
	var ops []string
	r := goals.New(rec, name, func(o *singletable.TableOptions) {
		o.Observe = func(_ context.Context, ob *singletable.Observation) {
			op := ob.Op + " " + ob.Pattern
			if ob.PlanRead {
				op += " (plan read)"
			}
			ops = append(ops, op)
		}
	})
	require.NoError(t, r.Table.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, ddb, name)
	const created = "2024-01-07T10:00:00.500000Z" // pydantic's JSON of a UTC time with microseconds
	pythonGoal(t, ddb, name, "456", created, "2024-01-07T10:00:00.500000+00:00#456")
	before := rawGoal(t, ddb, name, "456")

	ops = nil
	g, err := r.SetGoalStatus(ctx, "123", "456", goals.GoalCompleted)
	require.NoError(t, err)
	assert.Equal(t, goals.GoalCompleted, g.Status)
	assert.Equal(t, []string{"GetItem G2", "GetItem G6 (plan read)", "UpdateItem G6"}, ops)

	after := rawGoal(t, ddb, name, "456")
	assert.Equal(t, before["created_at"], after["created_at"], "created_at byte for byte")
	assert.Equal(t, created, sOf(after["created_at"]))
	assert.Equal(t, "GOALS#COMPLETED", sOf(after["gsi1_pk"]))
	assert.Equal(t, "2024-01-07T10:00:00.500000+00:00#456", sOf(after["gsi1_sk"]), "as create_goal wrote it")
	assert.Equal(t, null(), after["description"])

	// The request: the entity type, the status and the index key set,
	// created_at only in the condition, equal to the text read, with the
	// status read.
	require.Len(t, rec.updates, 1)
	in := rec.updates[0]
	assert.Equal(t, map[string]string{"EntityType": "Goal", "status": "COMPLETED", "gsi1_pk": "GOALS#COMPLETED", "gsi1_sk": "2024-01-07T10:00:00.500000+00:00#456"},
		equalities(aws.ToString(in.UpdateExpression), in))
	cond := equalities(aws.ToString(in.ConditionExpression), in)
	assert.Equal(t, created, cond["created_at"])
	assert.Equal(t, "ACTIVE", cond["status"])
}

// Goals written exactly as create_goal writes them for a UTC-aware
// created_at, with and without microseconds, sort among the
// repository's own by time, and every range operator finds them at a
// second's bound and at a microsecond's; a status change keeps their
// gsi1_sk byte for byte in the new status.
func TestSeedIsoformatKeyedGoals(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	// Written by this repository: whole seconds, and a Go time finer than
	// a microsecond, which CreateGoal cuts to one.
	for _, g := range []goals.Goal{
		{UserID: "123", GoalID: "499", Title: "goal 499", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T09:59:59Z")},
		{UserID: "123", GoalID: "503", Title: "goal 503", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")},
		{UserID: "123", GoalID: "504", Title: "goal 504", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:01Z")},
		{UserID: "123", GoalID: "506", Title: "goal 506", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00.500000700Z")},
	} {
		require.NoError(t, r.CreateGoal(ctx, g))
	}
	// Written by create_goal: whole second, and microseconds at the
	// second's first, middle and last microsecond.
	pythonGoal(t, c, table, "500", "2024-01-07T10:00:00Z", "2024-01-07T10:00:00+00:00#500")
	pythonGoal(t, c, table, "505", "2024-01-07T10:00:00.000001Z", "2024-01-07T10:00:00.000001+00:00#505")
	pythonGoal(t, c, table, "501", "2024-01-07T10:00:00.500000Z", "2024-01-07T10:00:00.500000+00:00#501")
	pythonGoal(t, c, table, "507", "2024-01-07T10:00:00.999999Z", "2024-01-07T10:00:00.999999+00:00#507")

	// The repository's writes are create_goal's form.
	for id, want := range map[string][2]string{
		"503": {"2024-01-07T10:00:00+00:00#503", "2024-01-07T10:00:00Z"},
		"506": {"2024-01-07T10:00:00.500000+00:00#506", "2024-01-07T10:00:00.5Z"},
	} {
		item := rawGoal(t, c, table, id)
		assert.Equal(t, want, [2]string{sOf(item["gsi1_sk"]), sOf(item["created_at"])}, id)
	}
	// Read by key and decoded, created_at with its microseconds, in UTC.
	for id, created := range map[string]string{"500": "2024-01-07T10:00:00Z", "505": "2024-01-07T10:00:00.000001Z", "501": "2024-01-07T10:00:00.5Z", "507": "2024-01-07T10:00:00.999999Z"} {
		g, err := r.GetGoal(ctx, "123", id)
		require.NoError(t, err)
		assert.Equal(t, goals.Goal{UserID: "123", GoalID: id, Title: "goal " + id, Status: goals.GoalActive, Target: 5, CreatedAt: at(created)}, g, id)
	}

	ids := func(q *singletable.Query[goals.Goal]) []string {
		gs, err := q.Collect(ctx)
		require.NoError(t, err)
		return goalIDs(gs)
	}
	byStatus := func(status goals.GoalStatus, since time.Time, newestFirst bool) []string {
		page, err := r.GoalsByStatus(ctx, status, since, newestFirst, 0, "")
		require.NoError(t, err)
		return goalIDs(page.Items)
	}
	all := []string{"499", "500", "503", "505", "501", "506", "507", "504"}
	assert.Equal(t, all, byStatus(goals.GoalActive, time.Time{}, false), "by time, then ID")
	assert.Equal(t, []string{"504", "507", "506", "501", "505", "503", "500", "499"}, byStatus(goals.GoalActive, time.Time{}, true))

	// At a second's bound.
	ten := r.Goals.QueryIndex(goals.IndexName, goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00Z")})
	assert.Equal(t, []string{"500", "503", "505", "501", "506", "507", "504"}, byStatus(goals.GoalActive, at("2024-01-07T10:00:00Z"), false), "since 10:00:00")
	assert.Equal(t, []string{"500", "503"}, ids(ten.Where("CreatedAt", singletable.Eq, at("2024-01-07T10:00:00Z"))))
	assert.Equal(t, []string{"505", "501", "506", "507", "504"}, ids(ten.Where("CreatedAt", singletable.Gt, at("2024-01-07T10:00:00Z"))))
	assert.Equal(t, []string{"499"}, ids(ten.Where("CreatedAt", singletable.Lt, at("2024-01-07T10:00:00Z"))))
	assert.Equal(t, []string{"499", "500", "503"}, ids(ten.Where("CreatedAt", singletable.Le, at("2024-01-07T10:00:00Z"))))
	assert.Equal(t, []string{"500", "503", "505", "501", "506", "507", "504"}, ids(ten.Between("CreatedAt", at("2024-01-07T10:00:00Z"), at("2024-01-07T10:00:01Z"))))
	nine := r.Goals.QueryIndex(goals.IndexName, goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T09:59:59Z")})
	assert.Equal(t, []string{"500", "503", "505", "501", "506", "507", "504"}, ids(nine.Where("CreatedAt", singletable.Gt, at("2024-01-07T09:59:59Z"))))
	assert.Equal(t, []string{"499", "500", "503", "505", "501", "506", "507"}, ids(nine.Between("CreatedAt", at("2024-01-07T09:59:59Z"), at("2024-01-07T10:00:00.999999Z"))))

	// At a microsecond's bound.
	half := r.Goals.QueryIndex(goals.IndexName, goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00.5Z")})
	assert.Equal(t, []string{"501", "506", "507", "504"}, byStatus(goals.GoalActive, at("2024-01-07T10:00:00.5Z"), false), "since 10:00:00.5")
	assert.Equal(t, []string{"501", "506"}, ids(half.Where("CreatedAt", singletable.Eq, at("2024-01-07T10:00:00.5Z"))))
	assert.Equal(t, []string{"507", "504"}, ids(half.Where("CreatedAt", singletable.Gt, at("2024-01-07T10:00:00.5Z"))))
	assert.Equal(t, []string{"499", "500", "503", "505"}, ids(half.Where("CreatedAt", singletable.Lt, at("2024-01-07T10:00:00.5Z"))))
	assert.Equal(t, []string{"499", "500", "503", "505", "501", "506"}, ids(half.Where("CreatedAt", singletable.Le, at("2024-01-07T10:00:00.5Z"))))
	first := r.Goals.QueryIndex(goals.IndexName, goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00.000001Z")})
	assert.Equal(t, []string{"505", "501", "506", "507"}, ids(first.Between("CreatedAt", at("2024-01-07T10:00:00.000001Z"), at("2024-01-07T10:00:00.999999Z"))))
	assert.Equal(t, []string{"505", "501", "506"}, ids(first.Between("CreatedAt", at("2024-01-07T10:00:00.000001Z"), at("2024-01-07T10:00:00.5Z"))))
	assert.Equal(t, []string{"499", "500", "503"}, ids(first.Where("CreatedAt", singletable.Lt, at("2024-01-07T10:00:00.000001Z"))))

	// A status change keeps gsi1_sk and created_at as create_goal wrote
	// them, and the new status's ranges find them at the same bounds.
	for _, id := range all {
		_, err := r.SetGoalStatus(ctx, "123", id, goals.GoalCompleted)
		require.NoError(t, err, id)
	}
	for id, want := range map[string][2]string{
		"500": {"2024-01-07T10:00:00+00:00#500", "2024-01-07T10:00:00Z"},
		"505": {"2024-01-07T10:00:00.000001+00:00#505", "2024-01-07T10:00:00.000001Z"},
		"501": {"2024-01-07T10:00:00.500000+00:00#501", "2024-01-07T10:00:00.500000Z"},
		"507": {"2024-01-07T10:00:00.999999+00:00#507", "2024-01-07T10:00:00.999999Z"},
	} {
		item := rawGoal(t, c, table, id)
		assert.Equal(t, [3]string{"GOALS#COMPLETED", want[0], want[1]}, [3]string{sOf(item["gsi1_pk"]), sOf(item["gsi1_sk"]), sOf(item["created_at"])}, id)
	}
	assert.Equal(t, []string{"500", "503", "505", "501", "506", "507", "504"}, byStatus(goals.GoalCompleted, at("2024-01-07T10:00:00Z"), false))
	assert.Equal(t, []string{"501", "506", "507", "504"}, byStatus(goals.GoalCompleted, at("2024-01-07T10:00:00.5Z"), false))
	assert.Empty(t, byStatus(goals.GoalActive, time.Time{}, false))
}

// A naive datetime.utcnow() key (no offset) sorts just before the
// canonical key of its own instant, so a range starting at exactly that
// instant misses it, as the lint says; the library's backfill rewrites it
// in the canonical form, writes nothing else (created_at keeps the Python
// service's text) and leaves the aware keys byte for byte.
func TestSeedBackfillRewritesIsoformatKeys(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: "123", GoalID: "503", Title: "goal 503", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")}))
	pythonGoal(t, c, table, "500", "2024-01-07T10:00:00Z", "2024-01-07T10:00:00+00:00#500")
	pythonGoal(t, c, table, "501", "2024-01-07T10:00:00.500000Z", "2024-01-07T10:00:00.500000+00:00#501")
	pythonGoal(t, c, table, "502", "2024-01-07T10:00:00.250000", "2024-01-07T10:00:00.250000#502")
	pythonGoal(t, c, table, "508", "2024-01-07T10:00:00", "2024-01-07T10:00:00#508")
	since := func(s string) []string {
		page, err := r.GoalsByStatus(ctx, goals.GoalActive, at(s), false, 0, "")
		require.NoError(t, err)
		return goalIDs(page.Items)
	}
	// Read, and in time order; at their own instants the naive keys are
	// missed by a range starting there, found by one starting before.
	g, err := r.GetGoal(ctx, "123", "502")
	require.NoError(t, err)
	assert.Equal(t, at("2024-01-07T10:00:00.25Z"), g.CreatedAt)
	assert.Equal(t, []string{"500", "503", "502", "501"}, since("2024-01-07T10:00:00Z"), "misses 508 at its instant")
	assert.Equal(t, []string{"501"}, since("2024-01-07T10:00:00.25Z"), "misses 502 at its instant")
	assert.Equal(t, []string{"508", "500", "503", "502", "501"}, since("2024-01-07T09:59:59Z"))

	m, err := migrate.New(r.Table, migrate.Backfill("goals-gsi1-sk", r.Goals))
	require.NoError(t, err)
	_, err = m.Run(ctx, "goals-gsi1-sk")
	require.NoError(t, err)

	for id, want := range map[string][2]string{
		"500": {"2024-01-07T10:00:00+00:00#500", "2024-01-07T10:00:00Z"},
		"501": {"2024-01-07T10:00:00.500000+00:00#501", "2024-01-07T10:00:00.500000Z"},
		"502": {"2024-01-07T10:00:00.250000+00:00#502", "2024-01-07T10:00:00.250000"},
		"508": {"2024-01-07T10:00:00+00:00#508", "2024-01-07T10:00:00"},
	} {
		item := rawGoal(t, c, table, id)
		assert.Equal(t, [3]string{"GOALS#ACTIVE", want[0], want[1]},
			[3]string{sOf(item["gsi1_pk"]), sOf(item["gsi1_sk"]), sOf(item["created_at"])}, id)
		assert.Equal(t, null(), item["description"])
	}
	assert.Equal(t, []string{"500", "503", "508", "502", "501"}, since("2024-01-07T10:00:00Z"))
	assert.Equal(t, []string{"502", "501"}, since("2024-01-07T10:00:00.25Z"))
}
