package docs_test

import (
	"context"
	"fmt"

	"github.com/singletable-go/singletable"
)

func Example_guideTxGet() {
	ctx := context.Background()
	_, users, skills, done := guideTable("guide-txget")
	defer done()
	if err := singletable.Tx(ctx, []singletable.WriteOp{
		users.CreateOp(User{Username: "john", Name: "John"}),
		skills.CreateOp(UserSkill{Username: "john", SkillName: "go", Level: "Expert", LastUsed: date("2024-06-01")}),
	}); err != nil {
		panic(err)
	}

	// The profile and two skills as of one instant, in one TransactGetItems.
	var profile User
	var goSkill, rust UserSkill
	found, err := singletable.TxGet(ctx, []singletable.GetOp{
		users.GetOp(User{Username: "john"}, &profile),
		skills.GetOp(UserSkill{Username: "john", SkillName: "go"}, &goSkill, func(o *singletable.ReadOptions) { o.Fields = []string{"Level"} }),
		skills.GetOp(UserSkill{Username: "john", SkillName: "rust"}, &rust),
	})
	fmt.Println(found, err, profile.Name, goSkill.Level)
	// Output:
	// [true true false] <nil> John Expert
}
