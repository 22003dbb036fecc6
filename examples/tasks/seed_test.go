package tasks_test

// The task manager's design is run by a JavaScript service too: these
// tests write items as its code does (the design's items, with its key
// strings, its EntityType values, its GSI1 and GSI2 attributes, times in
// the form Date.prototype.toISOString() writes, and attributes the
// DocumentClient leaves out when undefined) and read, query, update and
// extend them through the manager; and they find the manager's own writes
// with the design's GetItem and Query expressions (patterns 1 to 7). The
// design gives every time as <timestamp>: the millisecond form is the
// one the issue describes, an assumption about the JavaScript code.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/tasks"
)

func TestSeedKeyStrings(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 15, 11, 0, 0, 0, time.UTC)
	render := func(pk, sk string, err error) [2]string {
		require.NoError(t, err)
		return [2]string{pk, sk}
	}
	for _, c := range []struct {
		name string
		got  [2]string
		want [2]string
	}{
		{"task", render(tasks.Tasks.RenderKeys(tasks.Task{TaskID: "123"})), [2]string{"TASK#123", "METADATA"}},
		{"task GSI2", render(tasks.Tasks.RenderIndexKeys("GSI2", tasks.Task{Status: tasks.StatusOpen, CreatedAt: at})),
			[2]string{"STATUS#OPEN", "CREATED_AT#2025-01-15T11:00:00.000Z"}},
		{"task GSI2, milliseconds", render(tasks.Tasks.RenderIndexKeys("GSI2", tasks.Task{Status: tasks.StatusInProgress, CreatedAt: at.Add(999 * time.Millisecond)})),
			[2]string{"STATUS#IN_PROGRESS", "CREATED_AT#2025-01-15T11:00:00.999Z"}},
		{"task GSI2, another zone", render(tasks.Tasks.RenderIndexKeys("GSI2", tasks.Task{Status: tasks.StatusClosed, CreatedAt: at.In(time.FixedZone("CET", 3600))})),
			[2]string{"STATUS#CLOSED", "CREATED_AT#2025-01-15T11:00:00.000Z"}},
		{"task, UUID", render(tasks.Tasks.RenderKeys(tasks.Task{TaskID: "0b5e3c1a-9f0e-4c6b-8a57-3d2f1e0c9b8a"})),
			[2]string{"TASK#0b5e3c1a-9f0e-4c6b-8a57-3d2f1e0c9b8a", "METADATA"}},
		{"user", render(tasks.Users.RenderKeys(tasks.User{UserID: "456"})), [2]string{"USER#456", "PROFILE"}},
		{"assignment", render(tasks.Assignments.RenderKeys(tasks.Assignment{TaskID: "123", UserID: "789"})), [2]string{"TASK#123", "ASSIGNMENT#789"}},
		{"assignment GSI1", render(tasks.Assignments.RenderIndexKeys("GSI1", tasks.Assignment{TaskID: "123", UserID: "789"})), [2]string{"USER#789", "TASK#123"}},
		{"IDs holding # and spaces, verbatim", render(tasks.Assignments.RenderKeys(tasks.Assignment{TaskID: "a#b c", UserID: "x#y%z"})), [2]string{"TASK#a#b c", "ASSIGNMENT#x#y%z"}},
		{"… in GSI1 too", render(tasks.Assignments.RenderIndexKeys("GSI1", tasks.Assignment{TaskID: "a#b c", UserID: "x#y%z"})), [2]string{"USER#x#y%z", "TASK#a#b c"}},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
	as, err := tasks.Assignments.ParseKeys("TASK#123", "ASSIGNMENT#789")
	require.NoError(t, err)
	assert.Equal(t, tasks.Assignment{TaskID: "123", UserID: "789"}, as)
	as, err = tasks.Assignments.ParseKeys("TASK#a#b c", "ASSIGNMENT#x#y%z")
	require.NoError(t, err)
	assert.Equal(t, tasks.Assignment{TaskID: "a#b c", UserID: "x#y%z"}, as)
	tk, err := tasks.Tasks.ParseKeys("TASK#a b%c", "METADATA")
	require.NoError(t, err)
	assert.Equal(t, "a b%c", tk.TaskID, "raw: no escaping either way")

	// CreatedAt is stored with the same format (,rfc3339milli), so the key
	// is cut to the millisecond the attribute stores, and both agree.
	_, sk, err := tasks.Tasks.RenderIndexKeys("GSI2", tasks.Task{Status: tasks.StatusOpen, CreatedAt: at.Add(1500 * time.Microsecond)})
	require.NoError(t, err)
	assert.Equal(t, "CREATED_AT#2025-01-15T11:00:00.001Z", sk)
	// What the formats cannot write is refused before the network.
	var ke *singletable.KeyError
	_, _, err = tasks.Tasks.RenderKeys(tasks.Task{})
	assert.ErrorAs(t, err, &ke, "an empty raw ID")
	_, _, err = tasks.Assignments.RenderIndexKeys("GSI1", tasks.Assignment{TaskID: "123"})
	assert.ErrorAs(t, err, &ke, "an empty raw user ID")
}

