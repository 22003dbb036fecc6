package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// Tile has 20 fields that 20 goroutines update at once, one field each
// (N by Add, the others by Set). Its index keys combine fields of
// several goroutines, so every update changes part of keys whose other
// fields other goroutines are changing.
type Tile struct {
	Board string `dynamodbav:"Board"`
	ID    string `dynamodbav:"ID"`
	F00   string `dynamodbav:"F00"`
	F01   string `dynamodbav:"F01"`
	F02   string `dynamodbav:"F02"`
	F03   string `dynamodbav:"F03"`
	F04   string `dynamodbav:"F04"`
	F05   string `dynamodbav:"F05"`
	F06   string `dynamodbav:"F06"`
	F07   string `dynamodbav:"F07"`
	F08   string `dynamodbav:"F08"`
	F09   string `dynamodbav:"F09"`
	F10   string `dynamodbav:"F10"`
	F11   string `dynamodbav:"F11"`
	F12   string `dynamodbav:"F12"`
	F13   string `dynamodbav:"F13"`
	F14   string `dynamodbav:"F14"`
	F15   string `dynamodbav:"F15"`
	F16   string `dynamodbav:"F16"`
	F17   string `dynamodbav:"F17"`
	F18   string `dynamodbav:"F18"`
	N     int    `dynamodbav:"N"`
}

var Tiles = singletable.MustDefine(singletable.Schema[Tile]{
	Type: "Tile", PK: "BOARD#{Board}", SK: "TILE#{ID}",
	Indexes: []singletable.IndexSchema[Tile]{
		{Name: "GSI1", PK: "T1#{F00}#{F01}#{F02}", SK: "{F03}#{F04}#{F05}"},
		// Sparse: in the index while F10 ends in an even round number, so
		// the goroutine updating F10 moves the item in and out.
		{Name: "GSI2", PK: "T2#{F05}#{F06}#{F07}", SK: "{F08}#{F09}#{F10}",
			When: func(t Tile) bool { return !strings.ContainsAny(t.F10[len(t.F10)-1:], "13579") }, WhenFields: []string{"F10"}},
		// N, changed by Add, is part of the sort key.
		{Name: "GSI3", PK: "T3#{F10}#{F11}#{F12}", SK: "{F13}#{F14}#{F15}#{N}"},
		{Name: "GSI4", PK: "T4#{F15}#{F16}", SK: "{F17}#{F18}#{F00}"},
		{Name: "MA1", MultiAttribute: true, PartitionAttrs: []string{"F01", "F06"}, SortAttrs: []string{"F11", "F16"}},
	},
})

// tileIndexAttrs are the index attributes of a Tile.
var tileIndexAttrs = []string{"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK", "F01", "F06", "F11", "F16"}

