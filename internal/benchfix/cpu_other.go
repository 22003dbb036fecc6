//go:build !unix

package benchfix

import "time"

// ProcessCPU returns 0 where getrusage is not available (Windows, Plan 9,
// js/wasm): benchmarks then report cpu-ns/op as 0 and ns/op stays the
// measure.
func ProcessCPU() time.Duration { return 0 }
