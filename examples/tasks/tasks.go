// Package tasks implements the task manager in one table: tasks,
// user profiles and task assignments, a GSI for a user's tasks and a GSI
// for tasks by status, newest first. Duplicate assignments are refused by
// a conditional write, and only an assigned member (or an admin) may change
// a task's status.
//
// A JavaScript service runs the same design on the same table, so every
// item is in its formats: IDs verbatim in the keys (TASK#123), times in
// UTC ISO 8601 with milliseconds (2025-01-15T11:00:00.000Z), in GSI2's
// sort key (CREATED_AT#2025-01-15T11:00:00.000Z) and in the time
// attributes, and the design's attribute names and EntityType values.
// The design writes every time as <timestamp>; the millisecond form is
// the one the issue describes, what JavaScript's toISOString() writes: an
// assumption about the JavaScript service's code.
//
// The design's enums are swapped (its Priority lists statuses and its Status
// lists priorities); here Status is OPEN | IN_PROGRESS | COMPLETED | CLOSED
// and Priority is LOW | MEDIUM | HIGH.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// TableName is the design's table.
const TableName = "task-manager-sandbox-tasks"

// Status is a task's state.
type Status string

// Task statuses.
const (
	StatusOpen       Status = "OPEN"
	StatusInProgress Status = "IN_PROGRESS"
	StatusCompleted  Status = "COMPLETED"
	StatusClosed     Status = "CLOSED"
)

// Statuses lists every status.
var Statuses = []Status{StatusOpen, StatusInProgress, StatusCompleted, StatusClosed}

// Priority is a task's priority.
type Priority string

// Task priorities.
const (
	PriorityLow    Priority = "LOW"
	PriorityMedium Priority = "MEDIUM"
	PriorityHigh   Priority = "HIGH"
)

// UserStatus says whether a user may act.
type UserStatus string

// User statuses.
const (
	UserActive      UserStatus = "ACTIVE"
	UserDeactivated UserStatus = "DEACTIVATED"
)

// Groups a user can belong to.
const (
	GroupAdmins  = "Admins"
	GroupMembers = "Members"
)

// Task is a task's metadata: PK TASK#<taskId>, SK METADATA; in GSI2 under
// STATUS#<status>, sorted by CREATED_AT#<createdAt>.
type Task struct {
	TaskID      string    `dynamodbav:"TaskId"`
	Title       string    `dynamodbav:"Title"`
	Description string    `dynamodbav:"Description"`
	Priority    Priority  `dynamodbav:"Priority"`
	Status      Status    `dynamodbav:"Status"`
	CreatedBy   string    `dynamodbav:"CreatedBy"`
	CreatedAt   time.Time `dynamodbav:"CreatedAt,rfc3339milli"`
	UpdatedAt   time.Time `dynamodbav:"UpdatedAt,rfc3339milli"`
}

// User is a user profile: PK USER#<userId>, SK PROFILE.
type User struct {
	UserID     string     `dynamodbav:"UserId"`
	Email      string     `dynamodbav:"Email"`
	UserStatus UserStatus `dynamodbav:"UserStatus"`
	Groups     []string   `dynamodbav:"Groups"`
	CreatedAt  time.Time  `dynamodbav:"CreatedAt,rfc3339milli"`
}

// IsAdmin reports whether the user is in the Admins group.
func (u User) IsAdmin() bool { return slices.Contains(u.Groups, GroupAdmins) }

// Assignment assigns a task to a user: PK TASK#<taskId>, SK
// ASSIGNMENT#<userId> (in the task's item collection); in GSI1 under
// USER#<userId>, sorted by TASK#<taskId>.
type Assignment struct {
	TaskID     string    `dynamodbav:"TaskId"`
	UserID     string    `dynamodbav:"UserId"`
	AssignedBy string    `dynamodbav:"AssignedBy"`
	AssignedAt time.Time `dynamodbav:"AssignedAt,rfc3339milli"`
}

