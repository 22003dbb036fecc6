// Command skills is the skills service's registration with the singletable
// tool: one tiny main that declares the service's table, its access
// patterns, sample values and migrations, and hands them to tool.Main, so
// that every subcommand works on them.
//
//	cd cmd/singletable
//	go run ./examples/skills catalog
//	go run ./examples/skills lint
//	go run ./examples/skills workbench export -date 2025-01-15T10:30:00Z
//	DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go run ./examples/skills check
//	DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go run ./examples/skills migrate status
//	DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go run ./examples/skills migrate run 000-legacy-users
//
// SKILLS_TABLE and SKILLS_LEGACY_TABLE name the tables (default
// glad-entities and users).
package main

import (
	"cmp"
	"os"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/cmd/singletable/tool"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/migrate"
	"github.com/singletable-go/singletable/workbench"
)

func main() {
	tool.Main(tool.Program{Declare: declare})
}

// declare is the whole registration: the table on client (nil for the
// commands that read only the declarations), with what each command shows.
func declare(client singletable.Client) ([]tool.Table, error) {
	st := skills.NewStore(client, cmp.Or(os.Getenv("SKILLS_TABLE"), skills.TableName))
	legacy := cmp.Or(os.Getenv("SKILLS_LEGACY_TABLE"), skills.LegacyTableName)
	created := time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)
	return []tool.Table{{
		Table:    st.Table,
		Patterns: skills.AccessPatterns(st),
		Accepted: skills.Accepted,
		Samples: []workbench.Sample{
			workbench.Samples(st.Users,
				skills.User{Username: "john", Name: "John", PasswordHash: "h1", CreatedAt: created, UpdatedAt: created},
				skills.User{Username: "mary", Name: "Mary", PasswordHash: "h2", CreatedAt: created, UpdatedAt: created}),
			workbench.Samples(st.Skills,
				skills.UserSkill{Username: "john", SkillName: "python", Level: "Expert", Years: 8,
					LastUsed: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), CreatedAt: created, UpdatedAt: created}),
		},
		Migrations: []migrate.Migration{
			skills.LegacyUsersMigration(st, legacy),
			skills.UsersListingMigration(st),
		},
	}}, nil
}
