package skills

import (
	"time"

	"github.com/singletable-go/singletable"
)

// TableName is the table the skills service names: users and their skills, one table.
const TableName = "glad-entities"

// UserShards is how many partitions the list-all-users index spreads users
// over: the library's write sharding (IndexSchema.Shards) puts each user in
// partition USERS#shard_<n> of GSI1, n a hash of the user's primary key, so
// no single GSI partition takes every registration, and a query of the
// index reads all shards and merges them by username. See [Service.ListUsers].
const UserShards = 4

// User is a registered user: PK USER#<username>, SK PROFILE (the skills service,
// phase 1), the username verbatim ("USER#john.smith") as the design's Go
// service writes it. Users also appear in GSI1 under USERS#shard_<n>,
// sorted by username, so that all users can be listed without a Scan
// (AP5); the design's own profiles have no GSI1 attributes until
// [UsersListingMigration] has run.
type User struct {
	Username     string    `dynamodbav:"Username" json:"username"`
	Name         string    `dynamodbav:"Name" json:"name"`
	PasswordHash string    `dynamodbav:"PasswordHash" json:"-"`
	CreatedAt    time.Time `dynamodbav:"CreatedAt" json:"created_at"`
	UpdatedAt    time.Time `dynamodbav:"UpdatedAt" json:"updated_at"`
}

// Levels are the proficiency levels a skill can have, lowest first.
var Levels = []string{"Beginner", "Intermediate", "Advanced", "Expert"}

// UserSkill is one skill of one user: PK USER#<username>, SK
// SKILL#<skill_name>, in the same item collection as the user's profile
// (phase 2 of the design). Keys hold the names verbatim, as the design's Go
// service writes them ("SKILL#machine learning", "SKILL#c#"). GSI1 finds
// users by skill and level (GSI1PK SKILL#<skill_name>, GSI1SK
// LEVEL#<level>#USER#<username>); GSI2, a native multi-attribute index,
// answers "skill S at level L with at least N years (or exactly N years,
// used since D)" without string concatenation. LastUsedDate is a bare
// date ("2024-03-01") in the item and in GSI2's key; a skill without one
// is not in GSI2.
type UserSkill struct {
	Username     string    `dynamodbav:"Username" json:"username"`
	SkillName    string    `dynamodbav:"SkillName" json:"skill_name"`
	Level        string    `dynamodbav:"ProficiencyLevel" json:"level"`
	Years        int       `dynamodbav:"YearsOfExperience" json:"years_of_experience"`
	Endorsements int       `dynamodbav:"Endorsements" json:"endorsements"`
	LastUsed     time.Time `dynamodbav:"LastUsedDate,date,omitempty" json:"-"`
	CreatedAt    time.Time `dynamodbav:"CreatedAt" json:"created_at"`
	UpdatedAt    time.Time `dynamodbav:"UpdatedAt" json:"updated_at"`
}

// Users declares the User entity.
var Users = singletable.MustDefine(singletable.Schema[User]{
	Type: "User",
	PK:   "USER#{Username:raw}",
	SK:   "PROFILE",
	Indexes: []singletable.IndexSchema[User]{
		// GSI1 is overloaded: skills use it for SKILL#… partitions, users
		// for USERS#shard_0…USERS#shard_3. Write sharding keeps any one
		// partition far from DynamoDB's 1,000 writes per second per
		// partition; the library picks the shard and merges the shards
		// when the index is queried.
		{Name: "GSI1", PK: "USERS", SK: "USER#{Username:raw}", Shards: UserShards},
	},
})

// UserSkills declares the UserSkill entity.
var UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{
	Type: "UserSkill",
	PK:   "USER#{Username:raw}",
	SK:   "SKILL#{SkillName:raw}",
	Indexes: []singletable.IndexSchema[UserSkill]{
		{Name: "GSI1", PK: "SKILL#{SkillName:raw}", SK: "LEVEL#{Level:raw}#USER#{Username:raw}"},
		{Name: "GSI2", MultiAttribute: true, PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years", "LastUsed"}},
	},
})

// Store is the glad-entities table with its repositories bound: users and
// their skills, and the per-entity counts kept from the table's stream
// (counts.go).
type Store struct {
	Table  *singletable.Table
	Users  *singletable.Repo[User]
	Skills *singletable.Repo[UserSkill]
	Counts *singletable.Repo[EntityCount]
}

// NewStore binds the entities to the table called name, reached through
// client. It sends no request; call Table.CreateTable to create the table.
func NewStore(client singletable.Client, name string, optFns ...func(*singletable.TableOptions)) *Store {
	t := singletable.NewTable(client, name, optFns...)
	return &Store{Table: t, Users: singletable.MustBind(t, Users), Skills: singletable.MustBind(t, UserSkills),
		Counts: singletable.MustBind(t, EntityCounts)}
}
