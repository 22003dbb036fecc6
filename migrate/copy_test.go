package migrate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/batchread"
	"github.com/singletable-go/singletable/migrate"
)

// The skills service: copy the legacy users table into glad-entities.
func TestMigrateCopy20k(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 20000
	const deleted = n / 100 // legacyItem soft-deletes every 100th user
	src := newLegacyTable(t, n)
	tbl, users, _ := usersTarget(t)
	copyUsers := migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users))
	copyUsers.Description = "legacy users → glad-entities"
	m, err := migrate.New(tbl, copyUsers)
	require.NoError(t, err)

	var last migrate.Progress
	calls := 0
	start := time.Now()
	rep, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) {
		o.Segments, o.Writers = 4, 8
		o.ProgressInterval = 100 * time.Millisecond
		o.Progress = func(p migrate.Progress) { calls++; last = p }
	})
	require.NoError(t, err)
	t.Logf("copied %d items in %v (%.0f items/s), %d progress calls", n, time.Since(start), float64(n)/time.Since(start).Seconds(), calls)

	want := migrate.Counts{Scanned: n, Read: n, Written: n - deleted, Skipped: deleted}
	assert.Equal(t, want, rep.Counts)
	assert.Equal(t, rep.Counts.Read, rep.Counts.Written+rep.Counts.Skipped+rep.Counts.Failed)
	assert.Equal(t, migrate.Completed, rep.State)
	assert.Equal(t, map[string]int64{"User put": n - deleted}, rep.Ops)
	assert.Equal(t, int64(n-deleted), rep.WCU, "every user is under 1 KB: one WCU each")
	assert.Equal(t, 4, rep.Segments)
	assert.False(t, rep.Resumed)
	assert.True(t, last.Done)
	assert.Equal(t, want, last.Counts)
	assert.Equal(t, int64(n), last.Total, "DescribeTable's ItemCount")

	// Every user is readable through the repository, exactly as it was.
	keys := make([]User, n)
	for i := range keys {
		keys[i] = User{Username: fmt.Sprintf("user%05d", i)}
	}
	got, err := batchread.Get(ctx, users, keys, nil)
	require.NoError(t, err)
	byName := make(map[string]User, len(got))
	for _, u := range got {
		byName[u.Username] = u
	}
	assert.Len(t, got, n-deleted)
	for i, k := range keys {
		u, ok := byName[k.Username]
		if i%100 == 42 {
			assert.False(t, ok, "soft-deleted user %d was copied", i)
			continue
		}
		require.True(t, ok, "user %d missing", i)
		created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		require.Equal(t, fmt.Sprintf("User Number %d", i), u.Name)
		require.True(t, u.CreatedAt.Equal(created), "user %d created %v", i, u.CreatedAt)
		require.True(t, u.UpdatedAt.Equal(created.Add(time.Hour)))
	}

	var vlast migrate.Progress
	calls = 0
	vr, err := m.Verify(ctx, "000-users", func(o *migrate.VerifyOptions) {
		o.ProgressInterval = 100 * time.Millisecond
		o.Progress = func(p migrate.Progress) { calls++; vlast = p }
	})
	require.NoError(t, err)
	t.Logf("verified in %v, %d progress calls", vlast.Elapsed, calls)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Equal(t, map[string]int64{"User": n - deleted}, vr.Expected)
	assert.Equal(t, map[string]int64{"User": n - deleted}, vr.Found)
	assert.Equal(t, int64(n), vr.SourceItems)
	assert.Equal(t, int64(n-deleted), vr.Compared)
	// The last progress call: the source's items and then the table's
	// (the users and the ledger's items) scanned, as DescribeTable counts
	// them, and every copied user compared.
	assert.True(t, vlast.Done)
	assert.Equal(t, vr.Compared, vlast.Read)
	assert.Greater(t, vlast.Scanned, int64(n+n-deleted))
	assert.Equal(t, vlast.Total, vlast.Scanned)

	// Finished: a second run does nothing.
	again, err := m.Run(ctx, "000-users")
	require.NoError(t, err)
	assert.True(t, again.AlreadyCompleted)
	assert.Equal(t, want, again.Counts)

	st, err := m.Status(ctx)
	require.NoError(t, err)
	require.Len(t, st, 1)
	assert.Equal(t, migrate.Completed, st[0].State)
	assert.Equal(t, want, st[0].Counts)
	assert.Equal(t, 1, st[0].Runs)
	assert.Equal(t, "copy", st[0].Kind)
	assert.Equal(t, "legacy users → glad-entities", st[0].Description)
	assert.Equal(t, 4, st[0].SegmentsDone)
	assert.Len(t, ledgerItems(t, tbl), 1+4, "a header and four segment checkpoints")
}

