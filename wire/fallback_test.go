package wire_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/designs"
	"github.com/singletable-go/singletable/internal/wiretest"
	"github.com/singletable-go/singletable/internal/wiretest/sdkwrites"
	"github.com/singletable-go/singletable/wire"
)

// reads is what readAll read: pages (items and cursors), items, errors,
// a BatchGet's and a TxGet's values and found, a collection's page.
type reads struct {
	Pages      []singletable.Page[designs.UserSkill]
	Skills     []designs.UserSkill
	User       designs.User
	Errs       []string
	Batch      [2][3]designs.UserSkill
	BatchUsers [2]designs.User
	Found      [2][]bool
	Collection singletable.Page[any]
	Routed     []designs.UserSkill
}

// readAll writes with a Put and a BatchWrite (the same items every time,
// so every run reads the same table), then makes, through skills and
// users, every read the direct path serves: a Query page, pages with
// cursors, an index page, a Scan page, Get of a skill, of a user and of
// nothing, a BatchGet, a TxGet and a collection page.
func readAll(t *testing.T, skills *singletable.Repo[designs.UserSkill], users *singletable.Repo[designs.User]) reads {
	t.Helper()
	_, err := users.Put(ctx, designs.User{Username: "bo", Name: "Bo"})
	require.NoError(t, err)
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		skills.PutOp(designs.UserSkill{Username: "bo", SkillName: "go", Years: 1}),
		skills.PutOp(designs.UserSkill{Username: "bo", SkillName: "sql", Years: 2})}))
	var r reads
	page := func(p singletable.Page[designs.UserSkill], err error) {
		t.Helper()
		require.NoError(t, err)
		r.Pages = append(r.Pages, p)
	}
	ana := designs.UserSkill{Username: "ana"}
	page(skills.Query(ana).Page(ctx))
	first, err := skills.Query(ana).Limit(4).Page(ctx)
	page(first, err)
	page(skills.Query(ana).Limit(4).After(first.Cursor).Page(ctx))
	page(skills.QueryIndex("GSI1", designs.UserSkill{SkillName: "go02"}).Page(ctx))
	page(skills.Scan().Page(ctx))
	s, err := skills.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "go03"})
	require.NoError(t, err)
	r.Skills = append(r.Skills, s)
	r.User, err = users.Get(ctx, designs.User{Username: "ana"})
	require.NoError(t, err)
	_, err = skills.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "none"})
	r.Errs = append(r.Errs, err.Error())
	batchGet := func(ctx context.Context, ops []singletable.GetOp) ([]bool, error) {
		return singletable.BatchGet(ctx, ops)
	}
	for i, read := range []func(context.Context, []singletable.GetOp) ([]bool, error){batchGet, singletable.TxGet} {
		sk := func(j int, name string) singletable.GetOp {
			return skills.GetOp(designs.UserSkill{Username: "ana", SkillName: name}, &r.Batch[i][j])
		}
		r.Found[i], err = read(ctx, []singletable.GetOp{sk(0, "go01"), sk(1, "nope"), users.GetOp(designs.User{Username: "ana"}, &r.BatchUsers[i]), sk(2, "go05")})
		require.NoError(t, err)
	}
	var u designs.User
	r.Collection, err = users.QueryCollection(designs.User{Username: "ana"}).Limit(5).Page(ctx, users.StoreOne(&u), skills.AppendTo(&r.Routed))
	require.NoError(t, err)
	return r
}

// loggingClient is a user's own Client: it logs each read and forwards
// it. It is not a *dynamodb.Client, so the library takes the SDK path.
type loggingClient struct {
	singletable.Client
	mu  sync.Mutex
	ops []string
}

func (c *loggingClient) log(op string) { c.mu.Lock(); c.ops = append(c.ops, op); c.mu.Unlock() }

func (c *loggingClient) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.log("Query")
	return c.Client.Query(ctx, in, o...)
}

func (c *loggingClient) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.log("Scan")
	return c.Client.Scan(ctx, in, o...)
}

func (c *loggingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.log("GetItem")
	return c.Client.GetItem(ctx, in, o...)
}

