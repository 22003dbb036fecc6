package skills

import (
	"time"

	"github.com/singletable-go/singletable/catalog"
)

// AccessPatterns lists the skills service's access patterns as the service runs them:
// each is made from the very query or repository call the service sends,
// so the catalog in docs/catalog.md cannot drift from the code.
func AccessPatterns(st *Store) []catalog.Pattern {
	var t time.Time
	return []catalog.Pattern{
		catalog.Item("AP1", "Get user by username (login)", catalog.OpGet, st.Users),
		catalog.Item("AP2", "Create new user (register)", catalog.OpCreate, st.Users),
		catalog.Item("AP3", "Update user profile", catalog.OpUpdate, st.Users),
		catalog.Item("AP4", "Check if user exists (projection: Username)", catalog.OpGet, st.Users),
		catalog.Query("AP5", "List all users: a Query per write shard (USERS#shard_0…3), merged by username", allUsers(st)),
		catalog.Query("AP6", "Get all skills for a user", skillsOf(st, "")),
		catalog.Item("AP7", "Get specific skill for user", catalog.OpGet, st.Skills),
		{Name: "AP8", Description: "Add skill to user: one transaction, the profile must exist and the skill be new",
			Entity: "UserSkill", Operation: "TransactWriteItems",
			Condition: "ConditionCheck PK = USER#{Username:raw}, SK = PROFILE exists; Put PK = USER#{Username:raw}, SK = SKILL#{SkillName:raw} if absent"},
		catalog.Item("AP9", "Update skill proficiency (GSI1/GSI2 keys follow)", catalog.OpUpdate, st.Skills),
		catalog.Item("AP10", "Remove skill from user", catalog.OpDelete, st.Skills),
		catalog.Query("AP11", "Find users by skill name", usersWithSkill(st, "")),
		catalog.Query("AP12", "Find users at a level for a skill (e.g. Expert)", usersWithSkillAt(st, "", "")),
		catalog.Collection("AP13", "Get user with all skills: the USER# item collection (User + UserSkill items)", st.Users),
		catalog.Query("GSI2-a", "Skill at level with at least N years", skillExperience(st, "", "", 0)),
		catalog.Query("GSI2-b", "Skill at level with exactly N years", skillYears(st, "", "", 0)),
		catalog.Query("GSI2-c", "Skill at level, N years, used since a date", skillRecency(st, "", "", 0, t)),
		catalog.Item("ENDORSE", "Endorse a skill (atomic ADD)", catalog.OpUpdate, st.Skills),
		catalog.Item("COUNT", "Count users or skills from the table's stream (upsert, atomic ADD)", catalog.OpUpdate, st.Counts),
		catalog.Item("COUNTS", "Read the per-entity counts", catalog.OpGet, st.Counts),
	}
}

// Workload is the traffic the skills service is planned for: 10,000 users
// with 5 skills each, 1,200 reads and 150 writes a second on the table
// (user logins, skill lists, profile and skill updates) and 100 skill
// searches a second on GSI1, whose entries project 0.3 KB of a skill.
// docs/cost.md is the capacity and cost report of this workload.
func Workload() catalog.Workload {
	return catalog.Workload{
		Loads: []catalog.Load{
			{Pattern: "AP1", PerSecond: 1000, ItemKB: 1},
			{Pattern: "AP6", PerSecond: 200, ItemKB: 0.5, Items: 5},
			{Pattern: "AP3", PerSecond: 100, ItemKB: 1},
			{Pattern: "AP9", PerSecond: 50, ItemKB: 0.5},
			{Pattern: "AP11", PerSecond: 100, ItemKB: 0.3, Items: 10},
		},
		Storage: []catalog.Stored{
			{Entity: "User", Items: 10_000, ItemKB: 1},
			{Entity: "UserSkill", Items: 50_000, ItemKB: 0.5},
		},
		IndexItemKB: map[string]float64{"GSI1": 0.3},
	}
}

// Accepted are the catalog's lint findings the design keeps, with the
// reason (docs/catalog.md lists them apart).
var Accepted = []catalog.Acceptance{
	{Rule: catalog.RuleKeyOrder, Entity: "UserSkill", Index: "GSI1",
		Reason: "a level is one of Levels (Beginner … Expert), checked before every write: letters only, which sort after '#', kept raw as the legacy service's keys hold them"},
}
