package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// UserSkill as first deployed, before GSI1 and GSI2 were added.
var userSkillsNoIndex = singletable.MustDefine(singletable.Schema[UserSkill]{
	Type: "UserSkill",
	PK:   "USER#{Username}",
	SK:   "SKILL#{SkillName}",
})

// UserSkill after its sort key template changed.
var userSkillsNewSK = singletable.MustDefine(singletable.Schema[UserSkill]{
	Type: "UserSkill",
	PK:   "USER#{Username}",
	SK:   "USKILL#{SkillName}",
	Indexes: []singletable.IndexSchema[UserSkill]{
		{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
		{Name: "GSI2", MultiAttribute: true, PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years", "LastUsed"}},
	},
})

var (
	seededSkillNames = []string{"go", "python", "rust", "java", "sql"}
	seededLevels     = []string{"Beginner", "Intermediate", "Advanced", "Expert"}
)

// skillAt is the i-th seeded skill: five per user.
func skillAt(i int) UserSkill {
	return UserSkill{
		Username:  fmt.Sprintf("user%04d", i/5),
		SkillName: seededSkillNames[i%5],
		Level:     seededLevels[i%4],
		Years:     i % 20,
		LastUsed:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour),
	}
}

// seedSkills writes n skills as the given (older) declaration renders them.
func seedSkills(t *testing.T, tbl *singletable.Table, old *singletable.Entity[UserSkill], n int) {
	t.Helper()
	oldTbl := singletable.NewTable(tbl.Client(), tbl.Name())
	repo := singletable.MustBind(oldTbl, old)
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		op := repo.PutOp(skillAt(i))
		require.NoError(t, op.Err())
		items[i] = op.Item()
	}
	seedRaw(t, ddblocal.Shared(t).Client(), tbl.Name(), items)
}

// Adding GSI1 (and GSI2) to 2,000 existing skills (10 pages of 200) while
// another goroutine keeps updating some of them with the new declaration.
func TestMigrateBackfillGSI1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 2000
	tbl, users, skills := usersTarget(t)
	seedSkills(t, tbl, userSkillsNoIndex, n)
	_, err := users.Create(ctx, User{Username: "user0000", Name: "Zero"})
	require.NoError(t, err)
	m, err := migrate.New(tbl, migrate.Backfill("001-skills-gsi1", skills))
	require.NoError(t, err)

	dry, err := m.Run(ctx, "001-skills-gsi1", func(o *migrate.RunOptions) { o.DryRun = true })
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"UserSkill update": n}, dry.Ops)
	assert.Equal(t, migrate.Counts{Scanned: n + 1, Read: n, Written: n}, dry.Counts)

	// The application, already on the new declaration, keeps changing the
	// level (a GSI1 key field) and the endorsements of the first 300.
	type state struct {
		level        string
		endorsements int
	}
	var mu sync.Mutex
	final := map[UserSkill]state{}
	var updates atomic.Int64
	twenty := make(chan struct{}) // closed at the 20th update
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := skillAt(rng.IntN(300))
			key := UserSkill{Username: s.Username, SkillName: s.SkillName}
			u := skills.Update(key)
			if rng.IntN(2) == 0 {
				u = u.Set("Level", seededLevels[rng.IntN(4)])
			} else {
				u = u.Add("Endorsements", 1)
			}
			got, err := u.Run(ctx)
			if err != nil {
				t.Errorf("concurrent update: %v", err)
				return
			}
			mu.Lock()
			final[key] = state{got.Level, got.Endorsements}
			mu.Unlock()
			if updates.Add(1) == 20 {
				close(twenty)
			}
		}
	}()
	// The migration starts among the updates.
	select {
	case <-twenty:
	case <-done: // the updates stopped early: their t.Errorf says why
	}
	rep, err := m.Run(ctx, "001-skills-gsi1", func(o *migrate.RunOptions) { o.PageSize = 200 })
	close(stop)
	<-done
	require.NoError(t, err)
	t.Logf("backfill: %+v, %d concurrent updates, %d rewrites planned again, %v", rep.Counts, updates.Load(), rep.Retried, rep.Elapsed)
	assert.Equal(t, int64(0), rep.Counts.Failed)
	assert.Equal(t, rep.Counts.Read, rep.Counts.Written+rep.Counts.Skipped)
	assert.Equal(t, int64(n), rep.Counts.Read)
	assert.Equal(t, rep.Counts.Written, rep.Ops["UserSkill update"])

	// Every skill is in GSI1 with keys matching its current attributes.
	var count int
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		switch attrS(it, "EntityType") {
		case "User":
			assert.NotContains(t, it, "GSI1PK", "a user was touched")
			continue
		case "UserSkill":
		default:
			continue
		}
		count++
		user, skill, level := attrS(it, "Username"), attrS(it, "SkillName"), attrS(it, "ProficiencyLevel")
		require.Equal(t, "SKILL#"+skill, attrS(it, "GSI1PK"))
		require.Equal(t, "LEVEL#"+level+"#USER#"+user, attrS(it, "GSI1SK"))
		require.True(t, strings.HasSuffix(attrS(it, "LastUsedDate"), ".000000000Z"), "GSI2 sort attribute in key form: %s", attrS(it, "LastUsedDate"))
	}
	assert.Equal(t, n, count)
	inGSI1 := 0
	for _, name := range seededSkillNames {
		got, err := skills.QueryIndex("GSI1", UserSkill{SkillName: name}).Collect(ctx)
		require.NoError(t, err)
		inGSI1 += len(got)
	}
	assert.Equal(t, n, inGSI1)
	experts, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}).Where("Level", singletable.Eq, "Expert").Collect(ctx)
	require.NoError(t, err)
	for _, e := range experts {
		assert.Equal(t, "Expert", e.Level)
	}

	// No concurrent update was lost.
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, final)
	for key, want := range final {
		got, err := skills.Get(ctx, key, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, want.level, got.Level, "%v", key)
		assert.Equal(t, want.endorsements, got.Endorsements, "%v", key)
	}

	vr, err := m.Verify(ctx, "001-skills-gsi1")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
	assert.Equal(t, int64(n), vr.Found["UserSkill"])
}

