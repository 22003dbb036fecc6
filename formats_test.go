package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// Key formats per placeholder, end to end: items another service wrote
// (here with the raw SDK, in the exact key strings their designs document) are got,
// queried with every sort operator at the boundaries, paged with cursors
// and parsed back; the library's own writes are found by the other
// service's key expressions; values a format cannot write exactly are a
// *KeyError before any request.

// LogEvent is the elections service's append-only event log
// (PK "EVENTS", SK "00000042#2025-01-15T10:30:00Z").
type LogEvent struct {
	Seq  int64     `dynamodbav:"sequence"`
	At   time.Time `dynamodbav:"timestamp"`
	Kind string    `dynamodbav:"event_type"`
}

var voteEvents = singletable.MustDefine(singletable.Schema[LogEvent]{
	Type: "VoteEvent", PK: "EVENTS", SK: "{Seq:%08d}#{At:rfc3339}",
})

// RawElection is keyed by its name verbatim: "ELECTION#Favorite Language".
type RawElection struct {
	Name  string `dynamodbav:"election_name"`
	Owner string `dynamodbav:"owner"`
}

var fmtElections = singletable.MustDefine(singletable.Schema[RawElection]{
	Type: "Election", PK: "ELECTION#{Name:raw}", SK: "METADATA",
})

