package request

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
	"github.com/singletable-go/singletable/internal/wiretest"
	"github.com/singletable-go/singletable/wire"
)

// TestSameRequestsJSON pins the direct wire path's requests: for every
// read it serves, and each of their options, the request bodies the
// library sends on a client built with wire.Enable are, as JSON (members
// in any order, values exactly), the bodies the SDK serializes from the
// inputs the library builds on a plain client, today's path. Both
// clients are real *dynamodb.Clients on one canned transport; the values
// the library returns must be equal too, and each case says which
// operations' responses the direct path decodes (the others, and every
// response on the plain client, go through the SDK's deserializer), so
// a read that silently falls back fails here.
//
// An operation that comes onto the path is one more case: its run, the
// canned responses it needs (resp), and direct.
func TestSameRequestsJSON(t *testing.T) {
	for _, c := range jsonCases() {
		t.Run(c.name, func(t *testing.T) {
			sdk, direct := jsonPair(c.resp)
			want, wantErr := c.run(sdk.env)
			got, gotErr := c.run(direct.env)
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Fatalf("error %v, on the SDK path %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("values differ: %s", firstDiff(asJSON(t, got), asJSON(t, want)))
			}
			a, b := sdk.bodies(t), direct.bodies(t)
			if len(a) == 0 {
				t.Fatal("no request sent")
			}
			if !slices.Equal(a, b) {
				t.Errorf("request bodies:\ndirect %s\nSDK    %s", strings.Join(b, "\n       "), strings.Join(a, "\n       "))
			}
			if n := sdk.decodedDirectly(); len(n) > 0 {
				t.Errorf("the plain client decoded %v directly", n)
			}
			got2 := direct.decodedDirectly()
			for _, op := range c.direct {
				if got2[op] == 0 {
					t.Errorf("no %s response with items took the direct path", op)
				}
				if n := direct.viaSDK(op); n != c.probes {
					t.Errorf("%d %s responses with items went through the SDK's deserializer, want %d", n, op, c.probes)
				}
			}
			for op, n := range got2 {
				if !slices.Contains(c.direct, op) {
					t.Errorf("%d %s responses took the direct path: add %s to the case's direct", n, op, op)
				}
			}
		})
	}
}

// jsonCase is a read run on both clients.
type jsonCase struct {
	name   string
	resp   map[string][]byte // canned bodies beside cannedFor's
	direct []string          // the operations whose responses the path decodes
	probes int               // of those, the responses the SDK decodes: lookaheads past a full page
	run    func(e env) (any, error)
}

// env is what a case reads through.
type env struct {
	table *singletable.Table
	repo  *singletable.Repo[benchfix.Profile]
	f     *fixture
}