// TestFallbackPaths: on a client built with wire.Enable, the library's
// reads and writes take the direct path when the table's client is that
// *dynamodb.Client itself, with or without an Observe hook, and the SDK
// path when it is anything else (a wrapper, a user's own Client type,
// with a hook too); every way reads the same as a plain client, and an
// Observe hook observes exactly what it observes on a plain client
// (operation, index, capacity with INDEXES, counts, keys, attempts).
func TestFallbackPaths(t *testing.T) {
	t.Parallel()
	var paths wiretest.Paths
	var written sdkwrites.Counter
	f := tables(t, 9, paths.Option, written.Option)
	table := func(c singletable.Client, optFns ...func(*singletable.TableOptions)) *singletable.Table {
		return singletable.NewTable(c, f.sdk.Name(), append(optFns, fixedNow)...)
	}
	plain := table(f.sdk.Client())
	want := readAll(t, singletable.MustBind(plain, designs.UserSkills), singletable.MustBind(plain, designs.Users))
	logging, loggingObserved := &loggingClient{Client: f.wc}, &loggingClient{Client: f.wc}
	var observed, userObserved, sdkObserved observations
	for _, c := range []struct {
		name   string
		table  *singletable.Table
		direct bool
	}{
		{"the client itself", table(f.wc), true},
		{"a wrapper", table(struct{ singletable.Client }{f.wc}), false},
		{"a user's Client type", table(logging), false},
		{"an Observe hook", table(f.wc, observed.option), true},
		{"a user's Client type with an Observe hook", table(loggingObserved, userObserved.option), false},
	} {
		paths.Reset()
		written.Store(0)
		got := readAll(t, singletable.MustBind(c.table, designs.UserSkills), singletable.MustBind(c.table, designs.Users))
		require.Equal(t, want, got, c.name)
		direct, sdk := paths.Counts()
		counts := [3]int64{direct, sdk, written.Load()}
		if c.direct {
			require.Equal(t, [3]int64{10, 0, 0}, counts, "%s: responses with items decoded directly, by the SDK; requests the SDK wrote", c.name)
		} else {
			require.Equal(t, [3]int64{0, 10, 4}, counts, "%s: responses with items decoded directly, by the SDK; requests the SDK wrote", c.name)
		}
	}
	reads := []string{"Query", "Query", "Query", "Query", "Scan", "GetItem", "GetItem", "GetItem", "Query"}
	require.Equal(t, reads, logging.ops)
	require.Equal(t, reads, loggingObserved.ops)

	sdkObserving := table(f.sdk.Client(), sdkObserved.option)
	readAll(t, singletable.MustBind(sdkObserving, designs.UserSkills), singletable.MustBind(sdkObserving, designs.Users))
	require.Len(t, observed.list, 13)
	require.Equal(t, sdkObserved.list, observed.list, "the hook observes the same on the path as on a plain client")
	require.Equal(t, sdkObserved.list, userObserved.list, "and the same on the SDK path through a user's Client")
	var ops []string
	for _, o := range observed.list {
		ops = append(ops, o.Op)
		require.NotEmpty(t, o.Capacity, "%s: capacity", o.Op)
		require.Equal(t, 1, o.Attempts, o.Op)
	}
	require.Equal(t, []string{"PutItem", "BatchWriteItem", "Query", "Query", "Query", "Query", "Scan", "GetItem", "GetItem", "GetItem",
		"BatchGetItem", "TransactGetItems", "Query"}, ops)
	counts := func(i int) [2]int { return [2]int{observed.list[i].Count, observed.list[i].Scanned} }
	require.Equal(t, [][2]int{{1, 1}, {0, 0}, {3, 3}, {3, 3}, {6, 6}}, [][2]int{counts(7), counts(9), counts(10), counts(11), counts(12)},
		"items counted as the path decoded them: Get, Get of nothing, BatchGet, TxGet, a collection page (its 5 and one to look ahead)")
	require.Equal(t, "GSI1", observed.list[5].Index)
	require.NotEmpty(t, observed.list[5].Capacity[0].GlobalSecondaryIndexes, "INDEXES: the index's share")
	require.Len(t, observed.list[10].Keys, 4, "ObserveKeys: the keys a BatchGet addresses")
}