func sv(s string) types.AttributeValue   { return &types.AttributeValueMemberS{Value: s} }
func sOf(av types.AttributeValue) string { s, _ := av.(*types.AttributeValueMemberS); return s.Value }

// at is 2025-01-15T11:00:00.000Z plus ms milliseconds.
func at(ms int) time.Time {
	return time.Date(2025, 1, 15, 11, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// iso is JavaScript's Date.prototype.toISOString(), the time form the
// JavaScript service is assumed to write.
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// jsTable creates an empty table, as the JavaScript service found it, and
// returns a manager on it (its clock at 12:00:00.250123456Z, ticking a
// millisecond a call), with the raw client and the table's name.
func jsTable(t *testing.T) (*tasks.Manager, singletable.Client, string) {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	m := tasks.New(client, name)
	require.NoError(t, m.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	tick := 0
	m.Now = func() time.Time { tick++; return at(3_600_250 + tick).Add(123_456 * time.Nanosecond) }
	return m, client, name
}

// jsPut is the JavaScript service's PutCommand, with its condition if any.
func jsPut(t *testing.T, c singletable.Client, table string, item map[string]types.AttributeValue, cond string) error {
	t.Helper()
	in := &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}
	if cond != "" {
		in.ConditionExpression = aws.String(cond)
	}
	_, err := c.PutItem(context.Background(), in)
	return err
}

// The design's pattern 7 condition.
const noDuplicate = "attribute_not_exists(PK) AND attribute_not_exists(SK)"

func jsUser(id, group string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": sv("USER#" + id), "SK": sv("PROFILE"), "EntityType": sv("USER"),
		"UserId": sv(id), "Email": sv(id + "@example.com"), "UserStatus": sv("ACTIVE"),
		"Groups":    &types.AttributeValueMemberL{Value: []types.AttributeValue{sv(group)}},
		"CreatedAt": sv(iso(at(-86_400_000))),
	}
}

// jsTask is a task as the JavaScript service creates it; an empty
// description is left out, as the DocumentClient does with undefined.
func jsTask(id, status, description string, created time.Time) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"PK": sv("TASK#" + id), "SK": sv("METADATA"), "EntityType": sv("TASK"),
		"TaskId": sv(id), "Title": sv("Task " + id), "Priority": sv("HIGH"), "Status": sv(status),
		"CreatedBy": sv("456"), "CreatedAt": sv(iso(created)), "UpdatedAt": sv(iso(created)),
		"GSI2PK": sv("STATUS#" + status), "GSI2SK": sv("CREATED_AT#" + iso(created)),
	}
	if description != "" {
		item["Description"] = sv(description)
	}
	return item
}

func jsAssignment(taskID, userID string, assigned time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": sv("TASK#" + taskID), "SK": sv("ASSIGNMENT#" + userID), "EntityType": sv("ASSIGNMENT"),
		"TaskId": sv(taskID), "UserId": sv(userID), "AssignedBy": sv("456"), "AssignedAt": sv(iso(assigned)),
		"GSI1PK": sv("USER#" + userID), "GSI1SK": sv("TASK#" + taskID),
	}
}