func jsonCases() []jsonCase {
	ana := func(e env) benchfix.Profile { return benchfix.Profile{Username: e.f.key.Username} }
	q := func(c *singletable.Query[benchfix.Profile]) (any, error) { return pageValue(c.Page(ctx)) }
	sc := func(c *singletable.Scan[benchfix.Profile]) (any, error) { return pageValue(c.Page(ctx)) }
	read := func(fn func(*singletable.ReadOptions)) []func(*singletable.ReadOptions) {
		return []func(*singletable.ReadOptions){fn}
	}
	consistent := read(func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	fields := read(func(o *singletable.ReadOptions) { o.Fields = []string{"Level", "Years", "Tags"} })
	strict := read(func(o *singletable.ReadOptions) { o.StrictDecode = true })
	years := expression.Name("Years").GreaterThan(expression.Value(3))
	lek := fmt.Sprintf(`"LastEvaluatedKey":{"PK":{"S":"USER#%s"},"SK":{"S":"SKILL#skillt"}}`, benchfix.Sample(1).Username)
	return []jsonCase{
		{name: "Query", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e))) }},
		{name: "Query/ConsistentRead", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e), consistent...)) }},
		{name: "Query/Fields", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e), fields...)) }},
		{name: "Query/StrictDecode", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e), strict...)) }},
		{name: "Query/Desc", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e)).Desc()) }},
		{name: "Query/PageSize", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e)).PageSize(7)) }},
		{name: "Query/Filter", direct: []string{"Query"}, run: func(e env) (any, error) { return q(e.repo.Query(ana(e)).Filter(years)) }},
		{name: "Query/Where", direct: []string{"Query"}, run: func(e env) (any, error) {
			return q(e.repo.Query(ana(e)).Where("SkillName", singletable.Ge, "skillc"))
		}},
		{name: "Query/Between", direct: []string{"Query"}, run: func(e env) (any, error) {
			return q(e.repo.Query(ana(e)).Between("SkillName", "skillb", "skillq"))
		}},
		{name: "Query/BeginsWith", direct: []string{"Query"}, run: func(e env) (any, error) {
			return q(e.repo.Query(ana(e)).BeginsWith("SkillName", "skill"))
		}},
		// Limit cuts the page: the cursor is made from the last item's keys
		// as the direct path kept them, and the next page starts there.
		{name: "Query/Limit/After", direct: []string{"Query"}, run: func(e env) (any, error) {
			return twoPages(e.repo.Query(ana(e)).Desc().Limit(5), func(c string) *singletable.Query[benchfix.Profile] {
				return e.repo.Query(ana(e)).Desc().Limit(5).After(c)
			})
		}},
		// A response with LastEvaluatedKey: the cursor is made from it,
		// after a lookahead (on the SDK path) that finds an item past it.
		{name: "Query/LastEvaluatedKey", direct: []string{"Query"}, probes: 2, resp: map[string][]byte{"Query": withMember("Query", lek)},
			run: func(e env) (any, error) {
				return twoPages(e.repo.Query(ana(e)).PageSize(20), func(c string) *singletable.Query[benchfix.Profile] {
					return e.repo.Query(ana(e)).PageSize(20).After(c)
				})
			}},
		{name: "QueryIndex", direct: []string{"Query"}, run: func(e env) (any, error) {
			return q(e.repo.QueryIndex("GSI1", benchfix.Profile{SkillName: "skilla"}))
		}},
		{name: "QueryIndex/Where/Limit", direct: []string{"Query"}, run: func(e env) (any, error) {
			return q(e.repo.QueryIndex("GSI1", benchfix.Profile{SkillName: "skilla"}).Where("Level", singletable.Eq, "Senior").Limit(3))
		}},
		// An item that does not decode is skipped, and with StrictDecode fails the page.
		{name: "Query/Undecodable", direct: []string{"Query"}, resp: map[string][]byte{"Query": undecodable()},
			run: func(e env) (any, error) { return q(e.repo.Query(ana(e))) }},
		{name: "Query/Undecodable/StrictDecode", direct: []string{"Query"}, resp: map[string][]byte{"Query": undecodable()},
			run: func(e env) (any, error) { return q(e.repo.Query(ana(e), strict...)) }},
		// Iterators, counts (Select COUNT: the path reads past the items)
		// and the merge of a write-sharded index's shards.
		{name: "Query/All", direct: []string{"Query"}, run: func(e env) (any, error) { return e.repo.Query(ana(e)).Collect(ctx) }},
		{name: "Query/All/Limit", direct: []string{"Query"}, run: func(e env) (any, error) { return yielded(e.repo.Query(ana(e)).Limit(7).All(ctx)) }},
		{name: "Query/All/Undecodable", direct: []string{"Query"}, resp: map[string][]byte{"Query": undecodable()},
			run: func(e env) (any, error) { return yielded(e.repo.Query(ana(e)).All(ctx)) }},
		{name: "Query/Count", direct: []string{"Query"}, run: func(e env) (any, error) { return e.repo.Query(ana(e)).Count(ctx) }},
		{name: "QueryIndex/Sharded/Limit/After", direct: []string{"Query"}, run: func(e env) (any, error) {
			r := shardedRepo(e)
			key := benchfix.Profile{SkillName: "skilla"}
			p, err := r.QueryIndex("GSI1", key).Limit(5).Page(ctx)
			if err != nil || p.Cursor == "" {
				return nil, fmt.Errorf("first page: cursor %q, %v", p.Cursor, err)
			}
			a, _ := pageValue(p, nil)
			b, err := pageValue(r.QueryIndex("GSI1", key).Limit(5).After(p.Cursor).Page(ctx))
			return []any{a, b}, err
		}},
		{name: "QueryIndex/Sharded/All", direct: []string{"Query"}, run: func(e env) (any, error) {
			return shardedRepo(e).QueryIndex("GSI1", benchfix.Profile{SkillName: "skilla"}).Collect(ctx)
		}},
		{name: "QueryIndex/Sharded/Count", direct: []string{"Query"}, run: func(e env) (any, error) {
			return shardedRepo(e).QueryIndex("GSI1", benchfix.Profile{SkillName: "skilla"}).Count(ctx)
		}},

		// Collections: each item routed by its head, decoded into its target.
		{name: "Collection", direct: []string{"Query"}, run: func(e env) (any, error) {
			var ps []benchfix.Profile
			p, err := e.repo.QueryCollection(ana(e)).Page(ctx, e.repo.AppendTo(&ps))
			v, _ := pageValue(p, err)
			return []any{ps, v}, err
		}},
		{name: "Collection/Limit/After/Desc", direct: []string{"Query"}, run: func(e env) (any, error) {
			c := e.repo.QueryCollection(ana(e)).Desc().Limit(6)
			p, err := c.Page(ctx, e.repo.Target())
			if err != nil || p.Cursor == "" {
				return nil, fmt.Errorf("first page: cursor %q, %v", p.Cursor, err)
			}
			a, _ := pageValue(p, nil)
			b, err := pageValue(c.After(p.Cursor).Page(ctx, e.repo.Target()))
			return []any{a, b}, err
		}},
		{name: "Collection/All/Fields", direct: []string{"Query"}, run: func(e env) (any, error) {
			return yielded(e.repo.QueryCollection(ana(e), fields...).All(ctx, e.repo.Target()))
		}},
		{name: "Collection/Undecodable", direct: []string{"Query"}, resp: map[string][]byte{"Query": undecodable()},
			run: func(e env) (any, error) { return pageValue(e.repo.QueryCollection(ana(e)).Page(ctx, e.repo.Target())) }},
		{name: "Collection/Undecodable/StrictDecode", direct: []string{"Query"}, resp: map[string][]byte{"Query": undecodable()},
			run: func(e env) (any, error) {
				return pageValue(e.repo.QueryCollection(ana(e), strict...).Page(ctx, e.repo.Target()))
			}},
		{name: "Collection/Unknown", direct: []string{"Query"}, resp: map[string][]byte{"Query": foreign()},
			run: func(e env) (any, error) { return pageValue(e.repo.QueryCollection(ana(e)).Page(ctx, e.repo.Target())) }},
		{name: "Collection/SkipUnknown", direct: []string{"Query"}, resp: map[string][]byte{"Query": foreign()},
			run: func(e env) (any, error) {
				return pageValue(e.repo.QueryCollection(ana(e)).SkipUnknown().Page(ctx, e.repo.Target()))
			}},
		{name: "Collection/StoreOne", direct: []string{"Query"}, run: func(e env) (any, error) {
			var p benchfix.Profile
			return pageValue(e.repo.QueryCollection(ana(e)).Page(ctx, e.repo.StoreOne(&p)))
		}},

		{name: "Scan", direct: []string{"Scan"}, run: func(e env) (any, error) { return sc(e.repo.Scan()) }},
		{name: "Scan/ConsistentRead/Fields", direct: []string{"Scan"}, run: func(e env) (any, error) {
			return sc(e.repo.Scan(consistent[0], fields[0]))
		}},
		{name: "Scan/Filter/PageSize", direct: []string{"Scan"}, run: func(e env) (any, error) { return sc(e.repo.Scan().Filter(years).PageSize(9)) }},
		{name: "Scan/Segment", direct: []string{"Scan"}, run: func(e env) (any, error) { return sc(e.repo.Scan().Segment(2, 5)) }},
		{name: "Scan/Limit/After", direct: []string{"Scan"}, run: func(e env) (any, error) {
			first, err := e.repo.Scan().Limit(4).Page(ctx)
			if err != nil {
				return nil, err
			}
			return pageValue(e.repo.Scan().Limit(4).After(first.Cursor).Page(ctx))
		}},
		{name: "ScanIndex", direct: []string{"Scan"}, run: func(e env) (any, error) { return sc(e.repo.ScanIndex("GSI1")) }},
		// A parallel scan's segments, each holding its response until the
		// reading goroutine took it.
		{name: "Scan/Segments", direct: []string{"Scan"}, run: func(e env) (any, error) { return e.repo.Scan().Segments(3).Collect(ctx) }},
		{name: "Scan/Segments/Count", direct: []string{"Scan"}, run: func(e env) (any, error) { return e.repo.Scan().Segments(3).Count(ctx) }},
		{name: "Scan/All/Filter", direct: []string{"Scan"}, run: func(e env) (any, error) { return yielded(e.repo.Scan().Filter(years).All(ctx)) }},
		{name: "Table.Scan", direct: []string{"Scan"}, run: func(e env) (any, error) {
			var ps []benchfix.Profile
			p, err := e.table.Scan().Page(ctx, e.repo.AppendTo(&ps))
			return []any{ps, p.Cursor, len(p.Items)}, err
		}},
		{name: "Table.Scan/Segments/All", direct: []string{"Scan"}, run: func(e env) (any, error) {
			return yielded(e.table.Scan().Segments(2).All(ctx, e.repo.Target()))
		}},
		{name: "Table.Scan/Count", direct: []string{"Scan"}, run: func(e env) (any, error) { return e.table.Scan().Count(ctx) }},

		{name: "Get", direct: []string{"GetItem"}, run: func(e env) (any, error) { return e.repo.Get(ctx, e.f.key) }},
		{name: "Get/ConsistentRead", direct: []string{"GetItem"}, run: func(e env) (any, error) { return e.repo.Get(ctx, e.f.key, consistent...) }},
		{name: "Get/Fields", direct: []string{"GetItem"}, run: func(e env) (any, error) { return e.repo.Get(ctx, e.f.key, fields...) }},
		{name: "Get/NotFound", resp: map[string][]byte{"GetItem": []byte(`{}`)},
			run: func(e env) (any, error) { return e.repo.Get(ctx, e.f.key) }},
		{name: "Get/Foreign", direct: []string{"GetItem"}, resp: map[string][]byte{"GetItem": []byte(`{"Item":{"PK":{"S":"x"},"SK":{"S":"y"},"EntityType":{"S":"Other"}}}`)},
			run: func(e env) (any, error) { return e.repo.Get(ctx, e.f.key) }},

		{name: "BatchGet", direct: []string{"BatchGetItem"}, run: func(e env) (any, error) { return libraryBatchGet(e.f, batchKeys(e.f)) }},
		{name: "TxGet", direct: []string{"TransactGetItems"}, resp: map[string][]byte{"TransactGetItems": txGetBody()}, run: func(e env) (any, error) {
			ps := make([]benchfix.Profile, 2)
			found, err := singletable.TxGet(ctx, []singletable.GetOp{e.repo.GetOp(batchKeys(e.f)[0], &ps[0]), e.repo.GetOp(batchKeys(e.f)[1], &ps[1])})
			return []any{found, ps}, err
		}},
		{name: "Put", run: func(e env) (any, error) { return e.repo.Put(ctx, e.f.v) }},
	}
}

