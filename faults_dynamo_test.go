package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// The library under the behaviours real DynamoDB has and DynamoDB Local
// hides (ddbfault's modes): index reads that lag the table, transaction
// conflicts, and per-key throttling. Each test shows what the library does
// there; docs/reliability.md quotes the figures they log.

// modeTable makes a fresh table reached through a ddbfault Transport with
// cfg and the SDK's standard retryer (its default 3 attempts, backoff
// capped at 20ms to keep the test short), and the transport.
func modeTable(t *testing.T, cfg ddbfault.Config, bind func(*singletable.Table)) (*singletable.Table, *ddbfault.Transport) {
	t.Helper()
	ft := ddbfault.New(nil, cfg)
	t.Cleanup(func() { assert.NoError(t, ft.Close()) })
	client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ft}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxBackoff = 20 * time.Millisecond })
	})
	return newTableWith(t, client, bind), ft
}

// TestIndexLagQueriesSeeThePast runs creates, sparse-index exits and
// entries, and deletes of Docs, with an index query through the library
// after every write, while GSI1 lags the table by 3 item writes. Every
// query must return exactly the index as it was 3 writes before (nothing
// hidden, nothing invented, pages joined right); the test counts how many
// of them differ from the table as it is, miss the item just written, or
// return an item already deleted or out of the sparse index. After
// CatchUp, queries equal the table.
func TestIndexLagQueriesSeeThePast(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window, steps = 3, 60
	var docs *singletable.Repo[Doc]
	_, ft := modeTable(t, ddbfault.Config{IndexLag: window}, func(tbl *singletable.Table) { docs = singletable.MustBind(tbl, Docs) })
	query := func() []string {
		t.Helper()
		got, err := docs.QueryIndex("GSI1", Doc{Category: "go"}).PageSize(2).Collect(ctx)
		require.NoError(t, err)
		out := []string{}
		for _, d := range got {
			out = append(out, d.ID+":"+d.Title)
		}
		return out
	}
	// history[i] is GSI1's content for category go after i item writes.
	cur := map[string]Doc{}
	indexOf := func() []string {
		out := []string{}
		for _, d := range cur {
			if d.Visibility == "public" && !d.Deleted && d.Category == "go" {
				out = append(out, d.ID+":"+d.Title)
			}
		}
		sort.Strings(out) // DOC#{ID} sorts as the IDs do (same width)
		return out
	}
	history := [][]string{indexOf()}
	rng := rand.New(rand.NewPCG(5, 5))
	var stale, missedNew, deletedSeen, leftSeen, enteredMissing int
	for step := range steps {
		id := fmt.Sprintf("%02d", rng.IntN(12))
		d, exists := cur[id]
		var what string
		switch {
		case !exists:
			d = Doc{Owner: "ann", ID: id, Visibility: "public", Category: "go", Title: fmt.Sprintf("t%d", step)}
			_, err := docs.Create(ctx, d)
			require.NoError(t, err)
			cur[id], what = d, "new"
		case rng.IntN(3) == 0:
			_, err := docs.Delete(ctx, Doc{Owner: "ann", ID: id})
			require.NoError(t, err)
			delete(cur, id)
			what = "deleted"
		default:
			vis := map[string]string{"public": "private", "private": "public"}[d.Visibility]
			var err error
			d, err = docs.Update(Doc{Owner: "ann", ID: id}).Set("Visibility", vis).Set("Title", fmt.Sprintf("t%d", step)).Run(ctx)
			require.NoError(t, err)
			cur[id] = d
			what = map[string]string{"private": "left", "public": "entered"}[vis]
		}
		history = append(history, indexOf())
		got := query()
		want := history[max(0, len(history)-1-window)]
		require.Equal(t, want, got, "step %d: the index as it was %d writes ago", step, window)
		if !slices.Equal(got, history[len(history)-1]) {
			stale++
		}
		has := func(id string) bool {
			return slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, id+":") })
		}
		switch what {
		case "new":
			if !has(id) {
				missedNew++
			}
		case "entered":
			if !has(id) {
				enteredMissing++
			}
		case "deleted":
			if has(id) {
				deletedSeen++
			}
		case "left":
			if has(id) {
				leftSeen++
			}
		}
	}
	assert.Positive(t, missedNew)
	assert.Positive(t, deletedSeen)
	require.NoError(t, ft.CatchUp())
	assert.Equal(t, history[len(history)-1], query(), "after CatchUp the index is the table's")
	st := ft.Stats()
	t.Logf("index lag %d item writes: %d writes, %d index queries (%d requests to the index, %d while writes were pending): "+
		"%d differed from the table; %d missed the item just created, %d showed the item just deleted, "+
		"%d showed an item that had just left the sparse index, %d missed one that had just entered it; "+
		"every query equal to the index %d writes earlier; after CatchUp equal to the table",
		window, steps, steps+1, st.IndexReads, st.LaggedReads, stale, missedNew, deletedSeen, leftSeen, enteredMissing, window)
}