// observations collects a table's observations, keys included, without
// latencies.
type observations struct {
	mu   sync.Mutex
	list []singletable.Observation
}

func (o *observations) option(opts *singletable.TableOptions) {
	opts.ObserveKeys = true
	opts.Observe = func(_ context.Context, ob *singletable.Observation) {
		o.mu.Lock()
		o.list = append(o.list, comparable(ob))
		o.mu.Unlock()
	}
}

// fixedNow gives a table a clock that stands still: cursors and managed
// timestamps carry the time.
func fixedNow(o *singletable.TableOptions) {
	o.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
}

// comparable is o without what differs from one run to the next.
func comparable(o *singletable.Observation) singletable.Observation {
	c := *o
	c.Latency = 0
	return c
}

// TestPreviewOnTheWirePath: inside Table.Preview, a table on a client
// built with wire.Enable records the same requests as on a plain client
// and returns the same (empty) results; the reads a write sends to plan
// itself go through the SDK's deserializer (they need the raw item). An
// Observe hook on both tables observes the same there. After the preview,
// the same reads take the direct path again. Not
// parallel: a running Preview makes its context's reads fall back, and
// the other tests count paths.
func TestPreviewOnTheWirePath(t *testing.T) {
	var paths wiretest.Paths
	f := tables(t, 3, paths.Option)
	var sdkObserved, observed observations
	sdkTable := singletable.NewTable(f.sdk.Client(), f.sdk.Name(), fixedNow, sdkObserved.option)
	wireTable := singletable.NewTable(f.wc, f.sdk.Name(), fixedNow, observed.option)
	sdkAccounts, accounts := singletable.MustBind(sdkTable, designs.Accounts), singletable.MustBind(wireTable, designs.Accounts)
	sdkSkills, skills := singletable.MustBind(sdkTable, designs.UserSkills), singletable.MustBind(wireTable, designs.UserSkills)
	_, err := sdkAccounts.Create(ctx, designs.Account{Username: "ana", Email: "ana@example.com", Name: "Ana"})
	require.NoError(t, err)
	sdkObserved.list = nil

	preview := func(tbl *singletable.Table, skills *singletable.Repo[designs.UserSkill], accounts *singletable.Repo[designs.Account]) ([]singletable.Request, []any) {
		var results []any
		reqs, err := tbl.Preview(ctx, func(ctx context.Context) error {
			p, err := skills.Query(designs.UserSkill{Username: "ana"}).Page(ctx)
			results = append(results, p, err)
			p, err = skills.Scan().Page(ctx)
			results = append(results, p, err)
			_, err = skills.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "go01"})
			results = append(results, errors.Is(err, singletable.ErrNotFound))
			_, err = accounts.Update(designs.Account{Username: "ana"}).Set("Email", "ana@example.org").Run(ctx)
			return err
		})
		require.NoError(t, err)
		for i, r := range reqs {
			if tw, ok := r.Input.(*dynamodb.TransactWriteItemsInput); ok {
				cp := *tw
				cp.ClientRequestToken = nil // random per call
				reqs[i].Input = &cp
			}
		}
		return reqs, results
	}
	wantReqs, want := preview(sdkTable, sdkSkills, sdkAccounts)
	paths.Reset()
	gotReqs, got := preview(wireTable, skills, accounts)
	require.Equal(t, want, got)
	require.Equal(t, wantReqs, gotReqs)
	var ops []string
	for _, r := range gotReqs {
		ops = append(ops, r.Op)
		if r.Sent {
			ops[len(ops)-1] += " (sent)"
		}
	}
	require.Equal(t, []string{"Query", "Scan", "GetItem", "GetItem (sent)", "TransactWriteItems", "GetItem"}, ops)
	direct, sdk := paths.Counts()
	require.Equal(t, [2]int64{0, 1}, [2]int64{direct, sdk}, "only the plan read was sent, on the SDK path")
	require.Len(t, observed.list, 1, "the plan read")
	require.True(t, observed.list[0].PlanRead)
	require.Equal(t, sdkObserved.list, observed.list)

	paths.Reset()
	page, err := skills.Query(designs.UserSkill{Username: "ana"}).Page(ctx)
	require.NoError(t, err)
	require.Len(t, page.Items, 3)
	direct, sdk = paths.Counts()
	require.Equal(t, [2]int64{1, 0}, [2]int64{direct, sdk}, "after the preview, the direct path")
}

