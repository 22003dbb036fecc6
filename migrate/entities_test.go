package migrate_test

import (
	"time"

	"github.com/singletable-go/singletable"
)

// The skills service's users and their skills, as the root package's
// tests declare them (skills_entities_test.go): the target of the legacy
// users copy and the entity of the backfills.

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

// Account has a unique email, a version and managed timestamps, as the
// root package's guards_test.go declares it.
type Account struct {
	Username string    `dynamodbav:"Username"`
	Email    string    `dynamodbav:"email,omitempty"`
	Name     string    `dynamodbav:"Name"`
	Version  int       `dynamodbav:"Version"`
	Created  time.Time `dynamodbav:"CreatedAt"`
	Updated  time.Time `dynamodbav:"UpdatedAt"`
}

var Accounts = singletable.MustDefine(singletable.Schema[Account]{
	Type: "Account", PK: "ACCOUNT#{Username}", SK: "PROFILE",
	Unique:    []singletable.Unique{{Fields: []string{"Email"}}},
	Version:   "Version",
	CreatedAt: "Created", UpdatedAt: "Updated",
})
