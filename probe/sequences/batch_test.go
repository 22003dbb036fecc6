package sequences_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
)

type BItem struct {
	K   string `dynamodbav:"K"`
	Val int    `dynamodbav:"Val"`
	Grp string `dynamodbav:"Grp"`
}

var BItems = singletable.MustDefine(singletable.Schema[BItem]{Type: "BItem", PK: "B#{K}", SK: "B",
	Indexes: []singletable.IndexSchema[BItem]{{Name: "GSI1", PK: "G#{Grp}", SK: "V#{Val}#{K}"}}})

// Batches with many ops on few keys (applied in rounds, in order) under
// partial batches, throttling and lost responses: each key ends as its
// last op left it.
func TestBatchRoundsUnderFaults(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{0, 0.3} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var ft *ddbfault.Transport
			if rate > 0 {
				ft = ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 9, Rate: rate, Operations: []string{"BatchWriteItem"}})
			}
			var repo *singletable.Repo[BItem]
			tbl, plain := newTable(t, ft, func(tb *singletable.Table) { repo = singletable.MustBind(tb, BItems) })
			rng := rand.New(rand.NewPCG(3, 3))
			want := map[string]*BItem{}
			for round := 0; round < 15; round++ {
				var ops []singletable.WriteOp
				for i := 0; i < 10+rng.IntN(60); i++ {
					k := strconv.Itoa(rng.IntN(12))
					if rng.IntN(4) == 0 {
						ops = append(ops, repo.DeleteOp(BItem{K: k}))
						want[k] = nil
					} else {
						v := BItem{K: k, Val: rng.IntN(1000), Grp: "g"}
						ops = append(ops, repo.PutOp(v))
						want[k] = &v
					}
				}
				if ft != nil {
					ft.Next("BatchWriteItem", ddbfault.PartialBatch, ddbfault.LostResponse, ddbfault.PartialBatch)
				}
				err := singletable.BatchWrite(ctx, ops, func(o *singletable.BatchWriteOptions) {
					o.MaxAttempts = 50
					o.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}
				})
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				got := map[string]BItem{}
				for _, raw := range rawScan(t, plain, tbl.Name()) {
					got[s(raw["K"])] = BItem{K: s(raw["K"]), Val: atoi(s(raw["Val"])), Grp: s(raw["Grp"])}
					if s(raw["GSI1SK"]) == "" {
						t.Errorf("round %d: %s lacks GSI1SK", round, s(raw["K"]))
					}
				}
				for k, w := range want {
					g, ok := got[k]
					switch {
					case w == nil && ok:
						t.Errorf("round %d: %s should be deleted, has %+v", round, k, g)
					case w != nil && (!ok || g != *w):
						t.Errorf("round %d: %s = %+v (present %v), want %+v", round, k, g, ok, *w)
					}
				}
			}
			if ft != nil {
				t.Logf("faults %v", ft.Stats())
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
