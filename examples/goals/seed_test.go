package goals_test

// The goals service's playbook is run by a Python service too: these
// tests write items in the layout its repository code uses (the
// playbook's put_item with pk, sk, EntityType, gsi1_pk, gsi1_sk and the
// model's model_dump(mode='json') fields, None stored as NULL, no user_id
// inside a goal) and read, query, decode and update them through the
// repository; and they find the repository's own writes with the Python
// service's key expressions.
//
// A goal's gsi1_sk here is what the playbook's create_goal code writes,
// f'{goal.created_at.isoformat()}#{goal.goal_id}' (2024-01-07T10:00:00+00:00#456
// for a UTC time; its hand-written "Add EntityType Field" item shows
// 2024-01-07T10:00:00Z#456, which no code writes); isoformat_test.go adds
// microseconds and range bounds. The playbook shows no code rendering a
// meal's or an activity's keys: their time parts here are the declared
// forms, and its date-range and activity patterns.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/examples/goals"
	"github.com/singletable-go/singletable/migrate"
)

func TestSeedKeyStrings(t *testing.T) {
	created := at("2024-01-07T10:00:00Z")
	render := func(pk, sk string, err error) [2]string {
		require.NoError(t, err)
		return [2]string{pk, sk}
	}
	goal := goals.Goal{UserID: "123", GoalID: "456", Status: goals.GoalActive, CreatedAt: created}
	meal := goals.Meal{UserID: "123", MealID: "789", EatenAt: at("2024-01-07T12:30:00Z"), Category: "breakfast"}
	act := goals.Activity{UserID: "123", GoalID: "456", Date: date("2024-01-07"), ActivityID: "a1"}
	profile := goals.Profile{UserID: "123", Email: "ann@example.com"}
	for _, c := range []struct {
		name string
		got  [2]string
		want [2]string
	}{
		// What the playbook's create_goal writes, byte for byte.
		{"goal", render(goals.Goals.RenderKeys(goal)), [2]string{"USER#123", "GOAL#456"}},
		{"goal EmailIndex", render(goals.Goals.RenderIndexKeys(goals.IndexName, goal)), [2]string{"GOALS#ACTIVE", "2024-01-07T10:00:00+00:00#456"}},
		// "Meals for a date range": sk between MEAL#<date> bounds.
		{"meal", render(goals.Meals.RenderKeys(meal)), [2]string{"USER#123", "MEAL#2024-01-07T12:30:00Z#789"}},
		// "User's items by category".
		{"meal EmailIndex", render(goals.Meals.RenderIndexKeys(goals.IndexName, meal)), [2]string{"USER#123#CATEGORY#breakfast", "MEAL#2024-01-07T12:30:00Z#789"}},
		// "Activities on a specific date": begins_with(ACTIVITY#<goalId>#2024-01-07).
		{"activity", render(goals.Activities.RenderKeys(act)), [2]string{"USER#123", "ACTIVITY#456#2024-01-07#a1"}},
		// "All activities for a goal": GSI1PK = GOAL#<goalId>, begins_with(ACTIVITY#).
		{"activity EmailIndex", render(goals.Activities.RenderIndexKeys(goals.IndexName, act)), [2]string{"GOAL#456", "ACTIVITY#2024-01-07#a1"}},
		{"profile", render(goals.Profiles.RenderKeys(profile)), [2]string{"USER#123", "PROFILE"}},
		{"profile EmailIndex", render(goals.Profiles.RenderIndexKeys(goals.IndexName, profile)), [2]string{"EMAIL#ann@example.com", "USER#123"}},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}

	// The keys parse back into the fields they hold.
	a, err := goals.Activities.ParseKeys("USER#123", "ACTIVITY#456#2024-01-07#a1")
	require.NoError(t, err)
	assert.Equal(t, goals.Activity{UserID: "123", GoalID: "456", Date: date("2024-01-07"), ActivityID: "a1"}, a)
	m, err := goals.Meals.ParseKeys("USER#123", "MEAL#2024-01-07T12:30:00Z#789")
	require.NoError(t, err)
	assert.Equal(t, goals.Meal{UserID: "123", MealID: "789", EatenAt: at("2024-01-07T12:30:00Z")}, m)

	// What the formats cannot write is refused before the network.
	var ke *singletable.KeyError
	_, _, err = goals.Activities.RenderKeys(goals.Activity{UserID: "123", GoalID: "4#5", Date: date("2024-01-07"), ActivityID: "a1"})
	assert.ErrorAs(t, err, &ke, "a goal ID holding the delimiter after it")
	// isoformat() writes microseconds when they are not zero, and a Go
	// time finer than that is refused (CreateGoal cuts it first).
	_, sk, err := goals.Goals.RenderIndexKeys(goals.IndexName, goals.Goal{UserID: "123", GoalID: "456", Status: goals.GoalActive, CreatedAt: created.Add(time.Millisecond)})
	require.NoError(t, err)
	assert.Equal(t, "2024-01-07T10:00:00.001000+00:00#456", sk)
	_, _, err = goals.Goals.RenderIndexKeys(goals.IndexName, goals.Goal{UserID: "123", GoalID: "456", Status: goals.GoalActive, CreatedAt: created.Add(time.Nanosecond)})
	assert.ErrorAs(t, err, &ke, "a time finer than a microsecond")
}

