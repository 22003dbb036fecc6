package docs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// The guide's model: the skills service's users and skills.

type User struct {
	Username string `dynamodbav:"Username"`
	Name     string `dynamodbav:"Name"`
}

type UserSkill struct {
	Username  string    `dynamodbav:"Username"`
	SkillName string    `dynamodbav:"SkillName"`
	Level     string    `dynamodbav:"ProficiencyLevel"`
	Years     int       `dynamodbav:"YearsOfExperience"`
	LastUsed  time.Time `dynamodbav:"LastUsedDate"`
}

var Users = singletable.MustDefine(singletable.Schema[User]{
	Type: "User",
	PK:   "USER#{Username}",
	SK:   "PROFILE",
})

var UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{
	Type: "UserSkill",
	PK:   "USER#{Username}",
	SK:   "SKILL#{SkillName}",
	Indexes: []singletable.IndexSchema[UserSkill]{
		{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
		{Name: "GSI2", MultiAttribute: true, PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years", "LastUsed"}},
	},
})

// guideTable creates a fresh table for one example and returns its
// repositories and a function that deletes it.
func guideTable(name string) (*singletable.Table, *singletable.Repo[User], *singletable.Repo[UserSkill], func()) {
	ctx := context.Background()
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), ddblocal.UniqueTableName(name))
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	if err := table.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	return table, users, skills, func() { _ = table.DeleteTable(ctx) }
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func seedSkills(ctx context.Context, skills *singletable.Repo[UserSkill]) {
	for _, s := range []UserSkill{
		{Username: "john", SkillName: "golang", Level: "Expert", Years: 7, LastUsed: date("2024-06-01")},
		{Username: "john", SkillName: "go", Level: "Beginner", Years: 1, LastUsed: date("2024-03-01")},
		{Username: "john", SkillName: "python", Level: "Expert", Years: 5, LastUsed: date("2023-06-01")},
		{Username: "mary", SkillName: "python", Level: "Expert", Years: 7, LastUsed: date("2024-05-01")},
		{Username: "alice", SkillName: "python", Level: "Expert", Years: 9, LastUsed: date("2023-01-01")},
		{Username: "bob", SkillName: "python", Level: "Intermediate", Years: 2, LastUsed: date("2024-01-01")},
	} {
		if _, err := skills.Create(ctx, s); err != nil {
			log.Fatal(err)
		}
	}
}

func Example_guideBind() {
	ctx := context.Background()
	client := ddblocal.Shared(nil).Client() // any *dynamodb.Client, or a wrapper
	// A table of its own; in production, NewTable(client, "glad-entities").
	table := singletable.NewTable(client, ddblocal.UniqueTableName("glad-entities"))
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	// Create the table with every index the bound entities declare, or
	// check that an existing one matches them.
	if err := table.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(table.Check(ctx))
	fmt.Println(users.Entity().Name(), skills.Entity().Name())
	_ = table.DeleteTable(ctx)
	// Output:
	// <nil>
	// User UserSkill
}