// A sort key template change moves every skill to its new key: no
// duplicate, no orphan, and no update made meanwhile by the old code lost.
func TestMigrateRekeySK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 2000
	tbl, users, oldSkills := usersTarget(t) // the table as deployed: SK SKILL#{SkillName}
	seedSkills(t, tbl, UserSkills, n)
	_, err := users.Create(ctx, User{Username: "user0000", Name: "Zero"})
	require.NoError(t, err)

	newTbl := singletable.NewTable(tbl.Client(), tbl.Name())
	singletable.MustBind(newTbl, Users)
	skills := singletable.MustBind(newTbl, userSkillsNewSK)
	m, err := migrate.New(newTbl, migrate.Backfill("002-skill-sk", skills))
	require.NoError(t, err)

	// The old code keeps adding endorsements until the items move away.
	var mu sync.Mutex
	added := map[UserSkill]int{}
	adds := 0                     // the goroutine's own count
	twenty := make(chan struct{}) // closed at its 20th endorsement
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(3, 4))
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := skillAt(rng.IntN(200))
			key := UserSkill{Username: s.Username, SkillName: s.SkillName}
			_, err := oldSkills.Update(key).Add("Endorsements", 1).Run(ctx)
			switch {
			case errors.Is(err, singletable.ErrNotFound):
				continue // already moved
			case err != nil:
				t.Errorf("concurrent update: %v", err)
				return
			}
			mu.Lock()
			added[key]++
			mu.Unlock()
			if adds++; adds == 20 {
				close(twenty)
			}
		}
	}()
	// The migration starts among the old code's updates.
	select {
	case <-twenty:
	case <-done: // the updates stopped early: their t.Errorf says why
	}
	rep, err := m.Run(ctx, "002-skill-sk", func(o *migrate.RunOptions) { o.PageSize = 250 })
	close(stop)
	<-done
	require.NoError(t, err)
	t.Logf("re-key: %+v, %d rewrites planned again, %v", rep.Counts, rep.Retried, rep.Elapsed)
	assert.Equal(t, int64(n), rep.Counts.Written)
	assert.Equal(t, int64(n), rep.Ops["UserSkill re-key"])
	assert.Equal(t, int64(0), rep.Counts.Failed)
	assert.Equal(t, rep.Counts.Read, rep.Counts.Written+rep.Counts.Skipped, "re-keyed items met again are skipped")

	seen := map[string]bool{}
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if attrS(it, "EntityType") != "UserSkill" {
			continue
		}
		sk := attrS(it, "SK")
		require.True(t, strings.HasPrefix(sk, "USKILL#"), "orphan at %s", sk)
		id := attrS(it, "PK") + "|" + sk
		require.False(t, seen[id])
		seen[id] = true
	}
	assert.Len(t, seen, n, "one item per skill")
	for i := range n {
		s := skillAt(i)
		got, err := skills.Get(ctx, UserSkill{Username: s.Username, SkillName: s.SkillName})
		require.NoError(t, err)
		require.Equal(t, s.Level, got.Level)
	}
	mu.Lock()
	for key, n := range added {
		got, err := skills.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, n, got.Endorsements, "%v", key)
	}
	t.Logf("%d endorsements added by the old code during the re-key", len(added))
	mu.Unlock()
	_, err = users.Get(ctx, User{Username: "user0000"})
	require.NoError(t, err, "the user profile in the same partition is left alone")

	vr, err := m.Verify(ctx, "002-skill-sk")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)

	// The old declaration's verification now sees every item as stale.
	mold, err := migrate.New(tbl, migrate.Backfill("x", oldSkills))
	require.NoError(t, err)
	vr, err = mold.Verify(ctx, "x", func(o *migrate.VerifyOptions) { o.MaxDifferences = 1 })
	require.NoError(t, err)
	assert.Equal(t, int64(n), vr.Different)
	require.Len(t, vr.Differences, 1)
	assert.Equal(t, "stale", vr.Differences[0].Kind)
}