// Must show (issue 15): 20 goroutines update different fields of the same
// items, whose index keys combine those fields, for a fixed number of
// rounds, without resupplying the other fields. Afterwards every index key
// equals what the declaration renders from the stored item, and no
// acknowledged update is lost: each field holds its goroutine's last
// acknowledged value and N the number of acknowledged Adds. An update that
// cannot finish within the library's retries reports ErrVersionConflict
// (nothing applied); the goroutine then tries again, as a caller would.
// A conflict must be another writer's doing: the item as stored differs
// from what it was before the attempt. That, not a count of attempts
// (which a loaded machine's scheduling decides), bounds the retries: every
// conflict follows one of the test's finite writes.
//
// On a loaded machine an attempt can end without an answer (a 5xx or a
// broken connection), and when the SDK's retry then meets another
// writer's change, the outcome is unknown (ErrMaybeApplied, as documented:
// like a timeout). Each goroutine alone writes its field, so it reads the
// item back to learn whether its update applied, and acknowledges it or
// tries again. Every ErrMaybeApplied must follow an UpdateItem attempt
// that the test saw go unanswered.
func TestConcurrentPartialUpdatesKeepIndexKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var tiles *singletable.Repo[Tile]
	unanswered := &unansweredAttempts{op: "UpdateItem"}
	c := ddblocal.Shared(t).Client(unanswered.option)
	newTableWith(t, c, func(tbl *singletable.Table) { tiles = singletable.MustBind(tbl, Tiles) })
	consistent := func(o *singletable.ReadOptions) { o.ConsistentRead = true }
	const (
		writers = 20
		items   = 3
		rounds  = 10
	)
	init := Tile{Board: "b"}
	iv := reflect.ValueOf(&init).Elem()
	for i := range writers - 1 {
		iv.FieldByName(fmt.Sprintf("F%02d", i)).SetString("init0")
	}
	for k := range items {
		init.ID = fmt.Sprint(k)
		_, err := tiles.Create(ctx, init)
		require.NoError(t, err)
	}

	var acked [writers][items]string // the last acknowledged value of each field
	var adds [items]int              // acknowledged Adds of N
	var conflicts, unknown atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for k := range items {
					key := Tile{Board: "b", ID: fmt.Sprint(k)}
					val := fmt.Sprintf("w%dr%d", w, r)
					for {
						before, err := tiles.Get(ctx, key, consistent)
						if err != nil {
							t.Errorf("writer %d item %d: read: %v", w, k, err)
							return
						}
						u := tiles.Update(key)
						if w == writers-1 {
							u = u.Add("N", 1)
						} else {
							u = u.Set(fmt.Sprintf("F%02d", w), val)
						}
						_, err = u.Run(ctx)
						if err == nil {
							if w == writers-1 {
								adds[k]++
							} else {
								acked[w][k] = val
							}
							break
						}
						if errors.Is(err, singletable.ErrMaybeApplied) {
							unknown.Add(1)
							now, rerr := tiles.Get(ctx, key, consistent)
							if rerr != nil {
								t.Errorf("writer %d item %d: %v, and the read back failed: %v", w, k, err, rerr)
								return
							}
							if w == writers-1 && now.N == adds[k]+1 {
								adds[k]++
								break
							}
							if w < writers-1 && reflect.ValueOf(now).FieldByName(fmt.Sprintf("F%02d", w)).String() == val {
								acked[w][k] = val
								break
							}
							continue // not applied: try again
						}
						if !errors.Is(err, singletable.ErrVersionConflict) {
							t.Errorf("writer %d item %d: %v", w, k, err)
							return
						}
						after, rerr := tiles.Get(ctx, key, consistent)
						if rerr != nil || after == before {
							t.Errorf("writer %d item %d: %v, yet no other write changed the item (read back: %v)", w, k, err, rerr)
							return
						}
						conflicts.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	lost := unanswered.errors()
	for i, err := range lost[:min(len(lost), 5)] {
		t.Logf("unanswered UpdateItem attempt %d of %d: %v", i+1, len(lost), err)
	}
	assert.LessOrEqual(t, unknown.Load(), int64(len(lost)), "an outcome is unknown only after an attempt went unanswered")
	if t.Failed() {
		return
	}
	for k := range items {
		key := Tile{Board: "b", ID: fmt.Sprint(k)}
		got, err := tiles.Get(ctx, key, consistent)
		require.NoError(t, err)
		gv := reflect.ValueOf(got)
		for w := range writers - 1 {
			assert.Equal(t, acked[w][k], gv.FieldByName(fmt.Sprintf("F%02d", w)).String(), "item %d field F%02d: the last acknowledged value", k, w)
		}
		assert.Equal(t, adds[k], got.N, "item %d: every acknowledged Add counted", k)

		// The index keys stored equal what the declaration renders from
		// the item as stored.
		raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tiles.Table().Name()),
			Key: tiles.DeleteOp(key).Key(), ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		rendered := tiles.PutOp(got).Item()
		for _, a := range tileIndexAttrs {
			assert.Equal(t, rendered[a], raw.Item[a], "item %d attribute %s", k, a)
		}
		found, err := tiles.QueryIndex("GSI3", got).Where("N", singletable.Eq, got.N).Collect(ctx)
		require.NoError(t, err)
		assert.True(t, slices.ContainsFunc(found, func(f Tile) bool { return f.ID == key.ID }), "item %d is found in GSI3 by its stored values", k)
	}
	t.Logf("%d writers × %d items × %d rounds: %d conflicts retried by the callers after the library's own retries, %d unknown outcomes read back",
		writers, items, rounds, conflicts.Load(), unknown.Load())
}

// unansweredAttempts records the attempts of operation op that ended
// without an answer (any failure but a 4xx response): those the library
// counts as maybe applied.
type unansweredAttempts struct {
	op   string
	mu   sync.Mutex
	errs []error
}

// option is a client option that records every attempt, after the SDK's
// retry middleware.
func (u *unansweredAttempts) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("test.unanswered", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			var re *awshttp.ResponseError
			answered := errors.As(err, &re) && re.Response != nil && re.HTTPStatusCode() >= 400 && re.HTTPStatusCode() < 500
			if err != nil && !answered && awsmiddleware.GetOperationName(ctx) == u.op {
				u.mu.Lock()
				u.errs = append(u.errs, err)
				u.mu.Unlock()
			}
			return out, md, err
		}), "Retry", middleware.After)
	})
}

