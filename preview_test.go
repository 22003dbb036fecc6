package singletable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// sentRecorder is a Client that records every request it passes on to
// DynamoDB Local, as the library hands it over: what is really sent.
type sentRecorder struct {
	*dynamodb.Client
	mu   sync.Mutex
	reqs []singletable.Request
}

// sent records a copy of in (the library may set fields of an input it
// sends again, as a Preview's copy does not see) and passes it on.
func sent[I, O any](c *sentRecorder, op string, in *I, send func(*I) (*O, error)) (*O, error) {
	cp := *in
	c.mu.Lock()
	c.reqs = append(c.reqs, singletable.Request{Op: op, Input: &cp, Sent: true})
	c.mu.Unlock()
	return send(in)
}

// take returns the requests sent since the last take.
func (c *sentRecorder) take() []singletable.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reqs
	c.reqs = nil
	return r
}

func (c *sentRecorder) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return sent(c, "GetItem", in, func(in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return c.Client.GetItem(ctx, in, o...)
	})
}
func (c *sentRecorder) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return sent(c, "PutItem", in, func(in *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
		return c.Client.PutItem(ctx, in, o...)
	})
}
func (c *sentRecorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return sent(c, "UpdateItem", in, func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return c.Client.UpdateItem(ctx, in, o...)
	})
}
func (c *sentRecorder) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return sent(c, "DeleteItem", in, func(in *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
		return c.Client.DeleteItem(ctx, in, o...)
	})
}
func (c *sentRecorder) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return sent(c, "Query", in, func(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) { return c.Client.Query(ctx, in, o...) })
}
func (c *sentRecorder) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return sent(c, "Scan", in, func(in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) { return c.Client.Scan(ctx, in, o...) })
}
func (c *sentRecorder) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return sent(c, "BatchGetItem", in, func(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
		return c.Client.BatchGetItem(ctx, in, o...)
	})
}
func (c *sentRecorder) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return sent(c, "BatchWriteItem", in, func(in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
		return c.Client.BatchWriteItem(ctx, in, o...)
	})
}
func (c *sentRecorder) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return sent(c, "TransactGetItems", in, func(in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error) {
		return c.Client.TransactGetItems(ctx, in, o...)
	})
}
func (c *sentRecorder) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return sent(c, "TransactWriteItems", in, func(in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
		return c.Client.TransactWriteItems(ctx, in, o...)
	})
}

// PDoc is a versioned entity whose index sort key combines two fields that
// are not in its primary key: an update of one of them reads the other.
type PDoc struct {
	Team      string
	ID        string
	Owner     string
	Status    string
	Title     string
	Tags      []string
	Count     int
	Version   int
	UpdatedAt time.Time
}

var PDocs = singletable.MustDefine(singletable.Schema[PDoc]{
	Type: "PreviewDoc", PK: "TEAM#{Team}", SK: "DOC#{ID}",
	Version: "Version", UpdatedAt: "UpdatedAt",
	Indexes: []singletable.IndexSchema[PDoc]{{Name: "GSI1", PK: "OWNER#{Owner}", SK: "STATUS#{Status}#TITLE#{Title}"}},
})

// previewTable is a fresh table of PDocs and Members (unique Email,
// version, timestamps, TTL) whose client records what is sent, with a
// fixed clock so that a write's timestamps are the same in its preview
// and when it runs.
func previewTable(t *testing.T) (*singletable.Table, *sentRecorder, *singletable.Repo[PDoc], *singletable.Repo[Member]) {
	t.Helper()
	raw := ddblocal.Shared(t).Client()
	c := &sentRecorder{Client: raw}
	name := ddblocal.TableName(t)
	now := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	tbl := singletable.NewTable(c, name, func(o *singletable.TableOptions) { o.Now = func() time.Time { return now } })
	docs := singletable.MustBind(tbl, PDocs)
	members := singletable.MustBind(tbl, Members)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, raw, name)
	c.take()
	return tbl, c, docs, members
}