// The entity declarations. Entity types are the design's: TASK, USER,
// ASSIGNMENT.
var (
	Tasks = singletable.MustDefine(singletable.Schema[Task]{
		Type: "TASK", PK: "TASK#{TaskID:raw}", SK: "METADATA",
		Indexes: []singletable.IndexSchema[Task]{{Name: "GSI2", PK: "STATUS#{Status:raw}", SK: "CREATED_AT#{CreatedAt:rfc3339milli}"}},
	})
	Users = singletable.MustDefine(singletable.Schema[User]{
		Type: "USER", PK: "USER#{UserID:raw}", SK: "PROFILE",
	})
	Assignments = singletable.MustDefine(singletable.Schema[Assignment]{
		Type: "ASSIGNMENT", PK: "TASK#{TaskID:raw}", SK: "ASSIGNMENT#{UserID:raw}",
		Indexes: []singletable.IndexSchema[Assignment]{{Name: "GSI1", PK: "USER#{UserID:raw}", SK: "TASK#{TaskID:raw}"}},
	})
)

// Errors of the task manager's rules.
var (
	// ErrForbidden: the actor may not do this (not an admin, not assigned).
	ErrForbidden = errors.New("tasks: forbidden")
	// ErrInactive: the actor or the assignee is deactivated.
	ErrInactive = errors.New("tasks: user is deactivated")
	// ErrAlreadyAssigned: the task is already assigned to the user. It
	// also matches singletable.ErrAlreadyExists.
	ErrAlreadyAssigned = fmt.Errorf("tasks: already assigned: %w", singletable.ErrAlreadyExists)
	// ErrInvalid: a bad status, priority, group or empty field.
	ErrInvalid = errors.New("tasks: invalid input")
)