// TestMiddlewareSeesTheSameCall: a middleware of the client (as logging
// and OpenTelemetry's are) sees, for every read on the direct path, the
// same input as on the SDK path (every scalar member: TableName,
// IndexName, Limit, ConsistentRead, Select, ...) and the same output
// but for the items (Count, ScannedCount, LastEvaluatedKey,
// ConsumedCapacity). A lookahead past a full page is an SDK call on both.
func TestMiddlewareSeesTheSameCall(t *testing.T) {
	t.Parallel()
	var sdkCalls, wireCalls calls
	f := tables(t, 6)
	withMiddleware := func(c *calls) func(*dynamodb.Options) {
		return func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.record) }
	}
	sdkTable := singletable.NewTable(ddblocal.Shared(t).Client(withMiddleware(&sdkCalls)), f.sdk.Name())
	wireTable := singletable.NewTable(ddblocal.Shared(t).Client(wire.Enable, withMiddleware(&wireCalls)), f.sdk.Name())
	read := func(tbl *singletable.Table) {
		skills := singletable.MustBind(tbl, designs.UserSkills)
		ana := designs.UserSkill{Username: "ana"}
		consistent := func(o *singletable.ReadOptions) { o.ConsistentRead = true; o.Fields = []string{"Level"} }
		p, err := skills.Query(ana, consistent).Limit(2).Page(ctx)
		require.NoError(t, err)
		_, err = skills.Query(ana).Limit(2).After(p.Cursor).Page(ctx)
		require.NoError(t, err)
		_, err = skills.QueryIndex("GSI1", designs.UserSkill{SkillName: "go01"}).Page(ctx)
		require.NoError(t, err)
		_, err = skills.Scan().Segment(0, 2).PageSize(3).Page(ctx)
		require.NoError(t, err)
		_, err = skills.Get(ctx, designs.UserSkill{Username: "ana", SkillName: "go02"}, consistent)
		require.NoError(t, err)
	}
	read(sdkTable)
	read(wireTable)
	require.Len(t, wireCalls.list, len(sdkCalls.list))
	direct := 0
	for i, c := range wireCalls.list {
		if c.items == 0 && sdkCalls.list[i].items > 0 {
			direct++
			sdkCalls.list[i].items = 0
		}
	}
	require.Equal(t, 5, direct, "every page and Get decoded directly (a Scan's lookahead past its page is the SDK's)")
	require.Equal(t, sdkCalls.list, wireCalls.list)
}

// call is what a middleware saw of one call: the input, and the output
// without its items (their number on the SDK path).
type call struct {
	op     string
	input  any
	output any
	items  int
}

type calls struct {
	mu   sync.Mutex
	list []call
}

// record is an Initialize middleware, outermost, as a user's is.
func (c *calls) record(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		input := copyInput(in.Parameters)
		out, md, err := next.HandleInitialize(ctx, in)
		if err != nil {
			return out, md, err
		}
		rec := call{op: middleware.GetOperationName(ctx), input: input, items: wiretest.OutputItems(out.Result)}
		switch o := out.Result.(type) {
		case *dynamodb.QueryOutput:
			cp := *o
			cp.Items, cp.ResultMetadata = nil, middleware.Metadata{}
			rec.output = cp
		case *dynamodb.ScanOutput:
			cp := *o
			cp.Items, cp.ResultMetadata = nil, middleware.Metadata{}
			rec.output = cp
		case *dynamodb.GetItemOutput:
			cp := *o
			cp.Item, cp.ResultMetadata = nil, middleware.Metadata{}
			rec.output = cp
		}
		c.mu.Lock()
		c.list = append(c.list, rec)
		c.mu.Unlock()
		return out, md, err
	}), middleware.Before)
}

// copyInput is a read's input as the middleware sees it, copied.
func copyInput(in any) any {
	switch v := in.(type) {
	case *dynamodb.QueryInput:
		return *v
	case *dynamodb.ScanInput:
		return *v
	case *dynamodb.GetItemInput:
		return *v
	}
	return in
}
