package singletable_test

import (
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/designs"
)

// The skills service's design: users and their skills in glad-entities.

// Declared once, in internal/designs, for the root's and package
// migrate's tests.
type (
	User      = designs.User
	UserSkill = designs.UserSkill
)

var (
	Users      = designs.Users
	UserSkills = designs.UserSkills
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
