package catalog_test

import (
	"fmt"
	"os"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// The skills service's catalog: entities, indexes, the queries each index
// serves and the lint's findings, rendered from the declarations. Building
// a catalog sends no request, so the table needs no client here.
func Example() {
	type User struct {
		Username string
		Name     string
	}
	type UserSkill struct {
		Username  string
		SkillName string
		Level     string `dynamodbav:"ProficiencyLevel"`
		Years     int    `dynamodbav:"YearsOfExperience"`
	}
	users := singletable.MustDefine(singletable.Schema[User]{
		Type: "User", PK: "USER#{Username}", SK: "PROFILE",
	})
	skills := singletable.MustDefine(singletable.Schema[UserSkill]{
		Type: "UserSkill", PK: "USER#{Username}", SK: "SKILL#{SkillName}",
		Indexes: []singletable.IndexSchema[UserSkill]{
			{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
			{Name: "GSI2", MultiAttribute: true, PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years"}},
		},
	})
	table := singletable.NewTable(nil, "glad-entities")
	userRepo := singletable.MustBind(table, users)
	skillRepo := singletable.MustBind(table, skills)

	c := catalog.New(table,
		catalog.Item("AP1", "Get user by username", catalog.OpGet, userRepo),
		catalog.Item("AP2", "Register a user", catalog.OpCreate, userRepo),
		catalog.Query("AP6", "All skills of a user", skillRepo.Query(UserSkill{})),
		catalog.Query("AP11", "Users with a skill", skillRepo.QueryIndex("GSI1", UserSkill{})),
		catalog.Query("AP12", "Experts in a skill",
			skillRepo.QueryIndex("GSI1", UserSkill{}).Where("Level", singletable.Eq, nil)),
	)
	if err := c.WriteMarkdown(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # Table `glad-entities`
	//
	// Generated from the entity declarations by `singletable`; do not edit by hand.
	//
	// Primary key: `PK` (S, partition), `SK` (S, sort). Entity type attribute: `EntityType`.
	//
	// ## Entities
	//
	// | Entity | PK | SK | Indexes |
	// |---|---|---|---|
	// | User | `USER#{Username}` | `PROFILE` |  |
	// | UserSkill | `USER#{Username}` | `SKILL#{SkillName}` | GSI1, GSI2 |
	//
	// ### User
	//
	// - `PK`: `USER#{Username}`
	// - `SK`: `PROFILE`
	// - `EntityType`: `User`
	// - Access patterns: AP1, AP2
	//
	// ### UserSkill
	//
	// - `PK`: `USER#{Username}`
	// - `SK`: `SKILL#{SkillName}`
	// - `EntityType`: `UserSkill`
	// - GSI1: `GSI1PK = SKILL#{SkillName}`, `GSI1SK = LEVEL#{Level}#USER#{Username}`; in the index when SkillName, Level, Username present
	// - GSI2 (multi-attribute): partition `SkillName = {SkillName}, ProficiencyLevel = {Level}`, sort `YearsOfExperience = {Years}`; in the index when SkillName, Level, Years are all present
	// - Access patterns: AP6, AP11, AP12
	//
	// ## Indexes
	//
	// | Index | Kind | Partition key | Sort key | Entities | Serves |
	// |---|---|---|---|---|---|
	// | GSI1 | templated | GSI1PK (S) | GSI1SK (S) | UserSkill | AP11, AP12 |
	// | GSI2 | multi-attribute | SkillName (S), ProficiencyLevel (S) | YearsOfExperience (N) | UserSkill |  |
	//
	// ## Access patterns
	//
	// | # | Description | Entity | Index | Operation | Key condition |
	// |---|---|---|---|---|---|
	// | AP1 | Get user by username | User | table | GetItem | `PK = USER#{Username} AND SK = PROFILE` |
	// | AP2 | Register a user | User | table | PutItem (create) | `PK = USER#{Username} AND SK = PROFILE AND attribute_not_exists(PK)` |
	// | AP6 | All skills of a user | UserSkill | table | Query | `PK = USER#{Username} AND begins_with(SK, SKILL#)` |
	// | AP11 | Users with a skill | UserSkill | GSI1 | Query | `GSI1PK = SKILL#{SkillName} AND begins_with(GSI1SK, LEVEL#)` |
	// | AP12 | Experts in a skill | UserSkill | GSI1 | Query | `GSI1PK = SKILL#{SkillName} AND begins_with(GSI1SK, LEVEL#{Level}#USER#)` |
	//
	// ## Lint
	//
	// - warning index GSI2: no listed access pattern queries this index: every write to its entities still pays for it (unused-index)
}