func Example_guideReadsAndWrites() {
	ctx := context.Background()
	_, users, skills, done := guideTable("guide-rw")
	defer done()

	// AP2: register. Create is a conditional put: it never overwrites.
	_, err := users.Create(ctx, User{Username: "john", Name: "John"})
	fmt.Println(err)
	_, err = users.Create(ctx, User{Username: "john", Name: "Impostor"})
	fmt.Println(errors.Is(err, singletable.ErrAlreadyExists))

	// AP1 and AP4: get, and an existence check reading one attribute.
	u, err := users.Get(ctx, User{Username: "john"})
	fmt.Println(u.Name, err)
	_, err = users.Get(ctx, User{Username: "nobody"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Username"} })
	fmt.Println(errors.Is(err, singletable.ErrNotFound))

	// AP3: update; the item must exist (no accidental upsert).
	u, err = users.Update(User{Username: "john"}).Set("Name", "John Smith").Run(ctx)
	fmt.Println(u.Name, err)
	_, err = users.Update(User{Username: "ghost"}).Set("Name", "Ghost").Run(ctx)
	fmt.Println(errors.Is(err, singletable.ErrNotFound))

	// AP8 and AP9: add a skill, then change its level. GSI1's sort key
	// (LEVEL#{Level}#USER#{Username}) is recomputed in the same request.
	_, err = skills.Create(ctx, UserSkill{Username: "john", SkillName: "go", Level: "Beginner", Years: 1, LastUsed: date("2024-03-01")})
	fmt.Println(err)
	s, err := skills.Update(UserSkill{Username: "john", SkillName: "go"}).Set("Level", "Expert").Set("Years", 2).Run(ctx)
	fmt.Println(s.Level, s.Years, err)

	// AP10: delete returns the item as it was.
	old, err := skills.Delete(ctx, UserSkill{Username: "john", SkillName: "go"})
	fmt.Println(old.Level, err)
	// Output:
	// <nil>
	// true
	// John <nil>
	// true
	// John Smith <nil>
	// true
	// <nil>
	// Expert 2 <nil>
	// Expert <nil>
}

func Example_guideQueries() {
	ctx := context.Background()
	_, _, skills, done := guideTable("guide-queries")
	defer done()
	seedSkills(ctx, skills)
	names := func(q *singletable.Query[UserSkill]) []string {
		var out []string
		for s, err := range q.All(ctx) {
			if err != nil {
				log.Fatal(err)
			}
			out = append(out, s.Username+"/"+s.SkillName)
		}
		return out
	}

	// AP6: a user's skills (SK begins_with SKILL#, added by the library).
	fmt.Println(names(skills.Query(UserSkill{Username: "john"})))
	// AP7 as a query: "go" matches go, never golang.
	fmt.Println(names(skills.Query(UserSkill{Username: "john"}).Where("SkillName", singletable.Eq, "go")))
	// AP11 and AP12 on GSI1: users of a skill, then only the experts.
	fmt.Println(names(skills.QueryIndex("GSI1", UserSkill{SkillName: "python"})))
	fmt.Println(names(skills.QueryIndex("GSI1", UserSkill{SkillName: "python"}).Where("Level", singletable.Eq, "Expert")))
	// GSI2, multi-attribute: python, Expert, 7 years, used since 2024.
	recent := UserSkill{SkillName: "python", Level: "Expert", Years: 7}
	fmt.Println(names(skills.QueryIndex("GSI2", recent).Where("LastUsed", singletable.Ge, date("2024-01-01"))))
	// A filter is applied after the read: Limit still counts what you get.
	veterans := skills.QueryIndex("GSI1", UserSkill{SkillName: "python"}).
		Filter(expression.Name("YearsOfExperience").GreaterThanEqual(expression.Value(5)))
	page, err := veterans.Limit(2).Page(ctx)
	fmt.Println(len(page.Items), page.Cursor != "", err)
	page, err = veterans.Limit(2).After(page.Cursor).Page(ctx)
	fmt.Println(len(page.Items), page.Cursor != "", err)
	// Output:
	// [john/go john/golang john/python]
	// [john/go]
	// [alice/python john/python mary/python bob/python]
	// [alice/python john/python mary/python]
	// [mary/python]
	// 2 true <nil>
	// 1 false <nil>
}

func Example_guideCollection() {
	ctx := context.Background()
	_, users, skills, done := guideTable("guide-collection")
	defer done()
	seedSkills(ctx, skills)
	if _, err := users.Create(ctx, User{Username: "john", Name: "John"}); err != nil {
		log.Fatal(err)
	}

	// AP13: the profile and every skill in one Query of USER#john,
	// each item decoded by its entity type.
	var profile User
	var list []UserSkill
	_, err := users.QueryCollection(User{Username: "john"}).
		Collect(ctx, users.StoreOne(&profile), skills.AppendTo(&list))
	fmt.Println(profile.Name, len(list), err)
	// Output:
	// John 3 <nil>
}

func Example_guideTransaction() {
	ctx := context.Background()
	_, users, skills, done := guideTable("guide-tx")
	defer done()

	// AP8 done right: the skill is created only if the user exists, in
	// one TransactWriteItems request.
	addSkill := func(s UserSkill) error {
		return singletable.Tx(ctx, []singletable.WriteOp{
			users.CheckOp(User{Username: s.Username}, expression.AttributeExists(expression.Name("PK"))),
			skills.CreateOp(s),
		})
	}
	err := addSkill(UserSkill{Username: "ghost", SkillName: "go", Level: "Expert", LastUsed: date("2024-01-01")})
	var te *singletable.TransactionError
	fmt.Println(errors.As(err, &te), te.Index, te.Op, errors.Is(err, singletable.ErrNotFound))
	// Output:
	// true 0 Check true
}

// ListedUsers is §8's user entity: the list-all-users index is
// write-sharded by the library.
var ListedUsers = singletable.MustDefine(singletable.Schema[User]{
	Type: "User",
	PK:   "USER#{Username}",
	SK:   "PROFILE",
	Indexes: []singletable.IndexSchema[User]{
		// GSI1PK = USERS#shard_0 … USERS#shard_3, by a hash of the primary key.
		{Name: "GSI1", PK: "USERS", SK: "USER#{Username}", Shards: 4},
	},
})

func Example_guideListAll() {
	ctx := context.Background()
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), ddblocal.UniqueTableName("guide-list"))
	users := singletable.MustBind(table, ListedUsers)
	if err := table.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = table.DeleteTable(ctx) }()
	for _, u := range []string{"gus", "eve", "ann", "dan", "cat", "fay", "bob"} {
		if _, err := users.Create(ctx, User{Username: u}); err != nil {
			log.Fatal(err)
		}
	}

	// AP5: every user in username order, three at a time. Each page
	// queries the four shards in parallel and merges them; the cursor
	// holds every shard's position.
	cursor := ""
	for {
		page, err := users.QueryIndex("GSI1", User{}).Limit(3).After(cursor).Page(ctx)
		if err != nil {
			log.Fatal(err) // an altered or foreign cursor is ErrInvalidCursor
		}
		var names []string
		for _, u := range page.Items {
			names = append(names, u.Username)
		}
		fmt.Println(names)
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	// Output:
	// [ann bob cat]
	// [dan eve fay]
	// [gus]
}
