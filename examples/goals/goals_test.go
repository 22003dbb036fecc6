package goals_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/goals"
	"github.com/singletable-go/singletable/singletabletest"
)

var update = flag.Bool("update", false, "rewrite docs/catalog.md")

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

func newRepo(t *testing.T) (*goals.Repository, *dynamodb.Client) {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	t.Setenv("TABLE_NAME", name)
	r, err := goals.FromEnv(client)
	require.NoError(t, err)
	require.NoError(t, r.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	return r, client
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestTableNameFromEnv(t *testing.T) {
	t.Setenv("TABLE_NAME", "")
	t.Setenv("MAIN_TABLE_NAME", "")
	_, err := goals.FromEnv(nil)
	require.ErrorIs(t, err, goals.ErrNoTableName)
	t.Setenv("MAIN_TABLE_NAME", "main")
	r, err := goals.FromEnv(nil)
	require.NoError(t, err)
	assert.Equal(t, "main", r.Table.Name())
	t.Setenv("TABLE_NAME", "one-table")
	r, err = goals.FromEnv(nil)
	require.NoError(t, err)
	assert.Equal(t, "one-table", r.Table.Name())
}

func TestProfilesAndGoals(t *testing.T) {
	ctx := context.Background()
	r, client := newRepo(t)

	require.NoError(t, r.CreateProfile(ctx, goals.Profile{UserID: "u1", Email: "ann@example.com", Name: "Ann"}))
	require.NoError(t, r.CreateProfile(ctx, goals.Profile{UserID: "u2", Email: "ben@example.com", Name: "Ben"}))
	require.ErrorIs(t, r.CreateProfile(ctx, goals.Profile{UserID: "u1", Email: "x@example.com"}), singletable.ErrAlreadyExists)
	require.ErrorIs(t, r.CreateProfile(ctx, goals.Profile{UserID: "u3", Email: "ann@example.com"}), singletable.ErrAlreadyExists)
	p, err := r.ProfileByEmail(ctx, "ben@example.com")
	require.NoError(t, err)
	assert.Equal(t, "u2", p.UserID)
	_, err = r.ProfileByEmail(ctx, "nobody@example.com")
	require.ErrorIs(t, err, singletable.ErrNotFound)

	gs := []goals.Goal{
		{UserID: "u1", GoalID: "g1", Title: "Run 5k", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")},
		{UserID: "u1", GoalID: "g2", Title: "Sleep 8h", Status: goals.GoalCompleted, Target: 8, CreatedAt: at("2024-01-02T08:00:00Z")},
		{UserID: "u1", GoalID: "g3", Title: "Drink water", Status: goals.GoalActive, Target: 2, CreatedAt: at("2024-01-09T07:00:00Z")},
		{UserID: "u2", GoalID: "g4", Title: "Swim", Status: goals.GoalActive, Target: 1, CreatedAt: at("2024-01-05T18:00:00Z")},
		{UserID: "u2", GoalID: "g5", Title: "Read", Status: goals.GoalAbandoned, Target: 12, CreatedAt: at("2024-01-01T20:00:00Z")},
	}
	for _, g := range gs {
		require.NoError(t, r.CreateGoal(ctx, g))
	}
	require.ErrorIs(t, r.CreateGoal(ctx, gs[0]), singletable.ErrAlreadyExists)
	var ve *singletable.ValidationError
	require.ErrorAs(t, r.CreateGoal(ctx, goals.Goal{UserID: "u1", GoalID: "g9", Status: "DONE"}), &ve)
	// IDs are written verbatim; one holding "#" could not be in an
	// activity or category key, so it is refused before the network.
	require.ErrorAs(t, r.CreateGoal(ctx, goals.Goal{UserID: "u1", GoalID: "g#9", Status: goals.GoalActive}), &ve)
	assert.Equal(t, "GoalID", ve.Field)
	require.ErrorAs(t, r.CreateProfile(ctx, goals.Profile{UserID: "u#9", Email: "u9@example.com"}), &ve)
	assert.Equal(t, "UserID", ve.Field)

	// Every item carries EntityType and the playbook's attribute names.
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.Table.Name()), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "USER#u1"}, "sk": &types.AttributeValueMemberS{Value: "GOAL#g1"}}})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "Goal"}, out.Item["EntityType"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "GOALS#ACTIVE"}, out.Item["gsi1_pk"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-07T10:00:00+00:00#g1"}, out.Item["gsi1_sk"])

	// A user's goals.
	ug, err := r.UserGoals(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, []string{"g1", "g2", "g3"}, goalIDs(ug))
	g, err := r.GetGoal(ctx, "u2", "g4")
	require.NoError(t, err)
	assert.Equal(t, "Swim", g.Title)
	assert.True(t, g.CreatedAt.Equal(gs[3].CreatedAt))

	// Goals by status across users, sorted by time, both ways, paginated.
	page, err := r.GoalsByStatus(ctx, goals.GoalActive, time.Time{}, false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"g4", "g1", "g3"}, goalIDs(page.Items))
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, time.Time{}, true, 2, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"g3", "g1"}, goalIDs(page.Items))
	require.NotEmpty(t, page.Cursor)
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, time.Time{}, true, 2, page.Cursor)
	require.NoError(t, err)
	assert.Equal(t, []string{"g4"}, goalIDs(page.Items))
	assert.Empty(t, page.Cursor)
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-06T00:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"g1", "g3"}, goalIDs(page.Items))

	// Status changes move the goal between GSI partitions.
	g, err = r.SetGoalStatus(ctx, "u1", "g1", goals.GoalCompleted)
	require.NoError(t, err)
	assert.Equal(t, goals.GoalCompleted, g.Status)
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, time.Time{}, false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"g4", "g3"}, goalIDs(page.Items))
	page, err = r.GoalsByStatus(ctx, goals.GoalCompleted, time.Time{}, false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"g2", "g1"}, goalIDs(page.Items))
	_, err = r.SetGoalStatus(ctx, "u1", "nope", goals.GoalActive)
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = r.SetGoalStatus(ctx, "u1", "g1", "PAUSED")
	require.ErrorAs(t, err, &ve)

	require.NoError(t, r.DeleteGoal(ctx, "u2", "g5"))
	require.ErrorIs(t, r.DeleteGoal(ctx, "u2", "g5"), singletable.ErrNotFound)
	page, err = r.GoalsByStatus(ctx, goals.GoalAbandoned, time.Time{}, false, 0, "")
	require.NoError(t, err)
	assert.Empty(t, page.Items)
}

