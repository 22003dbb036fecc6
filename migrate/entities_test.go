package migrate_test

import (
	"github.com/singletable-go/singletable/internal/designs"
)

// The skills service's users and their skills, and an account with a
// unique email, a version and managed timestamps: declared once, in
// internal/designs, for the root's and this package's tests.
type (
	User      = designs.User
	UserSkill = designs.UserSkill
	Account   = designs.Account
)

var (
	Users      = designs.Users
	UserSkills = designs.UserSkills
	Accounts   = designs.Accounts
)
