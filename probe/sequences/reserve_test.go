package sequences_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
)

// Reserve(k) appenders, StartAfter jumps and Next appenders together under
// faults: every number used once, blocks contiguous, no number below a
// StartAfter handed out after it returned.
func TestSequenceReserveAndStartAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ft := ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 3, Rate: 0.15})
	var repo *singletable.Repo[PNote]
	var seq *singletable.Sequence
	tbl, plain := newTable(t, ft, func(tb *singletable.Table) {
		repo = singletable.MustBind(tb, PNotes)
		seq = singletable.NewSequence(tb, "s", func(o *singletable.SequenceOptions) {
			o.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}
			o.MaxAttempts = 500
		})
	})
	var mu sync.Mutex
	used := map[int]string{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				k := 1 + (w+i)%3
				var first int64
				var err error
				for attempt := 0; attempt < 200; attempt++ {
					err = singletable.Tx(ctx, tbl, func(tx *singletable.Txn) error {
						f, err := seq.Reserve(ctx, tx, k)
						if err != nil {
							return err
						}
						first = f
						for j := 0; j < k; j++ {
							repo.TxCreate(tx, PNote{Part: "s", Seq: int(f) + j, Kind: "w" + strconv.Itoa(w)})
						}
						return nil
					})
					if err == nil || !errors.Is(err, singletable.ErrVersionConflict) {
						break
					}
				}
				if err != nil {
					continue // unknown outcome under faults
				}
				mu.Lock()
				for j := 0; j < k; j++ {
					if prev, dup := used[int(first)+j]; dup {
						t.Errorf("number %d used twice (%s)", int(first)+j, prev)
					}
					used[int(first)+j] = "w" + strconv.Itoa(w)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, n := range []int64{20, 50, 45} {
			time.Sleep(20 * time.Millisecond)
			got, err := seq.StartAfter(ctx, n)
			if err != nil {
				continue
			}
			if got < n {
				t.Errorf("StartAfter(%d) left the counter at %d", n, got)
			}
		}
	}()
	wg.Wait()
	ft.SetEnabled(false)
	ptbl := singletable.NewTable(plain, tbl.Name())
	notes, err := singletable.MustBind(ptbl, PNotes).Query(PNote{Part: "s"}).ConsistentRead().Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, n := range notes {
		nums = append(nums, n.Seq)
	}
	slices.Sort(nums)
	cur, _ := singletable.NewSequence(ptbl, "s").Current(ctx)
	if len(nums) > 0 && int64(nums[len(nums)-1]) > cur {
		t.Errorf("counter %d below the highest number used %d", cur, nums[len(nums)-1])
	}
	for n, w := range used {
		if !slices.Contains(nums, n) {
			t.Errorf("acknowledged %d (%s) not in the table", n, w)
		}
	}
	t.Logf("%d numbers used, counter %d, faults %v", len(nums), cur, ft.Stats())
}