func TestMealsAndActivities(t *testing.T) {
	ctx := context.Background()
	r, client := newRepo(t)
	require.NoError(t, r.CreateProfile(ctx, goals.Profile{UserID: "u1", Email: "ann@example.com", Name: "Ann"}))
	require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: "u1", GoalID: "run", Title: "Run", Status: goals.GoalActive, CreatedAt: at("2024-01-01T00:00:00Z")}))
	require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: "u1", GoalID: "swim", Title: "Swim", Status: goals.GoalActive, CreatedAt: at("2024-01-01T00:00:00Z")}))

	meals := []goals.Meal{
		{UserID: "u1", MealID: "m1", EatenAt: at("2023-12-31T23:59:59Z"), Category: "dinner", Calories: 800},
		{UserID: "u1", MealID: "m2", EatenAt: at("2024-01-01T00:00:00Z"), Category: "breakfast", Calories: 400},
		{UserID: "u1", MealID: "m3", EatenAt: at("2024-01-15T12:30:00Z"), Category: "lunch", Calories: 650},
		{UserID: "u1", MealID: "m4", EatenAt: at("2024-01-31T23:59:59Z"), Calories: 200, Notes: "snack, no category"},
		{UserID: "u1", MealID: "m5", EatenAt: at("2024-02-01T00:00:00Z"), Category: "breakfast", Calories: 380},
		{UserID: "u2", MealID: "m6", EatenAt: at("2024-01-10T08:00:00Z"), Category: "breakfast", Calories: 300},
	}
	for _, m := range meals {
		require.NoError(t, r.LogMeal(ctx, m))
	}
	all, err := r.UserMeals(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, mealIDs(all))
	jan, err := r.MealsBetween(ctx, "u1", at("2024-01-01T00:00:00Z"), at("2024-01-31T00:00:00Z"))
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3", "m4"}, mealIDs(jan), "the whole of both end days, nothing outside")
	one, err := r.MealsBetween(ctx, "u1", at("2024-01-15T00:00:00Z"), at("2024-01-15T00:00:00Z"))
	require.NoError(t, err)
	assert.Equal(t, []string{"m3"}, mealIDs(one))
	_, err = r.MealsBetween(ctx, "u1", at("2024-02-01T00:00:00Z"), at("2024-01-01T00:00:00Z"))
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	bf, err := r.MealsByCategory(ctx, "u1", "breakfast")
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m5"}, mealIDs(bf))
	// The uncategorised meal is not in the index at all (sparse).
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.Table.Name()), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "USER#u1"}, "sk": &types.AttributeValueMemberS{Value: "MEAL#2024-01-31T23:59:59Z#m4"}}})
	require.NoError(t, err)
	require.NotEmpty(t, out.Item)
	assert.NotContains(t, out.Item, "gsi1_pk")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "Meal"}, out.Item["EntityType"])

	acts := []goals.Activity{
		{UserID: "u1", GoalID: "run", Date: date("2024-01-07"), ActivityID: "a1", Kind: "run", Amount: 3},
		{UserID: "u1", GoalID: "run", Date: date("2024-01-07"), ActivityID: "a2", Kind: "run", Amount: 2},
		{UserID: "u1", GoalID: "run", Date: date("2024-01-08"), ActivityID: "a3", Kind: "run", Amount: 5},
		{UserID: "u1", GoalID: "swim", Date: date("2024-01-07"), ActivityID: "a4", Kind: "swim", Amount: 1},
	}
	for _, a := range acts {
		require.NoError(t, r.LogActivity(ctx, a))
	}
	err = r.LogActivity(ctx, goals.Activity{UserID: "u1", GoalID: "fly", Date: date("2024-01-07"), ActivityID: "a9"})
	require.ErrorIs(t, err, singletable.ErrNotFound)
	err = r.LogActivity(ctx, goals.Activity{UserID: "u1", GoalID: "run", ActivityID: "a9"})
	require.ErrorAs(t, err, &ve)

	day, err := r.ActivitiesOn(ctx, "u1", "run", date("2024-01-07"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "a2"}, activityIDs(day))
	none, err := r.ActivitiesOn(ctx, "u1", "run", date("2024-01-09"))
	require.NoError(t, err)
	assert.Empty(t, none)
	ua, err := r.UserActivities(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "a2", "a3", "a4"}, activityIDs(ua))
	ga, err := r.GoalActivities(ctx, "run")
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "a2", "a3"}, activityIDs(ga))

	// The dashboard: one Query, four entity types.
	d, err := r.LoadDashboard(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, "Ann", d.Profile.Name)
	assert.Len(t, d.Goals, 2)
	assert.Len(t, d.Meals, 5)
	assert.Len(t, d.Activities, 4)
	_, err = r.LoadDashboard(ctx, "u404")
	require.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestCatalogIsCurrent(t *testing.T) {
	r := goals.New(nil, "TABLE_NAME")
	got := catalog.New(r.Table, r.AccessPatterns()...).Accept(r.Accepted()...).Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "catalog.md"), got, *update)
	assert.NotContains(t, got, "- error")
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "- warning") {
			assert.Contains(t, line, "; accepted: ", "every warning is accepted, with its reason")
		}
	}
	assert.Contains(t, got, "Accepted by the design, with its reasons:")
	singletabletest.Golden(t, filepath.Join("docs", "table.svg"), catalog.Picture(r.Table, sampleItems(t, r)), *update)
}

