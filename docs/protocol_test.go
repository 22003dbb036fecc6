package docs_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
)

// Step 1 of the entity-addition protocol: the entity, as a plain struct.
// Keys are not fields: the library renders PK, SK, GSI1PK and GSI1SK from
// the templates, and writes EntityType itself.

type Project struct {
	ProjectID     string    `dynamodbav:"project_id"`
	OwnerUsername string    `dynamodbav:"owner_username"`
	Name          string    `dynamodbav:"name"`
	Status        string    `dynamodbav:"status"`
	CreatedAt     time.Time `dynamodbav:"created_at"`
}

// Step 2: the key pattern, from the decision tree. Owned by a user, so
// PK USER#<username>; many per user, so SK PROJECT#<id>; queried across
// users by status, so a GSI1 entry, overloading the existing index.

var Projects = singletable.MustDefine(singletable.Schema[Project]{
	Type: "Project",
	PK:   "USER#{OwnerUsername}",
	SK:   "PROJECT#{ProjectID}",
	Indexes: []singletable.IndexSchema[Project]{
		{Name: "GSI1", PK: "PROJECT#{ProjectID}", SK: "STATUS#{Status}#DATE#{CreatedAt}"},
	},
})

// Steps 3 and 4: the access patterns and the taxonomy, generated. The
// lint checks the new keys against every entity already in the table.
func Example_protocolCatalog() {
	table := singletable.NewTable(nil, "glad-entities")
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	projects := singletable.MustBind(table, Projects)
	c := catalog.New(table,
		catalog.Item("AP1", "Get user by username", catalog.OpGet, users),
		catalog.Query("AP6", "All skills of a user", skills.Query(UserSkill{})),
		catalog.Query("AP11", "Users with a skill", skills.QueryIndex("GSI1", UserSkill{})),
		catalog.Query("AP14", "Skill and level", skills.QueryIndex("GSI2", UserSkill{})),
		catalog.Query("AP20", "All projects of a user", projects.Query(Project{})),
		catalog.Query("AP21", "A project's entries with a status",
			projects.QueryIndex("GSI1", Project{}).Where("Status", singletable.Eq, nil)),
	)
	for _, f := range c.Findings {
		fmt.Println(f)
	}
	md := c.Markdown()
	fmt.Println(strings.Contains(md, "| AP20 | All projects of a user | Project | table | Query | `PK = USER#{OwnerUsername} AND begins_with(SK, PROJECT#)` |"))
	// Output:
	// true
}

// A design mistake the lint catches: an entity whose sort key starts like
// the skills' one (SKILL#) shares their partitions, so a query for either
// also reads, and pays for, the other's items.
func Example_protocolLint() {
	type Endorsement struct {
		Username, SkillName, By string
	}
	table := singletable.NewTable(nil, "glad-entities")
	singletable.MustBind(table, UserSkills)
	singletable.MustBind(table, singletable.MustDefine(singletable.Schema[Endorsement]{
		Type: "Endorsement", PK: "USER#{Username}", SK: "SKILL#{SkillName}#BY#{By}",
	}))
	for _, f := range catalog.New(table).Findings {
		fmt.Println(f.Severity, f.Entity)
	}
	// Output:
	// warning UserSkill
	// warning Endorsement
}

// A finding about a layout the design keeps on purpose is accepted by its
// rule, with the reason: the catalog lists it apart instead of warning.
func Example_protocolAccept() {
	type Announcement struct{ ID, Title string }
	table := singletable.NewTable(nil, "glad-entities")
	singletable.MustBind(table, singletable.MustDefine(singletable.Schema[Announcement]{
		Type: "Announcement", PK: "ANNOUNCEMENTS", SK: "{ID}",
	}))
	c := catalog.New(table).Accept(catalog.Acceptance{
		Rule: catalog.RuleHotPartition, Entity: "Announcement",
		Reason: "a handful a week, read together on the home page",
	})
	fmt.Println(len(c.Findings), c.Accepted[0].Rule, c.Accepted[0].Reason)
	// Output:
	// 0 hot-partition a handful a week, read together on the home page
}

// Step 5 and on: tests of the new entity against DynamoDB Local, like any
// other (see testing.md); here, the access patterns of the new entity.
func Example_protocolProjects() {
	ctx := context.Background()
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), ddblocal.UniqueTableName("protocol-projects"))
	projects := singletable.MustBind(table, Projects)
	if err := table.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer table.DeleteTable(ctx)
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, status := range []string{"ACTIVE", "DONE", "ACTIVE"} {
		p := Project{ProjectID: fmt.Sprint("p", i), OwnerUsername: "john", Name: fmt.Sprint("Project ", i),
			Status: status, CreatedAt: day.AddDate(0, 0, i)}
		if _, err := projects.Create(ctx, p); err != nil {
			log.Fatal(err)
		}
	}
	mine, err := projects.Query(Project{OwnerUsername: "john"}).Collect(ctx)
	fmt.Println(len(mine), err)
	active, err := projects.QueryIndex("GSI1", Project{ProjectID: "p2"}).Where("Status", singletable.Eq, "ACTIVE").Collect(ctx)
	fmt.Println(len(active), active[0].Name, err)
	// Output:
	// 3 <nil>
	// 1 Project 2 <nil>
}
