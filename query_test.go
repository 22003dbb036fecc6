package singletable_test

import (
	"context"
	"fmt"
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

// A Filter or an Update.If comparing a time field with expression.Value(t)
// should match the items holding t. UserSkill's LastUsed is a sort
// attribute of the multi-attribute GSI2, so it is stored in the key codec's
// fixed-width form ("2024-03-01T10:00:00.000000000Z"), while the SDK's
// expression builder encodes expression.Value(t) as RFC3339Nano
// ("2024-03-01T10:00:00Z"): the comparison never holds. The same goes for
// the time forms only the library knows (",date", ",rfc3339milli").
func TestFilterOnTimeStoredInKeyForm(t *testing.T) {
	t.Skip("bug: condition and filter operands of time fields stored in a non-SDK form are not re-encoded in that form; see the probe-sequences report")
	t.Parallel()
	ctx := context.Background()
	_, _, skills, _ := skillsTable(t)
	at := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	_, err := skills.Put(ctx, UserSkill{Username: "ann", SkillName: "go", Level: "Expert", Years: 3, LastUsed: at})
	require.NoError(t, err)
	got, err := skills.Query(UserSkill{Username: "ann"}).Filter(expression.Name("LastUsed").Equal(expression.Value(at))).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "Filter LastUsed = %v", at)
	_, err = skills.Update(UserSkill{Username: "ann", SkillName: "go"}).Set("Years", 4).
		If(expression.Name("LastUsed").Equal(expression.Value(at))).Run(ctx)
	assert.NoError(t, err, "Update.If LastUsed = %v", at)
}
