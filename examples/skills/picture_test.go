package skills_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/examples/skills"
)

// sampleItems are the items docs/table.svg pictures: some of the demo's
// users and skills (a skill never used has no LastUsedDate, so it is
// not in GSI2), and the counts the stream keeps, as the store's writes
// render them.
func sampleItems(t *testing.T, st *skills.Store) []map[string]types.AttributeValue {
	t.Helper()
	at := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)
	items, err := catalog.PreviewItems(context.Background(), st.Table, func(ctx context.Context) error {
		for _, u := range [][2]string{{"alice", "Alice Martin"}, {"bob", "Bob Chen"}, {"john", "John Smith"}} {
			if _, err := st.Users.Create(ctx, skills.User{Username: u[0], Name: u[1],
				PasswordHash: "pbkdf2-sha256$600000$c2FsdA$aGFzaA", CreatedAt: at, UpdatedAt: at}); err != nil {
				return err
			}
		}
		for _, s := range []struct {
			user, skill, level string
			years              int
			lastUsed           string
		}{
			{"alice", "python", "Expert", 9, "2023-01-01"},
			{"alice", "golang", "Advanced", 4, "2024-04-01"},
			{"bob", "python", "Intermediate", 2, "2024-01-01"},
			{"john", "golang", "Expert", 7, "2024-06-01"},
			{"john", "python", "Expert", 5, "2023-06-01"},
			{"john", "machine learning", "Beginner", 1, ""},
		} {
			us := skills.UserSkill{Username: s.user, SkillName: s.skill, Level: s.level, Years: s.years, CreatedAt: at, UpdatedAt: at}
			if s.lastUsed != "" {
				us.LastUsed = date(s.lastUsed)
			}
			if _, err := st.Skills.Create(ctx, us); err != nil {
				return err
			}
		}
		for _, c := range []skills.EntityCount{{Entity: "User", Count: 3}, {Entity: "UserSkill", Count: 6}} {
			if _, err := st.Counts.Create(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return items
}
