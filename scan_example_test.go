package singletable_test

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
)

// A collection holds several entities whose sort keys have different
// shapes; Where narrows it with the sort condition of a query of one
// member. Here john's skills from "p" on: the condition is rendered on
// UserSkill's template SKILL#{SkillName}, so john's PROFILE item is not
// read.
func ExampleCollection_Where() {
	table := singletable.NewTable(nil, "glad-entities") // no client needed offline
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)

	in, err := users.QueryCollection(User{Username: "john"}).
		Where(skills.Query(UserSkill{}).Where("SkillName", singletable.Ge, "p")).
		Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(*in.KeyConditionExpression)
	fmt.Println(values(in.ExpressionAttributeValues))
	// Output:
	// #n0 = :v0 AND #n1 BETWEEN :v1 AND :v2
	// [SKILL#p SKILL#􏿿 USER#john]
}

// A query without a sort condition narrows a collection to its entity's
// key shape: the election's candidates, without its voters and ballots.
func ExampleCollection_Where_shape() {
	table := singletable.NewTable(nil, "elections")
	elections := singletable.MustBind(table, Elections)
	candidates := singletable.MustBind(table, Candidates)

	in, err := elections.QueryCollection(Election{Name: "Favorite Language"}).
		Where(candidates.Query(Candidate{})).
		Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(*in.KeyConditionExpression)
	fmt.Println(values(in.ExpressionAttributeValues))
	// Output:
	// #n0 = :v0 AND begins_with(#n1, :v1)
	// [CANDIDATE# ELECTION#Favorite%20Language]
}

// A typed scan reads one entity's items from the whole table, filtered by
// its entity type; Limit(10) asks for 11 items, the extra one telling
// whether the scan continues.
func ExampleRepo_Scan() {
	table := singletable.NewTable(nil, "glad-entities")
	skills := singletable.MustBind(table, UserSkills)

	in, err := skills.Scan(func(o *singletable.ReadOptions) { o.Fields = []string{"SkillName", "Years"} }).
		Segment(1, 4).
		Filter(expression.Name("Years").GreaterThanEqual(expression.Value(5))).
		Request()
	if err != nil {
		panic(err)
	}
	fmt.Println(*in.FilterExpression)
	fmt.Println(*in.ProjectionExpression)
	fmt.Println(*in.Segment, "of", *in.TotalSegments)

	in, _ = skills.Scan().Limit(10).Request()
	fmt.Println("limit", *in.Limit)
	// Output:
	// (#n0 = :v0) AND (#0 >= :0)
	// #n0, #n1, #n2, #n3, #n4
	// 1 of 4
	// limit 11
}
