package skills_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/singletabletest"
)

var update = flag.Bool("update", false, "rewrite docs/catalog.md")

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// app is the skills service behind a real HTTP server, on a fresh table in
// DynamoDB Local.
type app struct {
	t   *testing.T
	srv *httptest.Server
	svc *skills.Service
}

func newApp(t *testing.T) *app {
	t.Helper()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	st := skills.NewStore(client, name)
	require.NoError(t, st.Table.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, client, name)
	svc := skills.NewService(st)
	svc.PasswordIterations = 1000 // the default cost is for production
	srv := httptest.NewServer(skills.Handler(svc, nil))
	t.Cleanup(srv.Close)
	return &app{t: t, srv: srv, svc: svc}
}

// do sends a request with an optional JSON body and returns the status and
// the body.
func (a *app) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(a.t, err)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, r)
	require.NoError(a.t, err)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.srv.Client().Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, out
}

// call is do plus decoding a 2xx answer into out; it fails the test on
// any other status than want.
func (a *app) call(method, path string, body any, want int, out any) {
	a.t.Helper()
	status, b := a.do(method, path, body)
	require.Equal(a.t, want, status, "%s %s: %s", method, path, b)
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // absent fields must not keep old values
		require.NoError(a.t, json.Unmarshal(b, out), "%s", b)
	}
}

func (a *app) register(username, name string) {
	a.t.Helper()
	a.call("POST", "/users", map[string]string{"username": username, "name": name, "password": "correct horse"}, http.StatusCreated, nil)
}

func (a *app) addSkill(username, skill, level string, years int, lastUsed string) {
	a.t.Helper()
	a.call("POST", "/users/"+username+"/skills", map[string]any{
		"skill_name": skill, "level": level, "years_of_experience": years, "last_used_date": lastUsed,
	}, http.StatusCreated, nil)
}

func errorOf(t *testing.T, b []byte) string {
	t.Helper()
	var e skills.ErrorJSON
	require.NoError(t, json.Unmarshal(b, &e), "%s", b)
	return e.Error
}

