package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

func TestSortConditionsOnTemplatedKeys(t *testing.T) {
	t.Parallel()
	type Reading struct {
		Sensor string
		Day    string
		Seq    int
		Value  float64
	}
	readings := singletable.MustDefine(singletable.Schema[Reading]{
		Type: "Reading", PK: "SENSOR#{Sensor}", SK: "DAY#{Day}#SEQ#{Seq}",
	})
	var repo *singletable.Repo[Reading]
	newT, _ := newTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, readings) })
	_ = newT
	ctx := context.Background()
	days := []string{"d1", "d2", "d2x", "d3"}
	for _, d := range days {
		for s := -3; s <= 3; s++ {
			_, err := repo.Put(ctx, Reading{Sensor: "s", Day: d, Seq: s})
			require.NoError(t, err)
		}
	}
	seqs := func(rs []Reading) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s/%d", r.Day, r.Seq))
		}
		return out
	}
	k := Reading{Sensor: "s", Day: "d2", Seq: 0}
	cases := []struct {
		name string
		q    *singletable.Query[Reading]
		want []string
	}{
		{"eq prefix", repo.Query(k).Where(singletable.Eq, "Day"), []string{"d2/-3", "d2/-2", "d2/-1", "d2/0", "d2/1", "d2/2", "d2/3"}},
		{"eq full", repo.Query(k).Where(singletable.Eq, "Day", "Seq"), []string{"d2/0"}},
		{"gt", repo.Query(k).Where(singletable.Gt, "Day", "Seq"), []string{"d2/1", "d2/2", "d2/3"}},
		{"ge", repo.Query(k).Where(singletable.Ge, "Day", "Seq"), []string{"d2/0", "d2/1", "d2/2", "d2/3"}},
		{"lt", repo.Query(k).Where(singletable.Lt, "Day", "Seq"), []string{"d2/-3", "d2/-2", "d2/-1"}},
		{"le", repo.Query(k).Where(singletable.Le, "Day", "Seq"), []string{"d2/-3", "d2/-2", "d2/-1", "d2/0"}},
		{"between", repo.Query(k).Between(Reading{Seq: 2}, "Day", "Seq"), []string{"d2/0", "d2/1", "d2/2"}},
		{"empty between", repo.Query(k).Between(Reading{Seq: -1}, "Day", "Seq"), nil},
		{"day gt", repo.Query(k).Where(singletable.Gt, "Day"), seqsOf("d2x", "d3")},
		{"day ge", repo.Query(k).Where(singletable.Ge, "Day"), seqsOf("d2", "d2x", "d3")},
		{"day lt", repo.Query(k).Where(singletable.Lt, "Day"), seqsOf("d1")},
		{"day le", repo.Query(k).Where(singletable.Le, "Day"), seqsOf("d1", "d2")},
		{"day begins", repo.Query(k).BeginsWith("d2", "Day"), seqsOf("d2", "d2x")},
		{"desc limit", repo.Query(k).Where(singletable.Eq, "Day").Desc().Limit(2), []string{"d2/3", "d2/2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.q.Collect(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.want, seqs(got))
		})
	}
}

func seqsOf(days ...string) []string {
	var out []string
	for _, d := range days {
		for s := -3; s <= 3; s++ {
			out = append(out, fmt.Sprintf("%s/%d", d, s))
		}
	}
	return out
}

// OrgPosition has a hierarchical sort key whose values can bring it to
// DynamoDB's 1024-byte limit.
type OrgPosition struct {
	Org, Dept, Team, Role string
}

var OrgPositions = singletable.MustDefine(singletable.Schema[OrgPosition]{
	Type: "OrgPosition", PK: "ORG#{Org}", SK: "DEPT#{Dept}#TEAM#{Team}#ROLE#{Role}",
})

// An item whose sort key is at (or just under) the 1024-byte limit is
// found by every sort condition, though the library's upper bounds end
// in U+10FFFF past the limit: they are cut to the greatest bound a key
// can reach. A condition value no key can hold is a *KeyError before
// the network.
func TestSortConditionsAtTheKeyLimit(t *testing.T) {
	ctx := context.Background()
	var repo *singletable.Repo[OrgPosition]
	_, c := newTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, OrgPositions) })
	// Fillers whose runes straddle the limit at every byte offset.
	for _, fill := range []string{"d", "é", "日", "𝄞"} {
		for room := range 5 {
			org := fill + strconv.Itoa(room)
			key := OrgPosition{Org: org, Team: "t", Role: "r"}
			// SK = DEPT#<dept>#TEAM#t#ROLE#r: 19 bytes besides the dept.
			key.Dept = strings.Repeat(fill, (1024-19-room)/len(fill))
			if _, err := repo.Create(ctx, key); err != nil {
				t.Fatalf("%s: %v", org, err)
			}
			lower := key
			lower.Dept = fill
			for name, q := range map[string]*singletable.Query[OrgPosition]{
				"eq dept":           repo.Query(key).Where(singletable.Eq, "Dept"),
				"eq dept team":      repo.Query(key).Where(singletable.Eq, "Dept", "Team"),
				"eq all":            repo.Query(key).Where(singletable.Eq, "Dept", "Team", "Role"),
				"le dept":           repo.Query(key).Where(singletable.Le, "Dept"),
				"le dept team":      repo.Query(key).Where(singletable.Le, "Dept", "Team"),
				"le all":            repo.Query(key).Where(singletable.Le, "Dept", "Team", "Role"),
				"ge dept team":      repo.Query(key).Where(singletable.Ge, "Dept", "Team"),
				"gt lower":          repo.Query(lower).Where(singletable.Gt, "Dept"),
				"between dept":      repo.Query(lower).Between(key, "Dept"),
				"between dept team": repo.Query(key).Between(key, "Dept", "Team"),
				"begins with":       repo.Query(OrgPosition{Org: org}).BeginsWith(key.Dept, "Dept"),
			} {
				got, err := q.Collect(ctx)
				if err != nil || len(got) != 1 {
					t.Errorf("%s %s: %d items, %v", org, name, len(got), err)
				}
			}
			lt := key
			lt.Team = "u"
			if got, err := repo.Query(lt).Where(singletable.Lt, "Dept", "Team").Collect(ctx); err != nil || len(got) != 1 {
				t.Errorf("%s lt team u: %d items, %v", org, len(got), err)
			}
		}
	}
	// A value longer than any sort key: refused before the network.
	long := OrgPosition{Org: "o", Dept: strings.Repeat("x", 1030)}
	n := c.requests.Load()
	for name, q := range map[string]*singletable.Query[OrgPosition]{
		"eq":          repo.Query(long).Where(singletable.Eq, "Dept"),
		"ge":          repo.Query(long).Where(singletable.Ge, "Dept"),
		"begins with": repo.Query(OrgPosition{Org: "o"}).BeginsWith(long.Dept, "Dept"),
	} {
		var ke *singletable.KeyError
		if _, err := q.Collect(ctx); !errors.As(err, &ke) {
			t.Errorf("%s with a 1030-byte value: %v, want a *KeyError", name, err)
		}
	}
	if c.requests.Load() != n {
		t.Errorf("refused queries sent %d requests", c.requests.Load()-n)
	}
}
