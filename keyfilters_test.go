package singletable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// UsageEntry is a usage log as a Python service writes it: one item per
// use, without an entity type, the platform only in the partition key and
// the day and time of day of its created_at only in the sort key
// (USAGE#2024-03-01#10:15:00#u7); GSI1 lists a user's usage by time. The
// three are KeyOnly: filters and conditions on them are written against
// the keys.
type UsageEntry struct {
	Platform  string    `dynamodbav:"-"`
	UsageDate time.Time `dynamodbav:"usage_date"`
	UsageTime time.Time `dynamodbav:"usage_time"`
	UserID    string    `dynamodbav:"user_id"`
	Action    string    `dynamodbav:"action"`
	Count     int       `dynamodbav:"count"`
}

var UsageEntries = singletable.MustDefine(singletable.Schema[UsageEntry]{
	Type: "Usage", PK: "PLATFORM#{Platform}", SK: "USAGE#{UsageDate:date}#{UsageTime:15:04:05}#{UserID:raw}",
	KeyOnly: []string{"Platform", "UsageDate", "UsageTime"}, MatchKeys: true,
	Indexes: []singletable.IndexSchema[UsageEntry]{{Name: "GSI1", PK: "USER#{UserID:raw}", SK: "{UsageDate:date}#{UsageTime:15:04:05}"}},
})

var (
	usageDay  = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	usageTime = func(h, m int) time.Time { return time.Date(0, 1, 1, h, m, 0, 0, time.UTC) }
)

// usageFixture writes the usage log with the raw SDK, as the Python
// service does: 13 uses on 2024-03-01 (8 on ios, 5 on android), and 6 on
// the days around it.
func usageFixture(t *testing.T) (*singletable.Table, *countingClient, *singletable.Repo[UsageEntry]) {
	t.Helper()
	var r *singletable.Repo[UsageEntry]
	tbl, c := newTable(t, func(tbl *singletable.Table) { r = singletable.MustBind(tbl, UsageEntries) })
	put := func(platform, day, at, user string) {
		rawPut(t, tbl, map[string]types.AttributeValue{
			"PK": sAV("PLATFORM#" + platform), "SK": sAV("USAGE#" + day + "#" + at + "#" + user),
			"GSI1PK": sAV("USER#" + user), "GSI1SK": sAV(day + "#" + at),
			"user_id": sAV(user), "action": sAV("search"), "count": nAV("1")})
	}
	for i := range 8 {
		put("ios", "2024-03-01", fmt.Sprintf("%02d:15:00", 9+i), fmt.Sprintf("u%d", i%3))
	}
	for i := range 5 {
		put("android", "2024-03-01", fmt.Sprintf("%02d:30:00", 9+i), fmt.Sprintf("u%d", i%3))
	}
	for i, day := range []string{"2024-02-29", "2024-03-02", "2024-03-10"} {
		put("ios", day, "09:15:00", fmt.Sprintf("u%d", i))
		put("android", day, "09:30:00", fmt.Sprintf("u%d", i))
	}
	c.requests.Store(0)
	return tbl, c, r
}

// TestKeyFilterScanOnKeyOnlyDate: the Scan, Filter(UsageDate =
// …), counts the 13 uses of the day, not 0; with the platform too, the
// day's uses on ios; IN, <> and begins_with on a key-only field work the
// same way.
func TestKeyFilterScanOnKeyOnlyDate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, usage := usageFixture(t)
	onDay := expression.Name("UsageDate").Equal(expression.Value(usageDay))
	n, err := usage.Scan().Filter(onDay).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 13, n)
	entries, err := usage.Scan().Filter(onDay).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, entries, 13)
	for _, e := range entries {
		assert.True(t, e.UsageDate.Equal(usageDay), "decoded day %v", e.UsageDate)
	}
	// The stored name is taken as the Go name is.
	n, err = usage.Scan().Filter(expression.Name("usage_date").Equal(expression.Value(usageDay))).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 13, n)

	cases := []struct {
		name   string
		filter expression.ConditionBuilder
		want   int
	}{
		{"day and platform", onDay.And(expression.Name("Platform").Equal(expression.Value("ios"))), 8},
		{"platform", expression.Name("Platform").Equal(expression.Value("android")), 8},
		{"not the day", expression.Not(onDay), 6},
		{"not equal", expression.Name("UsageDate").NotEqual(expression.Value(usageDay)), 6},
		{"in", expression.Name("UsageDate").In(expression.Value(usageDay), expression.Value(usageDay.AddDate(0, 0, 1))), 15},
		{"begins_with", expression.Name("Platform").BeginsWith("and"), 8},
		{"or with an attribute", onDay.Or(expression.Name("UserID").Equal(expression.Value("u2"))), 15},
		{"another day", expression.Name("UsageDate").Equal(expression.Value(usageDay.AddDate(0, 0, 3))), 0},
	}
	for _, c := range cases {
		n, err := usage.Scan().Filter(c.filter).Count(ctx)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, n, c.name)
	}
}