func sv(s string) types.AttributeValue   { return &types.AttributeValueMemberS{Value: s} }
func nv(n string) types.AttributeValue   { return &types.AttributeValueMemberN{Value: n} }
func null() types.AttributeValue         { return &types.AttributeValueMemberNULL{Value: true} }
func sOf(av types.AttributeValue) string { s, _ := av.(*types.AttributeValueMemberS); return s.Value }

func rawPut(t *testing.T, c *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item,
		// The playbook's create_goal condition, used for every create.
		ConditionExpression: aws.String("attribute_not_exists(pk) AND attribute_not_exists(sk)")})
	require.NoError(t, err)
}

// writeAsPython writes user 123's items in the layout of the playbook's
// Python repository: the key attributes and EntityType, then the model's
// model_dump(mode='json'): pydantic's JSON times (a UTC time with "Z"),
// None fields as NULL (boto3 stores None so), no gsi1 attributes where
// the item is in no index, and no user_id inside a goal (create_goal
// takes it apart from the Goal model). Goals 455, 456 and 458 carry
// gsi1_sk as create_goal writes it for a UTC-aware created_at
// (2024-01-07T10:00:00+00:00#456); goal 457 is what it writes for a naive
// datetime.utcnow() at a whole second (no offset in created_at or in
// gsi1_sk). Meals and activities are keyed in the declared forms.
func writeAsPython(t *testing.T, c *dynamodb.Client, table string) {
	rawPut(t, c, table, map[string]types.AttributeValue{
		"pk": sv("USER#123"), "sk": sv("PROFILE"), "EntityType": sv("UserProfile"),
		"gsi1_pk": sv("EMAIL#ann@example.com"), "gsi1_sk": sv("USER#123"),
		"user_id": sv("123"), "email": sv("ann@example.com"), "name": sv("Ann")})
	goal := func(id, status, created, gsi1sk string) {
		rawPut(t, c, table, map[string]types.AttributeValue{
			"pk": sv("USER#123"), "sk": sv("GOAL#" + id), "EntityType": sv("Goal"),
			"gsi1_pk": sv("GOALS#" + status), "gsi1_sk": sv(gsi1sk),
			"goal_id": sv(id), "title": sv("goal " + id), "status": sv(status), "target": nv("5"),
			"created_at": sv(created), "description": null()})
	}
	goal("455", "ACTIVE", "2024-01-07T09:59:59Z", "2024-01-07T09:59:59+00:00#455")
	goal("456", "ACTIVE", "2024-01-07T10:00:00Z", "2024-01-07T10:00:00+00:00#456")
	goal("458", "ACTIVE", "2024-01-07T10:00:01Z", "2024-01-07T10:00:01+00:00#458")
	goal("457", "ACTIVE", "2024-01-03T09:00:00", "2024-01-03T09:00:00#457")
	meal := func(id, eaten string, category types.AttributeValue, calories string) {
		item := map[string]types.AttributeValue{
			"pk": sv("USER#123"), "sk": sv("MEAL#" + eaten + "#" + id), "EntityType": sv("Meal"),
			"meal_id": sv(id), "user_id": sv("123"), "eaten_at": sv(eaten), "category": category,
			"calories": nv(calories), "notes": null()}
		if cat, ok := category.(*types.AttributeValueMemberS); ok {
			item["gsi1_pk"] = sv("USER#123#CATEGORY#" + cat.Value)
			item["gsi1_sk"] = sv("MEAL#" + eaten + "#" + id)
		}
		rawPut(t, c, table, item)
	}
	meal("m1", "2023-12-31T23:59:59Z", sv("dinner"), "800")
	meal("m2", "2024-01-01T00:00:00Z", sv("breakfast"), "400")
	meal("m3", "2024-01-15T12:30:00Z", sv("lunch"), "650")
	meal("m4", "2024-01-31T23:59:59Z", null(), "200")
	meal("m5", "2024-02-01T00:00:00Z", sv("breakfast"), "380")
	act := func(id, goalID, day, amount string) {
		rawPut(t, c, table, map[string]types.AttributeValue{
			"pk": sv("USER#123"), "sk": sv("ACTIVITY#" + goalID + "#" + day + "#" + id), "EntityType": sv("Activity"),
			"gsi1_pk": sv("GOAL#" + goalID), "gsi1_sk": sv("ACTIVITY#" + day + "#" + id),
			"activity_id": sv(id), "goal_id": sv(goalID), "user_id": sv("123"), "date": sv(day),
			"kind": sv("run"), "amount": nv(amount)})
	}
	act("a0", "456", "2024-01-06", "1")
	act("a1", "456", "2024-01-07", "3")
	act("a2", "456", "2024-01-07", "2")
	act("a3", "456", "2024-01-08", "5")
}

