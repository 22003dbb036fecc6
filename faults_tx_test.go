package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/testfaults"
)

// notApplied reports whether err proves that the write it came from changed
// nothing: a failed condition or a cancelled transaction whose outcome is
// known. Any other error (throttling past the retry budget, a lost
// response the SDK gave up on) leaves the write possibly applied.
func notApplied(err error) bool {
	var te *singletable.TransactionError
	if errors.As(err, &te) {
		return !te.MaybeApplied
	}
	var ve *singletable.ValidationError
	return errors.Is(err, singletable.ErrAlreadyExists) || errors.Is(err, singletable.ErrVersionConflict) ||
		errors.Is(err, singletable.ErrConditionFailed) || errors.Is(err, singletable.ErrNotFound) || errors.As(err, &ve)
}

// retryRead repeats a read until it returns something other than an
// injected fault that outlasted the SDK's retries (reads are safe to
// repeat).
func retryRead[T any](t *testing.T, read func() (T, error)) (T, error) {
	t.Helper()
	for i := 0; ; i++ {
		v, err := read()
		if err == nil || errors.Is(err, singletable.ErrNotFound) || i == 50 {
			return v, err
		}
	}
}

// TestGuardedWritesUnderFaults runs Create, Put, Update and Delete of an
// entity with a unique email, a version and managed timestamps (every
// write a transaction with its guard items) under faults. After every
// write whose outcome is unknown the item is read and must be in the state
// before or after it; at the end every account must match the model, no
// email may be held twice, and every guard item must belong to the account
// holding its email (no orphan, none missing).
func TestGuardedWritesUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runGuardedFaultSuite)
}

func runGuardedFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	seed := uint64(rate*1000) + 7
	var accounts *singletable.Repo[Account]
	tbl, ft := testfaults.Table(t, rate, seed, func(tbl *singletable.Table) { accounts = singletable.MustBind(tbl, Accounts) })
	ft.SetEnabled(true)

	const workers, users, emails, steps = 6, 5, 6, 30
	enc := func(a *Account) string {
		if a == nil {
			return ""
		}
		return fmt.Sprintf("%s|%s|%d", a.Email, a.Name, a.Version)
	}
	var mu sync.Mutex
	var ops, errs, lost int
	final := map[string]*Account{}
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			cur := map[string]*Account{} // the known state of each user (nil: absent)
			read := func(name string) (*Account, error) {
				a, err := retryRead(t, func() (Account, error) {
					return accounts.Get(ctx, Account{Username: name}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
				})
				if errors.Is(err, singletable.ErrNotFound) {
					return nil, nil
				}
				return &a, err
			}
			// settle resolves an unknown outcome: the item must be in the
			// state before or after the write.
			settle := func(name string, before, after *Account) {
				got, err := read(name)
				if err != nil {
					t.Errorf("read %s: %v", name, err)
					return
				}
				if s := enc(got); s != enc(before) && s != enc(after) {
					mu.Lock()
					lost++
					mu.Unlock()
					t.Errorf("%s is %q; expected %q or %q", name, s, enc(before), enc(after))
				}
				cur[name] = got
			}
			for step := range steps {
				name := fmt.Sprintf("w%du%d", w, rng.IntN(users))
				email := ""
				if rng.IntN(5) > 0 {
					email = fmt.Sprintf("e%d@w%d.example", rng.IntN(emails), w)
				}
				display := fmt.Sprintf("n%d", step)
				before := cur[name]
				var after *Account
				var err error
				switch op := rng.IntN(4); {
				case before == nil || op == 0:
					after = &Account{Username: name, Email: email, Name: display, Version: 1}
					_, err = accounts.Create(ctx, *after)
				case op == 1:
					next := *before
					next.Email, next.Name = email, display
					after = &Account{Username: name, Email: email, Name: display, Version: before.Version + 1}
					_, err = accounts.Put(ctx, next)
				case op == 2:
					after = &Account{Username: name, Email: email, Name: display, Version: before.Version + 1}
					_, err = accounts.Update(Account{Username: name, Version: before.Version}).
						Set("Email", email).Set("Name", display).Run(ctx)
				default:
					_, err = accounts.Delete(ctx, Account{Username: name, Version: before.Version})
				}
				switch {
				case err == nil:
					cur[name] = after
				case notApplied(err):
				default:
					settle(name, before, after)
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
	stats := ft.Stats()

	// Every account as the model says; no email twice.
	checked, broken := 0, 0
	owner := map[string]string{}
	for w := range workers {
		for u := range users {
			name := fmt.Sprintf("w%du%d", w, u)
			checked++
			got, err := accounts.Get(ctx, Account{Username: name}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
			var s string
			if err == nil {
				s = enc(&got)
				if got.Email != "" {
					if other, dup := owner[got.Email]; dup {
						broken++
						t.Errorf("%s and %s both hold %s", other, name, got.Email)
					}
					owner[got.Email] = name
				}
			} else {
				require.ErrorIs(t, err, singletable.ErrNotFound)
			}
			if want := enc(final[name]); s != want {
				lost++
				t.Errorf("%s is %q; the model says %q", name, s, want)
			}
		}
	}
	// Every guard belongs to the account holding its value, and every
	// held value has its guard.
	guards := 0
	for _, it := range scanRaw(t, ddblocal.Shared(t).Client(), tbl.Name()) {
		if attrS(it, "EntityType") != singletable.UniqueGuardType {
			continue
		}
		guards++
		checked++
		pk, ownerPK := attrS(it, "PK"), attrS(it, "OwnerPK")
		email := pk[strings.LastIndexByte(pk, '#')+1:]
		if want := owner[email]; want == "" || ownerPK != "ACCOUNT#"+want {
			broken++
			t.Errorf("guard %s points at %s; the holder of %s is %q", pk, ownerPK, email, want)
		}
	}
	if guards != len(owner) {
		broken++
		t.Errorf("%d guard items for %d held emails", guards, len(owner))
	}
	assert.Greater(t, stats.Total(), 0)
	t.Logf("rate %.0f%%: %d ops (%d errors), %d requests, %d faults %v; %d checked, %d lost, %d broken",
		rate*100, ops, errs, stats.Requests, stats.Total(), stats.Faults, checked, lost, broken)
	reportFaults(testfaults.Row{Suite: "Guarded writes (unique email + version, as transactions)", Rate: rate, Ops: ops, Errors: errs,
		Faults: stats.Total(), Checked: checked, Lost: lost, Broken: broken,
		Notes: "state before/after each unknown outcome; no email held twice; guard items = held emails, each pointing at its holder"})
}

// Wallet is moved between by versioned transactions.
type Wallet struct {
	Owner   string `dynamodbav:"Owner"`
	ID      int    `dynamodbav:"ID"`
	Balance int    `dynamodbav:"Balance"`
	Version int    `dynamodbav:"Version"`
}

var Wallets = singletable.MustDefine(singletable.Schema[Wallet]{
	Type: "Wallet", PK: "WALLET#{Owner}", SK: "W#{ID}", Version: "Version",
})

// TestTransfersUnderFaults moves amounts between wallets with two-item
// transactions (each update conditioned on the version read) under
// faults, conflicts and lost responses included. A transaction applies
// whole or not at all and at most once: the total never changes, and every
// wallet's balance and version are those of the transfers that committed.
func TestTransfersUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runTransferFaultSuite)
}

func runTransferFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	seed := uint64(rate*1000) + 11
	var wallets *singletable.Repo[Wallet]
	_, ft := testfaults.Table(t, rate, seed, func(tbl *singletable.Table) { wallets = singletable.MustBind(tbl, Wallets) })
	const workers, perWorker, steps, start = 6, 3, 40, 100
	for w := range workers {
		for i := range perWorker {
			_, err := wallets.Create(ctx, Wallet{Owner: fmt.Sprint(w), ID: i, Balance: start})
			require.NoError(t, err)
		}
	}
	ft.SetEnabled(true)
	// Drawn faults land on requests in goroutine order; script one conflict
	// so the conflict path surely runs.
	ft.Next("TransactWriteItems", ddbfault.TxConflict)

	var mu sync.Mutex
	var ops, errs, lost, partial int
	model := map[[2]int]Wallet{}
	var g errgroup.Group
	for w := range workers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			owner := fmt.Sprint(w)
			cur := map[int]Wallet{}
			for i := range perWorker {
				cur[i] = Wallet{Owner: owner, ID: i, Balance: start, Version: 1}
			}
			for range steps {
				a := rng.IntN(perWorker)
				b := (a + 1 + rng.IntN(perWorker-1)) % perWorker
				amt := 1 + rng.IntN(20)
				wa, wb := cur[a], cur[b]
				err := singletable.Tx(ctx, []singletable.WriteOp{
					wallets.Update(Wallet{Owner: owner, ID: a, Version: wa.Version}).Add("Balance", -amt).Op(),
					wallets.Update(Wallet{Owner: owner, ID: b, Version: wb.Version}).Add("Balance", amt).Op(),
				})
				na, nb := wa, wb
				na.Balance, na.Version = wa.Balance-amt, wa.Version+1
				nb.Balance, nb.Version = wb.Balance+amt, wb.Version+1
				switch {
				case err == nil:
					cur[a], cur[b] = na, nb
				case notApplied(err):
				default:
					// Unknown: both wallets moved or neither.
					ga, err1 := retryRead(t, func() (Wallet, error) {
						return wallets.Get(ctx, wa, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
					})
					gb, err2 := retryRead(t, func() (Wallet, error) {
						return wallets.Get(ctx, wb, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
					})
					if err1 != nil || err2 != nil {
						t.Errorf("read wallets: %v %v", err1, err2)
						break
					}
					movedA, movedB := ga == na, gb == nb
					mu.Lock()
					switch {
					case movedA != movedB:
						partial++
						t.Errorf("half a transfer: %+v %+v (before %+v %+v)", ga, gb, wa, wb)
					case !movedA && (ga != wa || gb != wb):
						lost++
						t.Errorf("wallets %+v %+v are neither before (%+v %+v) nor after", ga, gb, wa, wb)
					}
					mu.Unlock()
					cur[a], cur[b] = ga, gb
				}
				mu.Lock()
				ops++
				if err != nil {
					errs++
				}
				mu.Unlock()
			}
			mu.Lock()
			for i, wl := range cur {
				model[[2]int{w, i}] = wl
			}
			mu.Unlock()
			return nil
		})
	}
	require.NoError(t, g.Wait())
	ft.SetEnabled(false)
	stats := ft.Stats()

	checked := 0
	for w := range workers {
		total := 0
		for i := range perWorker {
			checked++
			got, err := wallets.Get(ctx, Wallet{Owner: fmt.Sprint(w), ID: i}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
			require.NoError(t, err)
			total += got.Balance
			if want := model[[2]int{w, i}]; got != want {
				lost++
				t.Errorf("wallet %d/%d is %+v; the model says %+v", w, i, got, want)
			}
		}
		if total != perWorker*start {
			partial++
			t.Errorf("worker %d: total %d, want %d", w, total, perWorker*start)
		}
	}
	assert.Greater(t, stats.Faults[ddbfault.TxConflict], 0)
	t.Logf("rate %.0f%%: %d transfers (%d errors), %d requests, %d faults %v; %d wallets checked, %d lost, %d partial",
		rate*100, ops, errs, stats.Requests, stats.Total(), stats.Faults, checked, lost, partial)
	reportFaults(testfaults.Row{Suite: "Tx: two-item transfers (version-conditioned ADDs)", Rate: rate, Ops: ops, Errors: errs,
		Faults: stats.Total(), Checked: checked, Lost: lost, Broken: partial,
		Notes: "all or nothing, at most once (client request token): totals constant, balances and versions exact"})
}