func goalIDs(gs []goals.Goal) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.GoalID)
	}
	return out
}

func mealIDs(ms []goals.Meal) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.MealID)
	}
	return out
}

func activityIDs(as []goals.Activity) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ActivityID)
	}
	return out
}

// A status change reads the goal, then sends an update of the status
// alone, conditional on the status read: the library reads created_at
// itself (a plan read) to render gsi1_sk; a plain update of the status
// does the same; both leave gsi1_sk in the playbook's form.
func TestGoalStatusChange(t *testing.T) {
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	var ops []string
	var meanwhile func() // runs after the next request, once
	r := goals.New(client, name, func(o *singletable.TableOptions) {
		o.Observe = func(_ context.Context, ob *singletable.Observation) {
			op := ob.Op
			if ob.PlanRead {
				op += " (plan read)"
			}
			ops = append(ops, op)
			if f := meanwhile; f != nil {
				meanwhile = nil
				f()
			}
		}
	})
	require.NoError(t, r.Table.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	require.NoError(t, r.CreateGoal(ctx, goals.Goal{UserID: "u1", GoalID: "g1", Title: "Run", Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00Z")}))
	gsi1 := func() [2]string {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "USER#u1"}, "sk": &types.AttributeValueMemberS{Value: "GOAL#g1"}}})
		require.NoError(t, err)
		return [2]string{sOf(out.Item["gsi1_pk"]), sOf(out.Item["gsi1_sk"])}
	}

	ops = nil
	g, err := r.SetGoalStatus(ctx, "u1", "g1", goals.GoalCompleted)
	require.NoError(t, err)
	assert.Equal(t, goals.GoalCompleted, g.Status)
	// The goal read for its status, then the update's own read of
	// created_at (the status is all it sends), then the update.
	assert.Equal(t, []string{"GetItem", "GetItem (plan read)", "UpdateItem"}, ops)
	assert.Equal(t, [2]string{"GOALS#COMPLETED", "2024-01-07T10:00:00+00:00#g1"}, gsi1())

	ops = nil
	g, err = r.Goals.Update(goals.Goal{UserID: "u1", GoalID: "g1"}).Set("Status", goals.GoalAbandoned).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, at("2024-01-07T10:00:00Z"), g.CreatedAt)
	assert.Equal(t, []string{"GetItem (plan read)", "UpdateItem"}, ops)
	assert.Equal(t, [2]string{"GOALS#ABANDONED", "2024-01-07T10:00:00+00:00#g1"}, gsi1())

	// Another writer changes the status between SetGoalStatus's read and
	// its write: the write is refused, the other writer's status stays.
	meanwhile = func() {
		_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "USER#u1"}, "sk": &types.AttributeValueMemberS{Value: "GOAL#g1"}},
			UpdateExpression:          aws.String("SET #s = :s, gsi1_pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#s": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "ACTIVE"}, ":pk": &types.AttributeValueMemberS{Value: "GOALS#ACTIVE"}}})
		require.NoError(t, err)
	}
	_, err = r.SetGoalStatus(ctx, "u1", "g1", goals.GoalCompleted)
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	g, err = r.GetGoal(ctx, "u1", "g1")
	require.NoError(t, err)
	assert.Equal(t, goals.GoalActive, g.Status)
	assert.Equal(t, [2]string{"GOALS#ACTIVE", "2024-01-07T10:00:00+00:00#g1"}, gsi1())
}