func TestSeedPythonItemsThroughTheRepository(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	writeAsPython(t, c, table)

	// Got and decoded: the goal's user_id comes from its key, NULLs are
	// zero values, the zone-less time is read as UTC.
	g, err := r.GetGoal(ctx, "123", "456")
	require.NoError(t, err)
	assert.Equal(t, goals.Goal{UserID: "123", GoalID: "456", Title: "goal 456", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")}, g)
	g, err = r.GetGoal(ctx, "123", "457")
	require.NoError(t, err)
	assert.Equal(t, at("2024-01-03T09:00:00Z"), g.CreatedAt)
	p, err := r.ProfileByEmail(ctx, "ann@example.com")
	require.NoError(t, err)
	assert.Equal(t, goals.Profile{UserID: "123", Email: "ann@example.com", Name: "Ann"}, p)
	d, err := r.LoadDashboard(ctx, "123")
	require.NoError(t, err)
	assert.Equal(t, "Ann", d.Profile.Name)
	assert.Equal(t, []string{"455", "456", "457", "458"}, goalIDs(d.Goals))
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, mealIDs(d.Meals))
	assert.Equal(t, goals.Meal{UserID: "123", MealID: "m4", EatenAt: at("2024-01-31T23:59:59Z"), Calories: 200}, d.Meals[3])
	assert.Equal(t, []string{"a0", "a1", "a2", "a3"}, activityIDs(d.Activities))
	assert.Equal(t, goals.Activity{UserID: "123", GoalID: "456", Date: date("2024-01-07"), ActivityID: "a1", Kind: "run", Amount: 3}, d.Activities[1])

	// Goals by status at second boundaries (the zone-less key of 457
	// sorts by its time too: every Python key starts with the time).
	ids := func(q *singletable.Query[goals.Goal]) []string {
		gs, err := q.Collect(ctx)
		require.NoError(t, err)
		return goalIDs(gs)
	}
	ten := goals.Goal{Status: goals.GoalActive, CreatedAt: at("2024-01-07T10:00:00Z")}
	q := r.Goals.QueryIndex(goals.IndexName, ten)
	assert.Equal(t, []string{"456"}, ids(q.Where("CreatedAt", singletable.Eq, ten.CreatedAt)))
	assert.Equal(t, []string{"458"}, ids(q.Where("CreatedAt", singletable.Gt, ten.CreatedAt)))
	assert.Equal(t, []string{"456", "458"}, ids(q.Where("CreatedAt", singletable.Ge, ten.CreatedAt)))
	assert.Equal(t, []string{"457", "455"}, ids(q.Where("CreatedAt", singletable.Lt, ten.CreatedAt)))
	assert.Equal(t, []string{"457", "455", "456"}, ids(q.Where("CreatedAt", singletable.Le, ten.CreatedAt)))
	assert.Equal(t, []string{"456", "458"}, ids(q.Between("CreatedAt", ten.CreatedAt, at("2024-01-07T10:00:01Z"))))
	assert.Equal(t, []string{"455", "456", "458"}, ids(q.BeginsWith("CreatedAt", "2024-01-07T")))
	page, err := r.GoalsByStatus(ctx, goals.GoalActive, at("2024-01-07T10:00:00Z"), false, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"456", "458"}, goalIDs(page.Items))
	page, err = r.GoalsByStatus(ctx, goals.GoalActive, time.Time{}, true, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"458", "456", "455", "457"}, goalIDs(page.Items))

	// Meals: the first and last second of a month, and one second outside
	// each end.
	meals, err := r.MealsBetween(ctx, "123", date("2024-01-01"), date("2024-01-31"))
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3", "m4"}, mealIDs(meals))
	mq := r.Meals.Query(goals.Meal{UserID: "123", EatenAt: at("2024-01-15T12:30:00Z")})
	mids := func(q *singletable.Query[goals.Meal]) []string {
		ms, err := q.Collect(ctx)
		require.NoError(t, err)
		return mealIDs(ms)
	}
	assert.Equal(t, []string{"m3"}, mids(mq.Where("EatenAt", singletable.Eq, at("2024-01-15T12:30:00Z"))))
	assert.Equal(t, []string{"m4", "m5"}, mids(mq.Where("EatenAt", singletable.Gt, at("2024-01-15T12:30:00Z"))))
	assert.Equal(t, []string{"m3", "m4", "m5"}, mids(mq.Where("EatenAt", singletable.Ge, at("2024-01-15T12:30:00Z"))))
	assert.Equal(t, []string{"m1", "m2"}, mids(mq.Where("EatenAt", singletable.Lt, at("2024-01-15T12:30:00Z"))))
	assert.Equal(t, []string{"m1", "m2", "m3"}, mids(mq.Where("EatenAt", singletable.Le, at("2024-01-15T12:30:00Z"))))
	assert.Equal(t, []string{"m2", "m3", "m4"}, mids(r.Meals.Query(goals.Meal{UserID: "123"}).Between("EatenAt", at("2024-01-01T00:00:00Z"), at("2024-01-31T23:59:59Z"))))
	breakfast, err := r.MealsByCategory(ctx, "123", "breakfast")
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m5"}, mealIDs(breakfast))

	// Activities on a date, with the days either side present.
	acts, err := r.ActivitiesOn(ctx, "123", "456", date("2024-01-07"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a1", "a2"}, activityIDs(acts))
	acts, err = r.GoalActivities(ctx, "456")
	require.NoError(t, err)
	assert.Equal(t, []string{"a0", "a1", "a2", "a3"}, activityIDs(acts))
	aq := r.Activities.Query(goals.Activity{UserID: "123", GoalID: "456", Date: date("2024-01-07")})
	aids := func(q *singletable.Query[goals.Activity]) []string {
		as, err := q.Collect(ctx)
		require.NoError(t, err)
		return activityIDs(as)
	}
	assert.Equal(t, []string{"a3"}, aids(aq.Where("Date", singletable.Gt, date("2024-01-07"))))
	assert.Equal(t, []string{"a0"}, aids(aq.Where("Date", singletable.Lt, date("2024-01-07"))))
	assert.Equal(t, []string{"a1", "a2", "a3"}, aids(aq.Between("Date", date("2024-01-07"), date("2024-01-08"))))

	// Updated through the repository: the Python goal moves to COMPLETED
	// with its index key in create_goal's form, the zone-less one gaining
	// "+00:00",
	// created_at is not written (the zone-less one keeps its text), and an
	// attribute the Go type does not know (description) is kept.
	_, err = r.SetGoalStatus(ctx, "123", "456", goals.GoalCompleted)
	require.NoError(t, err)
	_, err = r.SetGoalStatus(ctx, "123", "457", goals.GoalCompleted)
	require.NoError(t, err)
	get := func(pk, sk string) map[string]types.AttributeValue {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": sv(pk), "sk": sv(sk)}})
		require.NoError(t, err)
		require.NotNil(t, out.Item, "%s / %s", pk, sk)
		return out.Item
	}
	item := get("USER#123", "GOAL#456")
	assert.Equal(t, "GOALS#COMPLETED", sOf(item["gsi1_pk"]))
	assert.Equal(t, "2024-01-07T10:00:00+00:00#456", sOf(item["gsi1_sk"]))
	assert.Equal(t, "2024-01-07T10:00:00Z", sOf(item["created_at"]))
	assert.Equal(t, "COMPLETED", sOf(item["status"]))
	assert.Equal(t, null(), item["description"])
	item = get("USER#123", "GOAL#457")
	assert.Equal(t, "2024-01-03T09:00:00+00:00#457", sOf(item["gsi1_sk"]))
	assert.Equal(t, "2024-01-03T09:00:00", sOf(item["created_at"]))

	// The Python service's profile holds no guard for its email
	// until the guard migration claims it; then the email is taken.
	m, err := migrate.New(r.Table, migrate.UniqueGuards("profiles-email-guards", r.Profiles))
	require.NoError(t, err)
	_, err = m.Run(ctx, "profiles-email-guards")
	require.NoError(t, err)
	err = r.CreateProfile(ctx, goals.Profile{UserID: "999", Email: "ann@example.com", Name: "Mallory"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
}

// The repository's writes, found by the playbook's own expressions and
// shaped as its Python code reads them.
func TestSeedRepositoryWritesFoundByPython(t *testing.T) {
	ctx := context.Background()
	r, c := newRepo(t)
	table := r.Table.Name()
	require.NoError(t, r.CreateProfile(ctx, goals.Profile{UserID: "123", Email: "ann@example.com", Name: "Ann"}))
	for _, g := range []goals.Goal{
		{UserID: "123", GoalID: "456", Title: "Run 5k", Status: goals.GoalActive, Target: 5, CreatedAt: at("2024-01-07T10:00:00Z")},
		// A fraction finer than a microsecond is cut to what a Python
		// datetime holds.
		{UserID: "123", GoalID: "457", Title: "Swim", Status: goals.GoalActive, Target: 1, CreatedAt: at("2024-01-07T10:00:01.750000300Z")},
		{UserID: "321", GoalID: "900", Title: "Read", Status: goals.GoalCompleted, Target: 12, CreatedAt: at("2024-01-02T08:00:00Z")},
	} {
		require.NoError(t, r.CreateGoal(ctx, g))
	}
	for _, m := range []goals.Meal{
		{UserID: "123", MealID: "m1", EatenAt: at("2023-12-31T23:59:59Z"), Category: "dinner", Calories: 800},
		{UserID: "123", MealID: "m2", EatenAt: at("2024-01-01T00:00:00Z"), Category: "breakfast", Calories: 400},
		{UserID: "123", MealID: "m3", EatenAt: at("2024-01-30T23:59:59Z"), Category: "dinner", Calories: 700},
		{UserID: "123", MealID: "m4", EatenAt: at("2024-01-31T08:00:00.5Z"), Calories: 200},
		{UserID: "123", MealID: "m5", EatenAt: at("2024-02-01T00:00:00Z"), Category: "breakfast", Calories: 380},
	} {
		require.NoError(t, r.LogMeal(ctx, m))
	}
	for _, a := range []goals.Activity{
		{UserID: "123", GoalID: "456", Date: date("2024-01-06"), ActivityID: "a0", Kind: "run", Amount: 1},
		{UserID: "123", GoalID: "456", Date: date("2024-01-07"), ActivityID: "a1", Kind: "run", Amount: 3},
		// A time of day is cut to its date.
		{UserID: "123", GoalID: "456", Date: at("2024-01-07T18:30:00Z"), ActivityID: "a2", Kind: "run", Amount: 2},
		{UserID: "123", GoalID: "457", Date: date("2024-01-07"), ActivityID: "a3", Kind: "swim", Amount: 1},
	} {
		require.NoError(t, r.LogActivity(ctx, a))
	}

	query := func(index, cond string, values map[string]types.AttributeValue) []map[string]types.AttributeValue {
		in := &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: values}
		if index != "" {
			in.IndexName = aws.String(index)
		} else {
			in.ConsistentRead = aws.Bool(true)
		}
		out, err := c.Query(ctx, in)
		require.NoError(t, err)
		return out.Items
	}
	field := func(items []map[string]types.AttributeValue, name string) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, sOf(it[name]))
		}
		return out
	}

	// get_user_goals: pk = USER#123 AND begins_with(sk, GOAL#), and the
	// item as Goal(**item) reads it once the key attributes are popped.
	items := query("", "pk = :pk AND begins_with(sk, :sk)", map[string]types.AttributeValue{":pk": sv("USER#123"), ":sk": sv("GOAL#")})
	require.Len(t, items, 2)
	assert.Equal(t, map[string]types.AttributeValue{
		"pk": sv("USER#123"), "sk": sv("GOAL#456"), "EntityType": sv("Goal"),
		"gsi1_pk": sv("GOALS#ACTIVE"), "gsi1_sk": sv("2024-01-07T10:00:00+00:00#456"),
		"user_id": sv("123"), "goal_id": sv("456"), "title": sv("Run 5k"), "status": sv("ACTIVE"),
		"target": nv("5"), "created_at": sv("2024-01-07T10:00:00Z"),
	}, items[0])
	assert.Equal(t, "2024-01-07T10:00:01.75Z", sOf(items[1]["created_at"]))
	assert.Equal(t, "2024-01-07T10:00:01.750000+00:00#457", sOf(items[1]["gsi1_sk"]))

	// query_goals_by_status: EmailIndex, gsi1_pk = GOALS#ACTIVE, oldest first.
	items = query(goals.IndexName, "gsi1_pk = :pk", map[string]types.AttributeValue{":pk": sv("GOALS#ACTIVE")})
	assert.Equal(t, []string{"456", "457"}, field(items, "goal_id"))
	items = query(goals.IndexName, "gsi1_pk = :pk", map[string]types.AttributeValue{":pk": sv("GOALS#COMPLETED")})
	assert.Equal(t, []string{"900"}, field(items, "goal_id"))

	// Meals for a date range, as the playbook writes it:
	// between(MEAL#2024-01-01, MEAL#2024-01-31). Its upper bound sorts
	// before every key of the 31st, so the playbook's own expression stops
	// at the end of the 30th; MealsBetween includes the whole last day.
	items = query("", "pk = :pk AND sk BETWEEN :from AND :to", map[string]types.AttributeValue{
		":pk": sv("USER#123"), ":from": sv("MEAL#2024-01-01"), ":to": sv("MEAL#2024-01-31")})
	assert.Equal(t, []string{"m2", "m3"}, field(items, "meal_id"))
	meals, err := r.MealsBetween(ctx, "123", date("2024-01-01"), date("2024-01-31"))
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3", "m4"}, mealIDs(meals))
	items = query("", "pk = :pk AND begins_with(sk, :sk)", map[string]types.AttributeValue{":pk": sv("USER#123"), ":sk": sv("MEAL#")})
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5"}, field(items, "meal_id"))
	assert.Equal(t, "2024-01-31T08:00:00Z", sOf(items[3]["eaten_at"]), "cut to the second")
	assert.Equal(t, "MEAL#2024-01-31T08:00:00Z#m4", sOf(items[3]["sk"]))
	assert.NotContains(t, items[3], "category", "an uncategorised meal stores no category")
	assert.NotContains(t, items[3], "gsi1_pk", "nor an index key")

	// User's items by category: GSI1PK = USER#123#CATEGORY#breakfast.
	items = query(goals.IndexName, "gsi1_pk = :pk", map[string]types.AttributeValue{":pk": sv("USER#123#CATEGORY#breakfast")})
	assert.Equal(t, []string{"m2", "m5"}, field(items, "meal_id"))

	// Activities on a specific date: begins_with(ACTIVITY#456#2024-01-07).
	items = query("", "pk = :pk AND begins_with(sk, :sk)", map[string]types.AttributeValue{":pk": sv("USER#123"), ":sk": sv("ACTIVITY#456#2024-01-07")})
	assert.Equal(t, []string{"a1", "a2"}, field(items, "activity_id"))
	assert.Equal(t, []string{"2024-01-07", "2024-01-07"}, field(items, "date"))
	// All activities for a goal: GSI1PK = GOAL#456, begins_with(ACTIVITY#).
	items = query(goals.IndexName, "gsi1_pk = :pk AND begins_with(gsi1_sk, :sk)", map[string]types.AttributeValue{":pk": sv("GOAL#456"), ":sk": sv("ACTIVITY#")})
	assert.Equal(t, []string{"a0", "a1", "a2"}, field(items, "activity_id"))

	// A status change is found where the playbook looks for it.
	_, err = r.SetGoalStatus(ctx, "123", "456", goals.GoalCompleted)
	require.NoError(t, err)
	items = query(goals.IndexName, "gsi1_pk = :pk", map[string]types.AttributeValue{":pk": sv("GOALS#COMPLETED")})
	assert.Equal(t, []string{"900", "456"}, field(items, "goal_id"))
	assert.Equal(t, "2024-01-07T10:00:00+00:00#456", sOf(items[1]["gsi1_sk"]))
}

