package singletable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from what this code sends")

// Member is an entity with every managed field and a unique email, so its
// writes show the guard items, the version check and the timestamps.
type Member struct {
	ID        string    `dynamodbav:"ID"`
	Email     string    `dynamodbav:"Email"`
	Plan      string    `dynamodbav:"Plan"`
	Version   int       `dynamodbav:"Version"`
	CreatedAt time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt time.Time `dynamodbav:"UpdatedAt"`
	Expires   time.Time `dynamodbav:"Expires,unixtime"`
}

var Members = singletable.MustDefine(singletable.Schema[Member]{
	Type:      "Member",
	PK:        "MEMBER#{ID}",
	SK:        "MEMBER",
	Unique:    []singletable.Unique{{Fields: []string{"Email"}}},
	Version:   "Version",
	CreatedAt: "CreatedAt",
	UpdatedAt: "UpdatedAt",
	TTL:       "Expires",
})

// wireRecorder records the bodies of the requests an SDK client sends:
// exactly what goes over the wire, in DynamoDB's JSON.
type wireRecorder struct {
	next dynamodb.HTTPClient
	mu   sync.Mutex
	reqs []wireRequest
}

type wireRequest struct {
	Target string          `json:"target"`
	Body   json.RawMessage `json:"body"`
}

func (w *wireRecorder) Do(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.mu.Lock()
	w.reqs = append(w.reqs, wireRequest{Target: strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), Body: body})
	w.mu.Unlock()
	return w.next.Do(r)
}

// take returns the requests recorded since the last take.
func (w *wireRecorder) take() []wireRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.reqs
	w.reqs = nil
	return r
}

