package singletable_test

import (
	"context"
	"fmt"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// A profile and two of its skills read in one TransactGetItems: a
// consistent snapshot, even if a transaction is writing them meanwhile.
// A missing item is reported in found and its destination zeroed.
func ExampleTxGet() {
	ctx := context.Background()
	client := ddblocal.Shared(nil).Client() // any *dynamodb.Client
	table := singletable.NewTable(client, fmt.Sprintf("txget-example-%d", time.Now().UnixNano()))
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	if err := table.CreateTable(ctx); err != nil {
		panic(err)
	}
	defer table.DeleteTable(ctx)
	if err := singletable.Tx(ctx, []singletable.WriteOp{
		users.CreateOp(User{Username: "john", Name: "John"}),
		skills.CreateOp(UserSkill{Username: "john", SkillName: "go", Level: "Expert"}),
	}); err != nil {
		panic(err)
	}

	var john User
	var goSkill, rust UserSkill
	found, err := singletable.TxGet(ctx, []singletable.GetOp{
		users.GetOp(User{Username: "john"}, &john, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }),
		skills.GetOp(UserSkill{Username: "john", SkillName: "go"}, &goSkill),
		skills.GetOp(UserSkill{Username: "john", SkillName: "rust"}, &rust),
	})
	fmt.Println(found, err)
	fmt.Println(john.Name, goSkill.Level, rust == UserSkill{})

	// Bad input never reaches DynamoDB.
	_, err = singletable.TxGet(ctx, []singletable.GetOp{skills.GetOp(UserSkill{Username: "john"}, &rust)})
	fmt.Println(err)
	// Output:
	// [true true false] <nil>
	// John Expert true
	// singletable: read transaction op 0 (Get UserSkill): singletable: UserSkill key SK: missing SkillName
}