// The key conditions the repository sends, next to the playbook's: a meal
// range from the first second of the first day to past every meal of the
// last second of the last day; one day's activities by the playbook's
// begins_with, with the "#" that ends the date.
func TestSeedKeyConditionsAsSent(t *testing.T) {
	t.Parallel()
	r := goals.New(nil, "TABLE_NAME")
	reqs, err := r.Table.Preview(context.Background(), func(ctx context.Context) error {
		if _, err := r.MealsBetween(ctx, "123", date("2024-01-01"), date("2024-01-31")); err != nil {
			return err
		}
		_, err := r.ActivitiesOn(ctx, "123", "456", at("2024-01-07T18:30:00Z"))
		return err
	})
	require.NoError(t, err)
	require.Len(t, reqs, 2)
	values := func(i int) (string, []string) {
		in := reqs[i].Input.(*dynamodb.QueryInput)
		var vs []string
		for k := 0; k < len(in.ExpressionAttributeValues); k++ {
			vs = append(vs, sOf(in.ExpressionAttributeValues[fmt.Sprintf(":v%d", k)]))
		}
		return aws.ToString(in.KeyConditionExpression), vs
	}
	cond, vs := values(0)
	assert.Equal(t, "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2", cond)
	assert.Equal(t, []string{"USER#123", "MEAL#2024-01-01T00:00:00Z", "MEAL#2024-01-31T23:59:59Z#\U0010ffff", "Meal"}, vs)
	cond, vs = values(1)
	assert.Equal(t, "#n0 = :v0 AND begins_with(#n1, :v1)", cond)
	assert.Equal(t, []string{"USER#123", "ACTIVITY#456#2024-01-07#", "Activity"}, vs)
}
