package singletable_test

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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/batchread"
	"github.com/singletable-go/singletable/internal/testfaults"
)

// faultyClient wraps the real DynamoDB Local client. For every batch
// request it either fails the whole request with a throttling error, or
// sends only a random part of it and returns the rest as unprocessed, as
// DynamoDB does under load. It records how many times each key really
// reached the server, and how many times each item came back from a read.
type faultyClient struct {
	*dynamodb.Client
	throttle    float64 // probability that a request is throttled
	unprocessed float64 // probability that an item is left unprocessed

	mu       sync.Mutex
	rnd      *rand.Rand
	written  map[string]int // "table|PK|SK" → times written
	read     map[string]int // "PK|SK" → times returned by BatchGetItem
	requests atomic.Int64
	throttld atomic.Int64
	maxKeys  atomic.Int64 // largest request seen
}

func newFaultyClient(t testing.TB, throttle, unprocessed float64) *faultyClient {
	return &faultyClient{
		Client:   ddblocal.Shared(t).Client(),
		throttle: throttle, unprocessed: unprocessed,
		rnd:     rand.New(rand.NewPCG(1, 2)),
		written: map[string]int{}, read: map[string]int{},
	}
}

func (c *faultyClient) coin(p float64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rnd.Float64() < p
}

func (c *faultyClient) noteMax(n int) {
	for {
		old := c.maxKeys.Load()
		if int64(n) <= old || c.maxKeys.CompareAndSwap(old, int64(n)) {
			return
		}
	}
}

func keyString(item map[string]types.AttributeValue) string {
	return item["PK"].(*types.AttributeValueMemberS).Value + "|" + item["SK"].(*types.AttributeValueMemberS).Value
}

func throttleErr() error {
	return &types.ProvisionedThroughputExceededException{Message: aws.String("injected")}
}

func (c *faultyClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.requests.Add(1)
	n := 0
	for _, reqs := range in.RequestItems {
		n += len(reqs)
	}
	c.noteMax(n)
	if c.coin(c.throttle) {
		c.throttld.Add(1)
		return nil, throttleErr()
	}
	send := map[string][]types.WriteRequest{}
	left := map[string][]types.WriteRequest{}
	for table, reqs := range in.RequestItems {
		for _, wr := range reqs {
			if c.coin(c.unprocessed) {
				left[table] = append(left[table], wr)
			} else {
				send[table] = append(send[table], wr)
			}
		}
	}
	if len(send) > 0 {
		out, err := c.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: send}, o...)
		if err != nil {
			return nil, err
		}
		if len(out.UnprocessedItems) > 0 {
			return nil, fmt.Errorf("DynamoDB Local left items unprocessed; the test cannot count writes")
		}
		c.mu.Lock()
		for table, reqs := range send {
			for _, wr := range reqs {
				var k map[string]types.AttributeValue
				if wr.PutRequest != nil {
					k = wr.PutRequest.Item
				} else {
					k = wr.DeleteRequest.Key
				}
				c.written[table+"|"+keyString(k)]++
			}
		}
		c.mu.Unlock()
	}
	return &dynamodb.BatchWriteItemOutput{UnprocessedItems: left}, nil
}

func (c *faultyClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.requests.Add(1)
	n := 0
	for _, ka := range in.RequestItems {
		n += len(ka.Keys)
	}
	c.noteMax(n)
	if c.coin(c.throttle) {
		c.throttld.Add(1)
		return nil, throttleErr()
	}
	send := map[string]types.KeysAndAttributes{}
	left := map[string]types.KeysAndAttributes{}
	for table, ka := range in.RequestItems {
		s, l := ka, ka
		s.Keys, l.Keys = nil, nil
		for _, k := range ka.Keys {
			if c.coin(c.unprocessed) {
				l.Keys = append(l.Keys, k)
			} else {
				s.Keys = append(s.Keys, k)
			}
		}
		if len(s.Keys) > 0 {
			send[table] = s
		}
		if len(l.Keys) > 0 {
			left[table] = l
		}
	}
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}, UnprocessedKeys: left}
	if len(send) > 0 {
		real, err := c.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: send}, o...)
		if err != nil {
			return nil, err
		}
		if len(real.UnprocessedKeys) > 0 {
			return nil, fmt.Errorf("DynamoDB Local left keys unprocessed; the test cannot count reads")
		}
		out.Responses = real.Responses
		c.mu.Lock()
		for _, items := range real.Responses {
			for _, item := range items {
				c.read[keyString(item)]++
			}
		}
		c.mu.Unlock()
	}
	return out, nil
}