// writeAsJavaScript writes the design's items as the JavaScript service
// does: an admin 456 and members 788, 789, 790; OPEN tasks 123, 124, 125,
// 126 created at 11:00:00.000, .001, .999 and 11:00:01.000 (the millisecond
// and second boundaries) and task 127 IN_PROGRESS at .500; task 123
// assigned to all three members and tasks 124 and 125 to 789, each with the
// design's conditional put.
func writeAsJavaScript(t *testing.T, c singletable.Client, table string) {
	t.Helper()
	require.NoError(t, jsPut(t, c, table, jsUser("456", "Admins"), ""))
	for _, id := range []string{"788", "789", "790"} {
		require.NoError(t, jsPut(t, c, table, jsUser(id, "Members"), ""))
	}
	for _, tk := range []struct {
		id, status, description string
		ms                      int
	}{{"123", "OPEN", "The first", 0}, {"124", "OPEN", "", 1}, {"125", "OPEN", "", 999}, {"126", "OPEN", "", 1000}, {"127", "IN_PROGRESS", "", 500}} {
		require.NoError(t, jsPut(t, c, table, jsTask(tk.id, tk.status, tk.description, at(tk.ms)), ""))
	}
	for _, a := range [][2]string{{"123", "788"}, {"123", "789"}, {"123", "790"}, {"124", "789"}, {"125", "789"}} {
		require.NoError(t, jsPut(t, c, table, jsAssignment(a[0], a[1], at(2000)), noDuplicate))
	}
}

