package singletable_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

func TestUsersAndSkills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, _ := skillsTable(t)

	// AP2: register with a conditional create.
	john := User{Username: "john", Name: "John", PasswordHash: "h1", CreatedAt: date("2024-01-01")}
	_, err := users.Create(ctx, john)
	require.NoError(t, err)
	_, err = users.Create(ctx, john)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)

	// AP1: get by username.
	got, err := users.Get(ctx, User{Username: "john"})
	require.NoError(t, err)
	assert.Equal(t, "John", got.Name)
	assert.True(t, got.CreatedAt.Equal(john.CreatedAt))
	_, err = users.Get(ctx, User{Username: "nobody"})
	require.ErrorIs(t, err, singletable.ErrNotFound)

	// AP3: update the profile.
	upd, err := users.Update(User{Username: "john"}).Set("Name", "John Smith").Set("UpdatedAt", date("2024-02-01")).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "John Smith", upd.Name)
	assert.Equal(t, "h1", upd.PasswordHash)
	_, err = users.Update(User{Username: "ghost"}).Set("Name", "x").Run(ctx)
	require.ErrorIs(t, err, singletable.ErrNotFound)

	// AP4: exists check with a projection.
	ex, err := users.Get(ctx, User{Username: "john"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Username"} })
	require.NoError(t, err)
	assert.Equal(t, User{Username: "john"}, ex)

	// AP8: add skills.
	add := []UserSkill{
		{Username: "john", SkillName: "golang", Level: "Expert", Years: 7, LastUsed: date("2024-06-01")},
		{Username: "john", SkillName: "python", Level: "Expert", Years: 5, LastUsed: date("2023-06-01")},
		{Username: "john", SkillName: "go", Level: "Beginner", Years: 1, LastUsed: date("2024-03-01")},
		{Username: "mary", SkillName: "python", Level: "Expert", Years: 7, LastUsed: date("2024-05-01")},
		{Username: "mary", SkillName: "golang", Level: "Advanced", Years: 3, LastUsed: date("2024-02-01")},
		{Username: "alice", SkillName: "python", Level: "Expert", Years: 9, LastUsed: date("2023-01-01")},
		{Username: "bob", SkillName: "python", Level: "Intermediate", Years: 2, LastUsed: date("2024-01-01")},
	}
	for _, s := range add {
		_, err := skills.Create(ctx, s)
		require.NoError(t, err)
	}
	_, err = users.Create(ctx, User{Username: "mary", Name: "Mary"})
	require.NoError(t, err)

	// AP6: all skills of a user (SK begins_with SKILL#), in sort order.
	js, err := skills.Query(UserSkill{Username: "john"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "golang", "python"}, skillNames(js))

	// AP7: one skill. "go" must not match "golang".
	g, err := skills.Get(ctx, UserSkill{Username: "john", SkillName: "go"})
	require.NoError(t, err)
	assert.Equal(t, "Beginner", g.Level)
	eq, err := skills.Query(UserSkill{Username: "john"}).Where("SkillName", singletable.Eq, "go").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"go"}, skillNames(eq))

	// AP9: update proficiency; GSI1SK follows.
	up, err := skills.Update(UserSkill{Username: "john", SkillName: "go"}).Set("Level", "Intermediate").Add("Endorsements", 2).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "Intermediate", up.Level)
	assert.Equal(t, 2, up.Endorsements)
	byGo, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}).Where("Level", singletable.Eq, "Intermediate").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"john"}, usernames(byGo))

	// AP10: remove a skill.
	old, err := skills.Delete(ctx, UserSkill{Username: "john", SkillName: "go"})
	require.NoError(t, err)
	assert.Equal(t, "Intermediate", old.Level)
	_, err = skills.Delete(ctx, UserSkill{Username: "john", SkillName: "go"})
	require.ErrorIs(t, err, singletable.ErrNotFound)

	// AP11: users by skill name (GSI1), sorted by level then user.
	py, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "python"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "john", "mary", "bob"}, usernames(py))

	// AP12: experts for a skill (GSI1SK begins_with LEVEL#Expert#).
	ex2, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "python"}).Where("Level", singletable.Eq, "Expert").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "john", "mary"}, usernames(ex2))

	// AP13: user with all skills: one Query over the item collection.
	n, err := skills.Query(UserSkill{Username: "john"}).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	// GSI2 (multi-attribute): Python, Expert, Years = 7, LastUsed >= 2024-01-01.
	r1, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "python", Level: "Expert", Years: 7}).
		Where("LastUsed", singletable.Ge, date("2024-01-01")).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"mary"}, usernames(r1))
	// Python, Expert, Years >= 5.
	r2, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "python", Level: "Expert"}).
		Where("Years", singletable.Ge, 5).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"john", "mary", "alice"}, usernames(r2))
	// and descending.
	r3, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "python", Level: "Expert"}).
		Where("Years", singletable.Ge, 5).Desc().Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "mary", "john"}, usernames(r3))

	// A filter on a non-key attribute.
	recent, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "python"}).
		Filter(expression.Name("YearsOfExperience").GreaterThanEqual(expression.Value(5))).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "john", "mary"}, usernames(recent))
}

func skillNames(s []UserSkill) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.SkillName)
	}
	return out
}

func usernames(s []UserSkill) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.Username)
	}
	return out
}