// newTableWith is newTable with a client of the test's choosing.
func newTableWith(t testing.TB, c singletable.Client, bind func(*singletable.Table)) *singletable.Table {
	t.Helper()
	if cc, ok := c.(*countingClient); ok {
		c = cc.table() // the client newTable's table holds
	}
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(c, name)
	bind(tbl)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	return tbl
}

// fastRetries keeps fault tests quick: tiny delays, a generous budget.
var fastRetries = testfaults.FastRetries

// batchGet is batchread.Get: the items of keys found by one BatchGet, in
// the order of keys.
func batchGet[T any](ctx context.Context, r *singletable.Repo[T], keys []T, read []func(*singletable.ReadOptions), optFns ...func(*singletable.BatchOptions)) ([]T, error) {
	return batchread.Get(ctx, r, keys, read, optFns...)
}

func TestBatchWriteAndGetUnderFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 0.15, 0.3)
	var users *singletable.Repo[User]
	var skills *singletable.Repo[UserSkill]
	tbl := newTableWith(t, fc, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})

	// 1,000 mixed items: 200 users with 4 skills each, interleaved.
	var ops []singletable.WriteOp
	var userKeys []User
	var skillKeys []UserSkill
	for u := range 200 {
		name := fmt.Sprintf("user%03d", u)
		ops = append(ops, users.PutOp(User{Username: name, Name: "N" + name}))
		userKeys = append(userKeys, User{Username: name})
		for s := range 4 {
			sk := UserSkill{Username: name, SkillName: fmt.Sprintf("skill%d", s), Level: "Expert", Years: u + s}
			ops = append(ops, skills.PutOp(sk))
			skillKeys = append(skillKeys, UserSkill{Username: name, SkillName: sk.SkillName})
		}
	}
	require.Len(t, ops, 1000)
	require.NoError(t, singletable.BatchWrite(ctx, ops, fastRetries))

	assert.Len(t, fc.written, 1000, "distinct keys written")
	for k, n := range fc.written {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
	assert.Positive(t, fc.throttld.Load(), "some requests were throttled")
	assert.LessOrEqual(t, fc.maxKeys.Load(), int64(25))
	writeRequests := fc.requests.Load()
	t.Logf("BatchWrite: 1000 items in %d requests (%d throttled)", writeRequests, fc.throttld.Load())

	// Read the same 1,000 keys back in one BatchGet, skills then users
	// (plus one absent key in the middle of the skills).
	askSkills := append(append(append([]UserSkill{}, skillKeys[:300]...), UserSkill{Username: "ghost", SkillName: "none"}), skillKeys[300:]...)
	gotSkills := make([]UserSkill, len(askSkills))
	gotUsers := make([]User, len(userKeys))
	var gets []singletable.GetOp
	for i, k := range askSkills {
		gets = append(gets, skills.GetOp(k, &gotSkills[i]))
	}
	for i, k := range userKeys {
		gets = append(gets, users.GetOp(k, &gotUsers[i]))
	}
	found, err := singletable.BatchGet(ctx, gets, fastRetries)
	require.NoError(t, err)
	require.Len(t, found, len(gets))
	for i, k := range askSkills {
		if i == 300 {
			assert.False(t, found[i], "the absent key is not found")
			assert.Zero(t, gotSkills[i])
			continue
		}
		assert.True(t, found[i])
		assert.Equal(t, k.Username, gotSkills[i].Username, "at the position of the op")
		assert.Equal(t, k.SkillName, gotSkills[i].SkillName)
		assert.Equal(t, "Expert", gotSkills[i].Level)
	}
	for i, k := range userKeys {
		assert.True(t, found[len(askSkills)+i])
		assert.Equal(t, "N"+k.Username, gotUsers[i].Name)
	}
	assert.Len(t, fc.read, 1000, "distinct keys read")
	for k, n := range fc.read {
		if n != 1 {
			t.Errorf("%s read %d times", k, n)
		}
	}
	assert.LessOrEqual(t, fc.maxKeys.Load(), int64(100))
	t.Logf("BatchGet: 1000 keys in %d requests", fc.requests.Load()-writeRequests)

	// And the table really holds them: count through a query per user.
	n, err := skills.Query(UserSkill{Username: "user123"}).Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	_ = tbl
}

func TestBatchWriteReportsWhatIsLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 0, 1) // nothing is ever processed
	var users *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })

	var ops []singletable.WriteOp
	for i := range 30 {
		ops = append(ops, users.PutOp(User{Username: fmt.Sprint("u", i)}))
	}
	err := singletable.BatchWrite(ctx, ops, func(o *singletable.BatchOptions) {
		o.Backoff, o.MaxAttempts = singletable.Backoff{Base: -1}, 3
	})
	var be *singletable.BatchError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Sent)
	assert.Equal(t, "BatchWriteItem", be.Op)
	require.Len(t, be.Failed, 30, "every op reported")
	for i, f := range be.Failed {
		assert.Equal(t, i, f.Index)
		assert.Equal(t, "User", f.Entity)
		assert.Equal(t, fmt.Sprintf("USER#u%d", i), f.Key["PK"].(*types.AttributeValueMemberS).Value)
		assert.ErrorIs(t, f.Err, singletable.ErrUnprocessed)
	}
	assert.ErrorIs(t, err, singletable.ErrUnprocessed)
	assert.Equal(t, int64(2*3), fc.requests.Load(), "2 requests (25 + 5), 3 attempts each")

	// Reads: the keys come back as failures, not as "missing", and their
	// dests are left as they were.
	a, b := User{Name: "kept"}, User{Name: "kept"}
	found, err := singletable.BatchGet(ctx, []singletable.GetOp{users.GetOp(User{Username: "a"}, &a), users.GetOp(User{Username: "b"}, &b)},
		func(o *singletable.BatchOptions) { o.Backoff, o.MaxAttempts = singletable.Backoff{Base: -1}, 3 })
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "BatchGetItem", be.Op)
	assert.Len(t, be.Failed, 2)
	assert.Equal(t, []bool{false, false}, found, "nothing read")
	assert.Equal(t, "kept", a.Name)
	assert.Equal(t, "kept", b.Name)
}

func TestBatchWriteThrottledToTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 1, 0) // every request throttled
	var users *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })
	err := singletable.BatchWrite(ctx, []singletable.WriteOp{users.PutOp(User{Username: "a"}), users.DeleteOp(User{Username: "b"})},
		func(o *singletable.BatchOptions) { o.Backoff, o.MaxAttempts = singletable.Backoff{Base: -1}, 4 })
	var be *singletable.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 2)
	var pte *types.ProvisionedThroughputExceededException
	assert.ErrorAs(t, be.Failed[1].Err, &pte, "the SDK error stays reachable")
	assert.Equal(t, int64(4), fc.requests.Load())
}

func TestBatchWriteValidatesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 0, 0)
	var users *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })
	err := singletable.BatchWrite(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "ok"}),
		users.PutOp(User{}), // no key
		singletable.WriteOp{},
		users.DeleteOp(User{Username: "fine"}),
	})
	var be *singletable.BatchError
	require.ErrorAs(t, err, &be)
	assert.False(t, be.Sent)
	require.Len(t, be.Failed, 2)
	assert.Equal(t, 1, be.Failed[0].Index)
	assert.Equal(t, 2, be.Failed[1].Index)
	var ke *singletable.KeyError
	assert.ErrorAs(t, err, &ke)
	var ve *singletable.ValidationError
	assert.ErrorAs(t, err, &ve)
	assert.Zero(t, fc.requests.Load(), "nothing sent")

	// Ops a batch request cannot carry are refused, each named.
	must := func(o *singletable.WriteOptions) { o.MustExist = true }
	err = singletable.BatchWrite(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "ok"}),
		users.CreateOp(User{Username: "c"}),
		users.Update(User{Username: "u"}).Set("Name", "x").Op(),
		users.CheckOp(User{Username: "k"}, expression.AttributeExists(expression.Name("PK"))),
		users.PutOp(User{Username: "p"}, must),
		users.DeleteOp(User{Username: "d"}, func(o *singletable.WriteOptions) { o.If = expression.AttributeExists(expression.Name("Name")) }),
	})
	require.ErrorAs(t, err, &be)
	assert.False(t, be.Sent)
	require.Len(t, be.Failed, 5)
	for i, want := range []string{"a Create", "a Update", "a Check", "a conditional Put", "a conditional Delete"} {
		assert.Equal(t, i+1, be.Failed[i].Index)
		assert.ErrorAs(t, be.Failed[i].Err, &ve)
		assert.Contains(t, be.Failed[i].Err.Error(), want)
	}
	assert.Zero(t, fc.requests.Load(), "nothing sent")

	var u User
	_, err = singletable.BatchGet(ctx, []singletable.GetOp{users.GetOp(User{Username: "a"}, &u), users.GetOp(User{}, &u), users.GetOp(User{Username: "b"}, nil), {}})
	require.ErrorAs(t, err, &be)
	assert.False(t, be.Sent)
	require.Len(t, be.Failed, 3)
	assert.Equal(t, 1, be.Failed[0].Index)
	assert.ErrorAs(t, be.Failed[0].Err, &ke)
	assert.Equal(t, 2, be.Failed[1].Index)
	assert.Equal(t, 3, be.Failed[2].Index)
	assert.Zero(t, fc.requests.Load(), "nothing sent")

	require.NoError(t, singletable.BatchWrite(ctx, nil))
	found, err := singletable.BatchGet(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, found)
}

func TestBatchDuplicateKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 0, 0.3)
	var users *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })

	// Per key, ops apply in the order given: a's final state is the last
	// put, b ends deleted, c ends as its second put.
	err := singletable.BatchWrite(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "a", Name: "a1"}),
		users.PutOp(User{Username: "b", Name: "b1"}),
		users.DeleteOp(User{Username: "a"}),
		users.PutOp(User{Username: "c", Name: "c1"}),
		users.PutOp(User{Username: "a", Name: "a3"}),
		users.DeleteOp(User{Username: "b"}),
		users.PutOp(User{Username: "c", Name: "c2"}),
	}, fastRetries)
	require.NoError(t, err)
	assert.Equal(t, 3, writtenTimes(fc, "USER#a|PROFILE"), "a written 3 times, in 3 rounds")

	got, err := batchGet(ctx, users, []User{{Username: "a"}, {Username: "b"}, {Username: "c"}, {Username: "a"}, {Username: "a"}}, nil, fastRetries)
	require.NoError(t, err)
	require.Len(t, got, 4, "b is deleted, so left out")
	assert.Equal(t, "a3", got[0].Name)
	assert.Equal(t, "c2", got[1].Name)
	assert.Equal(t, "a3", got[2].Name)
	got[2].Name = "changed"
	assert.Equal(t, "a3", got[3].Name, "each position has its own copy")
	assert.Equal(t, map[string]int{"USER#a|PROFILE": 1, "USER#c|PROFILE": 1}, fc.read, "a read once though asked three times")
}

// writtenTimes counts the writes of a key, whatever the table.
func writtenTimes(fc *faultyClient, key string) int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	n := 0
	for k, c := range fc.written {
		if strings.HasSuffix(k, "|"+key) {
			n += c
		}
	}
	return n
}

func TestBatchWriteAcrossTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := newFaultyClient(t, 0, 0)
	var u1, u2 *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { u1 = singletable.MustBind(tbl, Users) })
	newTableWith(t, fc, func(tbl *singletable.Table) { u2 = singletable.MustBind(tbl, Users) })
	var ops []singletable.WriteOp
	for i := range 10 {
		ops = append(ops, u1.PutOp(User{Username: fmt.Sprint(i)}), u2.PutOp(User{Username: fmt.Sprint(i)}))
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops))
	assert.Equal(t, int64(1), fc.requests.Load(), "same key in two tables: one request")
	var a, b User
	found, err := singletable.BatchGet(ctx, []singletable.GetOp{u1.GetOp(User{Username: "3"}, &a), u2.GetOp(User{Username: "3"}, &b)})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, found, "the same key in two tables is two items")
}