func TestSeedJavaScriptItemsThroughTheManager(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c, table := jsTable(t)
	writeAsJavaScript(t, c, table)

	// Patterns 1, 2 and 6 on the JavaScript service's items.
	task, err := m.GetTask(ctx, "123")
	require.NoError(t, err)
	assert.Equal(t, tasks.Task{TaskID: "123", Title: "Task 123", Description: "The first", Priority: tasks.PriorityHigh,
		Status: tasks.StatusOpen, CreatedBy: "456", CreatedAt: at(0), UpdatedAt: at(0)}, task)
	task, err = m.GetTask(ctx, "125")
	require.NoError(t, err)
	assert.Empty(t, task.Description, "left out by the DocumentClient")
	assert.Equal(t, at(999), task.CreatedAt)
	admin, err := m.GetUser(ctx, "456")
	require.NoError(t, err)
	assert.True(t, admin.IsAdmin())
	assert.Equal(t, at(-86_400_000), admin.CreatedAt)
	ok, err := m.IsAssigned(ctx, "124", "789")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = m.IsAssigned(ctx, "124", "788")
	require.NoError(t, err)
	assert.False(t, ok)
	// Patterns 3 and 4.
	as, err := m.TaskAssignments(ctx, "123")
	require.NoError(t, err)
	assert.Equal(t, []string{"788", "789", "790"}, assignees(as))
	assert.Equal(t, at(2000), as[0].AssignedAt)
	ts, err := m.UserTasks(ctx, "789")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"123", "124", "125"}, taskIDs(ts))
	// Pattern 5, newest first: .999 sorts before 01.000, as times do.
	page, err := m.TasksByStatus(ctx, tasks.StatusOpen, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"126", "125", "124", "123"}, taskIDs(page.Items))
	page, err = m.TasksByStatus(ctx, tasks.StatusOpen, 2, "")
	require.NoError(t, err)
	page, err = m.TasksByStatus(ctx, tasks.StatusOpen, 2, page.Cursor)
	require.NoError(t, err)
	assert.Equal(t, []string{"124", "123"}, taskIDs(page.Items), "the cursor resumes inside the JavaScript keys")

	// Every sort operator on GSI2's CREATED_AT#<toISOString()>, at the
	// millisecond (.000/.001) and second (.999/01.000) boundaries.
	byCreated := func(q *singletable.Query[tasks.Task]) []string {
		ts, err := q.Collect(ctx)
		require.NoError(t, err)
		return taskIDs(ts)
	}
	gsi2 := func(ms int) *singletable.Query[tasks.Task] {
		return m.Tasks.QueryIndex("GSI2", tasks.Task{Status: tasks.StatusOpen, CreatedAt: at(ms)})
	}
	assert.Equal(t, []string{"124"}, byCreated(gsi2(1).Where("CreatedAt", singletable.Eq, at(1))))
	assert.Equal(t, []string{"125", "126"}, byCreated(gsi2(1).Where("CreatedAt", singletable.Gt, at(1))))
	assert.Equal(t, []string{"124", "125", "126"}, byCreated(gsi2(1).Where("CreatedAt", singletable.Ge, at(1))))
	assert.Equal(t, []string{"123"}, byCreated(gsi2(1).Where("CreatedAt", singletable.Lt, at(1))))
	assert.Equal(t, []string{"123", "124"}, byCreated(gsi2(1).Where("CreatedAt", singletable.Le, at(1))))
	assert.Equal(t, []string{"123", "124", "125"}, byCreated(gsi2(1000).Where("CreatedAt", singletable.Lt, at(1000))), "the second boundary")
	assert.Equal(t, []string{"126"}, byCreated(gsi2(999).Where("CreatedAt", singletable.Gt, at(999))))
	assert.Empty(t, byCreated(gsi2(2).Where("CreatedAt", singletable.Eq, at(2))))
	assert.Equal(t, []string{"124", "125"}, byCreated(gsi2(1).Between("CreatedAt", at(1), at(999))))
	assert.Equal(t, []string{"123", "124", "125"}, byCreated(gsi2(0).BeginsWith("CreatedAt", "2025-01-15T11:00:00.")), "the second 11:00:00")
	assert.Equal(t, []string{"126"}, byCreated(gsi2(0).BeginsWith("CreatedAt", "2025-01-15T11:00:01")))
	// And on the raw IDs of the table's and GSI1's sort keys.
	byUser := func(q *singletable.Query[tasks.Assignment]) []string {
		as, err := q.Collect(ctx)
		require.NoError(t, err)
		return assignees(as)
	}
	a789 := tasks.Assignment{TaskID: "123", UserID: "789"}
	assert.Equal(t, []string{"789"}, byUser(m.Assignments.Query(a789).Where("UserID", singletable.Eq, a789.UserID)))
	assert.Equal(t, []string{"790"}, byUser(m.Assignments.Query(a789).Where("UserID", singletable.Gt, a789.UserID)))
	assert.Equal(t, []string{"788", "789"}, byUser(m.Assignments.Query(a789).Where("UserID", singletable.Le, a789.UserID)))
	assert.Equal(t, []string{"789", "790"}, byUser(m.Assignments.Query(a789).Between("UserID", a789.UserID, "790")))
	assert.Equal(t, []string{"788", "789", "790"}, byUser(m.Assignments.Query(a789).BeginsWith("UserID", "7")))
	byTask := func(q *singletable.Query[tasks.Assignment]) []string {
		as, err := q.Collect(ctx)
		require.NoError(t, err)
		var out []string
		for _, a := range as {
			out = append(out, a.TaskID)
		}
		return out
	}
	g1 := m.Assignments.QueryIndex("GSI1", tasks.Assignment{UserID: "789", TaskID: "124"})
	assert.Equal(t, []string{"124", "125"}, byTask(g1.Where("TaskID", singletable.Ge, "124")))
	assert.Equal(t, []string{"123"}, byTask(g1.Where("TaskID", singletable.Lt, "124")))
	assert.Equal(t, []string{"125"}, byTask(g1.BeginsWith("TaskID", "125")))

	// Commands on the JavaScript service's items.
	_, err = m.Assign(ctx, "456", "123", "789")
	require.ErrorIs(t, err, tasks.ErrAlreadyAssigned, "its conditional put's assignment refuses a duplicate here")
	_, err = m.SetStatus(ctx, "789", "124", tasks.StatusInProgress) // a member, through its assignment
	require.NoError(t, err)
	_, err = m.SetStatus(ctx, "788", "124", tasks.StatusCompleted)
	require.ErrorIs(t, err, tasks.ErrForbidden, "788 is not assigned to 124")
	changed, err := m.SetStatus(ctx, "456", "123", tasks.StatusCompleted) // the admin
	require.NoError(t, err)
	stored, err := m.GetTask(ctx, "123")
	require.NoError(t, err)
	assert.Equal(t, stored, changed, "the clock is cut to the millisecond the attribute stores")
	assert.Zero(t, stored.UpdatedAt.Nanosecond()%int(time.Millisecond))
	_, err = m.SetPriority(ctx, "456", "125", tasks.PriorityLow)
	require.NoError(t, err)
	require.NoError(t, m.Deactivate(ctx, "790"))
	_, err = m.SetStatus(ctx, "790", "123", tasks.StatusClosed)
	require.ErrorIs(t, err, tasks.ErrInactive)
	_, err = m.CreateUser(ctx, tasks.User{UserID: "901", Email: "901@example.com", Groups: []string{tasks.GroupMembers}})
	require.NoError(t, err)
	_, err = m.CreateTask(ctx, "456", tasks.Task{TaskID: "200", Title: "From Go"})
	require.NoError(t, err)
	_, err = m.Assign(ctx, "456", "200", "789")
	require.NoError(t, err)
	_, err = m.Assign(ctx, "456", "200", "901")
	require.NoError(t, err)

	// The JavaScript service's own reads find all of it.
	get := func(pk, sk string) map[string]types.AttributeValue {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"PK": sv(pk), "SK": sv(sk)}, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		require.NotNil(t, out.Item, "%s / %s", pk, sk)
		return out.Item
	}
	t123 := get("TASK#123", "METADATA") // pattern 1
	assert.Equal(t, "COMPLETED", sOf(t123["Status"]))
	assert.Equal(t, "STATUS#COMPLETED", sOf(t123["GSI2PK"]))
	assert.Equal(t, "CREATED_AT#2025-01-15T11:00:00.000Z", sOf(t123["GSI2SK"]), "the JavaScript key's bytes, kept")
	assert.Equal(t, "2025-01-15T11:00:00.000Z", sOf(t123["CreatedAt"]))
	assert.Regexp(t, `^2025-01-15T12:00:00\.\d{3}Z$`, sOf(t123["UpdatedAt"]))
	assert.Equal(t, "TASK", sOf(t123["EntityType"]))
	assert.Equal(t, "LOW", sOf(get("TASK#125", "METADATA")["Priority"]))
	t200 := get("TASK#200", "METADATA")
	assert.Equal(t, "200", sOf(t200["TaskId"]))
	assert.Equal(t, "OPEN", sOf(t200["Status"]))
	assert.Equal(t, "MEDIUM", sOf(t200["Priority"]))
	assert.Equal(t, "456", sOf(t200["CreatedBy"]))
	assert.Equal(t, "STATUS#OPEN", sOf(t200["GSI2PK"]))
	assert.Equal(t, "CREATED_AT#"+sOf(t200["CreatedAt"]), sOf(t200["GSI2SK"]))
	assert.Regexp(t, `^2025-01-15T12:00:00\.\d{3}Z$`, sOf(t200["CreatedAt"]))
	u901 := get("USER#901", "PROFILE") // pattern 2
	assert.Equal(t, "USER", sOf(u901["EntityType"]))
	assert.Equal(t, "901", sOf(u901["UserId"]))
	assert.Equal(t, "ACTIVE", sOf(u901["UserStatus"]))
	assert.Equal(t, &types.AttributeValueMemberL{Value: []types.AttributeValue{sv("Members")}}, u901["Groups"])
	assert.Equal(t, "DEACTIVATED", sOf(get("USER#790", "PROFILE")["UserStatus"]))
	a := get("TASK#200", "ASSIGNMENT#901") // pattern 6
	assert.Equal(t, "ASSIGNMENT", sOf(a["EntityType"]))
	assert.Equal(t, "456", sOf(a["AssignedBy"]))
	assert.Equal(t, "USER#901", sOf(a["GSI1PK"]))
	assert.Equal(t, "TASK#200", sOf(a["GSI1SK"]))
	assert.Regexp(t, `^2025-01-15T12:00:00\.\d{3}Z$`, sOf(a["AssignedAt"]))

	query := func(index, cond string, values map[string]types.AttributeValue) []map[string]types.AttributeValue {
		in := &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: values}
		if index != "" {
			in.IndexName = aws.String(index)
		}
		out, err := c.Query(ctx, in)
		require.NoError(t, err)
		return out.Items
	}
	attr := func(items []map[string]types.AttributeValue, name string) []string {
		var out []string
		for _, it := range items {
			out = append(out, sOf(it[name]))
		}
		return out
	}
	// Pattern 3.
	assert.Equal(t, []string{"789", "901"}, attr(query("", "PK = :taskId AND begins_with(SK, :assignment)",
		map[string]types.AttributeValue{":taskId": sv("TASK#200"), ":assignment": sv("ASSIGNMENT#")}), "UserId"))
	// Pattern 4: the manager's assignment is among the JavaScript ones.
	assert.Equal(t, []string{"TASK#123", "TASK#124", "TASK#125", "TASK#200"}, attr(query("GSI1", "GSI1PK = :userId",
		map[string]types.AttributeValue{":userId": sv("USER#789")}), "GSI1SK"))
	// Pattern 5: each task under its status, in creation order.
	assert.Equal(t, []string{"125", "126", "200"}, attr(query("GSI2", "GSI2PK = :status",
		map[string]types.AttributeValue{":status": sv("STATUS#OPEN")}), "TaskId"))
	assert.Equal(t, []string{"124", "127"}, attr(query("GSI2", "GSI2PK = :status",
		map[string]types.AttributeValue{":status": sv("STATUS#IN_PROGRESS")}), "TaskId"))
	assert.Equal(t, []string{"123"}, attr(query("GSI2", "GSI2PK = :status",
		map[string]types.AttributeValue{":status": sv("STATUS#COMPLETED")}), "TaskId"))
	// Pattern 7: the JavaScript service's conditional put refuses the
	// manager's assignment as a duplicate.
	err = jsPut(t, c, table, jsAssignment("200", "901", at(5000)), noDuplicate)
	var ccf *types.ConditionalCheckFailedException
	require.True(t, errors.As(err, &ccf), "got %v", err)

	// The manager unassigns a JavaScript assignment: gone for both.
	require.NoError(t, m.Unassign(ctx, "456", "125", "789"))
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": sv("TASK#125"), "SK": sv("ASSIGNMENT#789")}})
	require.NoError(t, err)
	assert.Nil(t, out.Item)
	require.NoError(t, jsPut(t, c, table, jsAssignment("125", "789", at(6000)), noDuplicate), "free to assign again")
}

