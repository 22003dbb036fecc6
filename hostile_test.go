package singletable_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// Key values crafted to look like delimiters, escapes or another user's
// key prefix cannot read, overwrite or delete anyone else's items.
func TestHostileKeyValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	_, err := users.Create(ctx, User{Username: "john", Name: "John"})
	require.NoError(t, err)
	_, err = skills.Create(ctx, UserSkill{Username: "john", SkillName: "golang", Level: "Expert"})
	require.NoError(t, err)
	_, err = skills.Create(ctx, UserSkill{Username: "john", SkillName: "go", Level: "Beginner"})
	require.NoError(t, err)

	hostile := []string{
		"john#", "john#PROFILE", "#", "%", "%23", "%2", "john%23", "USER#john", "john\x00", "john ", " john",
		"jo\u0301hn", "john\U0010FFFF", "\xff\xfe", "john\xff", "SKILL#golang", "go#lang", "golang#", strings.Repeat("#", 300),
		strings.Repeat("é", 500), "💥#💥", "PROFILE",
	}
	for _, h := range hostile {
		// Registering a hostile username creates a separate user, except
		// that invalid UTF-8 is refused: DynamoDB would store U+FFFD.
		_, err := users.Create(ctx, User{Username: h, Name: "evil"})
		if !utf8.ValidString(h) {
			var ve *singletable.ValidationError
			require.ErrorAs(t, err, &ve, "%q", h)
			_, err = users.Get(ctx, User{Username: h})
			require.ErrorIs(t, err, singletable.ErrNotFound)
		} else {
			require.NoError(t, err, "%q", h)
			got, err := users.Get(ctx, User{Username: h})
			require.NoError(t, err, "%q", h)
			assert.Equal(t, h, got.Username, "round trip %q", h)
		}
		// john is untouched.
		j, err := users.Get(ctx, User{Username: "john"})
		require.NoError(t, err)
		assert.Equal(t, "John", j.Name)
		// A hostile skill name never reaches john's other skills.
		_, err = skills.Get(ctx, UserSkill{Username: "john", SkillName: h})
		assert.ErrorIs(t, err, singletable.ErrNotFound, "%q", h)
		prefixed, err := skills.Query(UserSkill{Username: "john", SkillName: h}).BeginsWith("SkillName", h).Collect(ctx)
		require.NoError(t, err)
		for _, s := range prefixed {
			assert.True(t, strings.HasPrefix(s.SkillName, h), "prefix %q matched %q", h, s.SkillName)
		}
		// Deleting with a hostile key deletes nothing of john's.
		_, err = skills.Delete(ctx, UserSkill{Username: "john", SkillName: h})
		assert.ErrorIs(t, err, singletable.ErrNotFound)
		// The hostile user's item collection holds only its own profile.
		n, err := skills.Query(UserSkill{Username: h}).Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "%q", h)
	}
	all, err := skills.Query(UserSkill{Username: "john"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "golang"}, skillNames(all))
	// "go" as an exact skill never matches "golang".
	eq, err := skills.Query(UserSkill{Username: "john"}).Where("SkillName", singletable.Eq, "go").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"go"}, skillNames(eq))

	// Empty values are refused before the network.
	before := c.requests.Load()
	_, err = users.Create(ctx, User{Username: ""})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, before, c.requests.Load())

	invalid := 0
	for _, h := range hostile {
		if !utf8.ValidString(h) {
			invalid++
		}
	}
	reportInputs(inputRow{Suite: "hostile key values (#, %, escapes, NUL, invalid UTF-8, other entities' prefixes, 300+ chars), each as username and skill name",
		Tried: len(hostile) + 1,
		Outcomes: fmt.Sprintf("%d stored as their own user, round-tripped exactly; %d invalid UTF-8 refused (*ValidationError); 1 empty refused (*KeyError) before the network; "+
			"0 reads, prefix queries or deletes reached john's items", len(hostile)-invalid, invalid)})
}

// The design's IAM idea, dynamodb:LeadingKeys "USER#${username}", is safe
// only if no other username renders to a key that a user's prefix covers.
// Escaping makes rendered partition keys distinct, and no other name's key
// extends "USER#john" with a delimiter.
func TestPartitionKeysDistinct(t *testing.T) {
	names := []string{"john", "john#", "john#x", "john%", "john%23", "john\x00", "john ", "johnny", "john\xff", "jo#hn"}
	seen := map[string]string{}
	skills := singletable.MustBind(singletable.NewTable(nil, "offline"), UserSkills)
	for _, n := range names {
		op := skills.DeleteOp(UserSkill{Username: n, SkillName: "x"})
		require.NoError(t, op.Err())
		pk := op.Key()["PK"].(*types.AttributeValueMemberS).Value
		if other, dup := seen[pk]; dup {
			t.Fatalf("%q and %q render to the same key %q", n, other, pk)
		}
		seen[pk] = n
		if n != "john" {
			assert.False(t, strings.HasPrefix(pk, "USER#john#"), "%q renders %q", n, pk)
		}
		assert.NotContains(t, pk[len("USER#"):], "#", "%q renders %q", n, pk)
	}
}
