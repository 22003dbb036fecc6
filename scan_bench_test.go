package singletable_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// BenchmarkScanHeap shows that Scan.All holds one response at a time
// while Collect holds every item: peak-live-B is the largest live heap
// (after a GC) seen while the scan runs, above the heap before it. The
// table holds 2,000 users of about 2 KB each (4 MB); All reads them 100
// per request.
//
//	DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go test -run '^$' -bench BenchmarkScanHeap -benchtime 3x .
func BenchmarkScanHeap(b *testing.B) {
	ctx := context.Background()
	var users *singletable.Repo[User]
	newTable(b, func(tbl *singletable.Table) { users = singletable.MustBind(tbl, Users) })
	const n = 2000
	pad := strings.Repeat("x", 2000)
	var ops []singletable.WriteOp
	for i := range n {
		ops = append(ops, users.PutOp(User{Username: fmt.Sprintf("u%05d", i), Name: pad}))
	}
	require.NoError(b, singletable.BatchWrite(ctx, ops))
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	scan := users.Scan().PageSize(100)

	b.Run("All", func(b *testing.B) {
		var peak int64
		for range b.N {
			base := live()
			k := 0
			for _, err := range scan.All(ctx) {
				require.NoError(b, err)
				if k++; k%250 == 0 {
					peak = max(peak, live()-base)
				}
			}
			require.Equal(b, n, k)
		}
		b.ReportMetric(float64(peak), "peak-live-B")
	})
	b.Run("Collect", func(b *testing.B) {
		var peak int64
		for range b.N {
			base := live()
			got, err := scan.Collect(ctx)
			require.NoError(b, err)
			peak = max(peak, live()-base)
			require.Len(b, got, n)
			runtime.KeepAlive(got)
		}
		b.ReportMetric(float64(peak), "peak-live-B")
	})
}