// TestKeyFilterQueryOnPlatform: the Query, Filter(Platform = …),
// on a user's usage in GSI1 finds the user's uses on that platform, and a
// filter on the day finds the user's uses that day: the filter tests the
// table's keys, which a Query of GSI1 may name. (A Query of the table
// itself cannot filter on them: TestKeyFilterRefused.)
func TestKeyFilterQueryOnPlatform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, usage := usageFixture(t)
	ios, err := usage.QueryIndex("GSI1", UsageEntry{UserID: "u1"}).Filter(expression.Name("Platform").Equal(expression.Value("ios"))).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, ios, 4) // three on 2024-03-01, one on 2024-03-02
	for _, e := range ios {
		assert.Equal(t, "ios", e.Platform)
		assert.Equal(t, "u1", e.UserID)
	}
	onDay, err := usage.QueryIndex("GSI1", UsageEntry{UserID: "u1"}).Filter(expression.Name("UsageDate").Equal(expression.Value(usageDay))).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, onDay, 5) // three on ios, two on android
	n, err := usage.QueryIndex("GSI1", UsageEntry{UserID: "u1"}).Filter(expression.Name("Platform").Equal(expression.Value("web"))).Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestKeyFilterWriteConditions: a write's condition on a key-only field,
// even one after another in its key (UsageTime), is tested on the key of
// the item written: Update.If holds when the item's key holds the value
// and fails with ErrConditionFailed when it does not, and so do Delete's
// and Put's If and a transaction's check.
func TestKeyFilterWriteConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, usage := usageFixture(t)
	key := UsageEntry{Platform: "ios", UsageDate: usageDay, UsageTime: usageTime(10, 15), UserID: "u1"}
	atTime := func(h, m int) expression.ConditionBuilder {
		return expression.Name("UsageTime").Equal(expression.Value(usageTime(h, m)))
	}

	got, err := usage.Update(key).Add("Count", 1).If(atTime(10, 15)).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Count)
	_, err = usage.Update(key).Add("Count", 1).If(atTime(10, 16)).Run(ctx)
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	_, err = usage.Update(key).Add("Count", 1).If(expression.Name("Platform").Equal(expression.Value("android"))).Run(ctx)
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	_, err = usage.Update(key).Add("Count", 1).If(expression.Name("UsageDate").Equal(expression.Value(usageDay)).And(
		expression.Name("Platform").NotEqual(expression.Value("android")))).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, nAV("3"), rawGet(t, tbl, "PLATFORM#ios", "USAGE#2024-03-01#10:15:00#u1")["count"])

	err = singletable.Tx(ctx, []singletable.WriteOp{
		usage.CheckOp(key, atTime(10, 15)),
		usage.Update(UsageEntry{Platform: "ios", UsageDate: usageDay, UsageTime: usageTime(11, 15), UserID: "u2"}).Add("Count", 1).If(atTime(11, 15)).Op(),
	})
	require.NoError(t, err)
	err = singletable.Tx(ctx, []singletable.WriteOp{usage.CheckOp(key, atTime(9, 15))})
	require.ErrorIs(t, err, singletable.ErrConditionFailed)

	other := UsageEntry{Platform: "android", UsageDate: usageDay, UsageTime: usageTime(9, 30), UserID: "u0", Action: "login", Count: 7}
	_, err = usage.Put(ctx, other, func(o *singletable.WriteOptions) { o.If = atTime(9, 31) })
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	_, err = usage.Put(ctx, other, func(o *singletable.WriteOptions) { o.If = atTime(9, 30) })
	require.NoError(t, err)
	assert.Equal(t, sAV("login"), rawGet(t, tbl, "PLATFORM#android", "USAGE#2024-03-01#09:30:00#u0")["action"])
	_, err = usage.Delete(ctx, other, func(o *singletable.WriteOptions) { o.If = atTime(9, 31) })
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	_, err = usage.Delete(ctx, other, func(o *singletable.WriteOptions) {
		o.If = expression.Name("Platform").In(expression.Value("android"), expression.Value("web"))
	})
	require.NoError(t, err)
	assert.Nil(t, rawGet(t, tbl, "PLATFORM#android", "USAGE#2024-03-01#09:30:00#u0"))
	// A condition on a key-only field of an item that does not exist fails,
	// as on an attribute.
	absent := UsageEntry{Platform: "web", UsageDate: usageDay, UsageTime: usageTime(1, 0), UserID: "u9"}
	_, err = usage.Put(ctx, absent, func(o *singletable.WriteOptions) { o.If = atTime(1, 0) })
	require.ErrorIs(t, err, singletable.ErrConditionFailed)
	assert.Nil(t, rawGet(t, tbl, "PLATFORM#web", "USAGE#2024-03-01#01:00:00#u9"))
}