func (u *unansweredAttempts) errors() []error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.errs)
}

// Note is soft-deleted by one field: every index is sparse on it.
type Note struct {
	Owner   string `dynamodbav:"Owner"`
	ID      string `dynamodbav:"ID"`
	Topic   string `dynamodbav:"Topic"`
	Title   string `dynamodbav:"Title"`
	Pinned  bool   `dynamodbav:"Pinned"`
	Deleted bool   `dynamodbav:"Deleted"`
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{
	Type: "Note", PK: "OWNER#{Owner}", SK: "NOTE#{ID}",
	Indexes: []singletable.IndexSchema[Note]{
		{Name: "GSI1", PK: "TOPIC#{Topic}", SK: "NOTE#{ID}",
			When: func(n Note) bool { return !n.Deleted }, WhenFields: []string{"Deleted"}},
		{Name: "GSI2", PK: "PINNED#{Owner}", SK: "NOTE#{ID}",
			When: func(n Note) bool { return n.Pinned && !n.Deleted }, WhenFields: []string{"Pinned", "Deleted"}},
		{Name: "GSI3", PK: "TITLE#{Title}", SK: "OWNER#{Owner}",
			When: func(n Note) bool { return !n.Deleted }, WhenFields: []string{"Deleted"}},
	},
})

// Must show (issue 15): a soft delete by one Set removes the item from
// every sparse index, while it stays readable by key. It costs one read
// (the other fields of the keys it changes) and one write.
func TestSoftDeleteByOneSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var notes *singletable.Repo[Note]
	_, c := newTable(t, func(tbl *singletable.Table) { notes = singletable.MustBind(tbl, Notes) })
	n := Note{Owner: "ann", ID: "1", Topic: "go", Title: "generics", Pinned: true}
	_, err := notes.Create(ctx, n)
	require.NoError(t, err)
	inIndexes := func() []int {
		t.Helper()
		var counts []int
		for _, q := range []*singletable.Query[Note]{notes.QueryIndex("GSI1", n), notes.QueryIndex("GSI2", n), notes.QueryIndex("GSI3", n)} {
			got, err := q.Collect(ctx)
			require.NoError(t, err)
			counts = append(counts, len(got))
		}
		return counts
	}
	require.Equal(t, []int{1, 1, 1}, inIndexes())

	c.requests.Store(0)
	_, err = notes.Update(Note{Owner: "ann", ID: "1"}).Set("Deleted", true).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.requests.Load(), "one read and one write")
	assert.Equal(t, []int{0, 0, 0}, inIndexes(), "out of every sparse index")
	got, err := notes.Get(ctx, Note{Owner: "ann", ID: "1"})
	require.NoError(t, err)
	want := n
	want.Deleted = true
	assert.Equal(t, want, got, "readable by key, every other field kept")
	raw, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(notes.Table().Name()), Key: notes.DeleteOp(n).Key()})
	require.NoError(t, err)
	for _, a := range []string{"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK"} {
		assert.NotContains(t, raw.Item, a)
	}

	// Undeleting by one Set puts it back in every index.
	_, err = notes.Update(Note{Owner: "ann", ID: "1"}).Set("Deleted", false).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1, 1}, inIndexes())
}

// An update that cannot read the item (Idempotent: a repeat with its token
// must be the same request) and changes part of index keys is refused
// with one *KeyError naming every affected index and every missing field,
// before the network.
func TestKeyErrorListsEveryMissingField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var notes *singletable.Repo[Note]
	_, c := newTable(t, func(tbl *singletable.Table) { notes = singletable.MustBind(tbl, Notes) })
	_, err := notes.Update(Note{Owner: "ann", ID: "1"}).Set("Deleted", true).Idempotent(runToken("softdel")).Run(ctx)
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "GSI1, GSI2, GSI3", ke.Index)
	assert.Equal(t, []string{"Topic", "Pinned", "Title"}, ke.Missing)
	assert.Contains(t, err.Error(), "GSI1 needs Topic; GSI2 needs Pinned; GSI3 needs Title")
	assert.Equal(t, int64(0), c.requests.Load(), "refused before the network")

	// Given the missing fields, the same update goes through.
	_, err = notes.Create(ctx, Note{Owner: "ann", ID: "1", Topic: "go", Title: "t"})
	require.NoError(t, err)
	_, err = notes.Update(Note{Owner: "ann", ID: "1"}).Set("Deleted", true).Set("Topic", "go").Set("Pinned", false).Set("Title", "t").
		Idempotent(runToken("softdel2")).Run(ctx)
	require.NoError(t, err)
}