// tableItems returns every item of the table, read with the raw client,
// in a stable order.
func tableItems(t *testing.T, c *sentRecorder, name string) []string {
	t.Helper()
	var items []string
	p := dynamodb.NewScanPaginator(c.Client, &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range out.Items {
			b, err := json.Marshal(it)
			require.NoError(t, err)
			items = append(items, string(b))
		}
	}
	slices.Sort(items)
	return items
}

// opRequest is a request without its Sent flag, to compare a preview's
// requests with the ones then sent.
type opRequest struct {
	Op    string
	Input any
}

// comparable strips the Sent flags and normalises what is random per
// call: the client request token of a transaction, which Tx generates
// anew for every call unless the caller gives one. With unordered, the
// requests are sorted (batches send their chunks concurrently).
func comparableRequests(t *testing.T, reqs []singletable.Request, unordered bool) []opRequest {
	t.Helper()
	out := make([]opRequest, len(reqs))
	for i, r := range reqs {
		in := r.Input
		if tw, ok := in.(*dynamodb.TransactWriteItemsInput); ok {
			cp := *tw
			require.NotEmpty(t, aws.ToString(cp.ClientRequestToken), "a transaction carries a token")
			cp.ClientRequestToken = nil
			in = &cp
		}
		out[i] = opRequest{Op: r.Op, Input: in}
	}
	if unordered {
		key := func(r opRequest) string {
			b, err := json.Marshal(r.Input)
			require.NoError(t, err)
			return r.Op + string(b)
		}
		slices.SortFunc(out, func(a, b opRequest) int { return strings.Compare(key(a), key(b)) })
	}
	return out
}

func opsOf(reqs []singletable.Request) []string {
	var ops []string
	for _, r := range reqs {
		op := r.Op
		if r.Sent {
			op += " (sent)"
		}
		ops = append(ops, op)
	}
	return ops
}

