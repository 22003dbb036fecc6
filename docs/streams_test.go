package docs_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/streams"
)

// The streams guide (streams.md): a table with a stream, typed changes
// read with the streams package's reader, a count kept from them, and a
// reader resumed from its checkpoint.
func Example_guideStreams() {
	ctx := context.Background()
	name := ddblocal.UniqueTableName("guide-streams")
	table := singletable.NewTable(ddblocal.Shared(nil).Client(), name)
	users := singletable.MustBind(table, Users)
	skills := singletable.MustBind(table, UserSkills)
	defer func() { _ = table.DeleteTable(ctx) }()

	err := table.CreateTable(ctx, func(o *singletable.CreateTableOptions) {
		o.Stream = types.StreamViewTypeNewAndOldImages
	})
	if err != nil {
		log.Fatal(err)
	}

	changes, err := streams.NewChanges(table, []*singletable.Target{users.Target(), skills.Target()})
	if err != nil {
		log.Fatal(err)
	}

	streamsClient := ddblocal.Shared(nil).StreamsClient() // or dynamodbstreams.NewFromConfig(cfg)
	arn, err := streams.LatestARN(ctx, streamsClient, table.Name())
	if err != nil {
		log.Fatal(err)
	}

	if _, err := users.Create(ctx, User{Username: "john", Name: "John"}); err != nil {
		log.Fatal(err)
	}
	seedSkills(ctx, skills)
	if _, err := skills.Update(UserSkill{Username: "john", SkillName: "go"}).Set("Level", "Advanced").Run(ctx); err != nil {
		log.Fatal(err)
	}

	counts := map[string]int{}
	handle := func(ctx context.Context, ch streams.Change) error {
		switch ch.Kind {
		case streams.ChangeInsert:
			counts[ch.Entity]++
		case streams.ChangeRemove:
			counts[ch.Entity]--
		case streams.ChangeModify:
			if before, ok := ch.Old.(UserSkill); ok {
				after := ch.New.(UserSkill)
				fmt.Println(after.Username, after.SkillName+":", before.Level, "->", after.Level)
			}
		}
		return nil
	}

	reader := streams.NewReader(streamsClient, arn)
	err = reader.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
		return changes.Handle(ctx, recs, handle)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(counts)

	saved := reader.Checkpoint() // store it (it marshals to JSON) ...
	if _, err := skills.Delete(ctx, UserSkill{Username: "bob", SkillName: "python"}); err != nil {
		log.Fatal(err)
	}
	resumed := streams.NewReader(streamsClient, arn, func(o *streams.Options) { o.From = saved })
	err = resumed.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
		return changes.Handle(ctx, recs, handle)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(counts)
	// Output:
	// john go: Beginner -> Advanced
	// map[User:1 UserSkill:6]
	// map[User:1 UserSkill:5]
}
