package goals_test

// Goals keyed exactly as the playbook's create_goal writes them:
// gsi1_sk is f'{goal.created_at.isoformat()}#{goal.goal_id}' and
// created_at is pydantic's model_dump(mode='json'). For a UTC-aware
// datetime those are 2024-01-07T10:00:00+00:00#<id> and
// 2024-01-07T10:00:00Z, with microseconds …T10:00:00.500000+00:00#<id>
// and …T10:00:00.500000Z; for a naive datetime.utcnow() both have no
// offset (…T10:00:00.250000). Only the playbook's hand-written example
// item shows 2024-01-07T10:00:00Z#456, the form the repository declares
// ({CreatedAt:rfc3339}) and writes.

import (
	"context"
	"regexp"
	"testing"

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
// holds with microseconds, is read (to render gsi1_sk) and checked, never
// written back.
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
	assert.Equal(t, "2024-01-07T10:00:00Z#456", sOf(after["gsi1_sk"]), "rewritten in the documented form")
	assert.Equal(t, null(), after["description"])

	// The request: the entity type, the status and the index key set,
	// created_at only in the condition, equal to the text read, with the
	// status read.
	require.Len(t, rec.updates, 1)
	in := rec.updates[0]
	assert.Equal(t, map[string]string{"EntityType": "Goal", "status": "COMPLETED", "gsi1_pk": "GOALS#COMPLETED", "gsi1_sk": "2024-01-07T10:00:00Z#456"},
		equalities(aws.ToString(in.UpdateExpression), in))
	cond := equalities(aws.ToString(in.ConditionExpression), in)
	assert.Equal(t, created, cond["created_at"])
	assert.Equal(t, "ACTIVE", cond["status"])
}