// A re-key whose new key is taken: by the same content, the move is
// finished; by other content, the item fails with ErrAlreadyExists and
// both items stay.
func TestMigrateRekeyConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, _ := usersTarget(t)
	seedSkills(t, tbl, UserSkills, 3)
	newTbl := singletable.NewTable(tbl.Client(), tbl.Name())
	skills := singletable.MustBind(newTbl, userSkillsNewSK)

	same := skillAt(0)
	_, err := skills.Put(ctx, same)
	require.NoError(t, err)
	other := skillAt(1)
	other.Years = 99
	_, err = skills.Put(ctx, other)
	require.NoError(t, err)

	m, err := migrate.New(newTbl, migrate.Backfill("rekey", skills))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "rekey")
	var me *migrate.Error
	require.ErrorAs(t, err, &me)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Equal(t, int64(1), rep.Counts.Failed)
	require.Len(t, rep.Failures, 1)
	assert.Equal(t, "SKILL#python", attrS(rep.Failures[0].Key, "SK"))
	assert.Equal(t, int64(2), rep.Ops["UserSkill re-key"])

	var sks []string
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if attrS(it, "EntityType") == "UserSkill" {
			sks = append(sks, attrS(it, "PK")+" "+attrS(it, "SK"))
		}
	}
	assert.ElementsMatch(t, []string{
		"USER#user0000 USKILL#go",
		"USER#user0000 USKILL#python", "USER#user0000 SKILL#python", // left for a person to resolve
		"USER#user0000 USKILL#rust",
	}, sks)
	got, err := skills.Get(ctx, UserSkill{Username: other.Username, SkillName: other.SkillName})
	require.NoError(t, err)
	assert.Equal(t, 99, got.Years, "the item at the new key was not overwritten")
}

