package benchfix

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU returns the CPU time (user + system) the process has used.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
