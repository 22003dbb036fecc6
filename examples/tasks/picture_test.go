package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/examples/tasks"
)

// sampleItems are the items docs/table.svg pictures: an admin and a
// member, three tasks in different statuses, and the assignments of two
// of them, as the manager's writes render them.
func sampleItems(t *testing.T, m *tasks.Manager) []map[string]types.AttributeValue {
	t.Helper()
	at := func(d, h int) time.Time { return time.Date(2024, 5, d, h, 30, 0, 250e6, time.UTC) }
	items, err := catalog.PreviewItems(context.Background(), m.Table, func(ctx context.Context) error {
		for _, u := range []tasks.User{
			{UserID: "alice", Email: "alice@example.com", UserStatus: tasks.UserActive, Groups: []string{tasks.GroupAdmins}, CreatedAt: at(1, 9)},
			{UserID: "bob", Email: "bob@example.com", UserStatus: tasks.UserActive, Groups: []string{tasks.GroupMembers}, CreatedAt: at(1, 10)},
		} {
			if _, err := m.Users.Create(ctx, u); err != nil {
				return err
			}
		}
		for _, x := range []tasks.Task{
			{TaskID: "t1", Title: "Write the release notes", Priority: tasks.PriorityHigh, Status: tasks.StatusInProgress, CreatedBy: "alice", CreatedAt: at(2, 9), UpdatedAt: at(3, 9)},
			{TaskID: "t2", Title: "Fix the login page", Priority: tasks.PriorityMedium, Status: tasks.StatusOpen, CreatedBy: "alice", CreatedAt: at(2, 11), UpdatedAt: at(2, 11)},
			{TaskID: "t3", Title: "Archive old tickets", Priority: tasks.PriorityLow, Status: tasks.StatusOpen, CreatedBy: "alice", CreatedAt: at(4, 8), UpdatedAt: at(4, 8)},
		} {
			if _, err := m.Tasks.Create(ctx, x); err != nil {
				return err
			}
		}
		for _, a := range []tasks.Assignment{
			{TaskID: "t1", UserID: "bob", AssignedBy: "alice", AssignedAt: at(2, 12)},
			{TaskID: "t1", UserID: "alice", AssignedBy: "alice", AssignedAt: at(2, 12)},
			{TaskID: "t2", UserID: "bob", AssignedBy: "alice", AssignedAt: at(3, 8)},
		} {
			if _, err := m.Assignments.Create(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return items
}
