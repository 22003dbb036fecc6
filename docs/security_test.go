package docs_test

import (
	"fmt"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// docs/security.md, "Raw key values and forged keys": users and their
// followers share the partition key attribute, and a raw user ID at the
// end of the users' key can render the followers' key.

type SocialUser struct {
	UserID string `dynamodbav:"-"`
	Name   string `dynamodbav:"name"`
}

type SocialFollower struct {
	UserID     string `dynamodbav:"-"`
	FollowerID string `dynamodbav:"-"`
}

var SocialUsers = singletable.MustDefine(singletable.Schema[SocialUser]{
	Type: "User", PK: "u#{UserID:raw}", SK: "profile", KeyOnly: []string{"UserID"},
})

var SocialFollowers = singletable.MustDefine(singletable.Schema[SocialFollower]{
	Type: "Follower", PK: "u#{UserID:raw=[0-9]+}#follower", SK: "f#{FollowerID:raw=[0-9]+}",
	KeyOnly: []string{"UserID", "FollowerID"},
})

// The users' key closed by a constraint: only digits.
var SafeSocialUsers = singletable.MustDefine(singletable.Schema[SocialUser]{
	Type: "User", PK: "u#{UserID:raw=[0-9]+}", SK: "profile", KeyOnly: []string{"UserID"},
})

func printFindings(users *singletable.Entity[SocialUser]) {
	tbl := singletable.NewTable(nil, "social")
	singletable.MustBind(tbl, users)
	singletable.MustBind(tbl, SocialFollowers)
	for _, f := range catalog.New(tbl).Findings {
		fmt.Println(f)
	}
}

func Example_forgedKeys() {
	printFindings(SocialUsers)
	pk, _, err := SocialUsers.RenderKeys(SocialUser{UserID: "12345#follower"})
	fmt.Println(pk, err)

	printFindings(SafeSocialUsers)
	_, _, err = SafeSocialUsers.RenderKeys(SocialUser{UserID: "12345#follower"})
	fmt.Println(err)
	// Output:
	// warning User: User's PK = u#{UserID:raw} can render Follower's keys (PK = u#{UserID:raw=[0-9]+}#follower): UserID = "0#follower" renders PK "u#0#follower", Follower's key for UserID = "0", so a value can reach another entity's items. Constrain the raw values so that they cannot hold '#': {UserID:raw=[^#]+} (or a stricter class, such as [0-9]+ for numeric IDs) closes it; or give the two templates literals that tell their keys apart (forged-key)
	// u#12345#follower <nil>
	// singletable: User key PK: field UserID: value cannot be written in the key format: {UserID:raw=[0-9]+}: value does not match its constraint
}