func TestUserEndpoints(t *testing.T) {
	t.Parallel()
	a := newApp(t)

	// AP2: register; a second registration of the name is a 409.
	var u skills.UserJSON
	a.call("POST", "/users", map[string]string{"username": "john", "name": "John", "password": "correct horse"}, http.StatusCreated, &u)
	assert.Equal(t, "john", u.Username)
	assert.Equal(t, "John", u.Name)
	assert.False(t, u.CreatedAt.IsZero())
	status, b := a.do("POST", "/users", map[string]string{"username": "john", "name": "Other", "password": "another one"})
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, errorOf(t, b), "already exists")

	bad := []struct {
		name string
		body any
		msg  string
	}{
		{"bad username", map[string]string{"username": "J!", "name": "x", "password": "12345678"}, "username"},
		{"short password", map[string]string{"username": "mary", "name": "Mary", "password": "short"}, "password"},
		{"empty name", map[string]string{"username": "mary", "name": "  ", "password": "12345678"}, "name"},
		{"unknown field", `{"username":"mary","name":"Mary","password":"12345678","admin":true}`, "unknown field"},
		{"not JSON", `{"username":`, "invalid JSON"},
		{"trailing data", `{"username":"mary","name":"Mary","password":"12345678"} {}`, "trailing"},
	}
	for _, c := range bad {
		status, b := a.do("POST", "/users", c.body)
		assert.Equal(t, http.StatusBadRequest, status, c.name)
		assert.Contains(t, errorOf(t, b), c.msg, c.name)
	}
	// The refused registrations wrote nothing.
	a.call("GET", "/users/mary/exists", nil, http.StatusOK, nil)
	status, _ = a.do("HEAD", "/users/mary", nil)
	assert.Equal(t, http.StatusNotFound, status)

	// AP1: get by username; the password hash never leaves the service.
	status, b = a.do("GET", "/users/john", nil)
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, string(b), "pbkdf2")
	assert.NotContains(t, strings.ToLower(string(b)), "password")
	a.call("GET", "/users/nobody", nil, http.StatusNotFound, nil)
	a.call("GET", "/users/BAD!", nil, http.StatusBadRequest, nil)
	a.call("GET", "/users/john?include=everything", nil, http.StatusBadRequest, nil)

	// AP1 as login.
	a.call("POST", "/login", map[string]string{"username": "john", "password": "correct horse"}, http.StatusOK, &u)
	assert.Equal(t, "john", u.Username)
	a.call("POST", "/login", map[string]string{"username": "john", "password": "wrong horse"}, http.StatusUnauthorized, nil)
	a.call("POST", "/login", map[string]string{"username": "ghost", "password": "correct horse"}, http.StatusUnauthorized, nil)

	// AP4: exists, through HEAD and GET …/exists.
	var ex map[string]bool
	a.call("GET", "/users/john/exists", nil, http.StatusOK, &ex)
	assert.True(t, ex["exists"])
	a.call("GET", "/users/ghost/exists", nil, http.StatusOK, &ex)
	assert.False(t, ex["exists"])
	a.call("GET", "/users/x/exists", nil, http.StatusBadRequest, nil)
	for path, want := range map[string]int{"/users/john": 200, "/users/ghost": 404, "/users/G!": 400} {
		status, b := a.do("HEAD", path, nil)
		assert.Equal(t, want, status, path)
		assert.Empty(t, b)
	}

	// AP3: update the profile; the item must exist (no accidental upsert).
	before := u.UpdatedAt
	a.call("PATCH", "/users/john", map[string]string{"name": "John Smith"}, http.StatusOK, &u)
	assert.Equal(t, "John Smith", u.Name)
	assert.False(t, u.UpdatedAt.Before(before))
	a.call("GET", "/users/john", nil, http.StatusOK, &u)
	assert.Equal(t, "John Smith", u.Name)
	a.call("PATCH", "/users/ghost", map[string]string{"name": "Ghost"}, http.StatusNotFound, nil)
	a.call("GET", "/users/ghost/exists", nil, http.StatusOK, &ex)
	assert.False(t, ex["exists"], "PATCH must not create the user")
	a.call("PATCH", "/users/john", map[string]string{"name": ""}, http.StatusBadRequest, nil)
	// The password survived the profile update.
	a.call("POST", "/login", map[string]string{"username": "john", "password": "correct horse"}, http.StatusOK, nil)
}