// TestPreviewEqualsSent previews each operation against DynamoDB Local,
// checks that the preview wrote nothing and sent only the reads it lists
// as sent, then runs the operation for real: the requests sent must equal
// the previewed ones, input for input (reflect.DeepEqual on the SDK
// inputs). The only value normalised is the client request token of a
// transaction, random per call.
func TestPreviewEqualsSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, c, docs, members := previewTable(t)
	seq := singletable.NewSequence(tbl, "events")
	adopted := singletable.NewSequence(tbl, "adopted", func(o *singletable.SequenceOptions) {
		o.Highest = func(ctx context.Context) (int64, error) {
			p, err := docs.Query(PDoc{Team: "core"}).Desc().Limit(1).Page(ctx)
			if err != nil || len(p.Items) == 0 {
				return 0, err
			}
			return int64(len(p.Items[0].ID) * 10), nil // "d4": 20, so the claim is 21
		}
	})

	// Seed: docs in one team, a member, a sequence at 2.
	for i := range 5 {
		_, err := docs.Create(ctx, PDoc{Team: "core", ID: fmt.Sprintf("d%d", i), Owner: "ann", Status: "draft", Title: fmt.Sprintf("T%d", i), Tags: []string{"t"}})
		require.NoError(t, err)
	}
	for _, id := range []string{"m1", "m3"} {
		_, err := members.Create(ctx, Member{ID: id, Email: id + "@example.com", Plan: "free"})
		require.NoError(t, err)
	}
	for range 2 {
		_, err := seq.Append(ctx, func(int64) ([]singletable.WriteOp, error) { return nil, nil })
		require.NoError(t, err)
	}
	c.take()

	var batch []singletable.WriteOp
	for i := range 60 {
		batch = append(batch, docs.PutOp(PDoc{Team: "bulk", ID: fmt.Sprintf("b%02d", i), Owner: "bob", Status: "new", Title: "B"}))
	}
	var got PDoc
	var gotM Member

	cases := []struct {
		name      string
		fn        func(ctx context.Context) error
		ops       []string // the previewed requests; "(sent)" marks a plan read
		unordered bool
	}{
		{"Get", func(ctx context.Context) error {
			_, err := docs.Get(ctx, PDoc{Team: "core", ID: "d0"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
			return notFoundIsFine(err)
		}, []string{"GetItem"}, false},
		{"Create", func(ctx context.Context) error {
			_, err := docs.Create(ctx, PDoc{Team: "core", ID: "new", Owner: "ann", Status: "draft", Title: "N"})
			return err
		}, []string{"PutItem"}, false},
		{"Create with a unique field", func(ctx context.Context) error {
			_, err := members.Create(ctx, Member{ID: "m2", Email: "m2@example.com"})
			return err
		}, []string{"TransactWriteItems"}, false},
		{"Put with its version", func(ctx context.Context) error {
			_, err := docs.Put(ctx, PDoc{Team: "core", ID: "d1", Owner: "ann", Status: "done", Title: "T1", Version: 1})
			return err
		}, []string{"PutItem"}, false},
		{"Put without a version reads it", func(ctx context.Context) error {
			_, err := docs.Put(ctx, PDoc{Team: "core", ID: "d1", Owner: "ann", Status: "done", Title: "T1"})
			return err
		}, []string{"GetItem (sent)", "PutItem"}, false},
		{"Put moving a unique value", func(ctx context.Context) error {
			_, err := members.Put(ctx, Member{ID: "m1", Email: "new@example.com", Version: 1})
			return err
		}, []string{"GetItem (sent)", "TransactWriteItems"}, false},
		{"Update giving the index key's fields", func(ctx context.Context) error {
			_, err := docs.Update(PDoc{Team: "core", ID: "d2", Version: 1}).Set("Owner", "cat").Set("Status", "draft").Set("Title", "T2").Run(ctx)
			return err
		}, []string{"UpdateItem"}, false},
		{"Update that reads the index key's other field", func(ctx context.Context) error {
			_, err := docs.Update(PDoc{Team: "core", ID: "d3", Version: 1}).Set("Status", "done").Run(ctx)
			return err
		}, []string{"GetItem (sent)", "UpdateItem"}, false},
		{"Update with list and number operators", func(ctx context.Context) error {
			_, err := docs.Update(PDoc{Team: "core", ID: "d0", Version: 1}).Append("Tags", "a", "b").Subtract("Count", 2).Run(ctx)
			return err
		}, []string{"UpdateItem"}, false},
		{"Idempotent update", func(ctx context.Context) error {
			_, err := docs.Update(PDoc{Team: "core", ID: "d2"}).Add("Count", 1).Idempotent(runToken("preview-idempotent")).Run(ctx)
			return err // sent as a transaction, read back by a GetItem: empty in the preview, still a success
		}, []string{"TransactWriteItems", "GetItem"}, false},
		{"Upsert", func(ctx context.Context) error {
			_, err := docs.Update(PDoc{Team: "core", ID: "up"}).Set("Owner", "dan").Set("Status", "new").Set("Title", "U").Upsert().Run(ctx)
			return err // created with a PutItem, read back by a GetItem: empty in the preview, still a success
		}, []string{"GetItem (sent)", "PutItem", "GetItem"}, false},
		{"Update moving a unique value", func(ctx context.Context) error {
			_, err := members.Update(Member{ID: "m1"}).Set("Email", "m1-new@example.com").Run(ctx)
			return err // a transaction read back by a GetItem: empty in the preview, still a success
		}, []string{"GetItem (sent)", "TransactWriteItems", "GetItem"}, false},
		{"Delete", func(ctx context.Context) error {
			_, err := docs.Delete(ctx, PDoc{Team: "core", ID: "d4"})
			return err
		}, []string{"DeleteItem"}, false},
		{"Delete releasing a unique value", func(ctx context.Context) error {
			_, err := members.Delete(ctx, Member{ID: "m3"})
			return err
		}, []string{"GetItem (sent)", "TransactWriteItems"}, false},
		{"Query page", func(ctx context.Context) error {
			_, err := docs.Query(PDoc{Team: "core"}).Where("ID", singletable.Ge, "d1").Limit(2).Page(ctx)
			return err
		}, []string{"Query"}, false},
		{"Query on an index with a filter", func(ctx context.Context) error {
			_, err := docs.QueryIndex("GSI1", PDoc{Owner: "ann"}).Filter(expression.Name("Title").BeginsWith("T")).Collect(ctx)
			return err
		}, []string{"Query"}, false},
		{"Collection page", func(ctx context.Context) error {
			var ds []PDoc
			_, err := docs.QueryCollection(PDoc{Team: "core"}).Limit(3).Page(ctx, docs.AppendTo(&ds))
			return err
		}, []string{"Query"}, false},
		{"BatchGet", func(ctx context.Context) error {
			_, err := batchGet(ctx, docs, []PDoc{{Team: "core", ID: "d0"}, {Team: "core", ID: "d1"}, {Team: "core", ID: "zz"}}, nil)
			return err
		}, []string{"BatchGetItem"}, false},
		{"BatchWrite of 60 ops", func(ctx context.Context) error {
			return singletable.BatchWrite(ctx, batch)
		}, []string{"BatchWriteItem", "BatchWriteItem", "BatchWriteItem"}, true},
		{"Tx", func(ctx context.Context) error {
			return singletable.Tx(ctx, []singletable.WriteOp{
				docs.CreateOp(PDoc{Team: "core", ID: "tx", Owner: "ann", Status: "new", Title: "X"}),
				docs.Update(PDoc{Team: "core", ID: "d0"}).Set("Status", "archived").Op(),
				docs.DeleteOp(PDoc{Team: "core", ID: "d1"}),
				members.CheckOp(Member{ID: "m1"}, expression.Name("Email").AttributeExists()),
			})
		}, []string{"GetItem (sent)", "TransactWriteItems"}, false},
		{"TxGet", func(ctx context.Context) error {
			_, err := singletable.TxGet(ctx, []singletable.GetOp{docs.GetOp(PDoc{Team: "core", ID: "d0"}, &got), members.GetOp(Member{ID: "m1"}, &gotM)})
			return err
		}, []string{"TransactGetItems"}, false},
		{"Sequence.Append", func(ctx context.Context) error {
			_, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
				return []singletable.WriteOp{docs.CreateOp(PDoc{Team: "log", ID: fmt.Sprint(n), Owner: "seq", Status: "new", Title: "E"})}, nil
			})
			return err
		}, []string{"GetItem (sent)", "TransactWriteItems"}, false},
		{"Sequence adopting the highest number used", func(ctx context.Context) error {
			// Highest's read tells the claim what to write: sent in the
			// preview too, so that the previewed claim is the real one.
			_, err := adopted.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
				return []singletable.WriteOp{docs.CreateOp(PDoc{Team: "adopted", ID: fmt.Sprint(n), Owner: "seq", Status: "new", Title: "E"})}, nil
			})
			return err
		}, []string{"GetItem (sent)", "Query (sent)", "TransactWriteItems"}, false},
		{"Scan page", func(ctx context.Context) error {
			_, err := docs.Scan().Page(ctx)
			return err
		}, []string{"Scan"}, false},
		{"Scan of one segment with a filter", func(ctx context.Context) error {
			_, err := docs.Scan().Segment(1, 2).Filter(expression.Name("Owner").Equal(expression.Value("ann"))).Collect(ctx)
			return err
		}, []string{"Scan"}, false},
		{"Sequence.Current", func(ctx context.Context) error {
			_, err := seq.Current(ctx)
			return err
		}, []string{"GetItem"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.take()
			before := tableItems(t, c, tbl.Name())
			previewed, err := tbl.Preview(ctx, tc.fn)
			require.NoError(t, err)
			require.Equal(t, tc.ops, opsOf(previewed))
			var planReads []singletable.Request
			for _, r := range previewed {
				if r.Sent {
					planReads = append(planReads, r)
				}
			}
			require.Equal(t, comparableRequests(t, planReads, false), comparableRequests(t, c.take(), false),
				"during the preview, exactly the reads listed as sent were sent")
			require.Equal(t, before, tableItems(t, c, tbl.Name()), "the preview wrote nothing")
			c.take()

			require.NoError(t, tc.fn(ctx))
			real := c.take()
			require.Equal(t, comparableRequests(t, previewed, tc.unordered), comparableRequests(t, real, tc.unordered))
			if slices.ContainsFunc(real, func(r singletable.Request) bool { return !readOps[r.Op] }) {
				require.NotEqual(t, before, tableItems(t, c, tbl.Name()), "the real run wrote")
			}
		})
	}
	n, err := adopted.Current(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(21), n, "the adopted sequence claimed the number after Highest's")
}