// Making an index sparse after the fact: the backfill removes the index
// attributes of the items the predicate now excludes.
func TestMigrateBackfillSparse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Post struct {
		Author string `dynamodbav:"Author"`
		ID     int    `dynamodbav:"ID"`
		Public bool   `dynamodbav:"Public"`
	}
	dense := singletable.MustDefine(singletable.Schema[Post]{
		Type: "Post", PK: "AUTHOR#{Author}", SK: "POST#{ID}",
		Indexes: []singletable.IndexSchema[Post]{{Name: "GSI1", PK: "FEED", SK: "POST#{ID}"}},
	})
	sparse := singletable.MustDefine(singletable.Schema[Post]{
		Type: "Post", PK: "AUTHOR#{Author}", SK: "POST#{ID}",
		Indexes: []singletable.IndexSchema[Post]{{Name: "GSI1", PK: "FEED", SK: "POST#{ID}",
			When: func(p Post) bool { return p.Public }, WhenFields: []string{"Public"}}},
	})
	var old *singletable.Repo[Post]
	tbl := newTable(t, func(tbl *singletable.Table) { old = singletable.MustBind(tbl, dense) })
	for i := range 40 {
		_, err := old.Put(ctx, Post{Author: "ann", ID: i, Public: i%4 == 0})
		require.NoError(t, err)
	}
	newTbl := singletable.NewTable(tbl.Client(), tbl.Name())
	posts := singletable.MustBind(newTbl, sparse)
	m, err := migrate.New(newTbl, migrate.Backfill("posts-sparse", posts))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "posts-sparse")
	require.NoError(t, err)
	// Scanned includes the ledger's header and four checkpoints.
	assert.Equal(t, migrate.Counts{Scanned: 45, Read: 40, Written: 30, Skipped: 10}, rep.Counts)
	feed, err := posts.QueryIndex("GSI1", Post{}).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, feed, 10)
	for _, p := range feed {
		assert.True(t, p.Public)
	}
	vr, err := m.Verify(ctx, "posts-sparse")
	require.NoError(t, err)
	assert.True(t, vr.OK(), "%+v", vr)
}

// Re-keying an entity with a unique field hands its guard items over to
// the new key, so the value stays claimed and is released by a delete.
func TestMigrateRekeyMovesUniqueGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var accounts *singletable.Repo[Account]
	tbl := newTable(t, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) })
	for _, u := range []string{"ann", "bob"} {
		_, err := accounts.Create(ctx, Account{Username: u, Email: u + "@example.com", Name: u})
		require.NoError(t, err)
	}
	moved := singletable.MustDefine(singletable.Schema[Account]{
		Type: "Account", PK: "ACCOUNT#{Username}", SK: "PROFILE#V2",
		Unique:  []singletable.Unique{{Fields: []string{"Email"}}},
		Version: "Version", CreatedAt: "Created", UpdatedAt: "Updated",
	})
	newTbl := singletable.NewTable(tbl.Client(), tbl.Name())
	accounts2 := singletable.MustBind(newTbl, moved)
	m, err := migrate.New(newTbl, migrate.Backfill("accounts-sk", accounts2))
	require.NoError(t, err)
	rep, err := m.Run(ctx, "accounts-sk")
	require.NoError(t, err)
	assert.Equal(t, int64(2), rep.Ops["Account re-key"])

	owners := map[string]string{}
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if attrS(it, "EntityType") == singletable.UniqueGuardType {
			owners[attrS(it, "OwnerPK")] = attrS(it, "OwnerSK")
		}
	}
	assert.Equal(t, map[string]string{"ACCOUNT#ann": "PROFILE#V2", "ACCOUNT#bob": "PROFILE#V2"}, owners)

	_, err = accounts2.Create(ctx, Account{Username: "carl", Email: "ann@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists, "the value is still claimed")
	_, err = accounts2.Delete(ctx, Account{Username: "ann"})
	require.NoError(t, err, "the delete releases the guard it now owns")
	_, err = accounts2.Create(ctx, Account{Username: "carl", Email: "ann@example.com"})
	require.NoError(t, err)
}
