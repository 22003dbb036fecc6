package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
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
		{"eq prefix", repo.Query(k).Where("Day", singletable.Eq, k.Day), []string{"d2/-3", "d2/-2", "d2/-1", "d2/0", "d2/1", "d2/2", "d2/3"}},
		{"eq full", repo.Query(k).Where("Seq", singletable.Eq, k.Seq), []string{"d2/0"}},
		{"gt", repo.Query(k).Where("Seq", singletable.Gt, k.Seq), []string{"d2/1", "d2/2", "d2/3"}},
		{"ge", repo.Query(k).Where("Seq", singletable.Ge, k.Seq), []string{"d2/0", "d2/1", "d2/2", "d2/3"}},
		{"lt", repo.Query(k).Where("Seq", singletable.Lt, k.Seq), []string{"d2/-3", "d2/-2", "d2/-1"}},
		{"le", repo.Query(k).Where("Seq", singletable.Le, k.Seq), []string{"d2/-3", "d2/-2", "d2/-1", "d2/0"}},
		{"between", repo.Query(k).Between("Seq", k.Seq, 2), []string{"d2/0", "d2/1", "d2/2"}},
		{"empty between", repo.Query(k).Between("Seq", k.Seq, -1), nil},
		{"day gt", repo.Query(k).Where("Day", singletable.Gt, k.Day), seqsOf("d2x", "d3")},
		{"day ge", repo.Query(k).Where("Day", singletable.Ge, k.Day), seqsOf("d2", "d2x", "d3")},
		{"day lt", repo.Query(k).Where("Day", singletable.Lt, k.Day), seqsOf("d1")},
		{"day le", repo.Query(k).Where("Day", singletable.Le, k.Day), seqsOf("d1", "d2")},
		{"day begins", repo.Query(k).BeginsWith("Day", "d2"), seqsOf("d2", "d2x")},
		{"desc limit", repo.Query(k).Where("Day", singletable.Eq, k.Day).Desc().Limit(2), []string{"d2/3", "d2/2"}},
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

