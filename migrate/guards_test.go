package migrate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/rawitems"
	"github.com/singletable-go/singletable/migrate"
)

// VoteUser is the elections service's user item: PK USER#{name}, SK
// METADATA, entity_type USER, an email the Go service declares unique.
type VoteUser struct {
	Name  string `dynamodbav:"name"`
	Email string `dynamodbav:"email,omitempty"`
	Role  string `dynamodbav:"role"`
}

var VoteUsers = singletable.MustDefine(singletable.Schema[VoteUser]{
	Type: "USER", PK: "USER#{Name}", SK: "METADATA",
	Unique: []singletable.Unique{{Fields: []string{"Email"}}},
})

// putKotlinUser writes a user as the elections service's Kotlin code
// does: no guard item.
func putKotlinUser(t *testing.T, tbl *singletable.Table, name, email string) {
	t.Helper()
	_, err := tbl.Client().PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(tbl.Name()),
		Item: map[string]types.AttributeValue{
			"PK":          &types.AttributeValueMemberS{Value: "USER#" + name},
			"SK":          &types.AttributeValueMemberS{Value: "METADATA"},
			"entity_type": &types.AttributeValueMemberS{Value: "USER"},
			"name":        &types.AttributeValueMemberS{Value: name},
			"email":       &types.AttributeValueMemberS{Value: email},
			"role":        &types.AttributeValueMemberS{Value: "VOTER"},
		},
	})
	require.NoError(t, err)
}

func TestUniqueGuardMigrationAdoptsExistingUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var users *singletable.Repo[VoteUser]
	tbl := newTable(t, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, VoteUsers) },
		func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" })

	// The Kotlin service's users, one email twice; a user the Go service
	// registered (guarded); a stale guard left by a user the Kotlin
	// service renamed, whose email erin now has.
	putKotlinUser(t, tbl, "alice", "alice@example.com")
	putKotlinUser(t, tbl, "bob", "bob@example.com")
	putKotlinUser(t, tbl, "carol", "alice@example.com")
	putKotlinUser(t, tbl, "erin", "erin@example.com")
	_, err := users.Create(ctx, VoteUser{Name: "frank", Email: "frank@example.com"})
	require.NoError(t, err)
	require.NoError(t, singletable.BatchWrite(ctx, users.GuardOps(VoteUser{Name: "erin-old", Email: "erin@example.com"})))

	// Before the adoption, a guard covers only what the library wrote: the
	// Go service can register bob's email.
	_, err = users.Create(ctx, VoteUser{Name: "bob2", Email: "bob@example.com"})
	require.NoError(t, err, "without the migration, a guard knows nothing of the Kotlin service's users")
	_, err = users.Delete(ctx, VoteUser{Name: "bob2"})
	require.NoError(t, err)

	m, err := migrate.New(tbl, migrate.UniqueGuards("guards-users-email", users))
	require.NoError(t, err)

	// Verify and a dry run read only: they list what lacks a guard. Two
	// unguarded items holding one value are found when the run claims it.
	vr, err := m.Verify(ctx, "guards-users-email")
	require.NoError(t, err)
	assert.Equal(t, int64(4), vr.Missing, "alice, bob, carol, erin lack a guard: %+v", vr.Differences)
	dry, err := m.Run(ctx, "guards-users-email", func(o *migrate.RunOptions) { o.DryRun = true })
	require.NoError(t, err)
	assert.Equal(t, int64(4), dry.Counts.Written)
	assert.Equal(t, int64(1), dry.Counts.Skipped)
	_, err = users.Create(ctx, VoteUser{Name: "bob3", Email: "bob@example.com"})
	require.NoError(t, err, "a dry run claims nothing")
	_, err = users.Delete(ctx, VoteUser{Name: "bob3"})
	require.NoError(t, err)

	var me *migrate.Error
	rep, err := m.Run(ctx, "guards-users-email")
	require.ErrorAs(t, err, &me, "a duplicate fails the migration: it picks no winner silently")
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Equal(t, int64(5), rep.Counts.Read)
	assert.Equal(t, int64(3), rep.Counts.Written, "the guards of alice or carol, bob, and erin's taken over")
	assert.Equal(t, int64(1), rep.Counts.Skipped, "frank held his already")
	assert.Equal(t, int64(1), rep.Counts.Failed)
	require.Len(t, me.Failures, 1)
	var dup *migrate.DuplicateError
	require.ErrorAs(t, me.Failures[0].Err, &dup)
	assert.Equal(t, []string{"Email"}, dup.Fields)
	pair := []string{attrS(dup.Key, "PK"), attrS(dup.Holder, "PK")}
	assert.ElementsMatch(t, []string{"USER#alice", "USER#carol"}, pair, "the report names both items holding the value")
	assert.NotContains(t, dup.Error(), "alice@example.com", "the report names keys, not the (personal) value")
	assert.Equal(t, pair[0], attrS(me.Failures[0].Key, "PK"))

	// Now every value is guarded: the Go service cannot take the Kotlin
	// users' emails.
	for _, email := range []string{"alice@example.com", "bob@example.com", "erin@example.com", "frank@example.com"} {
		_, err := users.Create(ctx, VoteUser{Name: "new", Email: email})
		assert.ErrorIs(t, err, singletable.ErrAlreadyExists, email)
	}
	owners := guardOwners(t, tbl)
	assert.Equal(t, "USER#erin", owners["UNIQUE#USER#email#erin@example.com"], "the stale guard was taken over")
	assert.Equal(t, pair[1], owners["UNIQUE#USER#email#alice@example.com"])

	// Resolve the duplicate on the item that does not hold the guard: its
	// update releases nothing it does not own, and claims the new value.
	loser := VoteUser{Name: pair[0][len("USER#"):]}
	_, err = users.Update(loser).Set("Email", "alice2@example.com").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, pair[1], guardOwners(t, tbl)["UNIQUE#USER#email#alice@example.com"], "the holder keeps its guard")

	// The failed migration runs again from the start and completes.
	rep, err = m.Run(ctx, "guards-users-email")
	require.NoError(t, err)
	assert.Equal(t, migrate.State("completed"), rep.State)
	assert.Equal(t, int64(0), rep.Counts.Failed)
	assert.Equal(t, int64(5), rep.Counts.Read)
	assert.Equal(t, int64(5), rep.Counts.Skipped, "the update claimed the new value itself")
	vr, err = m.Verify(ctx, "guards-users-email")
	require.NoError(t, err)
	assert.Zero(t, vr.Missing+vr.Different, "%+v", vr.Differences)
	rep, err = m.Run(ctx, "guards-users-email")
	require.NoError(t, err)
	assert.True(t, rep.AlreadyCompleted)

	// Deleting the holder releases its guard, as always.
	_, err = users.Delete(ctx, VoteUser{Name: pair[1][len("USER#"):]})
	require.NoError(t, err)
	_, err = users.Create(ctx, VoteUser{Name: "zoe", Email: "alice@example.com"})
	require.NoError(t, err)

	// A migration of an entity without Unique is refused before it runs.
	var plain *singletable.Repo[User]
	tbl2 := newTable(t, func(tbl *singletable.Table) { plain = singletable.MustBind(tbl, Users) })
	_, err = migrate.New(tbl2, migrate.UniqueGuards("g", plain))
	var ve *singletable.ValidationError
	assert.True(t, errors.As(err, &ve), "%v", err)
}

// guardOwners maps each guard item's partition key to its owner's, as the
// root package's tests read them (internal/rawitems).
var guardOwners = rawitems.GuardOwners
