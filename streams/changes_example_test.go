package streams_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/streams"
)

// NewChanges makes a decoder of stream records into typed change events:
// the images become the entity's Go values, routed by entity type as a
// Collection routes items. Here one record, as a stream reader or a
// Lambda function hands it on; no request is sent.
func ExampleNewChanges() {
	table := singletable.NewTable(nil, "glad-entities") // no client needed offline
	skills := singletable.MustBind(table, UserSkills)
	changes, err := streams.NewChanges(table, []*singletable.Target{skills.Target()})
	if err != nil {
		panic(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	old := map[string]types.AttributeValue{
		"PK": s("USER#john"), "SK": s("SKILL#go"), "EntityType": s("UserSkill"),
		"Username": s("john"), "SkillName": s("go"), "ProficiencyLevel": s("Advanced"),
	}
	updated := map[string]types.AttributeValue{
		"PK": s("USER#john"), "SK": s("SKILL#go"), "EntityType": s("UserSkill"),
		"Username": s("john"), "SkillName": s("go"), "ProficiencyLevel": s("Expert"),
	}
	records := []streams.Record{{
		EventID: "1", EventName: "MODIFY", SequenceNumber: "100",
		Keys:     map[string]types.AttributeValue{"PK": s("USER#john"), "SK": s("SKILL#go")},
		OldImage: old, NewImage: updated,
	}}
	err = changes.Handle(context.Background(), records, func(_ context.Context, ch streams.Change) error {
		before, after := ch.Old.(UserSkill), ch.New.(UserSkill)
		fmt.Println(ch.Kind, ch.Entity, before.SkillName+":", before.Level, "->", after.Level)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// MODIFY UserSkill go: Advanced -> Expert
}