// releaseAfter is a RoundTripper above a ddbfault Transport that calls
// release once n responses to op ("" any) have been refusals (400); n < 0:
// never.
type releaseAfter struct {
	next    http.RoundTripper
	op      string
	n       int
	release func()
	mu      sync.Mutex
	seen    int
}

func (r *releaseAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	isOp := r.op == "" || strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+r.op)
	resp, err := r.next.RoundTrip(req)
	if isOp && err == nil && resp.StatusCode == 400 {
		r.mu.Lock()
		r.seen++
		if r.seen == r.n {
			r.release()
		}
		r.mu.Unlock()
	}
	return resp, err
}

func key(pk, sk string) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}
	if sk != "" {
		m["SK"] = &types.AttributeValueMemberS{Value: sk}
	}
	return m
}

// TestTransactionConflicts shows what the library does when its writes
// meet a concurrent transaction (ddbfault.Hold puts an item under one).
func TestTransactionConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T, releaseAfterConflicts int) (*ddbfault.Transport, *singletable.Repo[Account], *singletable.Repo[VDoc], string, func(pk string)) {
		ft := ddbfault.New(nil, ddbfault.Config{})
		var hold func(pk string)
		rt := &releaseAfter{next: ft, op: "", n: releaseAfterConflicts}
		var accounts *singletable.Repo[Account]
		var vdocs *singletable.Repo[VDoc]
		client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: rt} })
		tbl := newTableWith(t, client, func(tbl *singletable.Table) {
			accounts, vdocs = singletable.MustBind(tbl, Accounts), singletable.MustBind(tbl, VDocs)
		})
		hold = func(pk string) {
			release := ft.Hold(tbl.Name(), key(pk, ""))
			rt.release = release
		}
		return ft, accounts, vdocs, tbl.Name(), hold
	}
	guards := func(t *testing.T, name string) []string {
		var out []string
		for _, it := range scanRaw(t, ddblocal.Shared(t).Client(), name) {
			if attrS(it, "EntityType") == singletable.UniqueGuardType {
				out = append(out, attrS(it, "PK")+"->"+attrS(it, "OwnerPK"))
			}
		}
		sort.Strings(out)
		return out
	}

	t.Run("a transaction is retried past a conflict", func(t *testing.T) {
		t.Parallel()
		ft, accounts, _, name, hold := setup(t, 1)
		hold("ACCOUNT#fay")
		_, err := accounts.Create(ctx, Account{Username: "fay", Email: "fay@example.com", Name: "Fay"})
		require.NoError(t, err, "the library resends the cancelled transaction with its token")
		assert.Equal(t, 1, ft.Stats().Conflicts)
		assert.Equal(t, []string{"UNIQUE#Account#email#fay@example.com->ACCOUNT#fay"}, guards(t, name))
	})

	t.Run("a conflict outlasting the retries is a TransactionError", func(t *testing.T) {
		t.Parallel()
		ft, accounts, _, name, hold := setup(t, -1)
		_, err := accounts.Create(ctx, Account{Username: "gus", Email: "gus@example.com", Name: "Gus"})
		require.NoError(t, err)
		hold("UNIQUE#Account#email#new@example.com")
		_, err = accounts.Update(Account{Username: "gus", Version: 1}).Set("Email", "new@example.com").Run(ctx)
		uerr := err
		var te *singletable.TransactionError
		require.ErrorAs(t, err, &te)
		assert.False(t, te.MaybeApplied, "every attempt was answered: nothing was written")
		assert.Equal(t, "TransactionConflict", te.Code)
		var cancel *types.TransactionCanceledException
		assert.ErrorAs(t, err, &cancel)
		for _, s := range []error{singletable.ErrMaybeApplied, singletable.ErrConditionFailed, singletable.ErrVersionConflict, singletable.ErrAlreadyExists} {
			assert.NotErrorIs(t, err, s)
		}
		got, err := accounts.Get(ctx, Account{Username: "gus"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, "gus@example.com", got.Email)
		assert.Equal(t, 1, got.Version)
		assert.Equal(t, []string{"UNIQUE#Account#email#gus@example.com->ACCOUNT#gus"}, guards(t, name), "guards unchanged")
		t.Logf("a transaction whose item stays under another transaction: %d attempts, then %v", ft.Stats().Conflicts, uerr)
	})

	t.Run("a single write racing a transaction is not retried", func(t *testing.T) {
		t.Parallel()
		ft, _, vdocs, _, hold := setup(t, -1)
		_, err := vdocs.Create(ctx, VDoc{ID: "d", Body: "one"})
		require.NoError(t, err)
		hold("DOC#d")
		_, err = vdocs.Put(ctx, VDoc{ID: "d", Body: "two", Version: 1})
		perr := err
		var tce *types.TransactionConflictException
		require.ErrorAs(t, err, &tce)
		assert.NotErrorIs(t, err, singletable.ErrMaybeApplied, "a 400: the write was refused, not lost")
		assert.NotErrorIs(t, err, singletable.ErrVersionConflict)
		assert.Equal(t, 1, ft.Stats().Conflicts, "one attempt: conflicts are not retried for single writes")
		got, err := vdocs.Get(ctx, VDoc{ID: "d"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, err)
		assert.Equal(t, VDoc{ID: "d", Body: "one", Version: 1}, got)
		t.Logf("a single write racing a transaction: %v", perr)
	})
}

// TestGuardedWritesUnderConflictsAndHotKeys runs concurrent Create, Put,
// Update and Delete of accounts (a unique email from a pool all workers
// share, a version; every write a transaction with its guard items)
// through conflicts between the workers' own transactions in flight, 10%
// drawn conflicts, and a hot partition (one account each worker writes,
// 50% of its requests throttled). Each worker owns its accounts, so after
// every write it knows the state: a success is the new state; any error
// must be an applied update whose read-back failed (the error says so) or
// a refusal the library documents (ErrAlreadyExists when another
// worker holds the email, a *TransactionError for a conflict or a
// throttle that outlasted the retries, the SDK's
// TransactionConflictException or ProvisionedThroughputExceededException
// for a single write),
// never MaybeApplied, and leave the account as before. At the end no email is held twice and the guard
// items are exactly the held emails, each pointing at its holder.
func TestGuardedWritesUnderConflictsAndHotKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var accounts *singletable.Repo[Account]
	tbl, ft := modeTable(t, ddbfault.Config{Seed: 11,
		Conflicts: ddbfault.Conflicts{InFlight: true, Rate: 0.10},
		Hot:       []ddbfault.Hot{{Value: "ACCOUNT#hot", Rate: 0.5}},
	}, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) })
	const workers, users, emails, steps = 6, 3, 24, 40
	var mu sync.Mutex
	var ops, errs, taken, refusedEnv int
	final := map[string]*Account{}
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(11, uint64(w)))
			cur := map[string]*Account{}
			for step := range steps {
				name := fmt.Sprintf("w%du%d", w, rng.IntN(users))
				if w == 0 && rng.IntN(2) == 0 {
					name = "hot" // worker 0's account on the hot partition
				}
				email := fmt.Sprintf("e%d@example.com", rng.IntN(emails))
				before := cur[name]
				if before != nil && rng.IntN(3) == 0 {
					email = before.Email
				}
				var after *Account
				var err error
				switch op := rng.IntN(4); {
				case before == nil || op == 0:
					after = &Account{Username: name, Email: email, Name: fmt.Sprint(step), Version: 1}
					_, err = accounts.Create(ctx, *after)
				case op == 1:
					next := *before
					next.Email, next.Name = email, fmt.Sprint(step)
					after = &Account{Username: name, Email: email, Name: next.Name, Version: before.Version + 1}
					_, err = accounts.Put(ctx, next)
				case op == 2:
					after = &Account{Username: name, Email: email, Name: fmt.Sprint(step), Version: before.Version + 1}
					_, err = accounts.Update(Account{Username: name, Version: before.Version}).Set("Email", email).Set("Name", after.Name).Run(ctx)
				default:
					_, err = accounts.Delete(ctx, Account{Username: name, Version: before.Version})
				}
				var te *singletable.TransactionError
				refused := err != nil
				switch {
				case err == nil:
					cur[name] = after
				case strings.Contains(err.Error(), "was applied, but reading the item back failed"):
					cur[name], refused = after, false
				case errors.As(err, &te) && te.MaybeApplied, errors.Is(err, singletable.ErrMaybeApplied):
					t.Errorf("%s: maybe applied, though every attempt was answered: %v", name, err)
				case errors.Is(err, singletable.ErrAlreadyExists) && (after == nil || before == nil || after.Version == 1 || after.Email != before.Email):
					// the email is another worker's, or a Create met the
					// worker's own account
					mu.Lock()
					taken++
					mu.Unlock()
				case errors.As(err, &te) && (te.Code == "TransactionConflict" || te.Code == "ThrottlingError"),
					errors.As(err, new(*types.TransactionConflictException)),
					errors.As(err, new(*types.ProvisionedThroughputExceededException)):
					// a transaction past its retries, or a single write (a
					// Put or Update that keeps the email is one PutItem or
					// UpdateItem) refused by a conflict, which is not
					// retried, or throttled past the SDK's 3 attempts
					mu.Lock()
					refusedEnv++
					mu.Unlock()
				default:
					t.Errorf("%s: unexpected error: %v", name, err)
				}
				if refused {
					got, gerr := retryRead(t, func() (Account, error) {
						return accounts.Get(ctx, Account{Username: name}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
					})
					if errors.Is(gerr, singletable.ErrNotFound) {
						if before != nil {
							t.Errorf("%s: refused (%v) but gone", name, err)
						}
					} else if gerr != nil {
						t.Errorf("read %s: %v", name, gerr)
					} else if before == nil || got.Email != before.Email || got.Version != before.Version || got.Name != before.Name {
						t.Errorf("%s: refused (%v) but changed to %+v (before %+v)", name, err, got, before)
					}
				}
				mu.Lock()
				ops++
				if err != nil {
					errs++
				}
				mu.Unlock()
			}
			mu.Lock()
			for name, a := range cur {
				final[name] = a
			}
			mu.Unlock()
			return nil
		})
	}
	require.NoError(t, g.Wait())
	ft.SetEnabled(false)
	owner := map[string]string{}
	for name, want := range final {
		got, err := accounts.Get(ctx, Account{Username: name}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		if want == nil {
			assert.ErrorIs(t, err, singletable.ErrNotFound, name)
			continue
		}
		require.NoError(t, err, name)
		assert.Equal(t, want.Email+"|"+want.Name, got.Email+"|"+got.Name, name)
		if other, dup := owner[got.Email]; dup {
			t.Errorf("%s and %s both hold %s", other, name, got.Email)
		}
		owner[got.Email] = name
	}
	guardCount := 0
	for _, it := range scanRaw(t, ddblocal.Shared(t).Client(), tbl.Name()) {
		if attrS(it, "EntityType") != singletable.UniqueGuardType {
			continue
		}
		guardCount++
		pk := attrS(it, "PK")
		email := pk[strings.LastIndexByte(pk, '#')+1:]
		assert.Equal(t, "ACCOUNT#"+owner[email], attrS(it, "OwnerPK"), "guard %s", pk)
	}
	assert.Equal(t, len(owner), guardCount, "one guard per held email")
	st := ft.Stats()
	assert.Positive(t, st.Conflicts)
	assert.Positive(t, st.HotThrottles)
	t.Logf("%d guarded writes from %d workers: %d returned an error (%d email taken, %d conflict or throttle past the retries); "+
		"%d conflicts and %d hot throttles injected in %d requests; %d accounts, %d held emails, %d guards, 0 maybe-applied",
		ops, workers, errs, taken, refusedEnv, st.Conflicts, st.HotThrottles, st.Requests, len(final), len(owner), guardCount)
}

