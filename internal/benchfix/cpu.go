package benchfix

import (
	"testing"
)

// Loop runs body b.N times (b.Loop) and reports, besides ns/op, the
// process CPU time per operation as "cpu-ns/op". On a shared machine wall
// time per op swings with the other load; CPU time (which includes the GC
// work the operation causes) is what this process itself spent.
func Loop(b *testing.B, body func()) {
	b.ReportAllocs()
	start := ProcessCPU()
	n := 0
	for b.Loop() {
		body()
		n++
	}
	if n > 0 {
		b.ReportMetric(float64(ProcessCPU()-start)/float64(n), "cpu-ns/op")
	}
}
