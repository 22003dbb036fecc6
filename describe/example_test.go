package describe_test

import (
	"fmt"

	"github.com/singletable-go/singletable"
)

type Skill struct {
	User, Name, Level string
}

// A table describes itself as declared, without a client and without
// sending a request; a query describes its key condition with the
// templates' placeholders for the values.
func Example() {
	tbl := singletable.NewTable(nil, "skills")
	skills := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Skill]{
		Type: "Skill", PK: "USER#{User}", SK: "SKILL#{Name}",
		Indexes: []singletable.IndexSchema[Skill]{
			{Name: "GSI1", PK: "SKILL#{Name}", SK: "LEVEL#{Level}#USER#{User}"},
		},
	}))

	d := tbl.Describe()
	for _, e := range d.Entities {
		fmt.Println(e.Type, e.PK.Template, e.SK.Template)
		for _, p := range e.SK.Parts {
			fmt.Printf("  %+v\n", p)
		}
	}
	for _, ix := range d.Indexes {
		fmt.Println(ix.Name, ix.Partition[0].Name, ix.Sort[0].Name, ix.Projection)
	}

	q := skills.QueryIndex("GSI1", Skill{}).BeginsWith("Level", "sen").Describe()
	fmt.Println(q.KeyCondition())
	// Output:
	// Skill USER#{User} SKILL#{Name}
	//   {Literal:SKILL# Field: Format:}
	//   {Literal: Field:Name Format:}
	// GSI1 GSI1PK GSI1SK ALL
	// GSI1PK = SKILL#{Name} AND begins_with(GSI1SK, LEVEL#{Level:prefix})
}
