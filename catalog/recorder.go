package catalog

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

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

// measured is what a Recorder summed for one pattern: in all, and per
// table (a transaction may span tables).
type measured struct {
	requests int64
	units    Units
	tables   map[string]*Units
}

func newUnits() *Units {
	return &Units{IndexRead: map[string]float64{}, IndexWrite: map[string]float64{}}
}

// add adds the capacity idx (by index, "" for the table) of a request to u.
func (u *Units) add(idx map[string]float64, write bool) {
	for name, n := range idx {
		switch {
		case name == "" && write:
			u.Write += n
		case name == "":
			u.Read += n
		case write:
			u.IndexWrite[name] += n
		default:
			u.IndexRead[name] += n
		}
	}
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{loads: map[string]*measured{}}
}

// Observe adds the capacity of one request to its access pattern's sum; it
// is a [singletable.TableOptions] Observe hook. Requests without a
// pattern are summed under "".
func (r *Recorder) Observe(_ context.Context, o *singletable.Observation) {
	write := isWrite(Operation(o.Op))
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.loads[o.Pattern]
	if m == nil {
		m = &measured{units: *newUnits(), tables: map[string]*Units{}}
		r.loads[o.Pattern] = m
		r.order = append(r.order, o.Pattern)
	}
	m.requests++
	for i, c := range o.Capacity {
		// each table's share, broken down by the Observation's own method
		share := (&singletable.Observation{Op: o.Op, Capacity: o.Capacity[i : i+1]}).IndexUnits()
		m.units.add(share, write)
		name := aws.ToString(c.TableName)
		if m.tables[name] == nil {
			m.tables[name] = newUnits()
		}
		m.tables[name].add(share, write)
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

// Measure returns w with the capacity of each load measured: its Measured
// set to what an average request of its pattern consumed on the table
// called table, as recorded; w's rates, sizes and storage stay. The report
// made from it prices the planned traffic at the capacity the recorded
// requests took, whatever the time the recording ran. A request spanning
// tables (a transaction) counts on each table its own share. A load whose
// pattern took no capacity on the table while recorded keeps its estimate
// and is named in estimated.
func (r *Recorder) Measure(table string, w Workload) (measuredW Workload, estimated []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	measuredW = w
	measuredW.Loads = slices.Clone(w.Loads)
	for i, ld := range measuredW.Loads {
		m := r.loads[ld.Pattern]
		if ld.Pattern == "" || m == nil || m.tables[table] == nil {
			estimated = append(estimated, ld.Pattern)
			continue
		}
		u := cloneUnits(*m.tables[table], 1/float64(m.requests))
		measuredW.Loads[i].Measured = &u
	}
	return measuredW, estimated
}