func TestSkillEndpoints(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.register("john", "John")
	a.register("mary", "Mary")

	// AP8: add skills. "go" and "golang" are different skills; "c#" holds
	// the key delimiter and still round-trips.
	var sk skills.SkillJSON
	a.call("POST", "/users/john/skills", map[string]any{"skill_name": "GoLang", "level": "expert", "years_of_experience": 7, "last_used_date": "2024-06-01"}, http.StatusCreated, &sk)
	assert.Equal(t, skills.SkillJSON{Username: "john", SkillName: "golang", Level: "Expert", Years: 7, LastUsed: "2024-06-01",
		CreatedAt: sk.CreatedAt, UpdatedAt: sk.UpdatedAt}, sk)
	a.addSkill("john", "go", "Beginner", 1, "2024-03-01")
	a.addSkill("john", "c#", "Advanced", 4, "2023-01-15")
	a.addSkill("john", "python", "Expert", 5, "2023-06-01")

	status, b := a.do("POST", "/users/john/skills", map[string]any{"skill_name": "go", "level": "Expert"})
	assert.Equal(t, http.StatusConflict, status, "%s", b)
	a.call("POST", "/users/ghost/skills", map[string]any{"skill_name": "go", "level": "Expert"}, http.StatusNotFound, nil)
	for name, body := range map[string]any{
		"no skill":     map[string]any{"level": "Expert"},
		"no level":     map[string]any{"skill_name": "rust"},
		"bad level":    map[string]any{"skill_name": "rust", "level": "Guru"},
		"bad years":    map[string]any{"skill_name": "rust", "level": "Expert", "years_of_experience": -1},
		"bad date":     map[string]any{"skill_name": "rust", "level": "Expert", "last_used_date": "June"},
		"future date":  map[string]any{"skill_name": "rust", "level": "Expert", "last_used_date": "2999-01-01"},
		"bad name":     map[string]any{"skill_name": "rust<script>", "level": "Expert"},
		"empty name":   map[string]any{"skill_name": " ", "level": "Expert"},
		"years string": `{"skill_name":"rust","level":"Expert","years_of_experience":"7"}`,
	} {
		status, b := a.do("POST", "/users/john/skills", body)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", name, b)
	}

	// AP6: all skills of a user, in name order, paginated.
	var page skills.PageJSON[skills.SkillJSON]
	a.call("GET", "/users/john/skills", nil, http.StatusOK, &page)
	assert.Equal(t, []string{"c#", "go", "golang", "python"}, skillNames(page.Items))
	assert.Empty(t, page.Cursor)
	var seen []string
	cursor := ""
	for range 10 {
		a.call("GET", "/users/john/skills?limit=3&cursor="+cursor, nil, http.StatusOK, &page)
		seen = append(seen, skillNames(page.Items)...)
		if cursor = page.Cursor; cursor == "" {
			break
		}
		assert.Len(t, page.Items, 3)
	}
	assert.Equal(t, []string{"c#", "go", "golang", "python"}, seen)
	a.call("GET", "/users/mary/skills", nil, http.StatusOK, &page)
	assert.Empty(t, page.Items)
	a.call("GET", "/users/ghost/skills", nil, http.StatusNotFound, nil)
	a.call("GET", "/users/john/skills?cursor=garbage", nil, http.StatusBadRequest, nil)
	a.call("GET", "/users/john/skills?limit=1000", nil, http.StatusBadRequest, nil)
	a.call("GET", "/users/john/skills?limit=x", nil, http.StatusBadRequest, nil)
	// A cursor from another user's listing is refused, not misapplied.
	a.addSkill("mary", "go", "Expert", 9, "2024-01-01")
	a.addSkill("mary", "rust", "Expert", 2, "2024-01-01")
	a.call("GET", "/users/mary/skills?limit=1", nil, http.StatusOK, &page)
	require.NotEmpty(t, page.Cursor)
	status, b = a.do("GET", "/users/john/skills?limit=1&cursor="+page.Cursor, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, errorOf(t, b), "invalid cursor")

	// AP7: one skill; "go" is not "golang"; "c#" through its escaped path.
	a.call("GET", "/users/john/skills/go", nil, http.StatusOK, &sk)
	assert.Equal(t, "Beginner", sk.Level)
	a.call("GET", "/users/john/skills/c%23", nil, http.StatusOK, &sk)
	assert.Equal(t, "c#", sk.SkillName)
	a.call("GET", "/users/john/skills/rust", nil, http.StatusNotFound, nil)
	a.call("GET", "/users/john/skills/%3Cx%3E", nil, http.StatusBadRequest, nil)

	// AP9: update proficiency; the GSI1 key follows (AP12 sees the change).
	a.call("PUT", "/users/john/skills/go", map[string]any{"level": "Intermediate", "years_of_experience": 2}, http.StatusOK, &sk)
	assert.Equal(t, "Intermediate", sk.Level)
	assert.Equal(t, 2, sk.Years)
	assert.Equal(t, "2024-03-01", sk.LastUsed)
	var byLevel skills.PageJSON[skills.SkillJSON]
	a.call("GET", "/skills/go/users?level=Intermediate", nil, http.StatusOK, &byLevel)
	assert.Equal(t, []string{"john"}, userNames(byLevel.Items))
	a.call("GET", "/skills/go/users?level=Beginner", nil, http.StatusOK, &byLevel)
	assert.Empty(t, byLevel.Items)
	a.call("PUT", "/users/john/skills/go", map[string]any{"last_used_date": "2024-07-01"}, http.StatusOK, &sk)
	assert.Equal(t, "2024-07-01", sk.LastUsed)
	assert.Equal(t, "Intermediate", sk.Level)
	a.call("PUT", "/users/john/skills/rust", map[string]any{"level": "Expert"}, http.StatusNotFound, nil)
	a.call("GET", "/users/john/skills/rust", nil, http.StatusNotFound, nil) // no upsert
	a.call("PUT", "/users/john/skills/go", map[string]any{}, http.StatusBadRequest, nil)
	a.call("PUT", "/users/john/skills/go", map[string]any{"level": "Wizard"}, http.StatusBadRequest, nil)
	a.call("PUT", "/users/john/skills/go", map[string]any{"skill_name": "golang"}, http.StatusBadRequest, nil)

	// Endorsements are atomic: concurrent endorsements all count.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", a.srv.URL+"/users/john/skills/python/endorsements", nil)
			resp, err := a.srv.Client().Do(req)
			if assert.NoError(t, err) {
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	a.call("GET", "/users/john/skills/python", nil, http.StatusOK, &sk)
	assert.Equal(t, 10, sk.Endorsements)
	a.call("POST", "/users/john/skills/rust/endorsements", nil, http.StatusNotFound, nil)

	// AP13: the user with all skills.
	var full skills.UserJSON
	a.call("GET", "/users/john?include=skills", nil, http.StatusOK, &full)
	assert.Equal(t, "John", full.Name)
	assert.Equal(t, []string{"c#", "go", "golang", "python"}, skillNames(full.Skills))
	a.call("GET", "/users/ghost?include=skills", nil, http.StatusNotFound, nil)

	// AP10: remove a skill; a second delete is a 404.
	a.call("DELETE", "/users/john/skills/c%23", nil, http.StatusNoContent, nil)
	a.call("DELETE", "/users/john/skills/c%23", nil, http.StatusNotFound, nil)
	a.call("GET", "/users/john/skills", nil, http.StatusOK, &page)
	assert.Equal(t, []string{"go", "golang", "python"}, skillNames(page.Items))
	a.call("GET", "/skills/c%23/users", nil, http.StatusOK, &byLevel)
	assert.Empty(t, byLevel.Items, "the deleted skill left GSI1 too")
}

func TestUsersBySkill(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	people := []struct {
		user, level string
		years       int
		lastUsed    string
	}{
		{"alice", "Expert", 9, "2023-01-01"},
		{"bob", "Intermediate", 2, "2024-01-01"},
		{"carol", "Expert", 7, "2024-05-01"},
		{"dave", "Beginner", 1, "2024-02-01"},
		{"erin", "Expert", 5, "2023-06-01"},
		{"frank", "Advanced", 3, "2024-02-01"},
		{"grace", "Expert", 7, "2023-12-31"},
		{"heidi", "Expert", 12, "2024-03-01"},
	}
	for _, p := range people {
		a.register(p.user, strings.ToUpper(p.user[:1])+p.user[1:])
		a.addSkill(p.user, "python", p.level, p.years, p.lastUsed)
	}
	a.addSkill("alice", "golang", "Expert", 3, "2024-01-01")

	get := func(query string) []string {
		t.Helper()
		var page skills.PageJSON[skills.SkillJSON]
		a.call("GET", "/skills/python/users"+query, nil, http.StatusOK, &page)
		assert.Empty(t, page.Cursor, query)
		return userNames(page.Items)
	}
	// AP11: by skill, ordered by GSI1SK = LEVEL#<level>#USER#<user>.
	assert.Equal(t, []string{"frank", "dave", "alice", "carol", "erin", "grace", "heidi", "bob"}, get(""))
	// AP12: the experts.
	assert.Equal(t, []string{"alice", "carol", "erin", "grace", "heidi"}, get("?level=expert"))
	assert.Empty(t, get("?level=Beginner&years=99"))
	// GSI2: experts with at least 7 years, by years then last use.
	assert.Equal(t, []string{"grace", "carol", "alice", "heidi"}, get("?level=Expert&min_years=7"))
	// GSI2: experts with exactly 7 years who used it since 2024-01-01 (the design's query).
	assert.Equal(t, []string{"carol"}, get("?level=Expert&years=7&used_since=2024-01-01"))
	assert.Equal(t, []string{"grace", "carol"}, get("?level=Expert&years=7"))
	// Another skill's partition holds only its own users.
	var page skills.PageJSON[skills.SkillJSON]
	a.call("GET", "/skills/GoLang/users", nil, http.StatusOK, &page)
	assert.Equal(t, []string{"alice"}, userNames(page.Items))

	// Pagination: limit + cursor walk every expert exactly once, in order,
	// on both indexes.
	for _, q := range []string{"level=Expert", "level=Expert&min_years=0", ""} {
		var all []string
		cursor := ""
		for range 20 {
			a.call("GET", "/skills/python/users?limit=2&"+q+"&cursor="+cursor, nil, http.StatusOK, &page)
			assert.LessOrEqual(t, len(page.Items), 2)
			all = append(all, userNames(page.Items)...)
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
		want := get("?" + q)
		assert.Equal(t, want, all, q)
	}

	// Bad input: each a 400 with a reason.
	a.call("GET", "/skills/python/users?limit=1&level=Expert", nil, http.StatusOK, &page)
	require.NotEmpty(t, page.Cursor)
	for query, msg := range map[string]string{
		"?min_years=5": "level: is required",
		"?level=Expert&min_years=5&used_since=2024-01-01":    "min_years: cannot be combined",
		"?level=Expert&used_since=2024-01-01":                "used_since: needs years",
		"?level=Expert&min_years=five":                       "min_years",
		"?level=Expert&used_since=yesterday":                 "used_since",
		"?level=Guru":                                        "level",
		"?limit=0":                                           "limit",
		"?limit=101":                                         "limit",
		"?cursor=" + page.Cursor[:len(page.Cursor)-2] + "xx": "invalid cursor",
	} {
		status, b := a.do("GET", "/skills/python/users"+query, nil)
		assert.Equal(t, http.StatusBadRequest, status, query)
		assert.Contains(t, errorOf(t, b), msg, query)
	}
	// A cursor from the python listing does not resume the golang one.
	status, _ := a.do("GET", "/skills/golang/users?level=Expert&cursor="+page.Cursor, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	a.call("GET", "/skills/%3C%3E/users", nil, http.StatusBadRequest, nil)
}

func TestListUsersWithoutScan(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	var want []string
	for i := range 23 {
		u := fmt.Sprintf("user%02d", (i*7)%23) // registered out of order
		a.register(u, "User "+u)
		want = append(want, u)
	}
	slices.Sort(want)
	// The library spread the users over GSI1's write shards
	// USERS#shard_0…USERS#shard_3: every shard holds some, none all.
	st := a.svc.Store()
	total := 0
	for n := range skills.UserShards {
		out, err := st.Table.Client().Query(context.Background(), &dynamodb.QueryInput{
			TableName: aws.String(st.Table.Name()), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("USERS#shard_%d", n)}},
			Select:                    types.SelectCount,
		})
		require.NoError(t, err)
		assert.Positive(t, out.Count, "shard %d", n)
		total += int(out.Count)
	}
	assert.Equal(t, 23, total)

	var page skills.PageJSON[skills.UserJSON]
	a.call("GET", "/users", nil, http.StatusOK, &page)
	assert.Len(t, page.Items, skills.DefaultPageSize)
	var got []string
	cursor := ""
	for range 10 {
		a.call("GET", "/users?limit=5&cursor="+cursor, nil, http.StatusOK, &page)
		for _, u := range page.Items {
			got = append(got, u.Username)
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
		assert.Len(t, page.Items, 5)
	}
	assert.Equal(t, want, got, "every user once, in username order")
	a.call("GET", "/users?limit=23", nil, http.StatusOK, &page)
	assert.Len(t, page.Items, 23)
	assert.Empty(t, page.Cursor)
	a.call("GET", "/users?cursor=not-a-cursor", nil, http.StatusBadRequest, nil)
	a.call("GET", "/users?limit=-1", nil, http.StatusBadRequest, nil)
	// The cursor is the library's: altered, it is refused (checksum); it
	// resumes only the user listing, and no other listing's cursor
	// resumes it.
	a.call("GET", "/users?limit=5", nil, http.StatusOK, &page)
	require.NotEmpty(t, page.Cursor)
	usersCursor := page.Cursor
	status, b := a.do("GET", "/users?cursor="+usersCursor[:len(usersCursor)-2]+"xx", nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, errorOf(t, b), "invalid cursor")
	a.addSkill("user01", "rust", "Expert", 1, "2024-01-01")
	a.addSkill("user01", "zig", "Expert", 1, "2024-01-01")
	var skillsPage skills.PageJSON[skills.SkillJSON]
	a.call("GET", "/users/user01/skills?limit=1", nil, http.StatusOK, &skillsPage)
	require.NotEmpty(t, skillsPage.Cursor)
	status, b = a.do("GET", "/users?cursor="+skillsPage.Cursor, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, errorOf(t, b), "invalid cursor")
	status, _ = a.do("GET", "/users/user01/skills?cursor="+usersCursor, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	// Skills never show up in the user listing although they share GSI1.
	a.addSkill("user01", "go", "Expert", 1, "2024-01-01")
	a.call("GET", "/users?limit=100", nil, http.StatusOK, &page)
	assert.Len(t, page.Items, 23)
}

func TestServiceErrors(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	_, err := a.svc.Register(ctx, "ab", "x", "12345678")
	var in *skills.InputError
	require.ErrorAs(t, err, &in)
	assert.Equal(t, "username", in.Field)
	_, err = a.svc.FindUsers(ctx, skills.SkillSearch{SkillName: "go", Limit: -1})
	require.ErrorAs(t, err, &in)
	since := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = a.svc.FindUsers(ctx, skills.SkillSearch{SkillName: "go", UsedSince: &since})
	require.ErrorAs(t, err, &in)
}

func TestCatalogIsCurrent(t *testing.T) {
	t.Parallel()
	st := skills.NewStore(nil, skills.TableName)
	got := catalog.New(st.Table, skills.AccessPatterns(st)...).Accept(skills.Accepted...).Markdown()
	singletabletest.Golden(t, filepath.Join("docs", "catalog.md"), got, *update)
	assert.NotContains(t, got, "- error", "the design has a lint error")
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "- warning") {
			assert.Contains(t, line, "; accepted: ", "every warning is accepted, with its reason")
		}
	}
	assert.Contains(t, got, "Accepted by the design, with its reasons:")
	singletabletest.Golden(t, filepath.Join("docs", "table.svg"), catalog.Picture(st.Table, sampleItems(t, st)), *update)
}

func skillNames(s []skills.SkillJSON) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.SkillName)
	}
	return out
}

