package skills

import (
	"time"

	"github.com/singletable-go/singletable"
)

// AccessPatterns lists the skills service's access patterns as the service runs them:
// each is made from the very query or repository call the service sends,
// so the catalog in docs/catalog.md cannot drift from the code.
func AccessPatterns(st *Store) []singletable.AccessPattern {
	var t time.Time
	// A collection spans entities, so its pattern is written out: one
	// Query on the partition returns the profile and every skill.
	ap13 := singletable.AccessPattern{Name: "AP13", Description: "Get user with all skills: the USER# item collection (User + UserSkill items)",
		Entity: "User", Operation: singletable.OpQuery, Condition: "PK = USER#{Username}"}
	return []singletable.AccessPattern{
		st.Users.AccessPattern("AP1", "Get user by username (login)", singletable.OpGet),
		st.Users.AccessPattern("AP2", "Create new user (register)", singletable.OpCreate),
		st.Users.AccessPattern("AP3", "Update user profile", singletable.OpUpdate),
		st.Users.AccessPattern("AP4", "Check if user exists (projection: Username)", singletable.OpGet),
		allUsers(st).AccessPattern("AP5", "List all users: a Query per write shard (USERS#shard_0…3), merged by username"),
		skillsOf(st, "").AccessPattern("AP6", "Get all skills for a user"),
		st.Skills.AccessPattern("AP7", "Get specific skill for user", singletable.OpGet),
		{Name: "AP8", Description: "Add skill to user: one transaction, the profile must exist and the skill be new",
			Entity: "UserSkill", Operation: "TransactWriteItems",
			Condition: "ConditionCheck PK = USER#{Username}, SK = PROFILE exists; Put PK = USER#{Username}, SK = SKILL#{SkillName} if absent"},
		st.Skills.AccessPattern("AP9", "Update skill proficiency (GSI1/GSI2 keys follow)", singletable.OpUpdate),
		st.Skills.AccessPattern("AP10", "Remove skill from user", singletable.OpDelete),
		usersWithSkill(st, "").AccessPattern("AP11", "Find users by skill name"),
		usersWithSkillAt(st, "", "").AccessPattern("AP12", "Find users at a level for a skill (e.g. Expert)"),
		ap13,
		skillExperience(st, "", "", 0).AccessPattern("GSI2-a", "Skill at level with at least N years"),
		skillYears(st, "", "", 0).AccessPattern("GSI2-b", "Skill at level with exactly N years"),
		skillRecency(st, "", "", 0, t).AccessPattern("GSI2-c", "Skill at level, N years, used since a date"),
		st.Skills.AccessPattern("ENDORSE", "Endorse a skill (atomic ADD)", singletable.OpUpdate),
	}
}
