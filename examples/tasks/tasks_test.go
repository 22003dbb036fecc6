package tasks_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/tasks"
	"github.com/singletable-go/singletable/singletabletest"
)

var update = flag.Bool("update", false, "rewrite docs/catalog.md")

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// newManager returns a manager on a fresh table with a clock that ticks one
// second per call, so creation times are distinct and ordered.
func newManager(t *testing.T) *tasks.Manager {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	m := tasks.New(client, name)
	require.NoError(t, m.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	var tick atomic.Int64
	start := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	m.Now = func() time.Time { return start.Add(time.Duration(tick.Add(1)) * time.Second) }
	return m
}

func setup(t *testing.T, m *tasks.Manager) {
	t.Helper()
	ctx := context.Background()
	for _, u := range []tasks.User{
		{UserID: "admin", Email: "admin@example.com", Groups: []string{tasks.GroupAdmins}},
		{UserID: "ann", Email: "ann@example.com", Groups: []string{tasks.GroupMembers}},
		{UserID: "bob", Email: "bob@example.com", Groups: []string{tasks.GroupMembers}},
		{UserID: "gone", Email: "gone@example.com", Groups: []string{tasks.GroupMembers}, UserStatus: tasks.UserDeactivated},
	} {
		_, err := m.CreateUser(ctx, u)
		require.NoError(t, err)
	}
}

func TestAccessPatterns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManager(t)
	setup(t, m)

	// P2: user profile.
	u, err := m.GetUser(ctx, "ann")
	require.NoError(t, err)
	assert.Equal(t, "ann@example.com", u.Email)
	assert.Equal(t, tasks.UserActive, u.UserStatus)
	_, err = m.GetUser(ctx, "nobody")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = m.CreateUser(ctx, tasks.User{UserID: "ann", Email: "x@example.com", Groups: []string{tasks.GroupMembers}})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = m.CreateUser(ctx, tasks.User{UserID: "z", Email: "z@example.com", Groups: []string{"Owners"}})
	require.ErrorIs(t, err, tasks.ErrInvalid)

	// T1 and P1: tasks.
	for i, p := range []tasks.Priority{tasks.PriorityHigh, tasks.PriorityLow, "", tasks.PriorityHigh, tasks.PriorityMedium} {
		_, err := m.CreateTask(ctx, "admin", tasks.Task{TaskID: fmt.Sprintf("t%d", i+1), Title: fmt.Sprintf("Task %d", i+1), Priority: p})
		require.NoError(t, err)
	}
	task, err := m.GetTask(ctx, "t3")
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusOpen, task.Status)
	assert.Equal(t, tasks.PriorityMedium, task.Priority)
	assert.Equal(t, "admin", task.CreatedBy)
	_, err = m.GetTask(ctx, "t99")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t1", Title: "again"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = m.CreateTask(ctx, "ann", tasks.Task{TaskID: "t9", Title: "mine"})
	require.ErrorIs(t, err, tasks.ErrForbidden)
	_, err = m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t9", Title: "x", Priority: "URGENT"})
	require.ErrorIs(t, err, tasks.ErrInvalid)
	_, err = m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t9", Title: "x", Priority: "OPEN"})
	require.ErrorIs(t, err, tasks.ErrInvalid, "the design's swapped enums are not accepted")

	// P7: assignments, duplicates refused by the conditional write.
	for _, a := range [][2]string{{"t1", "ann"}, {"t1", "bob"}, {"t2", "ann"}, {"t4", "ann"}} {
		_, err := m.Assign(ctx, "admin", a[0], a[1])
		require.NoError(t, err)
	}
	_, err = m.Assign(ctx, "admin", "t1", "ann")
	require.ErrorIs(t, err, tasks.ErrAlreadyAssigned)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = m.Assign(ctx, "ann", "t3", "bob")
	require.ErrorIs(t, err, tasks.ErrForbidden)
	_, err = m.Assign(ctx, "admin", "t99", "bob")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = m.Assign(ctx, "admin", "t3", "nobody")
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = m.Assign(ctx, "admin", "t3", "gone")
	require.ErrorIs(t, err, tasks.ErrInactive)

	// P3: a task's assignments.
	as, err := m.TaskAssignments(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ann", "bob"}, assignees(as))
	assert.Equal(t, "admin", as[0].AssignedBy)

	// P4: a user's tasks through GSI1, then one batch get.
	ts, err := m.UserTasks(ctx, "ann")
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t2", "t4"}, taskIDs(ts))
	assert.Equal(t, "Task 4", ts[2].Title)
	ts, err = m.UserTasks(ctx, "admin")
	require.NoError(t, err)
	assert.Empty(t, ts)

	// P6: is assigned.
	ok, err := m.IsAssigned(ctx, "t1", "bob")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = m.IsAssigned(ctx, "t2", "bob")
	require.NoError(t, err)
	assert.False(t, ok)

	// Only assigned members (or admins) change a task's status.
	task, err = m.SetStatus(ctx, "ann", "t1", tasks.StatusInProgress)
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusInProgress, task.Status)
	_, err = m.SetStatus(ctx, "bob", "t2", tasks.StatusCompleted)
	require.ErrorIs(t, err, tasks.ErrForbidden)
	task, err = m.GetTask(ctx, "t2")
	require.NoError(t, err)
	assert.Equal(t, tasks.StatusOpen, task.Status, "the refused change wrote nothing")
	_, err = m.SetStatus(ctx, "admin", "t2", tasks.StatusCompleted)
	require.NoError(t, err)
	_, err = m.SetStatus(ctx, "ann", "t4", "HIGH")
	require.ErrorIs(t, err, tasks.ErrInvalid, "a priority is not a status")
	_, err = m.SetStatus(ctx, "ann", "t99", tasks.StatusClosed)
	require.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = m.SetStatus(ctx, "gone", "t1", tasks.StatusClosed)
	require.ErrorIs(t, err, tasks.ErrInactive)
	_, err = m.SetStatus(ctx, "stranger", "t1", tasks.StatusClosed)
	require.ErrorIs(t, err, tasks.ErrForbidden)
	// After unassignment the member can no longer change it.
	require.NoError(t, m.Unassign(ctx, "admin", "t4", "ann"))
	_, err = m.SetStatus(ctx, "ann", "t4", tasks.StatusClosed)
	require.ErrorIs(t, err, tasks.ErrForbidden)
	require.ErrorIs(t, m.Unassign(ctx, "ann", "t1", "bob"), tasks.ErrForbidden)
	// A deactivated member loses access.
	require.NoError(t, m.Deactivate(ctx, "bob"))
	_, err = m.SetStatus(ctx, "bob", "t1", tasks.StatusClosed)
	require.ErrorIs(t, err, tasks.ErrInactive)

	task, err = m.SetPriority(ctx, "admin", "t5", tasks.PriorityLow)
	require.NoError(t, err)
	assert.Equal(t, tasks.PriorityLow, task.Priority)
	_, err = m.SetPriority(ctx, "ann", "t5", tasks.PriorityHigh)
	require.ErrorIs(t, err, tasks.ErrForbidden)
	_, err = m.SetPriority(ctx, "admin", "t99", tasks.PriorityHigh)
	require.ErrorIs(t, err, singletable.ErrNotFound)

	// P5: tasks by status, newest first, paginated; GSI2 followed the changes.
	page, err := m.TasksByStatus(ctx, tasks.StatusOpen, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"t5", "t4", "t3"}, taskIDs(page.Items))
	page, err = m.TasksByStatus(ctx, tasks.StatusOpen, 2, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"t5", "t4"}, taskIDs(page.Items))
	page, err = m.TasksByStatus(ctx, tasks.StatusOpen, 2, page.Cursor)
	require.NoError(t, err)
	assert.Equal(t, []string{"t3"}, taskIDs(page.Items))
	assert.Empty(t, page.Cursor)
	page, err = m.TasksByStatus(ctx, tasks.StatusInProgress, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"t1"}, taskIDs(page.Items))
	page, err = m.TasksByStatus(ctx, tasks.StatusCompleted, 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"t2"}, taskIDs(page.Items))
	_, err = m.TasksByStatus(ctx, "LOW", 0, "")
	require.ErrorIs(t, err, tasks.ErrInvalid)
	_, err = m.TasksByStatus(ctx, tasks.StatusOpen, 2, "bogus")
	require.ErrorIs(t, err, singletable.ErrInvalidCursor)
}