// The copy cancelled at a random point and run again ends as an
// uninterrupted copy does. 4,000 users in pages of 200: 20 pages, five
// checkpoints per segment, about 160 batch writes to cancel among.
func TestMigrateCopyResume(t *testing.T) {
	t.Parallel()
	const n, pageSize = 4000, 200
	src := newLegacyTable(t, n)
	rc := &recordingClient{Client: ddblocal.Shared(t).Client()}
	tbl, users := usersTargetVia(t, rc)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAt := 10 + rand.Int64N(130) // of about 160 batch writes
	rc.onBatch = func(n int64) {
		if n == stopAt {
			cancel()
		}
	}
	first, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) { o.Segments, o.PageSize = 4, pageSize })
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, first)
	assert.Equal(t, migrate.Interrupted, first.State)
	t.Logf("cancelled at batch %d: %+v checkpointed", stopAt, first.Counts)
	st, err := m.Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, migrate.Interrupted, st[0].State)
	assert.Equal(t, first.Counts, st[0].Counts)
	assert.Contains(t, st[0].LastError, "context canceled")

	// Resume: a different segment count is ignored, the recorded one is used.
	rc.onBatch = nil
	second, err := m.Run(context.Background(), "000-users", func(o *migrate.RunOptions) { o.Segments, o.PageSize = 7, pageSize })
	require.NoError(t, err)
	assert.Equal(t, 4, second.Segments)
	assert.Equal(t, first.Counts.Read > 0, second.Resumed)
	assert.Equal(t, migrate.Counts{Scanned: n, Read: n, Written: n - n/100, Skipped: n / 100}, second.Counts,
		"pages redone after the cancel are counted once")

	rc.mu.Lock()
	assert.Empty(t, rc.conflicting, "items written twice with different content")
	t.Logf("%d items written again, with the same content", rc.rewrites)
	rc.mu.Unlock()

	// The same copy uninterrupted, into another table: same final state.
	ref, refUsers, _ := usersTarget(t)
	mref, err := migrate.New(ref, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(refUsers)))
	require.NoError(t, err)
	_, err = mref.Run(context.Background(), "000-users")
	require.NoError(t, err)
	got, want := contents(t, tbl), contents(t, ref)
	assert.Len(t, got, n-n/100)
	assert.Equal(t, want, got)

	// One completed migration in the ledger, after two runs.
	var headers []map[string]types.AttributeValue
	for _, it := range ledgerItems(t, tbl) {
		if attrS(it, "SK") == "STATUS" {
			headers = append(headers, it)
		}
	}
	require.Len(t, headers, 1)
	assert.Equal(t, "completed", attrS(headers[0], "Status"))
	assert.Equal(t, "2", attrN(headers[0], "Runs"))
	assert.Equal(t, fmt.Sprint(n), attrN(headers[0], "Read"))
}

func TestMigrateCopyDryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 500)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "000-users", func(o *migrate.RunOptions) { o.DryRun = true; o.PageSize = 100 })
	require.NoError(t, err)
	assert.True(t, rep.DryRun)
	assert.Equal(t, migrate.Counts{Scanned: 500, Read: 500, Written: 495, Skipped: 5}, rep.Counts)
	assert.Equal(t, map[string]int64{"User put": 495}, rep.Ops)
	assert.Equal(t, int64(495), rep.WCU)
	assert.Equal(t, migrate.Pending, rep.State)
	assert.Empty(t, scanRaw(t, tbl.Client(), tbl.Name()), "a dry run writes nothing, not even the ledger")
}

// Items whose transform fails, or whose ops are invalid, are reported one
// by one; the migration is recorded as failed and starts over next time.
// A transform may also make several ops of an item.
func TestMigrateCopyFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := make([]map[string]types.AttributeValue, 300)
	for i := range items {
		items[i] = legacyItem(i)
	}
	items[7]["created_at"] = &types.AttributeValueMemberS{Value: "yesterday"} // cannot decode
	items[8]["name"] = &types.AttributeValueMemberS{Value: "no-key"}          // transform makes an invalid op
	src := newRawTable(t, "username", items)
	tbl, users, skills := usersTarget(t)
	transform := migrate.TransformAs(func(u legacyUser) ([]singletable.WriteOp, error) {
		switch {
		case u.Deleted:
			return nil, nil
		case u.Name == "no-key":
			return []singletable.WriteOp{users.PutOp(User{Name: u.Name})}, nil
		}
		ops := []singletable.WriteOp{users.PutOp(User{Username: u.Username, Name: u.Name, CreatedAt: u.CreatedAt})}
		if u.Username[len(u.Username)-1] == '0' {
			ops = append(ops, skills.PutOp(UserSkill{Username: u.Username, SkillName: "legacy", Level: "Beginner"}))
		}
		return ops, nil
	})
	m, err := migrate.New(tbl, migrate.Copy("users-and-skills", migrate.Source{Table: src}, transform))
	require.NoError(t, err)

	rep, err := m.Run(ctx, "users-and-skills", func(o *migrate.RunOptions) { o.PageSize = 64; o.Segments = 2 })
	var me *migrate.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, int64(2), me.Failed)
	assert.Equal(t, migrate.Failed, rep.State)
	assert.Equal(t, migrate.Counts{Scanned: 300, Read: 300, Written: 295, Skipped: 3, Failed: 2}, rep.Counts)
	assert.Equal(t, map[string]int64{"User put": 295, "UserSkill put": 30}, rep.Ops, "usernames ending in 0 also get a skill")
	require.Len(t, rep.Failures, 2)
	byUser := map[string]error{}
	for _, f := range rep.Failures {
		byUser[attrS(f.Key, "username")] = f.Err
	}
	assert.ErrorContains(t, byUser["user00007"], "decode")
	var ke *singletable.KeyError
	assert.ErrorAs(t, byUser["user00008"], &ke)
	assert.Equal(t, migrate.Failed, must(m.Status(ctx))[0].State)

	// Fix the source and run again: the migration starts over and completes.
	fixed := map[string]types.AttributeValue{}
	for k, v := range legacyItem(7) {
		fixed[k] = v
	}
	seedRaw(t, ddblocal.Shared(t).Client(), src, []map[string]types.AttributeValue{fixed, legacyItem(8)})
	rep, err = m.Run(ctx, "users-and-skills")
	require.NoError(t, err)
	assert.False(t, rep.Resumed)
	assert.Equal(t, migrate.Counts{Scanned: 300, Read: 300, Written: 297, Skipped: 3}, rep.Counts)
	st := must(m.Status(ctx))[0]
	assert.Equal(t, migrate.Completed, st.State)
	assert.Equal(t, 2, st.Runs)
	vr, err := m.Verify(ctx, "users-and-skills")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Equal(t, map[string]int64{"User": 297, "UserSkill": 30}, vr.Expected)
}