var readOps = map[string]bool{"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true}

func notFoundIsFine(err error) error {
	if errors.Is(err, singletable.ErrNotFound) {
		return nil
	}
	return err
}

// TestPreviewSendsNothingElse: table administration fails inside a preview
// without sending anything (migrations too: migrate's
// TestMigrationNotPreviewed); fn's error comes back with
// the requests recorded until then; a write through another table is
// recorded too; a request made with a context not derived from the
// preview's is sent.
func TestPreviewSendsNothingElse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, c, docs, _ := previewTable(t)
	_, err := docs.Create(ctx, PDoc{Team: "core", ID: "d0", Owner: "ann", Status: "draft", Title: "T"})
	require.NoError(t, err)
	c.take()

	t.Run("table administration", func(t *testing.T) {
		reqs, err := tbl.Preview(ctx, func(ctx context.Context) error { return tbl.CreateTable(ctx) })
		require.ErrorContains(t, err, "table administration is not previewed")
		require.Empty(t, reqs)
		_, err = tbl.Preview(ctx, func(ctx context.Context) error { return tbl.Check(ctx) })
		require.ErrorContains(t, err, "table administration is not previewed")
		require.Empty(t, c.take())
	})

	t.Run("fn's error", func(t *testing.T) {
		stop := errors.New("stop")
		reqs, err := tbl.Preview(ctx, func(ctx context.Context) error {
			if _, err := docs.Create(ctx, PDoc{Team: "core", ID: "a", Owner: "o", Status: "s", Title: "t"}); err != nil {
				return err
			}
			return stop
		})
		require.ErrorIs(t, err, stop)
		require.Equal(t, []string{"PutItem"}, opsOf(reqs))
		in := reqs[0].Input.(*dynamodb.PutItemInput)
		require.Equal(t, tbl.Name(), aws.ToString(in.TableName))
		require.Empty(t, c.take())
	})

	t.Run("another table", func(t *testing.T) {
		other := singletable.NewTable(c, "another-table")
		odocs := singletable.MustBind(other, PDocs)
		reqs, err := tbl.Preview(ctx, func(ctx context.Context) error {
			_, err := odocs.Create(ctx, PDoc{Team: "core", ID: "o", Owner: "o", Status: "s", Title: "t"})
			return err
		})
		require.NoError(t, err)
		require.Equal(t, []string{"PutItem"}, opsOf(reqs))
		require.Equal(t, "another-table", aws.ToString(reqs[0].Input.(*dynamodb.PutItemInput).TableName))
		require.Empty(t, c.take())
	})

	t.Run("another context", func(t *testing.T) {
		reqs, err := tbl.Preview(ctx, func(context.Context) error {
			_, err := docs.Get(ctx, PDoc{Team: "core", ID: "d0"}) // the outer ctx: sent
			return err
		})
		require.NoError(t, err, "the item was read for real")
		require.Empty(t, reqs)
		require.Equal(t, []string{"GetItem (sent)"}, opsOf(c.take()))
	})
}
