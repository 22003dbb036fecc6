package skills_test

// The skills service's design is run by a Go service of its own, whose
// code declares its items as structs with dynamodbav tags and writes them
// with attributevalue.MarshalMap and PutItem. These tests write items
// exactly as that code does (its key strings, its attribute names,
// LastUsedDate as a bare date, times as attributevalue writes a
// time.Time, profiles without GSI1 attributes, a skill without
// LastUsedDate) and read, query, decode and update them through the
// service; and they find the service's own writes with the design's key
// expressions, decoding them into the design's structs.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/migrate"
)

// seedUser and seedUserSkill are the design's items as its Go service
// declares them (the "Item Structure" blocks of its phases 1 and 2, in
// the struct style of its entity-addition protocol).
type seedUser struct {
	PK           string    `dynamodbav:"PK"`
	SK           string    `dynamodbav:"SK"`
	EntityType   string    `dynamodbav:"EntityType"`
	Username     string    `dynamodbav:"Username"`
	Name         string    `dynamodbav:"Name"`
	PasswordHash string    `dynamodbav:"PasswordHash"`
	CreatedAt    time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt    time.Time `dynamodbav:"UpdatedAt"`
}

type seedUserSkill struct {
	PK                string    `dynamodbav:"PK"`
	SK                string    `dynamodbav:"SK"`
	EntityType        string    `dynamodbav:"EntityType"`
	Username          string    `dynamodbav:"Username"`
	SkillName         string    `dynamodbav:"SkillName"`
	ProficiencyLevel  string    `dynamodbav:"ProficiencyLevel"`
	YearsOfExperience int       `dynamodbav:"YearsOfExperience"`
	Endorsements      int       `dynamodbav:"Endorsements"`
	LastUsedDate      string    `dynamodbav:"LastUsedDate,omitempty"`
	CreatedAt         time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt         time.Time `dynamodbav:"UpdatedAt"`
	GSI1PK            string    `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK            string    `dynamodbav:"GSI1SK,omitempty"`
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSeedKeyStrings(t *testing.T) {
	render := func(pk, sk string, err error) [2]string {
		require.NoError(t, err)
		return [2]string{pk, sk}
	}
	john := skills.UserSkill{Username: "john", SkillName: "golang", Level: "Expert"}
	ml := skills.UserSkill{Username: "john", SkillName: "machine learning", Level: "Advanced"}
	cs := skills.UserSkill{Username: "john.smith", SkillName: "c#", Level: "Beginner"}
	for _, c := range []struct {
		name string
		got  [2]string
		want [2]string
	}{
		{"user", render(skills.Users.RenderKeys(skills.User{Username: "john"})), [2]string{"USER#john", "PROFILE"}},
		{"user with a dot", render(skills.Users.RenderKeys(skills.User{Username: "john.smith"})), [2]string{"USER#john.smith", "PROFILE"}},
		{"skill", render(skills.UserSkills.RenderKeys(john)), [2]string{"USER#john", "SKILL#golang"}},
		{"skill with a space", render(skills.UserSkills.RenderKeys(ml)), [2]string{"USER#john", "SKILL#machine learning"}},
		{"skill with a #", render(skills.UserSkills.RenderKeys(cs)), [2]string{"USER#john.smith", "SKILL#c#"}},
		{"skill GSI1", render(skills.UserSkills.RenderIndexKeys("GSI1", john)), [2]string{"SKILL#golang", "LEVEL#Expert#USER#john"}},
		{"skill GSI1 with a space", render(skills.UserSkills.RenderIndexKeys("GSI1", ml)), [2]string{"SKILL#machine learning", "LEVEL#Advanced#USER#john"}},
		{"skill GSI1 with a #", render(skills.UserSkills.RenderIndexKeys("GSI1", cs)), [2]string{"SKILL#c#", "LEVEL#Beginner#USER#john.smith"}},
		// Not in the design: the service's listing of users (its AP5
		// without a Scan), shown without its shard suffix.
		{"user listing", render(skills.Users.RenderIndexKeys("GSI1", skills.User{Username: "john"})), [2]string{"USERS", "USER#john"}},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
	got, err := skills.UserSkills.ParseKeys("USER#john", "SKILL#c#")
	require.NoError(t, err)
	assert.Equal(t, skills.UserSkill{Username: "john", SkillName: "c#"}, got)
	got, err = skills.UserSkills.ParseKeys("USER#john", "SKILL#machine learning")
	require.NoError(t, err)
	assert.Equal(t, "machine learning", got.SkillName)

	// What the raw format cannot write back exactly is refused before the
	// network: a level holding the "#" that follows it, an empty name.
	var ke *singletable.KeyError
	_, _, err = skills.UserSkills.RenderIndexKeys("GSI1", skills.UserSkill{Username: "john", SkillName: "go", Level: "Ex#pert"})
	assert.ErrorAs(t, err, &ke)
	_, _, err = skills.UserSkills.RenderKeys(skills.UserSkill{Username: "john"})
	assert.ErrorAs(t, err, &ke)

	// The whole item the service writes for a skill is the design's
	// "Item Structure", attribute for attribute: LastUsedDate a bare date
	// (also GSI2's last sort attribute), YearsOfExperience and
	// Endorsements numbers, times as attributevalue writes a time.Time.
	st := skills.NewStore(nil, skills.TableName)
	at := time.Date(2024, 3, 1, 10, 0, 0, 123456789, time.UTC)
	reqs, err := st.Table.Preview(context.Background(), func(ctx context.Context) error {
		_, err := st.Skills.Put(ctx, skills.UserSkill{Username: "john", SkillName: "machine learning", Level: "Expert",
			Years: 7, Endorsements: 2, LastUsed: date("2024-03-01"), CreatedAt: at, UpdatedAt: at})
		return err
	})
	require.NoError(t, err)
	require.Len(t, reqs, 1)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	assert.Equal(t, map[string]types.AttributeValue{
		"PK": s("USER#john"), "SK": s("SKILL#machine learning"), "EntityType": s("UserSkill"),
		"Username": s("john"), "SkillName": s("machine learning"), "ProficiencyLevel": s("Expert"),
		"YearsOfExperience": n("7"), "Endorsements": n("2"), "LastUsedDate": s("2024-03-01"),
		"CreatedAt": s("2024-03-01T10:00:00.123456789Z"), "UpdatedAt": s("2024-03-01T10:00:00.123456789Z"),
		"GSI1PK": s("SKILL#machine learning"), "GSI1SK": s("LEVEL#Expert#USER#john"),
	}, reqs[0].Input.(*dynamodb.PutItemInput).Item)
	// The same item, decoded by the design's own struct.
	var seed seedUserSkill
	require.NoError(t, attributevalue.UnmarshalMap(reqs[0].Input.(*dynamodb.PutItemInput).Item, &seed))
	assert.Equal(t, "2024-03-01", seed.LastUsedDate)
	assert.Equal(t, at, seed.CreatedAt)
}

// seedTable creates a fresh glad-entities table and returns the service
// on it, with the raw client and the table name.
func seedTable(t *testing.T) (*skills.Service, singletable.Client, string) {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	st := skills.NewStore(client, name)
	require.NoError(t, st.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	svc := skills.NewService(st)
	svc.PasswordIterations = 1000
	svc.Now = func() time.Time { return time.Date(2024, 7, 1, 12, 0, 0, 500, time.UTC) }
	return svc, client, name
}

// putAsGo writes v as the design's Go service does: MarshalMap and a
// PutItem, conditional on the key being free (its AP2 and AP8).
func putAsGo(t *testing.T, c singletable.Client, table string, v any) error {
	t.Helper()
	item, err := attributevalue.MarshalMap(v)
	require.NoError(t, err)
	_, err = c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(PK)")})
	return err
}

// seedCreated is when the Go service wrote its items: attributevalue
// writes it as "2024-02-01T08:30:00.123456789Z".
var seedCreated = time.Date(2024, 2, 1, 8, 30, 0, 123456789, time.UTC)

// writeAsGo writes users and skills as the design's Go service does.
func writeAsGo(t *testing.T, c singletable.Client, table string) {
	t.Helper()
	hash, err := skills.HashPassword("correct horse", 1000)
	require.NoError(t, err)
	for _, u := range []string{"alice", "bob", "carol", "dave", "john"} {
		require.NoError(t, putAsGo(t, c, table, seedUser{PK: "USER#" + u, SK: "PROFILE", EntityType: "User",
			Username: u, Name: "Name of " + u, PasswordHash: hash, CreatedAt: seedCreated, UpdatedAt: seedCreated}))
	}
	skill := func(user, name, level string, years, endorsements int, lastUsed string) {
		require.NoError(t, putAsGo(t, c, table, seedUserSkill{PK: "USER#" + user, SK: "SKILL#" + name, EntityType: "UserSkill",
			Username: user, SkillName: name, ProficiencyLevel: level, YearsOfExperience: years, Endorsements: endorsements,
			LastUsedDate: lastUsed, CreatedAt: seedCreated, UpdatedAt: seedCreated,
			GSI1PK: "SKILL#" + name, GSI1SK: "LEVEL#" + level + "#USER#" + user}))
	}
	// john's skills, whose names sort by their bytes: "c" < "c#" < "c++"
	// < "go" < "golang" < "machine learning".
	for _, name := range []string{"c", "c#", "c++", "go", "golang"} {
		skill("john", name, "Intermediate", 3, 0, "2024-01-01")
	}
	skill("john", "machine learning", "Expert", 5, 3, "2024-01-01")
	// Python experts at the GSI2 boundaries: 4 and 5 years; used on
	// 2023-12-31, 2024-01-01 and 2024-01-02.
	skill("alice", "python", "Expert", 4, 0, "2024-06-01")
	skill("bob", "python", "Expert", 5, 0, "2023-12-31")
	skill("carol", "python", "Expert", 5, 0, "2024-01-01")
	skill("dave", "python", "Expert", 5, 0, "2024-01-02")
	skill("john", "python", "Advanced", 7, 0, "2024-01-01")
	// A skill the Go service wrote without LastUsedDate (omitempty): it is
	// in GSI1, not in GSI2.
	skill("alice", "machine learning", "Beginner", 1, 0, "")
}

func TestSeedGoItemsThroughTheService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, c, table := seedTable(t)
	st := svc.Store()
	writeAsGo(t, c, table)

	// AP1, AP4, login: the Go service's profiles, decoded.
	u, err := svc.GetUser(ctx, "john")
	require.NoError(t, err)
	assert.Equal(t, "Name of john", u.Name)
	assert.Equal(t, seedCreated, u.CreatedAt, "attributevalue's RFC 3339 with nanoseconds")
	_, err = svc.Authenticate(ctx, "john", "correct horse")
	require.NoError(t, err)
	ok, err := svc.UserExists(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, ok)

	// AP7: one skill, by the raw names.
	sk, err := svc.GetSkill(ctx, "john", "Machine Learning")
	require.NoError(t, err)
	assert.Equal(t, skills.UserSkill{Username: "john", SkillName: "machine learning", Level: "Expert", Years: 5, Endorsements: 3,
		LastUsed: date("2024-01-01"), CreatedAt: seedCreated, UpdatedAt: seedCreated}, sk)
	sk, err = svc.GetSkill(ctx, "john", "c#")
	require.NoError(t, err)
	assert.Equal(t, "c#", sk.SkillName)
	_, err = svc.GetSkill(ctx, "john", "rust")
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	sk, err = svc.GetSkill(ctx, "alice", "machine learning")
	require.NoError(t, err)
	assert.True(t, sk.LastUsed.IsZero(), "a missing LastUsedDate is the zero time")
	rec := httptest.NewRecorder()
	skills.Handler(svc, nil).ServeHTTP(rec, httptest.NewRequest("GET", "/users/alice/skills/machine%20learning", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.NotContains(t, rec.Body.String(), "last_used_date", "and absent from the API's answer")
	// Years alone changed: the skill stays out of GSI2 (no zero date is
	// written for the missing one).
	two := 2
	_, err = svc.UpdateSkill(ctx, "alice", "machine learning", skills.SkillInput{Years: &two})
	require.NoError(t, err)
	var alice seedUserSkill
	getRaw(t, c, table, "USER#alice", "SKILL#machine learning", &alice)
	assert.Equal(t, 2, alice.YearsOfExperience)
	assert.Empty(t, alice.LastUsedDate)

	// AP6 and every sort operator at the boundaries of the raw names.
	names := func(q *singletable.Query[skills.UserSkill]) []string {
		t.Helper()
		out := []string{}
		items, err := q.Collect(ctx)
		require.NoError(t, err)
		for _, s := range items {
			out = append(out, s.SkillName)
		}
		return out
	}
	page, err := svc.ListSkills(ctx, "john", 0, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "c#", "c++", "go", "golang", "machine learning", "python"}, skillNames2(page.Items))
	q := st.Skills.Query(skills.UserSkill{Username: "john", SkillName: "c#"})
	assert.Equal(t, []string{"c#"}, names(q.Where("SkillName", singletable.Eq, "c#")))
	assert.Equal(t, []string{"c++", "go", "golang", "machine learning", "python"}, names(q.Where("SkillName", singletable.Gt, "c#")))
	assert.Equal(t, []string{"c#", "c++", "go", "golang", "machine learning", "python"}, names(q.Where("SkillName", singletable.Ge, "c#")))
	assert.Equal(t, []string{"c"}, names(q.Where("SkillName", singletable.Lt, "c#")))
	assert.Equal(t, []string{"c", "c#"}, names(q.Where("SkillName", singletable.Le, "c#")))
	assert.Equal(t, []string{"c#", "c++", "go"}, names(q.Between("SkillName", "c#", "go")))
	assert.Equal(t, []string{"c", "c#", "c++"}, names(q.BeginsWith("SkillName", "c")))
	assert.Equal(t, []string{"go", "golang"}, names(q.BeginsWith("SkillName", "go")), "a string prefix, as the design's begins_with")
	assert.Equal(t, []string{"python", "machine learning"}, names(q.Where("SkillName", singletable.Gt, "c#").Desc().Limit(2)))

	// AP11 and AP12 on the Go service's GSI1 keys, ordered by GSI1SK.
	users := func(p singletable.Page[skills.UserSkill], err error) []string {
		t.Helper()
		require.NoError(t, err)
		out := []string{}
		for _, s := range p.Items {
			out = append(out, s.Username+" "+s.Level)
		}
		return out
	}
	assert.Equal(t, []string{"john Advanced", "alice Expert", "bob Expert", "carol Expert", "dave Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python"})))
	assert.Equal(t, []string{"alice Beginner", "john Expert"}, users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "machine learning"})))
	assert.Equal(t, []string{"alice Expert", "bob Expert", "carol Expert", "dave Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "expert"})))
	// GSI1's sort key after its level: every operator on the username.
	byUser := func(q *singletable.Query[skills.UserSkill]) []string {
		t.Helper()
		items, err := q.Collect(ctx)
		require.NoError(t, err)
		out := []string{}
		for _, s := range items {
			out = append(out, s.Username)
		}
		return out
	}
	g := st.Skills.QueryIndex("GSI1", skills.UserSkill{SkillName: "python", Level: "Expert", Username: "bob"})
	assert.Equal(t, []string{"bob"}, byUser(g.Where("Username", singletable.Eq, "bob")))
	assert.Equal(t, []string{"carol", "dave"}, byUser(g.Where("Username", singletable.Gt, "bob")))
	assert.Equal(t, []string{"bob", "carol", "dave"}, byUser(g.Where("Username", singletable.Ge, "bob")))
	assert.Equal(t, []string{"alice"}, byUser(g.Where("Username", singletable.Lt, "bob")))
	assert.Equal(t, []string{"alice", "bob"}, byUser(g.Where("Username", singletable.Le, "bob")))
	assert.Equal(t, []string{"bob", "carol"}, byUser(g.Between("Username", "bob", "carol")))
	assert.Equal(t, []string{"carol"}, byUser(g.BeginsWith("Username", "ca")))

	// GSI2, the design's multi-attribute index, on the Go service's
	// numbers and bare dates: at least 5 years (4 is out); 5 years and
	// used since 2024-01-01 (2023-12-31 is out, the day itself is in).
	five := 5
	assert.Equal(t, []string{"bob Expert", "carol Expert", "dave Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "Expert", MinYears: &five})))
	since := date("2024-01-01")
	assert.Equal(t, []string{"carol Expert", "dave Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "Expert", Years: &five, UsedSince: &since})))
	noon := since.Add(12 * time.Hour)
	assert.Equal(t, []string{"carol Expert", "dave Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "Expert", Years: &five, UsedSince: &noon})),
		"a time of day is its date")
	g2 := st.Skills.QueryIndex("GSI2", skills.UserSkill{SkillName: "python", Level: "Expert", Years: 5, LastUsed: since})
	assert.Equal(t, []string{"carol"}, byUser(g2.Where("LastUsed", singletable.Eq, since)))
	assert.Equal(t, []string{"dave"}, byUser(g2.Where("LastUsed", singletable.Gt, since)))
	assert.Equal(t, []string{"carol", "dave"}, byUser(g2.Where("LastUsed", singletable.Ge, since)))
	assert.Equal(t, []string{"bob"}, byUser(g2.Where("LastUsed", singletable.Lt, since)))
	assert.Equal(t, []string{"bob", "carol"}, byUser(g2.Where("LastUsed", singletable.Le, since)))
	assert.Equal(t, []string{"carol", "dave"}, byUser(g2.Between("LastUsed", since, date("2024-01-02"))))
	assert.Equal(t, []string{"carol"}, byUser(g2.Between("LastUsed", since, since)))
	assert.Empty(t, byUser(st.Skills.QueryIndex("GSI2", skills.UserSkill{SkillName: "machine learning", Level: "Beginner"})),
		"a skill without LastUsedDate is not in GSI2")

	// AP13: the Go service's profile with its skills, one Query.
	p, err := svc.GetProfile(ctx, "john")
	require.NoError(t, err)
	assert.Equal(t, "Name of john", p.User.Name)
	assert.Len(t, p.Skills, 7)

	// Updates of the Go service's items, read back by its own struct:
	// GSI1SK and GSI2's attributes follow; CreatedAt is left as written.
	up := "Expert"
	lastUsed := date("2024-06-01")
	_, err = svc.UpdateSkill(ctx, "john", "python", skills.SkillInput{Level: &up, LastUsed: &lastUsed})
	require.NoError(t, err)
	one := 1
	_, err = svc.UpdateSkill(ctx, "alice", "machine learning", skills.SkillInput{Years: &one, LastUsed: &lastUsed})
	require.NoError(t, err)
	_, err = svc.Endorse(ctx, "john", "machine learning")
	require.NoError(t, err)
	_, err = svc.UpdateProfile(ctx, "john", "John Smith")
	require.NoError(t, err)

	get := func(pk, sk string, v any) { t.Helper(); getRaw(t, c, table, pk, sk, v) }
	var py seedUserSkill
	get("USER#john", "SKILL#python", &py)
	assert.Equal(t, seedUserSkill{PK: "USER#john", SK: "SKILL#python", EntityType: "UserSkill", Username: "john", SkillName: "python",
		ProficiencyLevel: "Expert", YearsOfExperience: 7, LastUsedDate: "2024-06-01", CreatedAt: seedCreated, UpdatedAt: svc.Now(),
		GSI1PK: "SKILL#python", GSI1SK: "LEVEL#Expert#USER#john"}, py)
	var mlSkill seedUserSkill
	get("USER#john", "SKILL#machine learning", &mlSkill)
	assert.Equal(t, 4, mlSkill.Endorsements, "the Go service's 3, plus one")
	var john seedUser
	get("USER#john", "PROFILE", &john)
	assert.Equal(t, "John Smith", john.Name)
	assert.Equal(t, seedCreated, john.CreatedAt)
	seven := 7
	assert.Equal(t, []string{"john Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "Expert", Years: &seven, UsedSince: &lastUsed})),
		"GSI2 follows the level and the date")
	assert.Equal(t, []string{"alice Expert", "bob Expert", "carol Expert", "dave Expert", "john Expert"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "python", Level: "Expert"})), "GSI1 follows the level")
	assert.Equal(t, []string{"alice Beginner"},
		users(svc.FindUsers(ctx, skills.SkillSearch{SkillName: "machine learning", Level: "Beginner", Years: &one, UsedSince: &lastUsed})),
		"the update put the skill in GSI2")

	// AP10 on a Go service's item.
	_, err = svc.RemoveSkill(ctx, "john", "c#")
	require.NoError(t, err)
	_, err = svc.GetSkill(ctx, "john", "c#")
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = svc.GetSkill(ctx, "john", "c")
	require.NoError(t, err, "removing c# left c alone")
}

// getRaw reads an item as the design's Go service does, GetItem and
// UnmarshalMap into v.
func getRaw(t *testing.T, c singletable.Client, table, pk, sk string, v any) {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "%s / %s", pk, sk)
	require.NoError(t, attributevalue.UnmarshalMap(out.Item, v))
}

func skillNames2(items []skills.UserSkill) []string {
	out := []string{}
	for _, s := range items {
		out = append(out, s.SkillName)
	}
	return out
}

// The service's own writes, found by the design's GetItem and Query
// expressions and decoded by the Go service's structs.
func TestSeedFindsTheServicesWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, c, table := seedTable(t)
	_, err := svc.Register(ctx, "mary", "Mary", "correct horse")
	require.NoError(t, err)
	lastUsed := date("2024-02-29").Add(15 * time.Hour) // a time of day: the day is stored
	for _, s := range []struct {
		name, level string
		years       int
	}{{"machine learning", "Expert", 6}, {"c#", "Advanced", 2}, {"golang", "Expert", 9}} {
		_, err = svc.AddSkill(ctx, "mary", s.name, skills.SkillInput{Level: &s.level, Years: &s.years, LastUsed: &lastUsed})
		require.NoError(t, err)
	}
	sv := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	nv := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	get := func(sk string, projection string) map[string]types.AttributeValue {
		t.Helper()
		in := &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": sv("USER#mary"), "SK": sv(sk)}}
		if projection != "" {
			in.ProjectionExpression = aws.String(projection)
		}
		out, err := c.GetItem(ctx, in)
		require.NoError(t, err)
		require.NotNil(t, out.Item, sk)
		return out.Item
	}
	query := func(in *dynamodb.QueryInput) []map[string]types.AttributeValue {
		t.Helper()
		in.TableName = aws.String(table)
		out, err := c.Query(ctx, in)
		require.NoError(t, err)
		return out.Items
	}

	// AP1: GetItem(PK="USER#mary", SK="PROFILE").
	var u seedUser
	require.NoError(t, attributevalue.UnmarshalMap(get("PROFILE", ""), &u))
	assert.Equal(t, seedUser{PK: "USER#mary", SK: "PROFILE", EntityType: "User", Username: "mary", Name: "Mary",
		PasswordHash: u.PasswordHash, CreatedAt: svc.Now(), UpdatedAt: svc.Now()}, u)
	// AP4: GetItem with ProjectionExpression.
	assert.Equal(t, map[string]types.AttributeValue{"Username": sv("mary")}, get("PROFILE", "Username"))
	// AP2: the Go service's conditional PutItem finds the service's user.
	err = putAsGo(t, c, table, seedUser{PK: "USER#mary", SK: "PROFILE", EntityType: "User", Username: "mary"})
	var ccf *types.ConditionalCheckFailedException
	assert.True(t, errors.As(err, &ccf), "%v", err)

	// AP7: GetItem(PK="USER#mary", SK="SKILL#machine learning").
	var sk seedUserSkill
	require.NoError(t, attributevalue.UnmarshalMap(get("SKILL#machine learning", ""), &sk))
	assert.Equal(t, seedUserSkill{PK: "USER#mary", SK: "SKILL#machine learning", EntityType: "UserSkill", Username: "mary",
		SkillName: "machine learning", ProficiencyLevel: "Expert", YearsOfExperience: 6, LastUsedDate: "2024-02-29",
		CreatedAt: svc.Now(), UpdatedAt: svc.Now(), GSI1PK: "SKILL#machine learning", GSI1SK: "LEVEL#Expert#USER#mary"}, sk)
	item := get("SKILL#c#", "")
	assert.Equal(t, nv("2"), item["YearsOfExperience"])
	assert.Equal(t, nv("0"), item["Endorsements"])
	assert.Equal(t, sv("2024-02-29"), item["LastUsedDate"])

	// AP6: Query(PK="USER#mary", SK begins_with "SKILL#").
	items := query(&dynamodb.QueryInput{ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("USER#mary"), ":sk": sv("SKILL#")}})
	var got []seedUserSkill
	require.NoError(t, attributevalue.UnmarshalListOfMaps(items, &got))
	require.Len(t, got, 3)
	assert.Equal(t, []string{"SKILL#c#", "SKILL#golang", "SKILL#machine learning"}, []string{got[0].SK, got[1].SK, got[2].SK})
	// AP13: Query(PK="USER#mary"): the profile and every skill.
	items = query(&dynamodb.QueryInput{ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("USER#mary")}})
	require.Len(t, items, 4)
	assert.Equal(t, sv("User"), items[0]["EntityType"])
	// AP11: Query GSI1(GSI1PK="SKILL#machine learning").
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv("SKILL#machine learning")}})
	require.Len(t, items, 1)
	// AP12: Query GSI1(GSI1PK="SKILL#golang", GSI1SK begins_with "LEVEL#Expert#").
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI1"),
		KeyConditionExpression: aws.String("GSI1PK = :pk AND begins_with(GSI1SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv("SKILL#golang"), ":sk": sv("LEVEL#Expert#")}})
	require.Len(t, items, 1)
	assert.Equal(t, sv("mary"), items[0]["Username"])
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI1"),
		KeyConditionExpression: aws.String("GSI1PK = :pk AND begins_with(GSI1SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": sv("SKILL#c#"), ":sk": sv("LEVEL#Expert#")}})
	assert.Empty(t, items, "mary's c# is Advanced")
	// GSI2, the design's query: PK1 = skill AND PK2 = level AND SK1 >= 5,
	// and SK1 = years AND SK2 >= "2024-01-01" (a range on the last key
	// attribute only).
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI2"),
		KeyConditionExpression:   aws.String("#s = :s AND #l = :l AND #y >= :y"),
		ExpressionAttributeNames: map[string]string{"#s": "SkillName", "#l": "ProficiencyLevel", "#y": "YearsOfExperience"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": sv("machine learning"), ":l": sv("Expert"), ":y": nv("5")}})
	require.Len(t, items, 1)
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI2"),
		KeyConditionExpression:   aws.String("#s = :s AND #l = :l AND #y = :y AND #d >= :d"),
		ExpressionAttributeNames: map[string]string{"#s": "SkillName", "#l": "ProficiencyLevel", "#y": "YearsOfExperience", "#d": "LastUsedDate"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": sv("golang"), ":l": sv("Expert"), ":y": nv("9"), ":d": sv("2024-01-01")}})
	require.Len(t, items, 1)
	items = query(&dynamodb.QueryInput{IndexName: aws.String("GSI2"),
		KeyConditionExpression:   aws.String("#s = :s AND #l = :l AND #y = :y AND #d > :d"),
		ExpressionAttributeNames: map[string]string{"#s": "SkillName", "#l": "ProficiencyLevel", "#y": "YearsOfExperience", "#d": "LastUsedDate"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": sv("golang"), ":l": sv("Expert"), ":y": nv("9"), ":d": sv("2024-02-29")}})
	assert.Empty(t, items, "last used on the day itself")
}

// The Go service's profiles carry no GSI1 attributes: the service lists
// them once the users' listing backfill has run.
func TestSeedUsersListedAfterBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, c, table := seedTable(t)
	writeAsGo(t, c, table)
	_, err := svc.Register(ctx, "mary", "Mary", "correct horse")
	require.NoError(t, err)

	listed := func() []string {
		t.Helper()
		p, err := svc.ListUsers(ctx, 100, "")
		require.NoError(t, err)
		out := []string{}
		for _, u := range p.Items {
			out = append(out, u.Username)
		}
		return out
	}
	assert.Equal(t, []string{"mary"}, listed(), "the Go service writes no listing keys")
	m, err := skills.Migrator(svc.Store(), skills.LegacyTableName)
	require.NoError(t, err)
	rep, err := m.Run(ctx, skills.UsersListingMigrationID)
	require.NoError(t, err)
	assert.Equal(t, int64(5), rep.Counts.Written, "the five Go service users; mary had her keys")
	assert.Equal(t, []string{"alice", "bob", "carol", "dave", "john", "mary"}, listed())

	// Only the listing keys were added: the item is otherwise as written.
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#john"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}}})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-02-01T08:30:00.123456789Z"}, out.Item["CreatedAt"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "USER#john"}, out.Item["GSI1SK"])
	assert.Regexp(t, `^USERS#shard_[0-3]$`, out.Item["GSI1PK"].(*types.AttributeValueMemberS).Value)
	assert.Len(t, out.Item, 10, "the Go service's eight attributes and the two listing keys")

	// A backfill of the skills rewrites none of the Go service's: the
	// declaration renders every key and index attribute they hold (SK,
	// GSI1PK, GSI1SK and GSI2's four attributes, LastUsedDate a date) to
	// the very bytes that service wrote.
	bm, err := migrate.New(svc.Store().Table, migrate.Backfill("skills-check", svc.Store().Skills))
	require.NoError(t, err)
	rep, err = bm.Run(ctx, "skills-check")
	require.NoError(t, err)
	assert.Equal(t, int64(12), rep.Counts.Read)
	assert.Zero(t, rep.Counts.Written+rep.Counts.Failed, "%+v", rep.Counts)
}