// A transform's op that a batch cannot carry fails its item and no other:
// a create (only a Tx sends it) is refused when the transform returns it,
// a put with WriteOptions when BatchWrite refuses its batch before
// sending, after which the batch's other ops are written.
func TestMigrateCopyOpsABatchCannotCarry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 100)
	tbl, users, _ := usersTarget(t)
	transform := migrate.TransformAs(func(u legacyUser) ([]singletable.WriteOp, error) {
		v := User{Username: u.Username, Name: u.Name}
		switch {
		case u.Deleted:
			return nil, nil
		case strings.HasSuffix(u.Username, "3"):
			return []singletable.WriteOp{users.CreateOp(v)}, nil
		case strings.HasSuffix(u.Username, "5"):
			return []singletable.WriteOp{users.PutOp(v, func(o *singletable.WriteOptions) { o.MustExist = true })}, nil
		}
		return []singletable.WriteOp{users.PutOp(v)}, nil
	})
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, transform))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "000-users")
	var me *migrate.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, migrate.Counts{Scanned: 100, Read: 100, Written: 79, Skipped: 1, Failed: 20}, rep.Counts)
	assert.Equal(t, map[string]int64{"User put": 79}, rep.Ops)
	for _, f := range rep.Failures {
		var ve *singletable.ValidationError
		assert.ErrorAs(t, f.Err, &ve, "%v", f.Key)
	}
	assert.Len(t, contents(t, tbl), 79, "every put the batches could carry was written")
}

// Verify finds what differs after a copy.
func TestMigrateVerifyFindsDifferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 400)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	_, err = m.Run(ctx, "000-users")
	require.NoError(t, err)

	_, err = users.Update(User{Username: "user00010"}).Set("Name", "Changed").Run(ctx)
	require.NoError(t, err)
	_, err = users.Delete(ctx, User{Username: "user00011"})
	require.NoError(t, err)
	vr, err := m.Verify(ctx, "000-users")
	require.NoError(t, err)
	assert.False(t, vr.OK())
	assert.Equal(t, int64(1), vr.Missing)
	assert.Equal(t, int64(1), vr.Different)
	assert.Equal(t, int64(395), vr.Found["User"])
	assert.Equal(t, int64(396), vr.Expected["User"])
	require.Len(t, vr.Differences, 2)
	for _, d := range vr.Differences {
		switch d.Kind {
		case "different":
			assert.Equal(t, "USER#user00010", attrS(d.Key, "PK"))
			assert.Equal(t, []string{"Name"}, d.Attrs)
		case "missing":
			assert.Equal(t, "USER#user00011", attrS(d.Key, "PK"))
		default:
			t.Errorf("unexpected difference %v", d)
		}
	}

	// A sample compares fewer items, the same ones every time; counts
	// still cover everything.
	s1, err := m.Verify(ctx, "000-users", func(o *migrate.VerifyOptions) { o.Sample = 0.1 })
	require.NoError(t, err)
	s2, err := m.Verify(ctx, "000-users", func(o *migrate.VerifyOptions) { o.Sample = 0.1 })
	require.NoError(t, err)
	assert.Less(t, s1.Compared, int64(100))
	assert.Equal(t, s1.Compared, s2.Compared)
	assert.Equal(t, int64(395), s1.Found["User"])
}