// Manager is the task manager over one table.
type Manager struct {
	Table       *singletable.Table
	Tasks       *singletable.Repo[Task]
	Users       *singletable.Repo[User]
	Assignments *singletable.Repo[Assignment]
	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// New returns a manager on the named table, with the table's options
// (an Observe hook, say) set by optFns. Every request the manager sends
// names its access pattern (singletable.WithPattern), as AccessPatterns
// lists them.
func New(client singletable.Client, name string, optFns ...func(*singletable.TableOptions)) *Manager {
	t := singletable.NewTable(client, name, optFns...)
	return &Manager{
		Table:       t,
		Tasks:       singletable.MustBind(t, Tasks),
		Users:       singletable.MustBind(t, Users),
		Assignments: singletable.MustBind(t, Assignments),
		Now:         time.Now,
	}
}

// now is the manager's clock cut to the millisecond, the form the
// JavaScript service is assumed to write (toISOString()).
func (m *Manager) now() time.Time { return m.Now().UTC().Truncate(time.Millisecond) }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CreateUser adds a user profile (AP2's item), refusing an existing ID.
func (m *Manager) CreateUser(ctx context.Context, u User) (User, error) {
	if u.UserID == "" || u.Email == "" {
		return User{}, invalid("user ID and email are required")
	}
	if len(u.Groups) == 0 {
		return User{}, invalid("a user belongs to Admins or Members")
	}
	for _, g := range u.Groups {
		if g != GroupAdmins && g != GroupMembers {
			return User{}, invalid("unknown group %q", g)
		}
	}
	if u.UserStatus == "" {
		u.UserStatus = UserActive
	}
	if u.UserStatus != UserActive && u.UserStatus != UserDeactivated {
		return User{}, invalid("unknown user status %q", u.UserStatus)
	}
	u.CreatedAt = m.now()
	return m.Users.Create(singletable.WithPattern(ctx, "U1"), u)
}

// GetUser reads a user profile (AP2).
func (m *Manager) GetUser(ctx context.Context, userID string) (User, error) {
	return m.Users.Get(singletable.WithPattern(ctx, "P2"), User{UserID: userID})
}

// Deactivate marks a user deactivated; they can no longer act.
func (m *Manager) Deactivate(ctx context.Context, userID string) error {
	_, err := m.Users.Update(User{UserID: userID}).Set("UserStatus", UserDeactivated).Run(singletable.WithPattern(ctx, "U2"))
	return err
}

// actor reads the acting user and checks they are active.
func (m *Manager) actor(ctx context.Context, userID string) (User, error) {
	u, err := m.GetUser(ctx, userID)
	if errors.Is(err, singletable.ErrNotFound) {
		return User{}, fmt.Errorf("%w: unknown user %s", ErrForbidden, userID)
	}
	if err != nil {
		return User{}, err
	}
	if u.UserStatus != UserActive {
		return User{}, fmt.Errorf("user %s: %w", userID, ErrInactive)
	}
	return u, nil
}

// CreateTask creates an OPEN task; only admins create tasks.
func (m *Manager) CreateTask(ctx context.Context, actorID string, t Task) (Task, error) {
	if t.TaskID == "" || t.Title == "" {
		return Task{}, invalid("task ID and title are required")
	}
	if t.Priority == "" {
		t.Priority = PriorityMedium
	}
	if !validPriority(t.Priority) {
		return Task{}, invalid("unknown priority %q (LOW, MEDIUM, HIGH)", t.Priority)
	}
	a, err := m.actor(ctx, actorID)
	if err != nil {
		return Task{}, err
	}
	if !a.IsAdmin() {
		return Task{}, fmt.Errorf("%w: only admins create tasks", ErrForbidden)
	}
	now := m.now()
	t.Status, t.CreatedBy, t.CreatedAt, t.UpdatedAt = StatusOpen, actorID, now, now
	return m.Tasks.Create(singletable.WithPattern(ctx, "T1"), t)
}

// GetTask reads a task (AP1).
func (m *Manager) GetTask(ctx context.Context, taskID string) (Task, error) {
	return m.Tasks.Get(singletable.WithPattern(ctx, "P1"), Task{TaskID: taskID})
}

// Assign assigns a task to a user (AP7): the assignment is a conditional
// create, so assigning twice is ErrAlreadyAssigned and never a second item
// or an overwrite. Only admins assign; the task must exist and the
// assignee must be an active user, checked in the same transaction.
func (m *Manager) Assign(ctx context.Context, adminID, taskID, userID string) (Assignment, error) {
	a, err := m.actor(ctx, adminID)
	if err != nil {
		return Assignment{}, err
	}
	if !a.IsAdmin() {
		return Assignment{}, fmt.Errorf("%w: only admins assign tasks", ErrForbidden)
	}
	// One transaction: the task exists, the assignee is an active user, and
	// the assignment is new. A concurrent deactivation or a duplicate
	// cannot slip between a check and the write.
	as := Assignment{TaskID: taskID, UserID: userID, AssignedBy: adminID, AssignedAt: m.now()}
	pk := expression.AttributeExists(expression.Name(m.Table.Options().PartitionKey))
	err = singletable.Tx(singletable.WithPattern(ctx, "P7+"), []singletable.WriteOp{
		m.Tasks.CheckOp(Task{TaskID: taskID}, pk),
		m.Users.CheckOp(User{UserID: userID}, expression.Name("UserStatus").Equal(expression.Value(UserActive))),
		m.Assignments.CreateOp(as),
	})
	var te *singletable.TransactionError
	if errors.As(err, &te) {
		switch {
		case te.Index == 0:
			return Assignment{}, fmt.Errorf("task %s: %w", taskID, singletable.ErrNotFound)
		case te.Index == 1 && errors.Is(te.TxReason.Err, singletable.ErrNotFound):
			return Assignment{}, fmt.Errorf("user %s: %w", userID, singletable.ErrNotFound)
		case te.Index == 1:
			return Assignment{}, fmt.Errorf("user %s: %w", userID, ErrInactive)
		case errors.Is(te.TxReason.Err, singletable.ErrAlreadyExists):
			return Assignment{}, fmt.Errorf("task %s, user %s: %w", taskID, userID, ErrAlreadyAssigned)
		}
	}
	if err != nil {
		return Assignment{}, err
	}
	return as, nil
}

// Unassign removes an assignment; only admins unassign.
func (m *Manager) Unassign(ctx context.Context, adminID, taskID, userID string) error {
	a, err := m.actor(ctx, adminID)
	if err != nil {
		return err
	}
	if !a.IsAdmin() {
		return fmt.Errorf("%w: only admins unassign tasks", ErrForbidden)
	}
	_, err = m.Assignments.Delete(singletable.WithPattern(ctx, "A1"), Assignment{TaskID: taskID, UserID: userID})
	return err
}

// IsAssigned reports whether a task is assigned to a user (AP6).
func (m *Manager) IsAssigned(ctx context.Context, taskID, userID string) (bool, error) {
	_, err := m.Assignments.Get(singletable.WithPattern(ctx, "P6"), Assignment{TaskID: taskID, UserID: userID}, func(o *singletable.ReadOptions) { o.Fields = []string{"UserID"} })
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, singletable.ErrNotFound):
		return false, nil
	}
	return false, err
}

