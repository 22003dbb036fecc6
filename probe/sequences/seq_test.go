package sequences_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
)

type Tally struct {
	Part    string `dynamodbav:"Part"`
	Count   int    `dynamodbav:"Count"`
	Version int    `dynamodbav:"Version"`
}

var Tallies = singletable.MustDefine(singletable.Schema[Tally]{Type: "Tally", PK: "T#{Part}", SK: "T", Version: "Version"})

// TestSequenceWithUniqueAndCounter: concurrent appenders under faults, each
// append creating a UItem (unique email; some emails repeat, so some
// appends must fail with ErrAlreadyExists and leave no number used) and
// adding 1 to a versioned tally in the same transaction.
func TestSequenceWithUniqueAndCounter(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{0, 0.2} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var ft *ddbfault.Transport
			if rate > 0 {
				ft = ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 5, Rate: rate})
			}
			var repo *singletable.Repo[UItem]
			var tallies *singletable.Repo[Tally]
			var seq *singletable.Sequence
			tbl, plain := newTable(t, ft, func(tb *singletable.Table) {
				repo = singletable.MustBind(tb, UItems)
				tallies = singletable.MustBind(tb, Tallies)
				seq = singletable.NewSequence(tb, "log", func(o *singletable.SequenceOptions) {
					o.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}
					o.MaxAttempts = 400
				})
			})
			if ft != nil {
				ft.SetEnabled(false)
			}
			if _, err := tallies.Create(ctx, Tally{Part: "x"}); err != nil {
				t.Fatal(err)
			}
			if ft != nil {
				ft.SetEnabled(true)
			}
			var mu sync.Mutex
			acked := map[string]int64{}
			dupRefused := 0
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 12; i++ {
						email := fmt.Sprintf("e%d", (w*12+i)%40) // 8 repeats
						ref := fmt.Sprintf("w%d-%d", w, i)
						n, err := seq.Append(ctx, func(tx *singletable.Txn, n int64) error {
							repo.TxCreate(tx, UItem{Part: "ev", ID: strconv.FormatInt(n, 10), Email: email, Note: ref})
							tallies.Update(Tally{Part: "x"}).Add("Count", 1).Tx(tx)
							return nil
						})
						mu.Lock()
						switch {
						case err == nil:
							acked[ref] = n
						case errors.Is(err, singletable.ErrAlreadyExists):
							dupRefused++
						default:
							t.Logf("append %s: %v", ref, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if ft != nil {
				ft.SetEnabled(false)
			}
			ptbl := singletable.NewTable(plain, tbl.Name())
			prepo := singletable.MustBind(ptbl, UItems)
			ptal := singletable.MustBind(ptbl, Tallies)
			evs, err := prepo.Query(UItem{Part: "ev"}).ConsistentRead().Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			nums := []int{}
			byRef := map[string]int64{}
			for _, e := range evs {
				n, _ := strconv.Atoi(e.ID)
				nums = append(nums, n)
				if _, dup := byRef[e.Note]; dup {
					t.Errorf("%s appended twice", e.Note)
				}
				byRef[e.Note] = int64(n)
			}
			slices.Sort(nums)
			for i, n := range nums {
				if n != i+1 {
					t.Errorf("numbers %v: gap at %d", nums, i)
					break
				}
			}
			cur, _ := singletable.NewSequence(ptbl, "log").Current(ctx)
			if cur != int64(len(nums)) {
				t.Errorf("counter %d, %d events", cur, len(nums))
			}
			tl, err := ptal.Get(ctx, Tally{Part: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if tl.Count != len(nums) {
				t.Errorf("tally %d, %d events", tl.Count, len(nums))
			}
			for ref, n := range acked {
				if byRef[ref] != n {
					t.Errorf("acked %s as %d, log has %d", ref, n, byRef[ref])
				}
			}
			_, problems := readStateP(t, plain, tbl.Name())
			for _, p := range problems {
				t.Error(p)
			}
			t.Logf("%d events, %d acked, %d refused as duplicates, tally %d v%d", len(nums), len(acked), dupRefused, tl.Count, tl.Version)
		})
	}
}