// TestHotKeyThrottling shows the library's writes and reads on a hot
// partition: retried and successful within the retry budget, a typed error
// past it, other partitions untouched, batches finishing the other items.
func TestHotKeyThrottling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T, hot ...ddbfault.Hot) (*ddbfault.Transport, *singletable.Repo[Account], *singletable.Repo[VDoc], *singletable.Repo[Record]) {
		var accounts *singletable.Repo[Account]
		var vdocs *singletable.Repo[VDoc]
		var records *singletable.Repo[Record]
		_, ft := modeTable(t, ddbfault.Config{Hot: hot}, func(tbl *singletable.Table) {
			accounts, vdocs, records = singletable.MustBind(tbl, Accounts), singletable.MustBind(tbl, VDocs), singletable.MustBind(tbl, Records)
		})
		return ft, accounts, vdocs, records
	}

	t.Run("within the retry budget", func(t *testing.T) {
		t.Parallel()
		ft, accounts, vdocs, _ := setup(t, ddbfault.Hot{Value: "ACCOUNT#fay", Throttles: 2}, ddbfault.Hot{Value: "DOC#hot", Throttles: 2})
		_, err := accounts.Create(ctx, Account{Username: "fay", Email: "fay@example.com"})
		require.NoError(t, err, "a transaction throttled twice (ThrottlingError) is resent by the library")
		_, err = vdocs.Create(ctx, VDoc{ID: "hot", Body: "x"})
		require.NoError(t, err, "a single write throttled twice is retried by the SDK")
		got, err := vdocs.Get(ctx, VDoc{ID: "hot"})
		require.NoError(t, err, "a read throttled twice is retried by the SDK")
		assert.Equal(t, "x", got.Body)
		before := ft.Stats().HotThrottles
		assert.Equal(t, 6, before)
		_, err = vdocs.Create(ctx, VDoc{ID: "cold", Body: "y"})
		require.NoError(t, err)
		_, err = accounts.Create(ctx, Account{Username: "bob", Email: "bob@example.com"})
		require.NoError(t, err)
		assert.Equal(t, before, ft.Stats().HotThrottles, "other partitions are not throttled")
	})

	t.Run("past the retry budget", func(t *testing.T) {
		t.Parallel()
		ft, accounts, vdocs, _ := setup(t, ddbfault.Hot{Value: "ACCOUNT#fay", Rate: 1}, ddbfault.Hot{Value: "DOC#hot", Rate: 1})
		_, err := vdocs.Create(ctx, VDoc{ID: "hot", Body: "x"})
		var pte *types.ProvisionedThroughputExceededException
		require.ErrorAs(t, err, &pte)
		require.NotEmpty(t, pte.ThrottlingReasons)
		assert.Equal(t, "TableWriteKeyRangeThroughputExceeded", aws.ToString(pte.ThrottlingReasons[0].Reason))
		assert.NotErrorIs(t, err, singletable.ErrMaybeApplied)
		singleAttempts := ft.Stats().HotThrottles
		_, err = accounts.Create(ctx, Account{Username: "fay", Email: "fay@example.com"})
		var te *singletable.TransactionError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "ThrottlingError", te.Code)
		assert.False(t, te.MaybeApplied)
		txAttempts := ft.Stats().HotThrottles - singleAttempts
		_, err = vdocs.Get(ctx, VDoc{ID: "hot"})
		require.ErrorAs(t, err, &pte)
		for _, it := range scanRaw(t, ddblocal.Shared(t).Client(), accountsTableName(accounts)) {
			t.Errorf("nothing may be written: %v", attrS(it, "PK"))
		}
		t.Logf("always-throttled key: a single write gives up after %d attempts (%v); a transaction after %d (%v)",
			singleAttempts, pte.ErrorCode(), txAttempts, te.Code)
	})

	t.Run("an applied unique update whose read-back is throttled says it was applied", func(t *testing.T) {
		t.Parallel()
		// Requests go through plain until a transaction commits, then
		// through a transport where the account's partition is always hot:
		// the update's read-back after its transaction is throttled.
		plain := ddbfault.New(nil, ddbfault.Config{})
		hot := ddbfault.New(nil, ddbfault.Config{Hot: []ddbfault.Hot{{Value: "ACCOUNT#fay", Rate: 1}}})
		sw := &switchAfterTx{before: plain, after: hot}
		var accounts *singletable.Repo[Account]
		client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: sw}
			o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxBackoff = 20 * time.Millisecond })
		})
		newTableWith(t, client, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) })
		_, err := accounts.Create(ctx, Account{Username: "fay", Email: "fay@example.com", Name: "Fay"})
		require.NoError(t, err)
		sw.reset()
		_, err = accounts.Update(Account{Username: "fay", Version: 1}).Set("Email", "fay@new.example").Run(ctx)
		require.Error(t, err, "the read-back never gets through")
		assert.Contains(t, err.Error(), "update Account was applied, but reading the item back failed",
			"an applied write must not read as a throttled (unapplied) one: a caller retrying it would get ErrVersionConflict")
		assert.Positive(t, hot.Stats().HotThrottles)
		sw.reset()
		got, gerr := accounts.Get(ctx, Account{Username: "fay"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		require.NoError(t, gerr)
		assert.Equal(t, "fay@new.example", got.Email)
		assert.Equal(t, 2, got.Version)
		t.Logf("read-back throttled %d times: %v", hot.Stats().HotThrottles, err)
	})

	t.Run("batches finish the other items", func(t *testing.T) {
		t.Parallel()
		ft, _, _, records := setup(t, ddbfault.Hot{Value: "OWNER#hot", Throttles: 3}, ddbfault.Hot{Value: "OWNER#stuck", Rate: 1})
		var ops []singletable.WriteOp
		for i := range 10 {
			ops = append(ops, records.PutOp(Record{Owner: "cold", ID: i, Body: "b"}.withSum()))
		}
		ops = append(ops, records.PutOp(Record{Owner: "hot", ID: 1, Body: "b"}.withSum()))
		require.NoError(t, singletable.BatchWrite(ctx, ops), "the hot item is left unprocessed three times, then written")
		hot := ft.Stats().HotThrottles
		ops = append(ops[:10:10], records.PutOp(Record{Owner: "stuck", ID: 1, Body: "b"}.withSum()))
		err := singletable.BatchWrite(ctx, ops, func(o *singletable.BatchOptions) { o.Backoff.Max = 20 * time.Millisecond })
		var be *singletable.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, 10, be.Failed[0].Index, "only the stuck item failed")
		got, err := records.Query(Record{Owner: "cold"}).Collect(ctx)
		require.NoError(t, err)
		assert.Len(t, got, 10)
		t.Logf("batch with a hot item: %d unprocessed rounds then written; with an always-hot item: BatchError naming only it after %d rounds",
			hot, ft.Stats().HotThrottles-hot)
	})
}

func accountsTableName(r *singletable.Repo[Account]) string { return r.Table().Name() }

// switchAfterTx sends requests through before until a TransactWriteItems
// succeeds, then through after (until reset).
type switchAfterTx struct {
	before, after http.RoundTripper
	mu            sync.Mutex
	switched      bool
}

func (s *switchAfterTx) reset() { s.mu.Lock(); s.switched = false; s.mu.Unlock() }

func (s *switchAfterTx) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	next := s.before
	if s.switched {
		next = s.after
	}
	s.mu.Unlock()
	resp, err := next.RoundTrip(req)
	if err == nil && resp.StatusCode == 200 && strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		s.mu.Lock()
		s.switched = true
		s.mu.Unlock()
	}
	return resp, err
}