// The JavaScript service and the manager assign the same task to the
// same user at once: exactly one assignment is written, by one of them.
func TestSeedDuplicateAssignmentRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c, table := jsTable(t)
	m.Now = func() time.Time { return at(3_600_000) } // called concurrently
	require.NoError(t, jsPut(t, c, table, jsUser("456", "Admins"), ""))
	require.NoError(t, jsPut(t, c, table, jsUser("789", "Members"), ""))
	require.NoError(t, jsPut(t, c, table, jsTask("123", "OPEN", "", at(0)), ""))

	var wg sync.WaitGroup
	var wins, refused atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				// A put meeting the manager's transaction in flight is
				// refused with TransactionConflictException; the writer
				// retries it.
				var tce *types.TransactionConflictException
				for err = jsPut(t, c, table, jsAssignment("123", "789", at(i)), noDuplicate); errors.As(err, &tce); {
					err = jsPut(t, c, table, jsAssignment("123", "789", at(i)), noDuplicate)
				}
			} else {
				_, err = m.Assign(ctx, "456", "123", "789")
			}
			var ccf *types.ConditionalCheckFailedException
			switch {
			case err == nil:
				wins.Add(1)
			case errors.As(err, &ccf), errors.Is(err, tasks.ErrAlreadyAssigned):
				refused.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load())
	assert.Equal(t, int32(7), refused.Load())
	as, err := m.TaskAssignments(ctx, "123")
	require.NoError(t, err)
	assert.Len(t, as, 1)
}