// taskAssignments is AP3: PK = TASK#<id>, SK begins_with ASSIGNMENT#.
func (m *Manager) taskAssignments(taskID string) *singletable.Query[Assignment] {
	return m.Assignments.Query(Assignment{TaskID: taskID})
}

// TaskAssignments lists who a task is assigned to (AP3).
func (m *Manager) TaskAssignments(ctx context.Context, taskID string) ([]Assignment, error) {
	return m.taskAssignments(taskID).Collect(singletable.WithPattern(ctx, "P3"))
}

// userAssignments is AP4: GSI1PK = USER#<id>.
func (m *Manager) userAssignments(userID string) *singletable.Query[Assignment] {
	return m.Assignments.QueryIndex("GSI1", Assignment{UserID: userID})
}

// UserTasks returns the tasks assigned to a user (AP4): the GSI1 query
// finds the assignments, and one BatchGetItem reads their tasks.
func (m *Manager) UserTasks(ctx context.Context, userID string) ([]Task, error) {
	as, err := m.userAssignments(userID).Collect(singletable.WithPattern(ctx, "P4"))
	if err != nil || len(as) == 0 {
		return nil, err
	}
	tasks := make([]Task, len(as))
	ops := make([]singletable.GetOp, len(as))
	for i, a := range as {
		ops[i] = m.Tasks.GetOp(Task{TaskID: a.TaskID}, &tasks[i])
	}
	found, err := singletable.BatchGet(singletable.WithPattern(ctx, "P4+"), ops)
	if err != nil {
		return nil, err
	}
	// A task deleted since its assignment was read is left out.
	out := tasks[:0]
	for i, ok := range found {
		if ok {
			out = append(out, tasks[i])
		}
	}
	return out, nil
}

// tasksByStatus is AP5: GSI2PK = STATUS#<status>, newest first.
func (m *Manager) tasksByStatus(status Status) *singletable.Query[Task] {
	return m.Tasks.QueryIndex("GSI2", Task{Status: status}).Desc()
}

// TasksByStatus returns a page of tasks with a status, newest first (AP5).
func (m *Manager) TasksByStatus(ctx context.Context, status Status, limit int, cursor string) (singletable.Page[Task], error) {
	if !validStatus(status) {
		return singletable.Page[Task]{}, invalid("unknown status %q", status)
	}
	return m.tasksByStatus(status).Limit(limit).After(cursor).Page(singletable.WithPattern(ctx, "P5"))
}

// SetStatus changes a task's status. Admins may change any task; members
// only tasks assigned to them (AP6, checked in the transaction that writes
// the change). The task's GSI2 key
// (STATUS#<status> / CREATED_AT#<createdAt>) moves with it: the update
// sets the created-at it read alongside the status (the library would
// otherwise read it again to render the key; this saves that read), and
// is conditional on the status it read, so a concurrent change is
// ErrConditionFailed.
func (m *Manager) SetStatus(ctx context.Context, actorID, taskID string, status Status) (Task, error) {
	if !validStatus(status) {
		return Task{}, invalid("unknown status %q (OPEN, IN_PROGRESS, COMPLETED, CLOSED)", status)
	}
	a, err := m.actor(ctx, actorID)
	if err != nil {
		return Task{}, err
	}
	t, err := m.GetTask(ctx, taskID)
	if err != nil {
		return Task{}, fmt.Errorf("task %s: %w", taskID, err)
	}
	now := m.now()
	upd := m.Tasks.Update(t).
		Set("Status", status).
		SetFrom(t, "CreatedAt").
		Set("UpdatedAt", now).
		If(expression.Name("Status").Equal(expression.Value(t.Status)))
	if a.IsAdmin() {
		return upd.Run(singletable.WithPattern(ctx, "T2"))
	}
	// A member: the assignment must exist and the member stay active in
	// the same transaction as the change, so an unassignment or a
	// deactivation that lands first wins.
	err = singletable.Tx(singletable.WithPattern(ctx, "T3"), []singletable.WriteOp{
		m.Assignments.CheckOp(Assignment{TaskID: taskID, UserID: actorID}, expression.AttributeExists(expression.Name(m.Table.Options().PartitionKey))),
		m.Users.CheckOp(User{UserID: actorID}, expression.Name("UserStatus").Equal(expression.Value(UserActive))),
		upd.Op(),
	})
	var te *singletable.TransactionError
	if errors.As(err, &te) {
		switch te.Index {
		case 0:
			return Task{}, fmt.Errorf("%w: task %s is not assigned to %s", ErrForbidden, taskID, actorID)
		case 1:
			return Task{}, fmt.Errorf("user %s: %w", actorID, ErrInactive)
		}
	}
	if err != nil {
		return Task{}, err
	}
	t.Status, t.UpdatedAt = status, now
	return t, nil
}