// pageValue is a page as a comparable value: Skipped as error texts.
func pageValue[V any](p singletable.Page[V], err error) (any, error) {
	skipped := make([]string, len(p.Skipped))
	for i, s := range p.Skipped {
		skipped[i] = s.Error()
	}
	return []any{p.Items, p.Cursor, skipped}, err
}

// twoPages reads first's page and the page after its cursor.
func twoPages(first *singletable.Query[benchfix.Profile], next func(string) *singletable.Query[benchfix.Profile]) (any, error) {
	p, err := first.Page(ctx)
	if err != nil {
		return nil, err
	}
	if p.Cursor == "" {
		return nil, fmt.Errorf("no cursor")
	}
	a, _ := pageValue(p, nil)
	b, err := pageValue(next(p.Cursor).Page(ctx))
	return []any{a, b}, err
}

// yielded is what seq yields, errors as their texts.
func yielded[V any](seq iter.Seq2[V, error]) (any, error) {
	var out []any
	for v, err := range seq {
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

// shardedProfiles are the profiles with GSI1 write-sharded.
var shardedProfiles = singletable.MustDefine(singletable.Schema[benchfix.Profile]{
	Type: profilesSchema.Type, PK: profilesSchema.PK, SK: profilesSchema.SK,
	Indexes: []singletable.IndexSchema[benchfix.Profile]{
		{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}", Shards: 3},
	},
})

// shardedRepo is the repository of shardedProfiles on e's client.
func shardedRepo(e env) *singletable.Repo[benchfix.Profile] {
	now := e.table.Options().Now
	return singletable.MustBind(singletable.NewTable(e.table.Client(), "bench", func(o *singletable.TableOptions) { o.Now = now }), shardedProfiles)
}

// withMember is cannedFor's body of op with member (JSON) added.
func withMember(op, member string) []byte {
	b := cannedFor(newFixture())[op]
	return append(append(b[:len(b)-1:len(b)-1], ','), member+"}"...)
}

// undecodable is the Query page with its third item's years a string.
func undecodable() []byte {
	return changedPage(func(page []any) { page[2].(map[string]any)["YearsOfExperience"] = map[string]any{"S": "many"} })
}

// foreign is the Query page with its fourth item of another entity type.
func foreign() []byte {
	return changedPage(func(page []any) { page[3].(map[string]any)["EntityType"] = map[string]any{"S": "Other"} })
}

// changedPage is the Query page as change leaves it.
func changedPage(change func(page []any)) []byte {
	f := newFixture()
	page := make([]any, len(f.stub.page))
	for i, it := range f.stub.page {
		page[i] = wireItem(it)
	}
	change(page)
	b, err := json.Marshal(map[string]any{"Items": page, "Count": len(page), "ScannedCount": len(page)})
	if err != nil {
		panic(err)
	}
	return b
}

// txGetBody is a TransactGetItems response: the first key's item, none
// for the second.
func txGetBody() []byte {
	f := newFixture()
	b, err := json.Marshal(map[string]any{"Responses": []any{map[string]any{"Item": wireItem(f.stub.page[0])}, map[string]any{}}})
	if err != nil {
		panic(err)
	}
	return b
}

// jsonClient is one side of TestSameRequestsJSON: a client on the canned
// transport, recording the requests it sends and, per operation, how
// many responses with items came back and how many outputs held them.
type jsonClient struct {
	env
	mu                 sync.Mutex
	sent               []string       // operation and canonical request body
	withItems, outputs map[string]int // responses with items, outputs with items
}

func jsonPair(resp map[string][]byte) (sdk, direct *jsonClient) {
	f := newFixture()
	bodies := cannedFor(f)
	bodies["TransactGetItems"] = txGetBody()
	for op, b := range resp {
		bodies[op] = b
	}
	side := func(optFns ...func(*dynamodb.Options)) *jsonClient {
		c := &jsonClient{withItems: map[string]int{}, outputs: map[string]int{}}
		opts := dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
			Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: c.transport(bodies)}}
		opts.APIOptions = append(opts.APIOptions, c.countOutputs)
		tbl := singletable.NewTable(dynamodb.New(opts, optFns...), "bench", func(o *singletable.TableOptions) {
			o.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) } // cursors carry it
		})
		fx := *f // the fixture's values, read through this client
		fx.repo = singletable.MustBind(tbl, profiles)
		c.env = env{table: tbl, repo: fx.repo, f: &fx}
		return c
	}
	return side(), side(wire.Enable)
}