// TestGoldenRequests pins the requests the library sends for each kind of
// operation, against DynamoDB Local, in testdata/requests/: key and index
// attributes, conditions (ownership, version, guards), update clauses,
// projections, filters and batch and transaction shapes. A change to any of
// them shows as a diff of these files; go test -run TestGoldenRequests
// -update rewrites them.
func TestGoldenRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &wireRecorder{}
	raw := ddblocal.Shared(t).Client()
	client := dynamodb.New(raw.Options(), func(o *dynamodb.Options) {
		rec.next = o.HTTPClient
		o.HTTPClient = rec
	})
	name := ddblocal.TableName(t)
	now := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	tbl := singletable.NewTable(client, name, func(o *singletable.TableOptions) { o.Now = func() time.Time { return now } })
	users := singletable.MustBind(tbl, Users)
	skills := singletable.MustBind(tbl, UserSkills)
	members := singletable.MustBind(tbl, Members)

	type step struct {
		name string
		run  func() error
	}
	john := User{Username: "john", Name: "John", PasswordHash: "h1"}
	goSkill := UserSkill{Username: "john", SkillName: "go", Level: "Expert", Years: 7, LastUsed: date("2024-12-01")}
	member := Member{ID: "a1", Email: "john@example.com", Plan: "free", Expires: now.Add(30 * 24 * time.Hour)}
	steps := []step{
		{"create-table", func() error { return tbl.CreateTable(ctx) }},
		{"create", func() error {
			if _, err := users.Create(ctx, john); err != nil {
				return err
			}
			_, err := skills.Create(ctx, goSkill)
			return err
		}},
		{"get", func() error {
			_, err := users.Get(ctx, User{Username: "john"}, func(o *singletable.ReadOptions) {
				o.ConsistentRead = true
				o.Fields = []string{"Name", "CreatedAt"}
			})
			return err
		}},
		{"put-if", func() error {
			_, err := users.Put(ctx, User{Username: "john", Name: "Johnny", PasswordHash: "h2"}, func(o *singletable.WriteOptions) {
				o.If = expression.Name("Name").Equal(expression.Value("John"))
			})
			return err
		}},
		{"update-index-key", func() error {
			_, err := skills.Update(UserSkill{Username: "john", SkillName: "go"}).Set("Level", "Beginner").Run(ctx)
			return err
		}},
		{"query-templated-index", func() error {
			_, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}).Where("Level", singletable.Eq, "Beginner").
				Filter(expression.Name("Years").GreaterThanEqual(expression.Value(5))).Limit(10).Page(ctx)
			return err
		}},
		{"query-multi-attribute-index", func() error {
			_, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "go", Level: "Beginner"}).Where("Years", singletable.Ge, 5).Desc().Collect(ctx)
			return err
		}},
		{"collection", func() error {
			var u User
			var ss []UserSkill
			_, err := users.QueryCollection(User{Username: "john"}).Collect(ctx, users.StoreOne(&u), skills.AppendTo(&ss))
			return err
		}},
		{"batch-write", func() error {
			return singletable.BatchWrite(ctx, []singletable.WriteOp{
				skills.PutOp(UserSkill{Username: "john", SkillName: "sql", Level: "Expert", Years: 10}),
				skills.PutOp(UserSkill{Username: "ann", SkillName: "go", Level: "Expert", Years: 3}),
				skills.DeleteOp(UserSkill{Username: "ann", SkillName: "cobol"}),
			})
		}},
		{"batch-get", func() error {
			var a, b UserSkill
			_, err := singletable.BatchGet(ctx, []singletable.GetOp{skills.GetOp(UserSkill{Username: "john", SkillName: "go"}, &a), skills.GetOp(UserSkill{Username: "ann", SkillName: "go"}, &b)})
			return err
		}},
		{"create-unique", func() error {
			_, err := members.Create(ctx, member)
			return err
		}},
		{"update-unique-version", func() error {
			_, err := members.Update(Member{ID: "a1", Version: 1}).Set("Email", "j@example.com").Run(ctx)
			return err
		}},
		{"transaction", func() error {
			return singletable.Tx(ctx, []singletable.WriteOp{
				skills.CreateOp(UserSkill{Username: "john", SkillName: "rust", Level: "Novice", Years: 1}),
				users.CheckOp(User{Username: "john"}, expression.Name("Name").Equal(expression.Value("Johnny"))),
				skills.DeleteOp(UserSkill{Username: "john", SkillName: "sql"}),
			})
		}},
		{"transaction-get", func() error {
			var u User
			var a Member
			_, err := singletable.TxGet(ctx, []singletable.GetOp{users.GetOp(User{Username: "john"}, &u), members.GetOp(Member{ID: "a1"}, &a)})
			return err
		}},
		{"delete-if", func() error {
			_, err := members.Delete(ctx, Member{ID: "a1"}, func(o *singletable.WriteOptions) {
				o.If = expression.Name("Plan").Equal(expression.Value("free"))
			})
			return err
		}},
	}
	defer ddblocal.DeleteTableOnCleanup(t, raw, name)
	for i, s := range steps {
		require.NoError(t, s.run(), s.name)
		var reqs []wireRequest
		for _, r := range rec.take() {
			if r.Target == "DescribeTable" || r.Target == "UpdateTimeToLive" || r.Target == "DescribeTimeToLive" {
				continue // polling while the table is created
			}
			r.Body = normalizeWire(t, r.Body, name)
			reqs = append(reqs, r)
		}
		got, err := json.MarshalIndent(reqs, "", "  ")
		require.NoError(t, err)
		got = append(got, '\n')
		path := filepath.Join("testdata", "requests", fmt.Sprintf("%02d-%s.json", i+1, s.name))
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "no golden file; run go test -run TestGoldenRequests -update")
		require.Equal(t, string(want), string(got), "%s: the requests sent differ from %s (rerun with -update if the change is meant)", s.name, path)
	}
}

// normalizeWire makes a request body stable across runs: the table's name
// becomes TABLE, a client request token TOKEN, and keys are sorted.
func normalizeWire(t *testing.T, body []byte, table string) json.RawMessage {
	t.Helper()
	body = bytes.ReplaceAll(body, []byte(`"`+table+`"`), []byte(`"TABLE"`))
	var v map[string]any
	require.NoError(t, json.Unmarshal(body, &v))
	if _, ok := v["ClientRequestToken"]; ok {
		v["ClientRequestToken"] = "TOKEN"
	}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}