// What the repository makes of goals keyed by isoformat(): read by key
// and decoded; by status, they sort before the documented key of their
// second, so a range starting at that second misses them; a status change
// rewrites their gsi1_sk in the documented form.
func TestSeedIsoformatKeyedGoals(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	// Written by this repository, in the documented form.
	for _, g := range []goals.Goal{
		{UserID: "123", GoalID: "499", Title: "goal 499", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T09:59:59Z")},
		{UserID: "123", GoalID: "503", Title: "goal 503", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")},
		{UserID: "123", GoalID: "504", Title: "goal 504", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:01Z")},
	} {
		require.NoError(t, r.CreateGoal(ctx, g))
	}
	// Written by create_goal: an aware time, one with microseconds, and a
	// naive utcnow() with microseconds.
	pythonGoal(t, c, table, "500", "2024-01-07T10:00:00Z", "2024-01-07T10:00:00+00:00#500")
	pythonGoal(t, c, table, "501", "2024-01-07T10:00:00.500000Z", "2024-01-07T10:00:00.500000+00:00#501")
	pythonGoal(t, c, table, "502", "2024-01-07T10:00:00.250000", "2024-01-07T10:00:00.250000#502")

	// Read by key and decoded: created_at with its microseconds, in UTC
	// (the naive one read as UTC).
	for id, created := range map[string]string{"500": "2024-01-07T10:00:00Z", "501": "2024-01-07T10:00:00.5Z", "502": "2024-01-07T10:00:00.25Z"} {
		g, err := r.GetGoal(ctx, "123", id)
		require.NoError(t, err)
		assert.Equal(t, goals.Goal{UserID: "123", GoalID: id, Title: "goal " + id, Status: goals.GoalActive, Target: 5, CreatedAt: at(created)}, g, id)
	}

	// By status: "+", "." and "#" sort before "Z", so an isoformat key
	// sorts after the documented keys of the second before and before
	// the documented key of its own second.
	ids := func(q *singletable.Query[goals.Goal]) []string {
		gs, err := q.Collect(ctx)
		require.NoError(t, err)
		return goalIDs(gs)
	}
	page, err := r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-01T00:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"499", "500", "502", "501", "503", "504"}, goalIDs(page.Items))
	ten := goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00Z")}
	q := r.Goals.QueryIndex(goals.IndexName, ten)
	assert.Equal(t, []string{"503"}, ids(q.Where(singletable.Eq, "CreatedAt")), "= 10:00:00 misses them")
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-07T10:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"503", "504"}, goalIDs(page.Items), "since 10:00:00 misses them")
	assert.Equal(t, []string{"504"}, ids(q.Where(singletable.Gt, "CreatedAt")))
	assert.Equal(t, []string{"499", "500", "502", "501"}, ids(q.Where(singletable.Lt, "CreatedAt")), "before 10:00:00 includes them")
	assert.Equal(t, []string{"499", "500", "502", "501", "503"}, ids(q.Where(singletable.Le, "CreatedAt")))
	nine := goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T09:59:59Z")}
	assert.Equal(t, []string{"500", "502", "501", "503", "504"}, ids(r.Goals.QueryIndex(goals.IndexName, nine).Where(singletable.Gt, "CreatedAt")), "after 09:59:59 includes them")
	assert.Equal(t, []string{"499", "500", "502", "501", "503"}, ids(r.Goals.QueryIndex(goals.IndexName, nine).Between(goals.Goal{CreatedAt: at("2024-01-07T10:00:00Z")}, "CreatedAt")))

	// A status change rewrites gsi1_sk in the documented form and keeps
	// created_at as the Python service wrote it: afterwards every range
	// finds them.
	for _, id := range []string{"499", "500", "501", "502", "503", "504"} {
		_, err := r.SetGoalStatus(ctx, "123", id, goals.GoalCompleted)
		require.NoError(t, err, id)
	}
	for id, want := range map[string][2]string{
		"500": {"2024-01-07T10:00:00Z#500", "2024-01-07T10:00:00Z"},
		"501": {"2024-01-07T10:00:00Z#501", "2024-01-07T10:00:00.500000Z"},
		"502": {"2024-01-07T10:00:00Z#502", "2024-01-07T10:00:00.250000"},
	} {
		item := rawGoal(t, c, table, id)
		assert.Equal(t, want, [2]string{sOf(item["gsi1_sk"]), sOf(item["created_at"])}, id)
	}
	page, err = r.GoalsByStatus(ctx, goals.GoalCompleted, at("2024-01-07T10:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"500", "501", "502", "503", "504"}, goalIDs(page.Items))
	done := goals.Goal{Status: goals.GoalCompleted, CreatedAt: at("2024-01-07T10:00:00Z")}
	assert.Equal(t, []string{"500", "501", "502", "503"}, ids(r.Goals.QueryIndex(goals.IndexName, done).Where(singletable.Eq, "CreatedAt")))
	assert.Equal(t, []string{"499"}, ids(r.Goals.QueryIndex(goals.IndexName, done).Where(singletable.Lt, "CreatedAt")))
}

// The library's backfill brings goals keyed by isoformat() to the
// documented gsi1_sk without a status change, and writes nothing else:
// created_at keeps the Python service's text.
func TestSeedBackfillRewritesIsoformatKeys(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: "123", GoalID: "503", Title: "goal 503", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")}))
	pythonGoal(t, c, table, "500", "2024-01-07T10:00:00Z", "2024-01-07T10:00:00+00:00#500")
	pythonGoal(t, c, table, "501", "2024-01-07T10:00:00.500000Z", "2024-01-07T10:00:00.500000+00:00#501")
	pythonGoal(t, c, table, "502", "2024-01-07T10:00:00.250000", "2024-01-07T10:00:00.250000#502")
	page, err := r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-07T10:00:00Z"), false, 0, "")
	require.NoError(t, err)
	require.Equal(t, []string{"503"}, goalIDs(page.Items))

	m, err := migrate.New(r.Table, migrate.Backfill("goals-gsi1-sk", r.Goals))
	require.NoError(t, err)
	_, err = m.Run(ctx, "goals-gsi1-sk")
	require.NoError(t, err)

	for id, created := range map[string]string{"500": "2024-01-07T10:00:00Z", "501": "2024-01-07T10:00:00.500000Z", "502": "2024-01-07T10:00:00.250000"} {
		item := rawGoal(t, c, table, id)
		assert.Equal(t, [3]string{"GOALS#ACTIVE", "2024-01-07T10:00:00Z#" + id, created},
			[3]string{sOf(item["gsi1_pk"]), sOf(item["gsi1_sk"]), sOf(item["created_at"])}, id)
		assert.Equal(t, null(), item["description"])
	}
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-07T10:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"500", "501", "502", "503"}, goalIDs(page.Items))
}
