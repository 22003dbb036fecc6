package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/singletable-go/singletable"
)

// Recorder measures the capacity each access pattern consumes while a
// workload runs, to make the cost report from measured capacity instead of
// estimates. Install its [Recorder.Observe] as the table's hook, name the
// pattern of each request with [singletable.WithPattern], run the workload
// (an example app's tests, a load test), then pass [Recorder.Workload] to
// [Catalog.Cost]:
//
//	rec := catalog.NewRecorder()
//	t := singletable.NewTable(client, "app", func(o *singletable.TableOptions) { o.Observe = rec.Observe })
//	start := time.Now()
//	// ... the workload, with ctx = singletable.WithPattern(ctx, "AP1") ...
//	report, err := cat.Cost(rec.Workload(time.Since(start)), catalog.USEast1)
//
// Capacity is counted where DynamoDB reported it: the reads a write makes
// to learn what is stored count as read units of the write's pattern, and
// every page of a query as one request of its pattern. A Recorder is safe
// for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	loads map[string]*measured
	order []string
}

// measured is what a Recorder summed for one pattern.
type measured struct {
	requests int64
	units    Units
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{loads: map[string]*measured{}}
}

// Observe adds the capacity of one request to its access pattern's sum; it
// is a [singletable.TableOptions] Observe hook. Requests without a
// pattern are summed under "".
func (r *Recorder) Observe(_ context.Context, o *singletable.Observation) {
	idx := o.IndexUnits()
	write := isWrite(Operation(o.Op))
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.loads[o.Pattern]
	if m == nil {
		m = &measured{units: Units{IndexRead: map[string]float64{}, IndexWrite: map[string]float64{}}}
		r.loads[o.Pattern] = m
		r.order = append(r.order, o.Pattern)
	}
	m.requests++
	for name, u := range idx {
		switch {
		case name == "" && write:
			m.units.Write += u
		case name == "":
			m.units.Read += u
		case write:
			m.units.IndexWrite[name] += u
		default:
			m.units.IndexRead[name] += u
		}
	}
}

// Requests returns the number of requests observed per access pattern
// ("" for requests sent without one).
func (r *Recorder) Requests() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.loads))
	for p, m := range r.loads {
		out[p] = m.requests
	}
	return out
}

// Total returns the capacity units observed for pattern, summed over its
// requests.
func (r *Recorder) Total(pattern string) Units {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.loads[pattern]
	if m == nil {
		return Units{}
	}
	return cloneUnits(m.units, 1)
}

// Workload returns the measured loads of every named pattern, in the order
// first observed: each request rate is the requests observed over
// elapsed, the time the workload ran, and Measured the capacity an average
// request consumed. Requests without a pattern are left out (see
// [Recorder.Requests]). Add Storage to the result for the storage cost.
func (r *Recorder) Workload(elapsed time.Duration) Workload {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w Workload
	secs := elapsed.Seconds()
	for _, p := range r.order {
		m := r.loads[p]
		if p == "" || m.requests == 0 || secs <= 0 {
			continue
		}
		u := cloneUnits(m.units, 1/float64(m.requests))
		w.Loads = append(w.Loads, Load{Pattern: p, PerSecond: float64(m.requests) / secs, Measured: &u})
	}
	return w
}

func cloneUnits(u Units, scale float64) Units {
	out := Units{Read: u.Read * scale, Write: u.Write * scale,
		IndexRead: make(map[string]float64, len(u.IndexRead)), IndexWrite: make(map[string]float64, len(u.IndexWrite))}
	for k, v := range u.IndexRead {
		out.IndexRead[k] = v * scale
	}
	for k, v := range u.IndexWrite {
		out.IndexWrite[k] = v * scale
	}
	return out
}
