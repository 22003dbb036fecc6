// Package designs holds the entity declarations that tests in several
// packages share (the root package's, package migrate's), so that each is
// declared once: the skills service's users and their skills, and an
// account with a unique email, a version and managed timestamps.
package designs

import (
	"time"

	"github.com/singletable-go/singletable"
)

// User is a skills service user.
type User struct {
	Username     string    `dynamodbav:"Username"`
	Name         string    `dynamodbav:"Name"`
	PasswordHash string    `dynamodbav:"PasswordHash"`
	CreatedAt    time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt    time.Time `dynamodbav:"UpdatedAt"`
}

// UserSkill is one skill of a user.
type UserSkill struct {
	Username     string    `dynamodbav:"Username"`
	SkillName    string    `dynamodbav:"SkillName"`
	Level        string    `dynamodbav:"ProficiencyLevel"`
	Years        int       `dynamodbav:"YearsOfExperience"`
	Endorsements int       `dynamodbav:"Endorsements"`
	LastUsed     time.Time `dynamodbav:"LastUsedDate"`
}

var (
	// Users declares User: USER#{Username} | PROFILE.
	Users = singletable.MustDefine(singletable.Schema[User]{
		Type: "User",
		PK:   "USER#{Username}",
		SK:   "PROFILE",
	})
	// UserSkills declares UserSkill in the user's collection, with a
	// templated GSI1 by skill and level and a multi-attribute GSI2.
	UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{
		Type: "UserSkill",
		PK:   "USER#{Username}",
		SK:   "SKILL#{SkillName}",
		Indexes: []singletable.IndexSchema[UserSkill]{
			{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
			{Name: "GSI2", MultiAttribute: true, PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years", "LastUsed"}},
		},
	})
)

// Account has a unique email, a version and managed timestamps.
type Account struct {
	Username string    `dynamodbav:"Username"`
	Email    string    `dynamodbav:"email,omitempty"`
	Name     string    `dynamodbav:"Name"`
	Version  int       `dynamodbav:"Version"`
	Created  time.Time `dynamodbav:"CreatedAt"`
	Updated  time.Time `dynamodbav:"UpdatedAt"`
}

// Accounts declares Account.
var Accounts = singletable.MustDefine(singletable.Schema[Account]{
	Type: "Account", PK: "ACCOUNT#{Username}", SK: "PROFILE",
	Unique:    []singletable.Unique{{Fields: []string{"Email"}}},
	Version:   "Version",
	CreatedAt: "Created", UpdatedAt: "Updated",
})
