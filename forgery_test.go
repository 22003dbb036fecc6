package singletable_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// Raw values cannot forge another template's key (issue 24 item 12).
// Users are keyed u#{UserID:raw} and their followers
// u#{UserID:raw}#follower: the user "12345#follower" has the partition
// key of user 12345's followers. The catalog lint finds the gap, and a
// constraint on the raw values ({UserID:raw=[0-9]+}) closes it: the
// forging value is refused before the network, and an item another
// service wrote under a key that breaks the constraint is reported, not
// dropped and not decoded as something it is not.

type FgUser struct {
	UserID string `dynamodbav:"-"`
	Name   string `dynamodbav:"name"`
}

type FgFollower struct {
	UserID   string `dynamodbav:"-"`
	Follower string `dynamodbav:"-"`
	Since    string `dynamodbav:"since"`
}

// forgeryTable binds users and followers keyed with userPK and
// followerPK.
func forgeryTable(t *testing.T, userPK, followerPK, followerSK string) (*singletable.Table, *countingClient, *singletable.Repo[FgUser], *singletable.Repo[FgFollower]) {
	var users *singletable.Repo[FgUser]
	var followers *singletable.Repo[FgFollower]
	tbl, c := newTable(t, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[FgUser]{
			Type: "FgUser", PK: userPK, SK: "profile", KeyOnly: []string{"UserID"}}))
		followers = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[FgFollower]{
			Type: "FgFollower", PK: followerPK, SK: followerSK, KeyOnly: []string{"UserID", "Follower"}}))
	})
	return tbl, c, users, followers
}

// forgeries returns the lint's findings of forged keys on tbl.
func forgeries(tbl *singletable.Table) []string {
	var out []string
	for _, f := range catalog.New(tbl).Findings {
		if strings.Contains(f.Message, " can render ") {
			out = append(out, f.String())
		}
	}
	return out
}

// rawPartition reads a partition with the SDK alone.
func rawPartition(t *testing.T, tbl *singletable.Table, pk string) []string {
	t.Helper()
	out, err := tbl.Client().Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(tbl.Name()),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sAV(pk)}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	var sks []string
	for _, item := range out.Items {
		sks = append(sks, item["SK"].(*types.AttributeValueMemberS).Value)
	}
	slices.Sort(sks)
	return sks
}

func TestForgedKeyRefusedOnceConstrained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const forging = "12345#follower"

	// Without a constraint: the lint finds the gap, and the forging value
	// writes a user into user 12345's followers' partition.
	open, _, users, followers := forgeryTable(t, "u#{UserID:raw}", "u#{UserID:raw}#follower", "f#{Follower:raw}")
	found := forgeries(open)
	require.Len(t, found, 1)
	assert.Contains(t, found[0], `FgUser's PK = u#{UserID:raw} can render FgFollower's keys (PK = u#{UserID:raw}#follower): UserID = "0#follower"`)
	assert.Contains(t, found[0], `{UserID:raw=[^#]+}`)
	_, err := followers.Put(ctx, FgFollower{UserID: "12345", Follower: "678", Since: "2024"})
	require.NoError(t, err)
	_, err = users.Put(ctx, FgUser{UserID: forging, Name: "mallory"})
	require.NoError(t, err)
	assert.Equal(t, []string{"f#678", "profile"}, rawPartition(t, open, "u#12345#follower"), "the forged user is in the followers' partition")

	// With a constraint: the lint is silent, and every operation that
	// would render the forging value is refused before the network with
	// a *KeyError that names the rule and not the value.
	closed, c, users, followers := forgeryTable(t, "u#{UserID:raw=[0-9]+}", "u#{UserID:raw=[0-9]+}#follower", "f#{Follower:raw=[0-9]+}")
	assert.Empty(t, forgeries(closed))
	bad := FgUser{UserID: forging, Name: "mallory"}
	ops := map[string]func() error{
		"Put":    func() error { _, err := users.Put(ctx, bad); return err },
		"Create": func() error { _, err := users.Create(ctx, bad); return err },
		"Get":    func() error { _, err := users.Get(ctx, bad); return err },
		"Delete": func() error { _, err := users.Delete(ctx, bad); return err },
		"Update": func() error { _, err := users.Update(bad).Set("Name", "x").Run(ctx); return err },
		"Query":  func() error { _, err := users.Query(bad).Page(ctx); return err },
		"Collection": func() error {
			var us []FgUser
			_, err := users.QueryCollection(bad).Page(ctx, users.AppendTo(&us))
			return err
		},
		"follower Put": func() error {
			_, err := followers.Put(ctx, FgFollower{UserID: "12345", Follower: "1#x", Since: "2024"})
			return err
		},
	}
	for name, op := range ops {
		err := op()
		var ke *singletable.KeyError
		if !assert.ErrorAs(t, err, &ke, name) {
			continue
		}
		assert.Contains(t, []string{"PK", "SK"}, ke.Key, name)
		assert.Contains(t, err.Error(), "does not match its constraint", name)
		for _, leak := range []string{"12345", "follower", "1#x"} {
			if strings.HasPrefix(name, "follower") == (leak == "1#x") {
				assert.NotContains(t, err.Error(), leak, "%s: the error quotes the value", name)
			}
		}
	}
	assert.Zero(t, c.requests.Load(), "a request reached DynamoDB")
	_, err = users.Put(ctx, FgUser{UserID: "12345", Name: "ok"})
	require.NoError(t, err, "a value the constraint matches is written")
}

func TestForgedKeyWrittenElsewhereIsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, users, followers := forgeryTable(t, "u#{UserID:raw=[0-9]+}", "u#{UserID:raw=[0-9]+}#follower", "f#{Follower:raw=[0-9]+}")
	et := tbl.Describe().EntityTypeAttr
	put := func(entity, pk, sk string, attrs map[string]types.AttributeValue) {
		item := map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV(sk), et: sAV(entity)}
		for k, v := range attrs {
			item[k] = v
		}
		rawPut(t, tbl, item)
	}
	// As another service writes them: two followers, one whose follower
	// is not a number, and a user keyed with the forging value.
	put("FgFollower", "u#12345#follower", "f#1", map[string]types.AttributeValue{"since": sAV("2021")})
	put("FgFollower", "u#12345#follower", "f#2", map[string]types.AttributeValue{"since": sAV("2022")})
	put("FgFollower", "u#12345#follower", "f#bob", map[string]types.AttributeValue{"since": sAV("2023")})
	put("FgUser", "u#12345#follower", "profile", map[string]types.AttributeValue{"name": sAV("mallory")})
	put("FgUser", "u#12345", "profile", map[string]types.AttributeValue{"name": sAV("alice")})

	reported := func(what string, skipped []*singletable.DecodeError, want map[string]string) {
		t.Helper()
		got := map[string]string{}
		for _, de := range skipped {
			key := de.Key["PK"].(*types.AttributeValueMemberS).Value + " " + de.Key["SK"].(*types.AttributeValueMemberS).Value
			var ke *singletable.KeyError
			if assert.ErrorAs(t, de, &ke, "%s: %s", what, key) {
				got[key] = de.Entity + " " + ke.Key
				assert.Contains(t, de.Error(), "does not match its constraint", "%s: %s", what, key)
			}
		}
		assert.Equal(t, want, got, what)
	}

	// The followers' query selects f#bob and reports it.
	page, err := followers.Query(FgFollower{UserID: "12345"}).Page(ctx)
	require.NoError(t, err)
	var got []string
	for _, f := range page.Items {
		got = append(got, f.UserID+"/"+f.Follower+"/"+f.Since)
	}
	assert.Equal(t, []string{"12345/1/2021", "12345/2/2022"}, got)
	reported("followers' Query", page.Skipped, map[string]string{"u#12345#follower f#bob": "FgFollower SK"})

	// A Collection of the followers' partition holds the forged user:
	// reported as a user whose key breaks the constraint, not decoded as
	// the user "12345#follower".
	var fs []FgFollower
	var us []FgUser
	cp, err := followers.QueryCollection(FgFollower{UserID: "12345"}).Page(ctx, followers.AppendTo(&fs), users.AppendTo(&us))
	require.NoError(t, err)
	assert.Len(t, fs, 2)
	assert.Empty(t, us)
	reported("Collection", cp.Skipped, map[string]string{"u#12345#follower f#bob": "FgFollower SK", "u#12345#follower profile": "FgUser PK"})

	// A Scan of users finds alice and reports the forged one.
	sp, err := users.Scan().Page(ctx)
	require.NoError(t, err)
	require.Len(t, sp.Items, 1)
	assert.Equal(t, FgUser{UserID: "12345", Name: "alice"}, sp.Items[0])
	reported("users' Scan", sp.Skipped, map[string]string{"u#12345#follower profile": "FgUser PK"})

	// The library cannot address it either.
	_, err = users.Get(ctx, FgUser{UserID: "12345#follower"})
	var ke *singletable.KeyError
	assert.ErrorAs(t, err, &ke)
	var strict *singletable.DecodeError
	_, err = followers.Query(FgFollower{UserID: "12345"}, func(o *singletable.ReadOptions) { o.StrictDecode = true }).Page(ctx)
	assert.True(t, errors.As(err, &strict), "StrictDecode: %v", err)
}