// A condition comparing a time field with expression.Value(t) (a Filter,
// an Update.If, a WriteOptions.If, a CheckOp, a collection's or a scan's
// filter) holds for the items holding t, whatever form the field is
// stored in. The SDK's expression builder writes expression.Value(t) as an
// RFC 3339 text; the library writes it as the field is stored:
// UserSkill's LastUsed, a sort attribute of the multi-attribute GSI2, in
// the key codec's fixed-width form ("2024-03-01T10:00:00.000000000Z"), a
// ",date" field as "2024-03-01", a ",unixmilli" one and the TTL field
// (epoch seconds) as numbers. A value given in the stored form is compared
// as given, and a field stored as the SDK stores it is left alone.
func TestFilterOnTimeStoredInKeyForm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, skills, _ := skillsTable(t)
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	_, err := skills.Put(ctx, UserSkill{Username: "ann", SkillName: "go", Level: "Expert", Years: 3, LastUsed: at})
	require.NoError(t, err)
	got, err := skills.Query(UserSkill{Username: "ann"}).Filter(expression.Name("LastUsed").Equal(expression.Value(at))).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "Filter LastUsed = %v", at)
	got, err = skills.Query(UserSkill{Username: "ann"}).Filter(expression.Name("LastUsed").Between(expression.Value(at.Add(-time.Second)), expression.Value(at.Add(time.Second)))).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "Filter LastUsed BETWEEN")
	_, err = skills.Update(UserSkill{Username: "ann", SkillName: "go"}).Set("Years", 4).
		If(expression.Name("LastUsed").Equal(expression.Value(at))).Run(ctx)
	assert.NoError(t, err, "Update.If LastUsed = %v", at)
	_, err = skills.Update(UserSkill{Username: "ann", SkillName: "go"}).Set("Years", 5).
		If(expression.Name("LastUsed").GreaterThan(expression.Value(at))).Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "Update.If LastUsed > %v", at)

	type Lease struct {
		ID    string
		Day   time.Time `dynamodbav:"Day,date"`
		At    time.Time `dynamodbav:"At,unixmilli"`
		Until time.Time
		Plain time.Time
	}
	leases := singletable.MustDefine(singletable.Schema[Lease]{Type: "Lease", PK: "LEASE#{ID}", SK: "LEASE", TTL: "Until"})
	var repo *singletable.Repo[Lease]
	newTable(t, func(tb *singletable.Table) { repo = singletable.MustBind(tb, leases) })
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	l := Lease{ID: "l1", Day: day, At: at.Add(123 * time.Millisecond), Until: until, Plain: at}
	_, err = repo.Create(ctx, l)
	require.NoError(t, err)
	key := Lease{ID: "l1"}
	for _, c := range []struct {
		name string
		cond expression.ConditionBuilder
		hold bool
	}{
		{"date", expression.Name("Day").Equal(expression.Value(day)), true},
		{"date, value first", expression.LessThanEqual(expression.Value(day), expression.Name("Day")), true},
		{"date in", expression.Name("Day").In(expression.Value(day.AddDate(0, 0, -1)), expression.Value(day)), true},
		{"date as stored", expression.Name("Day").Equal(expression.Value("2024-03-01")), true},
		{"date, other day", expression.Name("Day").Equal(expression.Value(day.AddDate(0, 0, 1))), false},
		{"unixmilli", expression.Name("At").Equal(expression.Value(l.At)), true},
		{"unixmilli as stored", expression.Name("At").Equal(expression.Value(l.At.UnixMilli())), true},
		{"ttl", expression.Name("Until").LessThan(expression.Value(until.Add(time.Second))), true},
		{"ttl, before", expression.Name("Until").LessThan(expression.Value(until)), false},
		{"sdk form", expression.Name("Plain").Equal(expression.Value(at)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			found, err := repo.Query(key).Filter(c.cond).Collect(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.hold, len(found) == 1, "Query.Filter")
			scanned, err := repo.Scan().Filter(c.cond).Collect(ctx)
			require.NoError(t, err)
			assert.Equal(t, c.hold, len(scanned) == 1, "Scan.Filter")
			var mine []Lease
			_, err = repo.QueryCollection(key).Filter(c.cond).Collect(ctx, repo.AppendTo(&mine))
			require.NoError(t, err)
			assert.Equal(t, c.hold, len(mine) == 1, "Collection.Filter")
			_, err = repo.Put(ctx, l, func(o *singletable.WriteOptions) { o.If = c.cond })
			if c.hold {
				assert.NoError(t, err, "WriteOptions.If")
			} else {
				assert.ErrorIs(t, err, singletable.ErrConditionFailed, "WriteOptions.If")
			}
		})
	}
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
				"eq dept":           repo.Query(key).Where("Dept", singletable.Eq, key.Dept),
				"eq dept team":      repo.Query(key).Where("Team", singletable.Eq, key.Team),
				"eq all":            repo.Query(key).Where("Role", singletable.Eq, key.Role),
				"le dept":           repo.Query(key).Where("Dept", singletable.Le, key.Dept),
				"le dept team":      repo.Query(key).Where("Team", singletable.Le, key.Team),
				"le all":            repo.Query(key).Where("Role", singletable.Le, key.Role),
				"ge dept team":      repo.Query(key).Where("Team", singletable.Ge, key.Team),
				"gt lower":          repo.Query(lower).Where("Dept", singletable.Gt, lower.Dept),
				"between dept":      repo.Query(lower).Between("Dept", lower.Dept, key.Dept),
				"between dept team": repo.Query(key).Between("Team", key.Team, key.Team),
				"begins with":       repo.Query(OrgPosition{Org: org}).BeginsWith("Dept", key.Dept),
			} {
				got, err := q.Collect(ctx)
				if err != nil || len(got) != 1 {
					t.Errorf("%s %s: %d items, %v", org, name, len(got), err)
				}
			}
			lt := key
			lt.Team = "u"
			if got, err := repo.Query(lt).Where("Team", singletable.Lt, lt.Team).Collect(ctx); err != nil || len(got) != 1 {
				t.Errorf("%s lt team u: %d items, %v", org, len(got), err)
			}
		}
	}
	// A value longer than any sort key: refused before the network.
	long := OrgPosition{Org: "o", Dept: strings.Repeat("x", 1030)}
	n := c.requests.Load()
	for name, q := range map[string]*singletable.Query[OrgPosition]{
		"eq":          repo.Query(long).Where("Dept", singletable.Eq, long.Dept),
		"ge":          repo.Query(long).Where("Dept", singletable.Ge, long.Dept),
		"begins with": repo.Query(OrgPosition{Org: "o"}).BeginsWith("Dept", long.Dept),
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

// A sort condition's nil value is the key's value of the field, as the
// sort fields before it are; a zero value is a real value (0 a number, ""
// a missing string, a *KeyError), given or taken from the key.
func TestSortConditionNilAndZeroValues(t *testing.T) {
	t.Parallel()
	type Reading struct {
		Sensor, Day string
		Seq         int
	}
	var repo *singletable.Repo[Reading]
	newTable(t, func(tbl *singletable.Table) {
		repo = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Reading]{
			Type: "Reading", PK: "SENSOR#{Sensor}", SK: "DAY#{Day}#SEQ#{Seq}"}))
	})
	ctx := context.Background()
	for _, d := range []string{"d1", "d2"} {
		for s := -2; s <= 2; s++ {
			_, err := repo.Put(ctx, Reading{Sensor: "s", Day: d, Seq: s})
			require.NoError(t, err)
		}
	}
	k, zero := Reading{Sensor: "s", Day: "d2", Seq: 1}, Reading{Sensor: "s", Day: "d2"}
	cases := []struct {
		name string
		q    *singletable.Query[Reading]
		want []string
	}{
		{"nil: the key's value", repo.Query(k).Where("Seq", singletable.Ge, nil), []string{"d2/1", "d2/2"}},
		{"the same value given", repo.Query(k).Where("Seq", singletable.Ge, 1), []string{"d2/1", "d2/2"}},
		{"zero given: a real value, over the key's", repo.Query(k).Where("Seq", singletable.Ge, 0), []string{"d2/0", "d2/1", "d2/2"}},
		{"nil on a key holding zero: zero", repo.Query(zero).Where("Seq", singletable.Ge, nil), []string{"d2/0", "d2/1", "d2/2"}},
		{"nil lower bound", repo.Query(k).Between("Seq", nil, 2), []string{"d2/1", "d2/2"}},
		{"nil upper bound", repo.Query(k).Between("Seq", -1, nil), []string{"d2/-1", "d2/0", "d2/1"}},
		{"nil bounds", repo.Query(k).Between("Seq", nil, nil), []string{"d2/1"}},
		{"nil on the first sort field", repo.Query(k).Where("Day", singletable.Eq, nil), []string{"d2/-2", "d2/-1", "d2/0", "d2/1", "d2/2"}},
		{"empty prefix: every value", repo.Query(Reading{Sensor: "s"}).BeginsWith("Day", ""),
			[]string{"d1/-2", "d1/-1", "d1/0", "d1/1", "d1/2", "d2/-2", "d2/-1", "d2/0", "d2/1", "d2/2"}},
	}
	for _, c := range cases {
		got, err := c.q.Collect(ctx)
		require.NoError(t, err, c.name)
		var out []string
		for _, r := range got {
			out = append(out, fmt.Sprintf("%s/%d", r.Day, r.Seq))
		}
		assert.Equal(t, c.want, out, c.name)
	}
	// "" is a missing string, given or taken from the key.
	for _, q := range []*singletable.Query[Reading]{
		repo.Query(Reading{Sensor: "s"}).Where("Day", singletable.Eq, ""),
		repo.Query(Reading{Sensor: "s"}).Where("Day", singletable.Ge, nil),
	} {
		_, err := q.Collect(ctx)
		var ke *singletable.KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, []string{"Day"}, ke.Missing)
	}
	// Described, a nil value is the placeholder.
	assert.Equal(t, "SK > DAY#{Day}#SEQ#{Seq}", repo.Query(Reading{}).Where("Seq", singletable.Gt, nil).Describe().Sort)
}