func TestConcurrentDuplicateAssignment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManager(t)
	setup(t, m)
	_, err := m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t1", Title: "Race"})
	require.NoError(t, err)
	var wins, dups atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Assign(ctx, "admin", "t1", "ann")
			switch {
			case err == nil:
				wins.Add(1)
			case assert.ErrorIs(t, err, tasks.ErrAlreadyAssigned):
				dups.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load())
	assert.Equal(t, int32(7), dups.Load())
	as, err := m.TaskAssignments(ctx, "t1")
	require.NoError(t, err)
	assert.Len(t, as, 1)
}

func TestConcurrentStatusChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManager(t)
	setup(t, m)
	_, err := m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t1", Title: "Race"})
	require.NoError(t, err)
	// Many concurrent changes: each succeeds or fails with a condition
	// failure; none is silently overwritten, and GSI2 holds the task once,
	// under its final status.
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.SetStatus(ctx, "admin", "t1", tasks.Statuses[i%len(tasks.Statuses)])
			if err == nil {
				ok.Add(1)
			} else {
				assert.ErrorIs(t, err, singletable.ErrConditionFailed)
			}
		}()
	}
	wg.Wait()
	assert.GreaterOrEqual(t, ok.Load(), int32(1))
	final, err := m.GetTask(ctx, "t1")
	require.NoError(t, err)
	n := 0
	for _, s := range tasks.Statuses {
		page, err := m.TasksByStatus(ctx, s, 0, "")
		require.NoError(t, err)
		for _, tk := range page.Items {
			if tk.TaskID == "t1" {
				n++
				assert.Equal(t, final.Status, s)
			}
		}
	}
	assert.Equal(t, 1, n)
}