// TestKeyFilterRefused: a filter or condition on a key-only field that no
// condition on the key matches exactly is a *ValidationError naming the
// field and the key, and nothing is sent: a later part of the key in a
// filter, ranges, functions of the field, a value no key can hold.
func TestKeyFilterRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, c, usage := usageFixture(t)
	day, at := expression.Name("UsageDate"), expression.Name("UsageTime")
	cases := []struct {
		name   string
		filter expression.ConditionBuilder
		why    string
	}{
		{"a later part", at.Equal(expression.Value(usageTime(10, 15))), "{UsageTime} follows {UsageDate}"},
		{"a range", day.GreaterThanEqual(expression.Value(usageDay)), ">=:"},
		{"between", day.Between(expression.Value(usageDay), expression.Value(usageDay.AddDate(0, 0, 1))), "BETWEEN:"},
		{"exists", expression.Name("Platform").AttributeExists(), "attribute_exists:"},
		{"size", expression.Name("Platform").Size().GreaterThan(expression.Value(2)), "size:"},
		{"not midnight", day.Equal(expression.Value(usageDay.Add(time.Hour))), "date"},
		{"empty", expression.Name("Platform").Equal(expression.Value("")), "empty"},
		{"wrong type", expression.Name("Platform").Equal(expression.Value(3)), "not a string"},
		{"begins_with on a time", day.BeginsWith("2024"), "begins_with tests text"},
	}
	// A Query of the table cannot filter on its own keys (DynamoDB refuses
	// it): its key and sort condition say what they hold.
	for _, f := range []expression.ConditionBuilder{day.Equal(expression.Value(usageDay)), expression.Name("Platform").Equal(expression.Value("ios"))} {
		var ve *singletable.ValidationError
		_, err := usage.Query(UsageEntry{Platform: "ios"}).Filter(f).Collect(ctx)
		require.ErrorAs(t, err, &ve)
		assert.Contains(t, err.Error(), "DynamoDB refuses a Query's filter on")
	}
	for _, tc := range cases {
		var ve *singletable.ValidationError
		_, err := usage.Scan().Filter(tc.filter).Count(ctx)
		require.ErrorAs(t, err, &ve, tc.name)
		assert.Contains(t, err.Error(), "a field only keys hold (", tc.name)
		assert.Contains(t, err.Error(), tc.why, tc.name)
		_, err = usage.Query(UsageEntry{Platform: "ios"}).Filter(tc.filter).Collect(ctx)
		require.ErrorAs(t, err, &ve, tc.name)
	}
	assert.Zero(t, c.requests.Load(), "refused before the network")

	key := UsageEntry{Platform: "ios", UsageDate: usageDay, UsageTime: usageTime(10, 15), UserID: "u1"}
	reqs, err := tbl.Preview(ctx, func(ctx context.Context) error {
		var errs []error
		_, err := usage.Update(key).Add("Count", 1).If(day.LessThan(expression.Value(usageDay))).Run(ctx)
		errs = append(errs, err)
		_, err = usage.Delete(ctx, key, func(o *singletable.WriteOptions) { o.If = expression.Name("Platform").AttributeNotExists() })
		errs = append(errs, err)
		errs = append(errs, singletable.Tx(ctx, []singletable.WriteOp{usage.CheckOp(key, at.GreaterThan(expression.Value(usageTime(1, 0))))}))
		for i, err := range errs {
			var ve *singletable.ValidationError
			if !assert.ErrorAs(t, err, &ve, "write %d", i) {
				continue
			}
			assert.Equal(t, "Usage", ve.Entity)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, reqs, "refused before the network")
	assert.Equal(t, nAV("1"), rawGet(t, tbl, "PLATFORM#ios", "USAGE#2024-03-01#10:15:00#u1")["count"])
}

// TestKeyFilterCollection: a collection's (or a table scan's) filter on a
// field one target holds only in keys is tested on its keys and entity
// type; a name two targets know, one of them in keys only, is refused.
func TestKeyFilterCollection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c, usage := usageFixture(t)
	var got []UsageEntry
	_, err := usage.QueryIndexCollection("GSI1", UsageEntry{UserID: "u1"}).Filter(expression.Name("UsageDate").Equal(expression.Value(usageDay))).Collect(ctx, usage.AppendTo(&got))
	require.NoError(t, err)
	assert.Len(t, got, 5)
	n, err := usage.Scan().Filter(expression.Name("UsageDate").Equal(expression.Value(usageDay))).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 13, n)
	items, err := usage.Table().Scan().Filter(expression.Name("UsageDate").Equal(expression.Value(usageDay))).Collect(ctx, usage.Target())
	require.NoError(t, err)
	assert.Len(t, items, 13)

	type Note struct {
		Platform string `dynamodbav:"platform"`
		ID       string `dynamodbav:"id"`
	}
	notes := singletable.MustBind(usage.Table(), singletable.MustDefine(singletable.Schema[Note]{Type: "Note", PK: "PLATFORM#{Platform}", SK: "NOTE#{ID}"}))
	c.requests.Store(0)
	var ve *singletable.ValidationError
	_, err = usage.QueryCollection(UsageEntry{Platform: "ios"}).Filter(expression.Name("Platform").Equal(expression.Value("ios"))).Collect(ctx, usage.Target(), notes.Target())
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "one of them holds it only in its keys")
	assert.Zero(t, c.requests.Load())
}
