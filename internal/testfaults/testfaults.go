// Package testfaults holds what the fault suites of several packages share
// (the root's, package migrate's): the rates they run at, a table reached
// through a ddbfault Transport, quick batch retries, and the rows of the
// fault table in docs/reliability.md, with the file through which package
// migrate's rows reach the root's report (make reliability).
package testfaults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// Rates are the fault rates every fault suite runs at.
var Rates = []float64{0.10, 0.30}

// AtRates runs suite once at each of Rates, as parallel subtests named
// "rate=10%" and "rate=30%".
func AtRates(t *testing.T, suite func(t *testing.T, rate float64)) {
	t.Helper()
	for _, rate := range Rates {
		t.Run(fmt.Sprintf("rate=%.0f%%", rate*100), func(t *testing.T) {
			t.Parallel()
			suite(t, rate)
		})
	}
}

// Table makes a fresh table in the shared DynamoDB Local, reached through
// a ddbfault Transport injecting faults at rate from seed, with the
// entities bind binds; injection is off until the caller turns it on. The
// table is deleted when the test ends.
func Table(t testing.TB, rate float64, seed uint64, bind func(*singletable.Table)) (*singletable.Table, *ddbfault.Transport) {
	t.Helper()
	ft := ddbfault.New(nil, ddbfault.Config{Seed: seed, Rate: rate})
	ft.SetEnabled(false)
	client := ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	tbl := singletable.NewTable(client, ddblocal.TableName(t))
	bind(tbl)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), tbl.Name())
	return tbl, ft
}

// FastRetries keeps fault tests quick: tiny delays, a generous budget.
func FastRetries(o *singletable.BatchOptions) {
	o.Concurrency = 4
	o.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}
	o.MaxAttempts = 60
}

// Row is one line of the fault table in docs/reliability.md.
type Row struct {
	Suite   string
	Rate    float64
	Ops     int // operations the suite ran
	Errors  int // operations that returned an error (allowed: the model knows they may or may not have applied)
	Faults  int // faults injected
	Checked int // items checked against the model at the end
	Lost    int // items missing or in a state no sequence of outcomes explains
	Dups    int // items or effects present twice (double-applied writes, duplicate events)
	Broken  int // half-written items, partial transactions, stale index entries, orphan or missing guards
	Notes   string
	// Contrast marks a row that shows a hazard the library avoids (not a
	// guarantee); totals leave it out.
	Contrast bool
}

// RowsEnv names the file through which make reliability hands package
// migrate's rows to the root package's report: one JSON object a line.
const RowsEnv = "RELIABILITY_ROWS"

// Rows collects the rows the suites of one test binary report; the suites
// run in parallel.
type Rows struct {
	mu   sync.Mutex
	rows []Row
}

// Add records r.
func (rs *Rows) Add(r Row) {
	rs.mu.Lock()
	rs.rows = append(rs.rows, r)
	rs.mu.Unlock()
}

// All returns the rows recorded so far.
func (rs *Rows) All() []Row {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.rows)
}

// AppendTo appends the rows recorded to the file at path, one JSON object
// a line.
func (rs *Rows) AppendTo(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range rs.All() {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ReadRows reads the rows other packages' suites appended to the file at
// path (AppendTo); none when path is "".
func ReadRows(path string) ([]Row, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []Row
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var r Row
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