func TestCatalogIsCurrent(t *testing.T) {
	t.Parallel()
	m := tasks.New(nil, tasks.TableName)
	got := catalog.New(m.Table, m.AccessPatterns()...).Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "catalog.md"), got, *update)
	assert.NotContains(t, got, "- error")
	singletabletest.Golden(t, filepath.Join("docs", "table.svg"), catalog.Picture(m.Table, sampleItems(t, m)), *update)
}

func assignees(as []tasks.Assignment) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.UserID)
	}
	return out
}

func taskIDs(ts []tasks.Task) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.TaskID)
	}
	return out
}

// SetStatus gives the CreatedAt it read with the status, so the library
// has every field of the GSI2 key and does not read the task again: a
// status change is the actor's and the task's reads, then one write.
func TestSetStatusSendsNoPlanRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	var mu sync.Mutex
	var ops []string
	m := tasks.New(client, name, func(o *singletable.TableOptions) {
		o.Observe = func(_ context.Context, ob *singletable.Observation) {
			op := ob.Op + " " + ob.Pattern
			if ob.PlanRead {
				op += " (plan read)"
			}
			mu.Lock()
			ops = append(ops, op)
			mu.Unlock()
		}
	})
	require.NoError(t, m.Table.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	setup(t, m)
	_, err := m.CreateTask(ctx, "admin", tasks.Task{TaskID: "t1", Title: "Write", Priority: tasks.PriorityHigh})
	require.NoError(t, err)
	_, err = m.Assign(ctx, "admin", "t1", "ann")
	require.NoError(t, err)

	ops = nil
	_, err = m.SetStatus(ctx, "admin", "t1", tasks.StatusInProgress)
	require.NoError(t, err)
	assert.Equal(t, []string{"GetItem P2", "GetItem P1", "UpdateItem T2"}, ops)
	ops = nil
	_, err = m.SetStatus(ctx, "ann", "t1", tasks.StatusCompleted)
	require.NoError(t, err)
	assert.Equal(t, []string{"GetItem P2", "GetItem P1", "TransactWriteItems T3"}, ops)

	// Without CreatedAt the update is accepted too: the library reads it
	// (a plan read) to render the GSI2 key. SetStatus saves that read.
	ops = nil
	_, err = m.Tasks.Update(tasks.Task{TaskID: "t1"}).Set("Status", tasks.StatusClosed).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"GetItem  (plan read)", "UpdateItem "}, ops)
	page, err := m.TasksByStatus(ctx, tasks.StatusClosed, 0, "")
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "t1", page.Items[0].TaskID)
}
