package singletable_test

import (
	"testing"
	"time"

	"github.com/singletable-go/singletable"
)

// The skills service's design: users and their skills in glad-entities.

type User struct {
	Username     string    `dynamodbav:"Username"`
	Name         string    `dynamodbav:"Name"`
	PasswordHash string    `dynamodbav:"PasswordHash"`
	CreatedAt    time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt    time.Time `dynamodbav:"UpdatedAt"`
}

type UserSkill struct {
	Username     string    `dynamodbav:"Username"`
	SkillName    string    `dynamodbav:"SkillName"`
	Level        string    `dynamodbav:"ProficiencyLevel"`
	Years        int       `dynamodbav:"YearsOfExperience"`
	Endorsements int       `dynamodbav:"Endorsements"`
	LastUsed     time.Time `dynamodbav:"LastUsedDate"`
}

var (
	Users = singletable.MustDefine(singletable.Schema[User]{
		Type: "User",
		PK:   "USER#{Username}",
		SK:   "PROFILE",
	})
	UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{
		Type: "UserSkill",
		PK:   "USER#{Username}",
		SK:   "SKILL#{SkillName}",
		Indexes: []singletable.IndexSchema[UserSkill]{
			{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
			{Name: "GSI2", PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years", "LastUsed"}},
		},
	})
)

func skillsTable(t *testing.T) (*singletable.Table, *singletable.Repo[User], *singletable.Repo[UserSkill], *countingClient) {
	var users *singletable.Repo[User]
	var skills *singletable.Repo[UserSkill]
	tbl, c := newTable(t, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})
	return tbl, users, skills, c
}

func date(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}
