package singletable_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/singletable-go/singletable"
)

// The elections service's Kotlin code writes its voters without an
// entity_type attribute. With MatchKeys, a query keeps the entity's typed
// items and the untyped ones, whose keys are then checked against the
// entity's templates as they are read.
func ExampleSchema_matchKeys() {
	type Voter struct {
		Election string `dynamodbav:"election_name"`
		Name     string `dynamodbav:"voter_name"`
	}
	voters := singletable.MustDefine(singletable.Schema[Voter]{
		Type: "VOTER", PK: "ELECTION#{Election}", SK: "VOTER#{Name}", MatchKeys: true,
	})
	table := singletable.NewTable(nil, "vote_data", func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" })
	repo := singletable.MustBind(table, voters)

	in, err := repo.Query(Voter{Election: "lang"}).Request()
	if err != nil {
		panic(err)
	}
	filter := *in.FilterExpression
	for ref, name := range in.ExpressionAttributeNames {
		filter = strings.ReplaceAll(filter, ref, name)
	}
	fmt.Println(filter)
	// Output:
	// entity_type = :v2 OR attribute_not_exists(entity_type)
}

// A usage log keeps its day and action only in its sort key: KeyOnly
// leaves them out of the item, and every read fills them from the key.
// Times take the shapes other services store (here a bare date, and epoch
// milliseconds), and a JSON-string attribute decodes into any Go value.
func ExampleSchema_keyOnly() {
	type Usage struct {
		User    string `dynamodbav:"username"`
		Day     string
		Action  string
		Seen    time.Time         `dynamodbav:"seen,unixmilli"`
		Started time.Time         `dynamodbav:"started,date"`
		Extra   map[string]string `dynamodbav:"extra,json,omitempty"`
	}
	usage := singletable.MustDefine(singletable.Schema[Usage]{
		Type: "Usage", PK: "USER#{User}", SK: "USAGE#{Day}#{Action}", KeyOnly: []string{"Day", "Action"},
	})
	repo := singletable.MustBind(singletable.NewTable(nil, "t"), usage)
	fmt.Println(repo.Describe().KeyOnly)

	u, err := usage.ParseKeys("USER#john", "USAGE#2024-03-01#login")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.User, u.Day, u.Action)
	// Output:
	// [Day Action]
	// john 2024-03-01 login
}