func TestMigrateRegistry(t *testing.T) {
	tbl := singletable.NewTable(nil, "t")
	users := singletable.MustBind(tbl, Users)
	tf := usersTransform(users)
	cases := []struct {
		name string
		ms   []migrate.Migration
	}{
		{"empty ID", []migrate.Migration{migrate.Copy("", migrate.Source{Table: "x"}, tf)}},
		{"bad character", []migrate.Migration{migrate.Copy("a/b", migrate.Source{Table: "x"}, tf)}},
		{"duplicate", []migrate.Migration{
			migrate.Copy("a", migrate.Source{Table: "x"}, tf),
			migrate.Backfill("a", users),
		}},
		{"zero migration", []migrate.Migration{{ID: "a"}}},
		{"copy without source", []migrate.Migration{migrate.Copy("a", migrate.Source{}, tf)}},
		{"copy without transform", []migrate.Migration{migrate.Copy("a", migrate.Source{Table: "x"}, nil)}},
		{"backfill of another table", []migrate.Migration{
			migrate.Backfill("a", singletable.MustBind(singletable.NewTable(nil, "other"), Users)),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := migrate.New(tbl, c.ms...)
			var ve *singletable.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.ErrorContains(t, err, "singletable:")
		})
	}
	m, err := migrate.New(tbl, migrate.Backfill("b", users))
	require.NoError(t, err)
	_, err = m.Run(context.Background(), "nope")
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A run holding the lease keeps others out; a lease left by a crashed run
// blocks until it expires, and then the next run resumes.
func TestMigrateLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newLegacyTable(t, 200)
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	// A run held part-way by a gate holds the migration, however fast or
	// slow the machine.
	g := newGate()
	held, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, g.transform(usersTransform(users))))
	require.NoError(t, err)
	defer g.open()
	started := make(chan struct{})
	slowDone := make(chan error, 1)
	slowCtx, cancelSlow := context.WithCancel(ctx)
	defer cancelSlow()
	go func() {
		var once bool
		_, err := held.Run(slowCtx, "000-users", func(o *migrate.RunOptions) {
			o.ProgressInterval = 10 * time.Millisecond
			o.Progress = func(migrate.Progress) { // called once the run holds the lease
				if !once {
					once = true
					close(started)
				}
			}
		})
		slowDone <- err
	}()
	<-started
	_, err = m.Run(ctx, "000-users")
	require.ErrorIs(t, err, migrate.ErrRunning)
	st := must(m.Status(ctx))[0]
	assert.Equal(t, migrate.Running, st.State)
	assert.NotEmpty(t, st.LeaseOwner)
	assert.True(t, st.LeaseUntil.After(time.Now()))
	cancelSlow()
	g.open()
	require.ErrorIs(t, <-slowDone, context.Canceled)
	assert.Equal(t, migrate.Interrupted, must(m.Status(ctx))[0].State)

	// A crashed run: its lease is still in the ledger.
	header := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "_MIGRATION#000-users"},
		"SK": &types.AttributeValueMemberS{Value: "STATUS"},
	}
	setLease := func(until time.Time) {
		_, err := tbl.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(tbl.Name()),
			Key:                       header,
			UpdateExpression:          aws.String("SET LeaseOwner = :o, LeaseUntil = :u"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":o": &types.AttributeValueMemberS{Value: "crashed-host/1/x"}, ":u": &types.AttributeValueMemberN{Value: fmt.Sprint(until.UnixMilli())}},
		})
		require.NoError(t, err)
	}
	setLease(time.Now().Add(time.Hour))
	_, err = m.Run(ctx, "000-users")
	require.ErrorIs(t, err, migrate.ErrRunning)
	assert.ErrorContains(t, err, "crashed-host/1/x")

	setLease(time.Now().Add(-time.Second))
	assert.Equal(t, migrate.Interrupted, must(m.Status(ctx))[0].State)
	rep, err := m.Run(ctx, "000-users")
	require.NoError(t, err)
	assert.Equal(t, migrate.Completed, rep.State)
	assert.Equal(t, migrate.Counts{Scanned: 200, Read: 200, Written: 198, Skipped: 2}, rep.Counts)
	assert.Equal(t, 2, must(m.Status(ctx))[0].Runs, "refused runs do not count")
}

// A source table that does not exist stops the run before anything is
// written; the migration stays resumable.
func TestMigrateCopyMissingSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, users, _ := usersTarget(t)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: "no-such-table"}, usersTransform(users)))
	require.NoError(t, err)
	_, err = m.Run(ctx, "000-users")
	var rnf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &rnf)
	assert.ErrorContains(t, err, "singletable: describe table no-such-table")
	st := must(m.Status(ctx))[0]
	assert.Equal(t, migrate.Interrupted, st.State)
	assert.Contains(t, st.LastError, "no-such-table")
}