func TestBatchGetIgnoresOtherEntities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Alias struct {
		Username string
	}
	aliases := singletable.MustDefine(singletable.Schema[Alias]{Type: "Alias", PK: "USER#{Username}", SK: "PROFILE"})
	var users *singletable.Repo[User]
	var al *singletable.Repo[Alias]
	_, _ = newTable(t, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		al = singletable.MustBind(tbl, aliases)
	})
	_, err := users.Create(ctx, User{Username: "x", Name: "X", PasswordHash: "h"})
	require.NoError(t, err)
	got, err := batchGet(ctx, al, []Alias{{Username: "x"}}, nil)
	require.NoError(t, err)
	assert.Empty(t, got, "a User item is not an Alias")
	got2, err := batchGet(ctx, users, []User{{Username: "x"}}, []func(*singletable.ReadOptions){func(o *singletable.ReadOptions) {
		o.Fields, o.ConsistentRead = []string{"Name"}, true
	}})
	require.NoError(t, err)
	require.Len(t, got2, 1)
	assert.Equal(t, User{Username: "x", Name: "X"}, got2[0], "only the named fields are read, and the key's")

	// One BatchGet of the same key for both entities, and of it with
	// other read options: each op decodes its own entity's item.
	var alias Alias
	var whole, named User
	found, err := singletable.BatchGet(ctx, []singletable.GetOp{
		al.GetOp(Alias{Username: "x"}, &alias),
		users.GetOp(User{Username: "x"}, &whole),
		users.GetOp(User{Username: "x"}, &named, func(o *singletable.ReadOptions) { o.Fields = []string{"Name"} }),
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true}, found)
	assert.Equal(t, "h", whole.PasswordHash)
	assert.Equal(t, User{Username: "x", Name: "X"}, named)
}

func TestBatchContextCancelled(t *testing.T) {
	t.Parallel()
	fc := newFaultyClient(t, 0, 1)
	var users *singletable.Repo[User]
	newTableWith(t, fc, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := singletable.BatchWrite(ctx, []singletable.WriteOp{users.PutOp(User{Username: "a"})}, func(o *singletable.BatchOptions) {
		o.Backoff, o.MaxAttempts = singletable.Backoff{Base: time.Second, Max: time.Second}, 100
	})
	var be *singletable.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
}

// BenchmarkBatchWrite measures how batch throughput scales with the number
// of requests in flight (DynamoDB Local on this machine).
func BenchmarkBatchWrite(b *testing.B) {
	ctx := context.Background()
	for _, conc := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var skills *singletable.Repo[UserSkill]
			newTableWith(b, ddblocal.Shared(b).Client(), func(tbl *singletable.Table) { skills = singletable.MustBind(tbl, UserSkills) })
			ops := make([]singletable.WriteOp, 1000)
			keys := make([]UserSkill, len(ops))
			for i := range ops {
				s := UserSkill{Username: fmt.Sprint("u", i%50), SkillName: fmt.Sprint("s", i), Level: "Expert", Years: i}
				ops[i], keys[i] = skills.PutOp(s), s
			}
			opt := func(o *singletable.BatchOptions) { o.Concurrency = conc }
			b.ResetTimer()
			for b.Loop() {
				if err := singletable.BatchWrite(ctx, ops, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(ops))/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// BenchmarkBatchGet is BenchmarkBatchWrite for reads.
func BenchmarkBatchGet(b *testing.B) {
	ctx := context.Background()
	for _, conc := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var skills *singletable.Repo[UserSkill]
			newTableWith(b, ddblocal.Shared(b).Client(), func(tbl *singletable.Table) { skills = singletable.MustBind(tbl, UserSkills) })
			ops := make([]singletable.WriteOp, 1000)
			keys := make([]UserSkill, len(ops))
			for i := range ops {
				s := UserSkill{Username: fmt.Sprint("u", i%50), SkillName: fmt.Sprint("s", i), Level: "Expert", Years: i}
				ops[i], keys[i] = skills.PutOp(s), s
			}
			if err := singletable.BatchWrite(ctx, ops); err != nil {
				b.Fatal(err)
			}
			opt := func(o *singletable.BatchOptions) { o.Concurrency = conc }
			b.ResetTimer()
			for b.Loop() {
				got, err := batchGet(ctx, skills, keys, nil, opt)
				if err != nil || len(got) != len(keys) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(keys))/b.Elapsed().Seconds(), "reads/s")
		})
	}
}