// SetPriority changes a task's priority; admins only.
func (m *Manager) SetPriority(ctx context.Context, adminID, taskID string, p Priority) (Task, error) {
	if !validPriority(p) {
		return Task{}, invalid("unknown priority %q", p)
	}
	a, err := m.actor(ctx, adminID)
	if err != nil {
		return Task{}, err
	}
	if !a.IsAdmin() {
		return Task{}, fmt.Errorf("%w: only admins change priorities", ErrForbidden)
	}
	return m.Tasks.Update(Task{TaskID: taskID}).Set("Priority", p).Set("UpdatedAt", m.now()).Run(singletable.WithPattern(ctx, "T2"))
}

func validStatus(s Status) bool { return slices.Contains(Statuses, s) }

func validPriority(p Priority) bool {
	return p == PriorityLow || p == PriorityMedium || p == PriorityHigh
}

// AccessPatterns lists the task manager's access patterns as the manager
// runs them, for docs/catalog.md.
func (m *Manager) AccessPatterns() []catalog.Pattern {
	return []catalog.Pattern{
		catalog.Item("P1", "Get task by ID", catalog.OpGet, m.Tasks),
		catalog.Item("P2", "Get user profile", catalog.OpGet, m.Users),
		catalog.Query("P3", "All assignments of a task", m.taskAssignments("")),
		catalog.Query("P4", "All tasks assigned to a user: their assignments", m.userAssignments("")),
		{Name: "P4+", Description: "All tasks assigned to a user: the tasks, in one BatchGetItem",
			Entity: "TASK", Operation: "BatchGetItem", Condition: "PK = TASK#{TaskID:raw} AND SK = METADATA, for each assignment P4 found"},
		catalog.Query("P5", "Tasks by status, newest first", m.tasksByStatus("")),
		catalog.Item("P6", "Check if a user is assigned to a task", catalog.OpGet, m.Assignments),
		catalog.Item("P7", "Assign a task, refusing a duplicate", catalog.OpCreate, m.Assignments),
		{Name: "P7+", Description: "Assign in one transaction: task exists, assignee active, assignment new",
			Entity: "ASSIGNMENT", Operation: "TransactWriteItems",
			Condition: "ConditionCheck TASK#{TaskID:raw}/METADATA; ConditionCheck USER#{UserID:raw}/PROFILE UserStatus = ACTIVE; Put TASK#{TaskID:raw}/ASSIGNMENT#{UserID:raw} if absent"},
		catalog.Item("T1", "Create a task", catalog.OpCreate, m.Tasks),
		catalog.Item("T2", "Change status as an admin (conditional on the status read) or priority", catalog.OpUpdate, m.Tasks),
		{Name: "T3", Description: "Change status as a member, in one transaction with the checks",
			Entity: "TASK", Operation: "TransactWriteItems",
			Condition: "ConditionCheck TASK#{TaskID:raw}/ASSIGNMENT#{UserID:raw} exists; ConditionCheck USER#{UserID:raw}/PROFILE UserStatus = ACTIVE; Update TASK#{TaskID:raw}/METADATA if Status unchanged"},
		catalog.Item("U1", "Create a user", catalog.OpCreate, m.Users),
		catalog.Item("U2", "Deactivate a user", catalog.OpUpdate, m.Users),
		catalog.Item("A1", "Unassign", catalog.OpDelete, m.Assignments),
	}
}