// transport answers from bodies, recording each request.
func (c *jsonClient) transport(bodies canned) http.RoundTripper {
	return wiretest.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
		var body bytes.Buffer
		if r.Body != nil {
			if _, err := body.ReadFrom(r.Body); err != nil {
				return nil, err
			}
			r.Body.Close()
		}
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		canon, err := canonicalJSON(body.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s request: %w", op, err)
		}
		c.mu.Lock()
		c.sent = append(c.sent, op+" "+canon)
		if wiretest.BodyItems(bodies[op]) {
			c.withItems[op]++
		}
		c.mu.Unlock()
		r.Body = http.NoBody
		return bodies.RoundTrip(r)
	})
}

// countOutputs counts, per operation, the outputs the caller gets with
// items (a response the direct path decoded has none).
func (c *jsonClient) countOutputs(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("countOutputs", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleDeserialize(ctx, in)
		n := wiretest.OutputItems(out.Result)
		if n > 0 {
			c.mu.Lock()
			c.outputs[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
		}
		return out, md, err
	}), middleware.Before)
}

// bodies returns the requests sent, sorted (a parallel scan's segments
// go in any order).
func (c *jsonClient) bodies(t *testing.T) []string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(slices.Values(c.sent))
}

// decodedDirectly returns, per operation, the responses with items whose
// output had none.
func (c *jsonClient) decodedDirectly() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for op, n := range c.withItems {
		if d := n - c.outputs[op]; d > 0 {
			m[op] = d
		}
	}
	return m
}

// viaSDK is how many of op's responses with items kept them in the output.
func (c *jsonClient) viaSDK(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outputs[op]
}

// canonicalJSON is a JSON document with its objects' members sorted and
// its numbers as written.
func canonicalJSON(b []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("%w: %s", err, b)
	}
	out, err := json.Marshal(v) // sorts map keys
	return string(out), err
}

// firstDiff is where two texts first differ, with some context.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\ndirect ...%s\nSDK    ...%s", i, a[from:min(len(a), i+80)], b[from:min(len(b), i+80)])
}