// RawCandidate sorts raw names at the end of its sort key.
type RawCandidate struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"candidate_name"`
}

var fmtCandidates = singletable.MustDefine(singletable.Schema[RawCandidate]{
	Type: "Candidate", PK: "ELECTION#{Election:raw}", SK: "CANDIDATE#{Name:raw}",
})

// FmtTask is keyed as the task manager keys tasks: GSI2SK
// "CREATED_AT#2025-01-15T11:00:00.000Z", and a goals-style GSI1SK
// "2024-01-07T10:00:00Z#456".
type FmtTask struct {
	User    string    `dynamodbav:"user_id"`
	ID      string    `dynamodbav:"task_id"`
	Created time.Time `dynamodbav:"created_at"`
	Status  string    `dynamodbav:"status"`
}

var fmtTasks = singletable.MustDefine(singletable.Schema[FmtTask]{
	Type: "Task", PK: "USER#{User}", SK: "TASK#{ID:raw}",
	Indexes: []singletable.IndexSchema[FmtTask]{
		{Name: "GSI1", PK: "USER#{User}", SK: "{Created:rfc3339}#{ID:raw}"},
		{Name: "GSI2", PK: "STATUS#{Status}", SK: "CREATED_AT#{Created:rfc3339milli}"},
	},
})

// Meal is keyed by its date: "MEAL#2024-01-15".
type Meal struct {
	User string    `dynamodbav:"user_id"`
	Day  time.Time `dynamodbav:"date"`
	Name string    `dynamodbav:"name"`
}

var fmtMeals = singletable.MustDefine(singletable.Schema[Meal]{
	Type: "Meal", PK: "USER#{User}", SK: "MEAL#{Day:date}",
})

// RawSkill keeps a raw value before a delimiter: "SKILL#machine learning#3".
type RawSkill struct {
	User  string
	Skill string
	Years int
}

var fmtSkills = singletable.MustDefine(singletable.Schema[RawSkill]{
	Type: "Skill", PK: "USER#{User:raw}", SK: "SKILL#{Skill:raw}#{Years:%02d}",
})

// formatRepos are the entities above bound to one fresh table.
type formatRepos struct {
	tbl        *singletable.Table
	c          *countingClient
	events     *singletable.Repo[LogEvent]
	elections  *singletable.Repo[RawElection]
	candidates *singletable.Repo[RawCandidate]
	tasks      *singletable.Repo[FmtTask]
	meals      *singletable.Repo[Meal]
	skills     *singletable.Repo[RawSkill]
}

func formatTables(t *testing.T) formatRepos {
	var r formatRepos
	r.tbl, r.c = newTable(t, func(tbl *singletable.Table) {
		r.events = singletable.MustBind(tbl, voteEvents)
		r.elections = singletable.MustBind(tbl, fmtElections)
		r.candidates = singletable.MustBind(tbl, fmtCandidates)
		r.tasks = singletable.MustBind(tbl, fmtTasks)
		r.meals = singletable.MustBind(tbl, fmtMeals)
		r.skills = singletable.MustBind(tbl, fmtSkills)
	})
	return r
}

// rawPut writes an item with the raw SDK, as another service would
// (strings as S, integers as N).
func rawPutFormats(t *testing.T, c *countingClient, table string, item map[string]any) {
	t.Helper()
	av := map[string]types.AttributeValue{}
	for k, v := range item {
		switch v := v.(type) {
		case string:
			av[k] = &types.AttributeValueMemberS{Value: v}
		case int:
			av[k] = &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
		default:
			t.Fatalf("rawPut: %T", v)
		}
	}
	_, err := c.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: av})
	require.NoError(t, err)
}

// rawGet reads an item by the other service's own key strings.
func rawGetFormats(t *testing.T, c *countingClient, table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	require.NoError(t, err)
	return out.Item
}

// Each entity's keys render to the designs' documented strings.
func TestKeyFormatsRenderDocumentedStrings(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	task := FmtTask{User: "123", ID: "456", Status: "OPEN", Created: time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)}
	render := func(pk, sk string, err error) [2]string {
		require.NoError(t, err)
		return [2]string{pk, sk}
	}
	cases := []struct {
		name string
		got  [2]string
		want [2]string
	}{
		{"event log", render(voteEvents.RenderKeys(LogEvent{Seq: 42, At: at})), [2]string{"EVENTS", "00000042#2025-01-15T10:30:00Z"}},
		{"election", render(fmtElections.RenderKeys(RawElection{Name: "Favorite Language"})), [2]string{"ELECTION#Favorite Language", "METADATA"}},
		{"candidate", render(fmtCandidates.RenderKeys(RawCandidate{Election: "Favorite Language", Name: "c#"})), [2]string{"ELECTION#Favorite Language", "CANDIDATE#c#"}},
		{"task", render(fmtTasks.RenderKeys(task)), [2]string{"USER#123", "TASK#456"}},
		{"task GSI1", render(fmtTasks.RenderIndexKeys("GSI1", task)), [2]string{"USER#123", "2024-01-07T10:00:00Z#456"}},
		{"task GSI2", render(fmtTasks.RenderIndexKeys("GSI2", task)), [2]string{"STATUS#OPEN", "CREATED_AT#2024-01-07T10:00:00.000Z"}},
		{"meal", render(fmtMeals.RenderKeys(Meal{User: "123", Day: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)})), [2]string{"USER#123", "MEAL#2024-01-15"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.got, c.name)
	}
	// And back: ParseKeys reads those strings into fields.
	ev, err := voteEvents.ParseKeys("EVENTS", "00000042#2025-01-15T10:30:00Z")
	require.NoError(t, err)
	assert.Equal(t, int64(42), ev.Seq)
	assert.True(t, ev.At.Equal(at) && ev.At.Location() == time.UTC, "%v", ev.At)
	el, err := fmtElections.ParseKeys("ELECTION#Favorite Language", "METADATA")
	require.NoError(t, err)
	assert.Equal(t, "Favorite Language", el.Name)
	for _, bad := range []string{"00000042#2025-01-15T10:30:00.000Z", "42#2025-01-15T10:30:00Z", "00000042#2025-01-15T10:30:00+00:00"} {
		_, err := voteEvents.ParseKeys("EVENTS", bad)
		var ke *singletable.KeyError
		assert.True(t, errors.As(err, &ke), "ParseKeys(%q) = %v", bad, err)
	}
}

// The event log: items the Kotlin service wrote are got and read "since
// the last sequence", and the library's appends are found by the service's
// own key expressions.
func TestKeyFormatsEventLog(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	tbl, c := r.tbl, r.c
	ctx := context.Background()
	events := r.events
	base := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	for seq := 1; seq <= 3; seq++ {
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "EVENTS", "SK": fmt.Sprintf("%08d#%s", seq, base.Add(time.Duration(seq)*time.Second).Format(time.RFC3339)),
			"EntityType": "VoteEvent", "event_type": "VOTE_CAST",
			"sequence": seq, "timestamp": base.Add(time.Duration(seq) * time.Second).Format(time.RFC3339)})
	}
	got, err := events.Get(ctx, LogEvent{Seq: 2, At: base.Add(2 * time.Second)})
	require.NoError(t, err)
	assert.Equal(t, "VOTE_CAST", got.Kind)
	assert.Equal(t, int64(2), got.Seq)

	_, err = events.Create(ctx, LogEvent{Seq: 4, At: base.Add(4 * time.Second), Kind: "VOTE_CAST"})
	require.NoError(t, err)
	item := rawGetFormats(t, c, tbl.Name(), "EVENTS", "00000004#2025-01-15T10:30:04Z")
	require.NotNil(t, item, "the library's append under the service's key string")

	// Query(PK=EVENTS, SK >= {lastSeq}), the service's sync read, both ways.
	since, err := events.Query(LogEvent{}).Where("Seq", singletable.Ge, 3).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, eventSeqs(since))
	out, err := c.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(tbl.Name()),
		KeyConditionExpression: aws.String("PK = :pk AND SK >= :seq"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: "EVENTS"}, ":seq": &types.AttributeValueMemberS{Value: "00000003"}}})
	require.NoError(t, err)
	assert.Equal(t, 2, len(out.Items))

	for _, c := range []struct {
		op   singletable.SortOp
		want []int64
	}{
		{singletable.Eq, []int64{2}}, {singletable.Lt, []int64{1}}, {singletable.Le, []int64{1, 2}},
		{singletable.Gt, []int64{3, 4}}, {singletable.Ge, []int64{2, 3, 4}},
	} {
		got, err := events.Query(LogEvent{}).Where("Seq", c.op, 2).Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, c.want, eventSeqs(got), "Seq %v 2", c.op)
	}
	// Both fields: the time compared within sequence 2.
	for _, c := range []struct {
		op   singletable.SortOp
		at   time.Duration
		want []int64
	}{
		{singletable.Eq, 2 * time.Second, []int64{2}}, {singletable.Lt, 2 * time.Second, nil},
		{singletable.Le, 2 * time.Second, []int64{2}}, {singletable.Gt, time.Second, []int64{2}},
		{singletable.Ge, 3 * time.Second, nil},
	} {
		got, err := events.Query(LogEvent{Seq: 2}).Where("At", c.op, base.Add(c.at)).Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, c.want, eventSeqs(got), "Seq = 2, At %v %v", c.op, c.at)
	}
	between, err := events.Query(LogEvent{}).Between("Seq", 2, 3).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, eventSeqs(between))
}

func eventSeqs(evs []LogEvent) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// Raw names: "ELECTION#Favorite Language" both ways, and raw sort keys
// compared by every operator (raw at the end of a key sorts as the
// values' bytes).
func TestKeyFormatsRawNames(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	tbl, c := r.tbl, r.c
	ctx := context.Background()
	elections := r.elections
	candidates := r.candidates

	rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "ELECTION#Favorite Language", "SK": "METADATA", "EntityType": "Election",
		"election_name": "Favorite Language", "owner": "kotlin"})
	got, err := elections.Get(ctx, RawElection{Name: "Favorite Language"})
	require.NoError(t, err)
	assert.Equal(t, "kotlin", got.Owner)

	_, err = elections.Create(ctx, RawElection{Name: "Best Editor #1", Owner: "go"})
	require.NoError(t, err)
	assert.NotNil(t, rawGetFormats(t, c, tbl.Name(), "ELECTION#Best Editor #1", "METADATA"))

	names := []string{"C", "C#", "C++", "Go", "Go\x00x", "Go Lang", "Gopher", "c#", "日本語"} // in byte order
	for _, n := range names {
		_, err := candidates.Create(ctx, RawCandidate{Election: "Favorite Language", Name: n})
		require.NoError(t, err)
	}
	// The service's own expression: SK begins_with CANDIDATE#.
	out, err := c.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(tbl.Name()),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: "ELECTION#Favorite Language"}, ":sk": &types.AttributeValueMemberS{Value: "CANDIDATE#"}}})
	require.NoError(t, err)
	var rawNames []string
	for _, it := range out.Items {
		rawNames = append(rawNames, strings.TrimPrefix(attrS(it, "SK"), "CANDIDATE#"))
	}
	assert.Equal(t, names, rawNames, "the library's writes in the service's format, in byte order")

	for _, pivot := range []string{"Go", "Go\x00", "C#", "D"} {
		k := RawCandidate{Election: "Favorite Language", Name: pivot}
		for _, op := range []singletable.SortOp{singletable.Eq, singletable.Lt, singletable.Le, singletable.Gt, singletable.Ge} {
			got, err := candidates.Query(k).Where("Name", op, k.Name).Collect(ctx)
			require.NoError(t, err)
			var want []string
			for _, n := range names {
				if cmpHolds(op, strings.Compare(n, pivot)) {
					want = append(want, n)
				}
			}
			assert.Equal(t, want, candidateNamesFormats(got), "Name %v %q", op, pivot)
		}
	}
	begins, err := candidates.Query(RawCandidate{Election: "Favorite Language"}).BeginsWith("Name", "Go").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"Go", "Go\x00x", "Go Lang", "Gopher"}, candidateNamesFormats(begins))
	between, err := candidates.Query(RawCandidate{Election: "Favorite Language"}).Between("Name", "C#", "Go Lang").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"C#", "C++", "Go", "Go\x00x", "Go Lang"}, candidateNamesFormats(between))
}

func cmpHolds(op singletable.SortOp, c int) bool {
	switch op {
	case singletable.Eq:
		return c == 0
	case singletable.Lt:
		return c < 0
	case singletable.Le:
		return c <= 0
	case singletable.Gt:
		return c > 0
	}
	return c >= 0
}

func candidateNamesFormats(cs []RawCandidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// Times at second boundaries: with rfc3339milli a whole second is
// ".000Z" and sorts among its milliseconds; with rfc3339 "Z" before "#".
// Every operator at and around the boundary, on items the other service
// wrote, through both indexes.
func TestKeyFormatsTimeBoundaries(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	tbl, c := r.tbl, r.c
	ctx := context.Background()
	tasks := r.tasks
	sec := time.Date(2025, 1, 15, 11, 0, 0, 0, time.UTC)
	// Milliseconds around the second, written by the JavaScript service.
	offsets := []time.Duration{-time.Second, -time.Millisecond, 0, time.Millisecond, 999 * time.Millisecond, time.Second}
	for i, off := range offsets {
		at := sec.Add(off)
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#js", "SK": fmt.Sprintf("TASK#m%d", i), "EntityType": "Task",
			"user_id": "js", "task_id": fmt.Sprintf("m%d", i), "status": "OPEN", "created_at": at.Format(time.RFC3339Nano),
			"GSI2PK": "STATUS#OPEN", "GSI2SK": "CREATED_AT#" + at.Format("2006-01-02T15:04:05.000Z")})
	}
	for _, pivot := range []time.Duration{0, -time.Millisecond, time.Second} {
		k := FmtTask{Status: "OPEN", Created: sec.Add(pivot)}
		for _, op := range []singletable.SortOp{singletable.Eq, singletable.Lt, singletable.Le, singletable.Gt, singletable.Ge} {
			got, err := tasks.QueryIndex("GSI2", k).Where("Created", op, k.Created).Collect(ctx)
			require.NoError(t, err)
			var want []string
			for i, off := range offsets {
				if cmpHolds(op, int(off-pivot)) {
					want = append(want, fmt.Sprintf("m%d", i))
				}
			}
			assert.Equal(t, want, taskIDs(got), "GSI2 Created %v %v", op, pivot)
		}
	}
	between, err := tasks.QueryIndex("GSI2", FmtTask{Status: "OPEN"}).Between("Created", sec, sec.Add(999*time.Millisecond)).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"m2", "m3", "m4"}, taskIDs(between))

	// Whole seconds, written by the Python service (isoformat + 'Z'), in
	// GSI1SK "2024-01-07T10:00:00Z#456": a second compares before its
	// items' IDs.
	for i, off := range []time.Duration{-time.Second, 0, 0, time.Second} {
		at := sec.Add(off)
		id := fmt.Sprintf("p%d", i)
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#py", "SK": "TASK#" + id, "EntityType": "Task",
			"user_id": "py", "task_id": id, "created_at": at.Format(time.RFC3339),
			"GSI1PK": "USER#py", "GSI1SK": at.Format(time.RFC3339) + "#" + id})
	}
	for _, c := range []struct {
		op   singletable.SortOp
		want []string
	}{
		{singletable.Eq, []string{"p1", "p2"}}, {singletable.Lt, []string{"p0"}}, {singletable.Le, []string{"p0", "p1", "p2"}},
		{singletable.Gt, []string{"p3"}}, {singletable.Ge, []string{"p1", "p2", "p3"}},
	} {
		got, err := tasks.QueryIndex("GSI1", FmtTask{User: "py"}).Where("Created", c.op, sec).Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, c.want, taskIDs(got), "GSI1 Created %v", c.op)
	}
	for _, c := range []struct {
		op   singletable.SortOp
		want []string
	}{
		{singletable.Eq, []string{"p1"}}, {singletable.Lt, nil}, {singletable.Le, []string{"p1"}},
		{singletable.Gt, []string{"p2"}}, {singletable.Ge, []string{"p1", "p2"}},
	} {
		got, err := tasks.QueryIndex("GSI1", FmtTask{User: "py", Created: sec}).Where("ID", c.op, "p1").Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, c.want, taskIDs(got), "GSI1 Created = s, ID %v p1", c.op)
	}
	day, err := tasks.QueryIndex("GSI1", FmtTask{User: "py"}).BeginsWith("Created", "2025-01-15T11:00").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"p1", "p2", "p3"}, taskIDs(day))
}

func taskIDs(ts []FmtTask) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// Dates: "SK = between(MEAL#2024-01-01, MEAL#2024-01-31)" as the goals
// service writes it, and BeginsWith on a month.
func TestKeyFormatsDates(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	tbl, c := r.tbl, r.c
	ctx := context.Background()
	meals := r.meals
	for _, d := range []string{"2023-12-31", "2024-01-01", "2024-01-15", "2024-01-31", "2024-02-01"} {
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#123", "SK": "MEAL#" + d, "EntityType": "Meal", "user_id": "123", "name": "meal " + d,
			"date": d + "T00:00:00Z"})
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	jan, err := meals.Query(Meal{User: "123"}).Between("Day", day("2024-01-01"), day("2024-01-31")).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"2024-01-01", "2024-01-15", "2024-01-31"}, mealDays(jan))
	month, err := meals.Query(Meal{User: "123"}).BeginsWith("Day", "2024-01").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"2024-01-01", "2024-01-15", "2024-01-31"}, mealDays(month))
	after, err := meals.Query(Meal{User: "123"}).Where("Day", singletable.Gt, day("2024-01-31")).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"2024-02-01"}, mealDays(after))
	m, err := meals.Get(ctx, Meal{User: "123", Day: day("2024-01-15")})
	require.NoError(t, err)
	assert.Equal(t, "meal 2024-01-15", m.Name)
	_, err = meals.Put(ctx, Meal{User: "123", Day: day("2024-03-01"), Name: "go"})
	require.NoError(t, err)
	assert.NotNil(t, rawGetFormats(t, c, tbl.Name(), "USER#123", "MEAL#2024-03-01"))
}

func mealDays(ms []Meal) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Day.Format(time.DateOnly))
	}
	return out
}

// Cursors resume formatted ranges exactly, and a cursor of one range is
// refused for another.
func TestKeyFormatsCursors(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	ctx := context.Background()
	candidates := r.candidates
	names := []string{"A", "A B", "A\x00", "AB", "B", "B C", "C", "D", "E"}
	for _, n := range names {
		_, err := candidates.Put(ctx, RawCandidate{Election: "e", Name: n})
		require.NoError(t, err)
	}
	for _, desc := range []bool{false, true} {
		q := candidates.Query(RawCandidate{Election: "e"}).Where("Name", singletable.Gt, "A").Limit(2)
		if desc {
			q = q.Desc()
		}
		var all []string
		cur := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			p, err := q.After(cur).Page(ctx)
			require.NoError(t, err)
			all = append(all, candidateNamesFormats(p.Items)...)
			if cur = p.Cursor; cur == "" {
				break
			}
			// The cursor of a Gt "A" range does not resume a Lt "A" query.
			_, err = candidates.Query(RawCandidate{Election: "e"}).Where("Name", singletable.Lt, "A").After(cur).Page(ctx)
			assert.ErrorIs(t, err, singletable.ErrInvalidCursor)
		}
		want := []string{"A\x00", "A B", "AB", "B", "B C", "C", "D", "E"}
		if desc {
			for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
				want[i], want[j] = want[j], want[i]
			}
		}
		assert.Equal(t, want, all, "desc %v", desc)
	}
}

// An update of a field in a formatted index key re-renders that key in
// its format (not the library's), so the other service still finds it.
func TestKeyFormatsUpdateKeepsFormat(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	tbl, c := r.tbl, r.c
	ctx := context.Background()
	tasks := r.tasks
	at := time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)
	rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#123", "SK": "TASK#456", "EntityType": "Task", "user_id": "123", "task_id": "456",
		"status": "OPEN", "created_at": at.Format(time.RFC3339), "GSI1PK": "USER#123", "GSI1SK": "2024-01-07T10:00:00Z#456",
		"GSI2PK": "STATUS#OPEN", "GSI2SK": "CREATED_AT#2024-01-07T10:00:00.000Z"})
	_, err := tasks.Update(FmtTask{User: "123", ID: "456"}).Set("Created", at.Add(90*time.Minute+250*time.Millisecond)).Run(ctx)
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke, "rfc3339 in GSI1SK cannot hold the milliseconds")
	_, err = tasks.Update(FmtTask{User: "123", ID: "456"}).Set("Created", at.Add(90*time.Minute)).Set("Status", "DONE").Run(ctx)
	require.NoError(t, err)
	item := rawGetFormats(t, c, tbl.Name(), "USER#123", "TASK#456")
	assert.Equal(t, "2024-01-07T11:30:00Z#456", attrS(item, "GSI1SK"))
	assert.Equal(t, "STATUS#DONE", attrS(item, "GSI2PK"))
	assert.Equal(t, "CREATED_AT#2024-01-07T11:30:00.000Z", attrS(item, "GSI2SK"))
}

// Values a format cannot write exactly are a *KeyError naming the field,
// before any request; nothing is written.
func TestKeyFormatsRefuseBeforeTheNetwork(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	c := r.c
	ctx := context.Background()
	events := r.events
	candidates := r.candidates
	tasks := r.tasks
	meals := r.meals
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	cases := []struct {
		name, field string
		call        func() error
	}{
		{"negative %08d", "Seq", func() error { _, err := events.Put(ctx, LogEvent{Seq: -1, At: at}); return err }},
		{"wider than %08d", "Seq", func() error { _, err := events.Put(ctx, LogEvent{Seq: 123456789, At: at}); return err }},
		{"rfc3339 with milliseconds", "At", func() error { _, err := events.Put(ctx, LogEvent{Seq: 1, At: at.Add(time.Millisecond)}); return err }},
		{"get with milliseconds", "At", func() error { _, err := events.Get(ctx, LogEvent{Seq: 1, At: at.Add(time.Millisecond)}); return err }},
		{"query bound wider than %08d", "Seq", func() error {
			_, err := events.Query(LogEvent{}).Where("Seq", singletable.Ge, 1e9).Collect(ctx)
			return err
		}},
		{"raw with its delimiter", "Skill", func() error {
			_, err := r.skills.Put(ctx, RawSkill{User: "u", Skill: "c#", Years: 3})
			return err
		}},
		{"query with a raw value holding its delimiter", "Skill", func() error {
			_, err := r.skills.Query(RawSkill{User: "u"}).Where("Skill", singletable.Eq, "c#").Collect(ctx)
			return err
		}},
		{"raw with U+10FFFF", "Name", func() error {
			_, err := candidates.Put(ctx, RawCandidate{Election: "e", Name: "x\U0010FFFF"})
			return err
		}},
		{"raw invalid UTF-8", "Name", func() error { _, err := candidates.Put(ctx, RawCandidate{Election: "e", Name: "\xff"}); return err }},
		{"index key rfc3339 with nanoseconds", "Created", func() error {
			_, err := tasks.Put(ctx, FmtTask{User: "u", ID: "1", Created: at.Add(1), Status: "OPEN"})
			return err
		}},
		{"date with a time of day", "Day", func() error { _, err := meals.Put(ctx, Meal{User: "u", Day: at}); return err }},
		{"BeginsWith outside the alphabet", "Day", func() error {
			_, err := meals.Query(Meal{User: "u"}).BeginsWith("Day", "2024/01").Collect(ctx)
			return err
		}},
		{"BeginsWith raw prefix with the delimiter", "Skill", func() error {
			_, err := r.skills.Query(RawSkill{User: "u"}).BeginsWith("Skill", "c#").Collect(ctx)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.requests.Load()
			err := tc.call()
			var ke *singletable.KeyError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, before, c.requests.Load(), "no request sent")
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	// An empty raw value is a missing key field, as an empty string is.
	_, err := candidates.Put(ctx, RawCandidate{Election: "e"})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, []string{"Name"}, ke.Missing)
}

// Define refuses a format on a field it cannot write, and a delimiter the
// format can produce.
func TestKeyFormatsDefineErrors(t *testing.T) {
	t.Parallel()
	type E struct {
		Name string
		N    int
		At   time.Time
	}
	cases := []struct{ pk, sk, want string }{
		{"A#{N:raw}", "X", "raw"},
		{"A#{Name:rfc3339}", "X", "time.Time"},
		{"A#{At:%08d}", "X", "integer"},
		{"A#{N:unix}", "X", "time.Time"},
		{"A#{Name}", "{At:rfc3339}-{N}", "cannot contain"},
		{"A#{Name}", "{N:%08d}1", "cannot contain"},
		{"A#{Name:raw}é", "X", "ASCII"},
		{"A#{Name:iso}", "X", "unknown key format"},
	}
	for _, c := range cases {
		_, err := singletable.Define(singletable.Schema[E]{Type: "E", PK: c.pk, SK: c.sk})
		var ve *singletable.ValidationError
		if assert.ErrorAs(t, err, &ve, "%s / %s", c.pk, c.sk) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// Describe and the query description show each placeholder's format.
func TestKeyFormatsDescribe(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "t")
	tasks := singletable.MustBind(tbl, fmtTasks)
	d := tasks.Describe()
	require.Len(t, d.Indexes, 2)
	assert.Equal(t, []describe.KeyPart{{Field: "Created", Format: "rfc3339"}, {Literal: "#"}, {Field: "ID", Format: "raw"}}, d.Indexes[0].SK.Parts)
	assert.Equal(t, "GSI1SK = {Created:rfc3339}#{ID:raw}", "GSI1SK = "+d.Indexes[0].SK.Template)
	q := tasks.QueryIndex("GSI1", FmtTask{}).Where("Created", singletable.Gt, nil).Describe()
	assert.Equal(t, "GSI1SK > {Created:rfc3339}", q.Sort)
	q = tasks.QueryIndex("GSI1", FmtTask{}).Where("Created", singletable.Eq, nil).Describe()
	assert.Equal(t, "begins_with(GSI1SK, {Created:rfc3339}#)", q.Sort)
}

// A raw value before a delimiter: Where(Eq) on it is exact on the field
// boundary ("machine" never matches "machine learning"), and the fields
// after it compare as usual.
func TestKeyFormatsRawBeforeDelimiter(t *testing.T) {
	t.Parallel()
	r := formatTables(t)
	ctx := context.Background()
	for _, s := range []RawSkill{{"u", "machine", 1}, {"u", "machine", 3}, {"u", "machine learning", 2}, {"u", "machine-learning", 4}, {"u", "mach", 5}} {
		_, err := r.skills.Put(ctx, s)
		require.NoError(t, err)
	}
	item := rawGetFormats(t, r.c, r.tbl.Name(), "USER#u", "SKILL#machine learning#02")
	require.NotNil(t, item)
	years := func(ss []RawSkill) []int {
		var out []int
		for _, s := range ss {
			out = append(out, s.Years)
		}
		return out
	}
	for _, c := range []struct {
		q    *singletable.Query[RawSkill]
		want []int
	}{
		{r.skills.Query(RawSkill{User: "u"}).Where("Skill", singletable.Eq, "machine"), []int{1, 3}},
		{r.skills.Query(RawSkill{User: "u"}).Where("Skill", singletable.Eq, "machine learning"), []int{2}},
		{r.skills.Query(RawSkill{User: "u"}).Where("Skill", singletable.Eq, "mach"), []int{5}},
		{r.skills.Query(RawSkill{User: "u", Skill: "machine"}).Where("Years", singletable.Gt, 1), []int{3}},
		{r.skills.Query(RawSkill{User: "u", Skill: "machine"}).Where("Years", singletable.Lt, 3), []int{1}},
		{r.skills.Query(RawSkill{User: "u", Skill: "machine"}).Where("Years", singletable.Eq, 3), []int{3}},
		{r.skills.Query(RawSkill{User: "u"}).BeginsWith("Skill", "machine"), []int{2, 1, 3, 4}}, // key order: " " < "#" < "-",
	} {
		got, err := c.q.Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, c.want, years(got), c.q.Describe().Sort)
	}
}

// SkillUse keeps tagged times in a multi-attribute index, as the skills
// service's design keys its GSI2: LastUsedDate a bare date, here with a
// second sort attribute in epoch seconds.
type SkillUse struct {
	User  string    `dynamodbav:"Username"`
	Skill string    `dynamodbav:"SkillName"`
	Day   time.Time `dynamodbav:"LastUsedDate,date"`
	At    time.Time `dynamodbav:"SeenAt,unix"`
}

// A time field with a tag option is stored in a multi-attribute index key
// in that option's shape (a date S, epoch seconds N), so another
// service's items, written in that shape, are in the index and found by
// its queries, and the library's are found by the other service's key
// conditions.
func TestKeyFormatsMultiAttributeTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := singletable.MustDefine(singletable.Schema[SkillUse]{
		Type: "SkillUse", PK: "USER#{User:raw}", SK: "SKILL#{Skill:raw}",
		Indexes: []singletable.IndexSchema[SkillUse]{
			{Name: "GSI2", PartitionAttrs: []string{"Skill"}, SortAttrs: []string{"Day"}},
			{Name: "GSI3", PartitionAttrs: []string{"Skill"}, SortAttrs: []string{"At"}},
		},
	})
	var r *singletable.Repo[SkillUse]
	tbl, c := newTable(t, func(tbl *singletable.Table) { r = singletable.MustBind(tbl, e) })
	desc, err := c.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl.Name())})
	require.NoError(t, err)
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range desc.Table.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	assert.Equal(t, types.ScalarAttributeTypeS, attrTypes["LastUsedDate"])
	assert.Equal(t, types.ScalarAttributeTypeN, attrTypes["SeenAt"], "unix is a number")

	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	// Another service's items: a date string and epoch seconds.
	for i, d := range []string{"2023-12-31", "2024-01-01", "2024-01-02"} {
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#u" + d, "SK": "SKILL#python", "EntityType": "SkillUse",
			"Username": "u" + d, "SkillName": "python", "LastUsedDate": d, "SeenAt": 1704067200 + i*86400 - 86400})
	}
	// The library's: stored in the same shapes, a time of day cut to its date.
	_, err = r.Put(ctx, SkillUse{User: "lib", Skill: "python", Day: day("2024-01-01").Add(15 * time.Hour), At: time.Unix(1704067200, 0)})
	require.NoError(t, err)
	item := rawGetFormats(t, c, tbl.Name(), "USER#lib", "SKILL#python")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-01"}, item["LastUsedDate"])
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1704067200"}, item["SeenAt"])

	users := func(q *singletable.Query[SkillUse]) []string {
		t.Helper()
		got, err := q.Collect(ctx)
		require.NoError(t, err)
		out := []string{}
		for _, s := range got {
			out = append(out, s.User)
		}
		return out
	}
	q := r.QueryIndex("GSI2", SkillUse{Skill: "python", Day: day("2024-01-01")})
	// Ties (lib and u2024-01-01 share a day and a second) come in no
	// promised order.
	assert.ElementsMatch(t, []string{"lib", "u2024-01-01"}, users(q.Where("Day", singletable.Eq, day("2024-01-01"))))
	assert.Equal(t, []string{"u2024-01-02"}, users(q.Where("Day", singletable.Gt, day("2024-01-01"))))
	assert.Equal(t, []string{"u2023-12-31"}, users(q.Where("Day", singletable.Lt, day("2024-01-01"))))
	le := users(q.Where("Day", singletable.Le, day("2024-01-01")))
	require.Len(t, le, 3)
	assert.Equal(t, "u2023-12-31", le[0])
	assert.ElementsMatch(t, []string{"lib", "u2024-01-01"}, le[1:])
	ge := users(r.QueryIndex("GSI2", SkillUse{Skill: "python"}).Where("Day", singletable.Ge, day("2024-01-01").Add(23*time.Hour)))
	require.Len(t, ge, 3, "a time of day is its date")
	assert.ElementsMatch(t, []string{"lib", "u2024-01-01"}, ge[:2])
	assert.Equal(t, "u2024-01-02", ge[2])
	ge = users(r.QueryIndex("GSI3", SkillUse{Skill: "python"}).Where("At", singletable.Ge, time.Unix(1704067200, 0)))
	require.Len(t, ge, 3)
	assert.ElementsMatch(t, []string{"lib", "u2024-01-01"}, ge[:2])
	assert.Equal(t, "u2024-01-02", ge[2])
	got, err := r.Get(ctx, SkillUse{User: "u2024-01-02", Skill: "python"})
	require.NoError(t, err)
	assert.Equal(t, day("2024-01-02"), got.Day)

	// The other service's key condition finds the library's item.
	out, err := c.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(tbl.Name()), IndexName: aws.String("GSI2"),
		KeyConditionExpression:   aws.String("#s = :s AND #d = :d"),
		ExpressionAttributeNames: map[string]string{"#s": "SkillName", "#d": "LastUsedDate"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": &types.AttributeValueMemberS{Value: "python"}, ":d": &types.AttributeValueMemberS{Value: "2024-01-01"}}})
	require.NoError(t, err)
	assert.Len(t, out.Items, 2)

	// An update moves the index attributes in the same shapes.
	_, err = r.Update(SkillUse{User: "lib", Skill: "python"}).Set("Day", day("2024-06-01")).Set("At", time.Unix(1717200000, 0)).Run(ctx)
	require.NoError(t, err)
	item = rawGetFormats(t, c, tbl.Name(), "USER#lib", "SKILL#python")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-06-01"}, item["LastUsedDate"])
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1717200000"}, item["SeenAt"])
}

// PyGoal is a goal keyed as a Python service keys it: GSI1SK is
// f'{created_at.isoformat()}#{goal_id}', Day a zone-less layout, Slot a
// time of day, and Seen epoch seconds another service stores as an S.
type PyGoal struct {
	User    string    `dynamodbav:"user_id"`
	ID      string    `dynamodbav:"goal_id"`
	Created time.Time `dynamodbav:"created_at,isoformat"`
	Local   time.Time `dynamodbav:"local_at,layout=2006-01-02T15:04:05"`
	Slot    time.Time `dynamodbav:"slot,layout=15:04:05"`
	Seen    time.Time `dynamodbav:"seen,unixtime,string"`
}

var pyGoals = singletable.MustDefine(singletable.Schema[PyGoal]{
	Type: "PyGoal", PK: "USER#{User:raw}", SK: "GOAL#{ID:raw}",
	Indexes: []singletable.IndexSchema[PyGoal]{
		{Name: "GSI1", PK: "GOALS#{User:raw}", SK: "{Created:isoformat}#{ID:raw}"},
		{Name: "GSI2", PK: "LOCAL#{User:raw}", SK: "{Local:2006-01-02T15:04:05}#{Slot:15:04:05}#{ID:raw}"},
	},
})

// isoformat keys at second and microsecond boundaries, as Python's
// isoformat() writes them (aware and naive), found by ranges; zone-less
// and time-of-day layouts; epoch seconds in an S.
func TestKeyFormatsISOFormatAndLayouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var r *singletable.Repo[PyGoal]
	tbl, c := newTable(t, func(tbl *singletable.Table) { r = singletable.MustBind(tbl, pyGoals) })
	sec := time.Date(2024, 1, 10, 10, 0, 0, 0, time.UTC)
	us := time.Microsecond
	items := []struct {
		id  string
		at  time.Time
		key string // gsi1_sk as Python writes it
	}{
		{"459", sec.Add(-us), "2024-01-10T09:59:59.999999+00:00#459"},
		{"460", sec, "2024-01-10T10:00:00+00:00#460"},
		{"461", sec.Add(us), "2024-01-10T10:00:00.000001+00:00#461"},
		{"462", sec.Add(us), "2024-01-10T10:00:00.000001#462"}, // naive utcnow()
		{"463", sec.Add(time.Second), "2024-01-10T10:00:01#463"},
	}
	for _, it := range items {
		rawPutFormats(t, c, tbl.Name(), map[string]any{"PK": "USER#u", "SK": "GOAL#" + it.id, "EntityType": "PyGoal",
			"user_id": "u", "goal_id": it.id, "created_at": strings.TrimSuffix(it.key, "#"+it.id),
			"GSI1PK": "GOALS#u", "GSI1SK": it.key, "local_at": "2024-01-10T11:00:00", "slot": "08:30:00", "seen": "1736937000",
			"GSI2PK": "LOCAL#u", "GSI2SK": "2024-01-10T11:00:00#08:30:00#" + it.id})
	}
	ids := func(q *singletable.Query[PyGoal]) []string {
		t.Helper()
		got, err := q.Collect(ctx)
		require.NoError(t, err)
		out := []string{}
		for _, g := range got {
			out = append(out, g.ID)
		}
		return out
	}
	for _, c := range []struct {
		at   time.Time
		op   singletable.SortOp
		want []string
	}{
		{sec, singletable.Ge, []string{"460", "462", "461", "463"}}, // a range starting at the second finds 460
		{sec, singletable.Gt, []string{"462", "461", "463"}},
		{sec, singletable.Lt, []string{"459"}},
		{sec, singletable.Le, []string{"459", "460"}},
		{sec.Add(us), singletable.Eq, []string{"461"}}, // the naive 462 at the bound's instant: the documented miss
		{sec.Add(us), singletable.Gt, []string{"463"}},
		{sec.Add(us), singletable.Le, []string{"459", "460", "462", "461"}},
	} {
		assert.Equal(t, c.want, ids(r.QueryIndex("GSI1", PyGoal{User: "u"}).Where("Created", c.op, c.at)), "%v %v", c.op, c.at)
	}
	g, err := r.Get(ctx, PyGoal{User: "u", ID: "462"})
	require.NoError(t, err)
	assert.True(t, g.Created.Equal(sec.Add(us)), "naive isoformat read as UTC: %v", g.Created)
	assert.Equal(t, time.Date(2024, 1, 10, 11, 0, 0, 0, time.UTC), g.Local)
	assert.Equal(t, time.Date(0, 1, 1, 8, 30, 0, 0, time.UTC), g.Slot)
	assert.True(t, g.Seen.Equal(time.Unix(1736937000, 0)), "epoch seconds in an S: %v", g.Seen)
	assert.Equal(t, []string{"459", "460", "461", "462", "463"}, ids(r.QueryIndex("GSI2", PyGoal{User: "u", Local: g.Local}).Where("Slot", singletable.Eq, g.Slot)))

	// The library writes the canonical forms.
	mine := PyGoal{User: "v", ID: "1", Created: sec.Add(us), Local: g.Local, Slot: g.Slot, Seen: time.Unix(1736937000, 0)}
	_, err = r.Put(ctx, mine)
	require.NoError(t, err)
	item := rawGetFormats(t, c, tbl.Name(), "USER#v", "GOAL#1")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-10T10:00:00.000001+00:00#1"}, item["GSI1SK"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-10T10:00:00.000001+00:00"}, item["created_at"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-10T11:00:00#08:30:00#1"}, item["GSI2SK"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "1736937000"}, item["seen"])
	// A field stored with the same option is cut to what it stores
	// before its key is rendered, so key and attribute agree.
	_, err = r.Put(ctx, PyGoal{User: "v", ID: "2", Created: sec.Add(us + time.Nanosecond), Local: g.Local, Slot: sec.Add(8 * time.Hour)})
	require.NoError(t, err)
	item = rawGetFormats(t, c, tbl.Name(), "USER#v", "GOAL#2")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-10T10:00:00.000001+00:00#2"}, item["GSI1SK"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "2024-01-10T11:00:00#18:00:00#2"}, item["GSI2SK"])
}