func userNames(s []skills.SkillJSON) []string {
	out := []string{}
	for _, x := range s {
		out = append(out, x.Username)
	}
	return out
}

func TestLegacyMigration(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	legacy := ddblocal.TableName(t)
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(legacy),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("username"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("username"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, client, legacy)
	hash, err := skills.HashPassword("legacy password", 1000)
	require.NoError(t, err)
	put := func(username, created string) {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(legacy), Item: map[string]types.AttributeValue{
			"username":      &types.AttributeValueMemberS{Value: username},
			"name":          &types.AttributeValueMemberS{Value: "Legacy " + username},
			"password_hash": &types.AttributeValueMemberS{Value: hash},
			"created_at":    &types.AttributeValueMemberS{Value: created},
		}})
		require.NoError(t, err)
	}
	for i := range 40 {
		put(fmt.Sprintf("legacy%02d", i), "2021-03-14T09:00:00Z")
	}
	put("Bad Name!", "2021-03-14T09:00:00Z") // refused by the service's rules: skipped
	// created_at and updated_at as the legacy Go code's attributevalue
	// wrote its time.Time fields: RFC 3339 with the nanoseconds it had.
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(legacy), Item: map[string]types.AttributeValue{
		"username":      &types.AttributeValueMemberS{Value: "john.smith"},
		"name":          &types.AttributeValueMemberS{Value: "John Smith"},
		"password_hash": &types.AttributeValueMemberS{Value: hash},
		"created_at":    &types.AttributeValueMemberS{Value: "2021-03-14T09:00:00.123456789Z"},
		"updated_at":    &types.AttributeValueMemberS{Value: "2022-01-02T03:04:05.5Z"},
	}})
	require.NoError(t, err)

	m, err := skills.Migrator(a.svc.Store(), legacy)
	require.NoError(t, err)
	rep, err := m.Run(ctx, skills.LegacyUsersMigrationID)
	require.NoError(t, err)
	c := rep.Counts
	assert.Equal(t, int64(42), c.Read)
	assert.Equal(t, int64(41), c.Written)
	assert.Equal(t, int64(1), c.Skipped)
	assert.Equal(t, c.Read, c.Written+c.Skipped+c.Failed)
	v, err := m.Verify(ctx, skills.LegacyUsersMigrationID)
	require.NoError(t, err)
	assert.Zero(t, v.Missing+v.Different+v.Unexpected, "%+v", v)
	again, err := m.Run(ctx, skills.LegacyUsersMigrationID)
	require.NoError(t, err)
	assert.True(t, again.AlreadyCompleted)

	// The migrated users work through the API: login with the legacy
	// password, the profile keeps its dates, the listing index has them.
	var u skills.UserJSON
	a.call("POST", "/login", map[string]string{"username": "legacy07", "password": "legacy password"}, http.StatusOK, &u)
	assert.Equal(t, "Legacy legacy07", u.Name)
	assert.Equal(t, time.Date(2021, 3, 14, 9, 0, 0, 0, time.UTC), u.CreatedAt.UTC())
	var page skills.PageJSON[skills.UserJSON]
	a.call("GET", "/users?limit=100", nil, http.StatusOK, &page)
	assert.Len(t, page.Items, 41)
	a.addSkill("legacy07", "go", "Expert", 3, "2024-01-01")

	// The design's transform, byte for byte: PK "USER#" + username, SK
	// "PROFILE", every legacy attribute kept (under the design's names),
	// the times as the legacy table held them.
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a.svc.Store().Table.Name()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#john.smith"}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"}}})
	require.NoError(t, err)
	require.NotNil(t, out.Item)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	gsi1pk := out.Item["GSI1PK"]
	assert.Regexp(t, `^USERS#shard_[0-3]$`, gsi1pk.(*types.AttributeValueMemberS).Value)
	assert.Equal(t, map[string]types.AttributeValue{"PK": s("USER#john.smith"), "SK": s("PROFILE"), "EntityType": s("User"),
		"Username": s("john.smith"), "Name": s("John Smith"), "PasswordHash": s(hash),
		"CreatedAt": s("2021-03-14T09:00:00.123456789Z"), "UpdatedAt": s("2022-01-02T03:04:05.5Z"),
		"GSI1PK": gsi1pk, "GSI1SK": s("USER#john.smith")}, out.Item)
}
