package singletable_test

import (
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// Query.Request shows the request a query sends, without sending it. A
// Limit(20) page asks for 21 items: the extra one tells whether the query
// continues, so the last page's cursor is empty.
func ExampleQuery_Request() {
	table := singletable.NewTable(nil, "glad-entities") // no client needed offline
	skills := singletable.MustBind(table, UserSkills)

	in, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "golang"}).
		Where("Level", singletable.Eq, "Expert").
		Limit(20).
		Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(*in.IndexName, *in.KeyConditionExpression)
	fmt.Println(*in.FilterExpression, "limit", *in.Limit)
	fmt.Println(values(in.ExpressionAttributeValues))
	// Output:
	// GSI1 #n0 = :v0 AND begins_with(#n1, :v1)
	// #n2 = :v2 limit 21
	// [LEVEL#Expert#USER# SKILL#golang UserSkill]
}

// Key values are escaped, so a value cannot forge a delimiter, and numbers
// render at fixed width so string order is numeric order.
func ExampleEntity_ParseKeys() {
	type Score struct {
		Game   string
		Points int32
	}
	scores := singletable.MustDefine(singletable.Schema[Score]{
		Type: "Score", PK: "GAME#{Game}", SK: "POINTS#{Points}",
	})
	repo := singletable.MustBind(singletable.NewTable(nil, "t"), scores)
	op := repo.PutOp(Score{Game: "chess#blitz 100%", Points: -42})
	pk := op.Key()["PK"].(*types.AttributeValueMemberS).Value
	sk := op.Key()["SK"].(*types.AttributeValueMemberS).Value
	fmt.Println(pk)
	fmt.Println(sk)
	back, _ := scores.ParseKeys(pk, sk)
	fmt.Printf("%+v\n", back)
	// Output:
	// GAME#chess%23blitz%20100%25
	// POINTS#-2147483606
	// {Game:chess#blitz 100% Points:-42}
}

func values(m map[string]types.AttributeValue) []string {
	var out []string
	for _, v := range m {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out = append(out, s.Value)
		}
	}
	sort.Strings(out)
	return out
}

// A URL unique within its team: the tuple (Team, URL), Team being part of
// the primary key, keyed by a SHA-256 of the values because URLs can be
// long. A declaration made only of key fields is refused: the key is
// unique already.
func ExampleUnique() {
	type Bookmark struct {
		Team string
		ID   string
		URL  string
	}
	bookmarks := singletable.MustDefine(singletable.Schema[Bookmark]{
		Type: "Bookmark", PK: "TEAM#{Team}", SK: "BOOKMARK#{ID}",
		Unique: []singletable.Unique{{Fields: []string{"Team", "URL"}, Hash: true}},
	})
	repo := singletable.MustBind(singletable.NewTable(nil, "t"), bookmarks)
	fmt.Println(repo.Describe().Unique)

	_, err := singletable.Define(singletable.Schema[Bookmark]{
		Type: "Bookmark", PK: "TEAM#{Team}", SK: "BOOKMARK#{ID}",
		Unique: []singletable.Unique{{Fields: []string{"Team", "ID"}}},
	})
	fmt.Println(err)
	// Output:
	// [{[Team URL] true}]
	// singletable: Bookmark: Team: Unique: every field of (Team, ID) is part of the primary key, which is unique already
}