// The design lists the Priority and Status enums swapped. A writer that
// followed the list literally stores Status "HIGH" and Priority "OPEN":
// the manager reads such a task as stored, and moves it to a real status
// and priority (and out of GSI2's STATUS#HIGH partition) when an admin
// sets them.
func TestSeedSwappedEnums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c, table := jsTable(t)
	require.NoError(t, jsPut(t, c, table, jsUser("456", "Admins"), ""))
	item := jsTask("300", "HIGH", "", at(0))
	item["Priority"] = sv("OPEN")
	require.NoError(t, jsPut(t, c, table, item, ""))

	task, err := m.GetTask(ctx, "300")
	require.NoError(t, err)
	assert.Equal(t, tasks.Status("HIGH"), task.Status)
	assert.Equal(t, tasks.Priority("OPEN"), task.Priority)
	_, err = m.TasksByStatus(ctx, "HIGH", 0, "")
	require.ErrorIs(t, err, tasks.ErrInvalid, "a priority is not a status to list")

	_, err = m.SetStatus(ctx, "456", "300", tasks.StatusOpen)
	require.NoError(t, err)
	_, err = m.SetPriority(ctx, "456", "300", tasks.PriorityHigh)
	require.NoError(t, err)
	task, err = m.GetTask(ctx, "300")
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusOpen, task.Status)
	assert.Equal(t, tasks.PriorityHigh, task.Priority)
	page, err := m.TasksByStatus(ctx, tasks.StatusOpen, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"300"}, taskIDs(page.Items))
	n, err := m.Tasks.QueryIndex("GSI2", tasks.Task{Status: "HIGH"}).Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
}
