package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

// The lint of forged keys (issue 24 item 12): two entities writing one
// key attribute where a value of one renders a key of the other.

type fgUser struct {
	UserID, Status, Org string
	Day                 time.Time
}

type fgFollower struct {
	UserID, Follower, Status string
	Day                      time.Time
}

// forgeries returns the lint's findings about forged keys.
func forgeries(t *testing.T, users singletable.Schema[fgUser], followers singletable.Schema[fgFollower]) []string {
	t.Helper()
	users.Type, followers.Type = "user", "follower"
	tbl := singletable.NewTable(nil, "t")
	singletable.MustBind(tbl, singletable.MustDefine(users))
	singletable.MustBind(tbl, singletable.MustDefine(followers))
	var out []string
	for _, f := range findings(catalog.New(tbl)) {
		if strings.Contains(f, " can render ") {
			out = append(out, f)
		}
	}
	return out
}

func TestLintForgedKeys(t *testing.T) {
	t.Parallel()
	type U = singletable.Schema[fgUser]
	type F = singletable.Schema[fgFollower]
	cases := []struct {
		name      string
		users     U
		followers F
		want      []string // prefixes of the forgery findings, in order
	}{
		{
			name:      "a raw user ID at the end of the key reaches the followers' partition",
			users:     U{PK: "u#{UserID:raw}", SK: "profile"},
			followers: F{PK: "u#{UserID:raw}#follower", SK: "f#{Follower:raw}"},
			want: []string{`warning user: user's PK = u#{UserID:raw} can render follower's keys (PK = u#{UserID:raw}#follower): ` +
				`UserID = "0#follower" renders PK "u#0#follower", follower's key for UserID = "0", so a value can reach another entity's items. ` +
				`Constrain the raw values so that they cannot hold '#': {UserID:raw=[^#]+} (or a stricter class, such as [0-9]+ for numeric IDs) closes it; ` +
				`or give the two templates literals that tell their keys apart`},
		},
		{
			name:      "a constraint without the delimiter closes it",
			users:     U{PK: "u#{UserID:raw=[^#]+}", SK: "profile"},
			followers: F{PK: "u#{UserID:raw}#follower", SK: "f#{Follower:raw}"},
		},
		{
			name:      "a numeric constraint closes it",
			users:     U{PK: "u#{UserID:raw=[0-9]+}", SK: "profile"},
			followers: F{PK: "u#{UserID:raw=[0-9]+}#follower", SK: "f#{Follower:raw=[0-9]+}"},
		},
		{
			name:      "a constraint that lets the delimiter in does not",
			users:     U{PK: "u#{UserID:raw=[0-9#a-z]+}", SK: "profile"},
			followers: F{PK: "u#{UserID:raw}#follower", SK: "f#{Follower:raw}"},
			want:      []string{`warning user: user's PK = u#{UserID:raw=[0-9#a-z]+} can render follower's keys (PK = u#{UserID:raw}#follower): UserID = "0#follower" renders PK "u#0#follower", follower's key for UserID = "0", so a value can reach another entity's items. Narrow the constraint of {UserID:raw=[0-9#a-z]+} so that its values cannot hold '#'`},
		},
		{
			name:      "distinct literals close it",
			users:     U{PK: "user#{UserID:raw}", SK: "profile"},
			followers: F{PK: "followers#{UserID:raw}", SK: "f#{Follower:raw}"},
		},
		{
			name:      "entities sharing a partition by design are not forgeries",
			users:     U{PK: "u#{UserID:raw}", SK: "profile"},
			followers: F{PK: "u#{UserID:raw}", SK: "f#{Follower:raw}"},
		},
		{
			name:      "sort keys whose partitions never meet are not reported",
			users:     U{PK: "u#{UserID:raw}", SK: "{Status:raw}"},
			followers: F{PK: "f#{UserID:raw}", SK: "active#{Follower:raw}"},
		},
		{
			name:      "sort keys in one partition are",
			users:     U{PK: "u#{UserID:raw}", SK: "{Status:raw}"},
			followers: F{PK: "u#{UserID:raw}", SK: "active#{Follower:raw}"},
			want:      []string{`warning user: user's SK = {Status:raw} can render follower's keys (SK = active#{Follower:raw}): Status = "active#0" renders SK "active#0", follower's key for Follower = "0"`},
		},
		{
			name: "an index partition: a raw status reaches the dated partitions",
			users: U{PK: "u#{UserID:raw}", SK: "profile", Indexes: []singletable.IndexSchema[fgUser]{
				{Name: "GSI1", PK: "STATUS#{Status:raw}", SK: "u#{UserID:raw}"}}},
			followers: F{PK: "u#{UserID:raw}#follower", SK: "f#{Follower:raw=[0-9]+}", Indexes: []singletable.IndexSchema[fgFollower]{
				{Name: "GSI1", PK: "STATUS#{Status:raw}#{Day:date}", SK: "f#{Follower:raw=[0-9]+}"}}},
			want: []string{
				`warning user: user's PK = u#{UserID:raw} can render follower's keys`,
				`warning user index GSI1: user's GSI1PK = STATUS#{Status:raw} can render follower's keys (GSI1PK = STATUS#{Status:raw}#{Day:date}): Status = "0#2024-01-02" renders GSI1PK "STATUS#0#2024-01-02", follower's key for Status = "0", Day = "2024-01-02"`,
			},
		},
		{
			name: "a write-sharded partition's suffix is part of its keys",
			users: U{PK: "u#{UserID:raw=[0-9]+}", SK: "profile", Indexes: []singletable.IndexSchema[fgUser]{
				{Name: "GSI1", PK: "USERS", SK: "u#{UserID:raw=[0-9]+}", Shards: 4}}},
			followers: F{PK: "u#{UserID:raw=[0-9]+}#follower", SK: "f#{Follower:raw=[0-9]+}", Indexes: []singletable.IndexSchema[fgFollower]{
				{Name: "GSI1", PK: "USERS#{Status:raw}", SK: "f#{Follower:raw=[0-9]+}"}}},
			want: []string{`warning follower index GSI1: follower's GSI1PK = USERS#{Status:raw} can render user's keys (GSI1PK = USERS): Status = "shard_0" renders GSI1PK "USERS#shard_0", user's key, so a value can reach another entity's items. Constrain the raw values so that they cannot hold 's'`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := forgeries(t, c.users, c.followers)
			require.Len(t, got, len(c.want), "forgeries: %q", got)
			for i, w := range c.want {
				assert.True(t, strings.HasPrefix(got[i], w), "finding %d:\n got %s\nwant %s…", i, got[i], w)
			}
		})
	}
}

// A constraint whose values cannot hold a byte below the delimiter after
// it keeps byte order equal to value order, so the lint's order caveat
// for raw values is not said of it.
func TestLintConstrainedRawOrder(t *testing.T) {
	t.Parallel()
	caveat := func(pk string) bool {
		tbl := singletable.NewTable(nil, "t")
		singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[fgUser]{Type: "user", PK: pk, SK: "profile"}))
		for _, f := range findings(catalog.New(tbl)) {
			if strings.Contains(f, "sorts before shorter values") {
				return true
			}
		}
		return false
	}
	assert.True(t, caveat("u#{UserID:raw}#x"))
	assert.True(t, caveat("u#{UserID:raw=[^#]+}#x"), "[^#] holds a space, which sorts before '#'")
	assert.False(t, caveat("u#{UserID:raw=[0-9]+}#x"))
	assert.False(t, caveat("u#{UserID:raw=[A-Za-z0-9_-]+}#x"))
}
