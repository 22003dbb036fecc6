package sequences_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
)

// A backfill (GSI1 made sparse, GSI2 added) runs under faults while the
// application writes with the new declaration; it is interrupted and
// resumed. At the end every item's index attributes are what the
// declaration renders, guards are exact, Verify is OK, counts add up.
func TestBackfillInterruptedUnderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := uitemSchema(true)
	old.Indexes = []singletable.IndexSchema[UItem]{
		{Name: "GSI1", PK: "ST#{Status}", SK: "U#{ID}"},
		{Name: "MA1", PartitionAttrs: []string{"Status"}, SortAttrs: []string{"Rank"}},
	}
	oldE := singletable.MustDefine(old)
	ft := ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 11, Rate: 0.15})
	var mrepo *singletable.Repo[UItem]
	tbl, plain := newTable(t, ft, func(tb *singletable.Table) { mrepo = singletable.MustBind(tb, UItems) })
	ft.SetEnabled(false)
	oldRepo := singletable.MustBind(singletable.NewTable(plain, tbl.Name()), oldE)
	rng := rand.New(rand.NewPCG(4, 4))
	const n = 300
	for i := 0; i < n; i++ {
		v := UItem{Part: "p", ID: strconv.Itoa(i), Status: []string{"", "s0", "s1"}[rng.IntN(3)], Public: rng.IntN(2) == 0,
			Rank: rng.IntN(5), Note: []string{"", "n0", "n1"}[rng.IntN(3)]}
		if i%3 == 0 {
			v.Email = "e" + strconv.Itoa(i)
		}
		if _, err := oldRepo.Put(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	app := singletable.MustBind(singletable.NewTable(plain, tbl.Name()), UItems)
	m, err := singletable.NewMigrator(tbl, mrepo.BackfillMigration("bf"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var appErrs []error
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(5, 5))
		for {
			select {
			case <-stop:
				return
			default:
			}
			time.Sleep(5 * time.Millisecond)
			id := strconv.Itoa(r.IntN(n + 30))
			var err error
			switch r.IntN(5) {
			case 0:
				_, err = app.Update(UItem{Part: "p", ID: id}).Set("Public", r.IntN(2) == 0).Run(ctx)
			case 1:
				_, err = app.Update(UItem{Part: "p", ID: id}).Set("Rank", r.IntN(5)).Run(ctx)
			case 2:
				_, err = app.Update(UItem{Part: "p", ID: id}).Set("Note", []string{"", "n0", "n1"}[r.IntN(3)]).Run(ctx)
			case 3:
				_, err = app.Delete(ctx, UItem{Part: "p", ID: id})
			case 4:
				_, err = app.Put(ctx, UItem{Part: "p", ID: id, Status: "s1", Public: true, Rank: 1, Note: "n1", Email: "x" + id})
			}
			if err != nil && !errors.Is(err, singletable.ErrNotFound) && !errors.Is(err, singletable.ErrAlreadyExists) {
				mu.Lock()
				appErrs = append(appErrs, err)
				mu.Unlock()
			}
		}
	}()
	ft.SetEnabled(true)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	rep1, err1 := m.Run(cctx, "bf", func(o *singletable.RunOptions) { o.PageSize = 25; o.Segments = 3 })
	cancel()
	t.Logf("first run: %v; %+v", err1, rep1)
	var rep *singletable.MigrationReport
	for attempt := 0; attempt < 10; attempt++ {
		rep, err = m.Run(ctx, "bf", func(o *singletable.RunOptions) { o.PageSize = 25 })
		t.Logf("run: %v; %+v", err, rep)
		if err == nil {
			break
		}
		var me *singletable.MigrationError
		if errors.As(err, &me) {
			for _, f := range me.Failures {
				t.Logf("failure: %v", f.Err)
			}
		}
	}
	close(stop)
	wg.Wait()
	ft.SetEnabled(false)
	for _, e := range appErrs {
		t.Errorf("app write: %v", e)
	}
	if err != nil {
		t.Fatalf("backfill: %v", err)
	}
	c := rep.Counts
	if c.Read != c.Written+c.Skipped+c.Failed {
		t.Errorf("counts do not add up: %+v", c)
	}
	_, problems := readStateP(t, plain, tbl.Name())
	for _, p := range problems {
		t.Error(p)
	}
	vr, err := m.Verify(ctx, "bf")
	if err != nil {
		t.Fatal(err)
	}
	if !vr.OK() {
		t.Errorf("verify: %+v", vr)
	}
}
