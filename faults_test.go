package singletable_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/testfaults"
)

// Record is written under faults. Sum is a checksum of the other fields, so
// a half-written item (fields from two different writes) is detectable.
type Record struct {
	Owner string `dynamodbav:"Owner"`
	ID    int    `dynamodbav:"ID"`
	Gen   int    `dynamodbav:"Gen"`
	Body  string `dynamodbav:"Body"`
	Tag   string `dynamodbav:"Tag"`
	Sum   string `dynamodbav:"Sum"`
}

func (r Record) withSum() Record { r.Sum = r.sum(); return r }
func (r Record) sum() string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%d|%s|%s", r.Owner, r.ID, r.Gen, r.Body, r.Tag)))
	return hex.EncodeToString(h[:8])
}

var Records = singletable.MustDefine(singletable.Schema[Record]{
	Type: "Record", PK: "OWNER#{Owner}", SK: "REC#{ID}",
	Indexes: []singletable.IndexSchema[Record]{{Name: "GSI1", PK: "TAG#{Tag}", SK: "REC#{ID}"}},
})

// inputRow is one line of the bad-input table in docs/reliability.md.
type inputRow struct {
	Suite    string
	Tried    int
	Outcomes string
}

// report collects figures for docs/reliability.md (make reliability): the
// fault table's rows (internal/testfaults) and the bad-input table's.
var report struct {
	faults testfaults.Rows
	sync.Mutex
	inputs []inputRow
}

func reportFaults(r testfaults.Row) { report.faults.Add(r) }

func reportInputs(r inputRow) {
	report.Lock()
	report.inputs = append(report.inputs, r)
	report.Unlock()
}

// TestWritePathsUnderFaults runs Put, Update, Delete and BatchWrite through
// a client that injects faults at 10% and 30%, keeps a model of the states
// each item may be in (an operation that returned an error may or may not
// have been applied), then reads the table without faults: every item must
// be in one of its possible states, whole (checksum), and in the index
// exactly when its Tag says so. Nothing lost, nothing duplicated, nothing
// half-written.
func TestWritePathsUnderFaults(t *testing.T) {
	t.Parallel()
	testfaults.AtRates(t, runFaultSuite)
}

func runFaultSuite(t *testing.T, rate float64) {
	ctx := context.Background()
	seed := uint64(rate * 1000)
	var recs *singletable.Repo[Record]
	_, ft := testfaults.Table(t, rate, seed, func(tbl *singletable.Table) { recs = singletable.MustBind(tbl, Records) })
	ft.SetEnabled(true)

	const owners, perOwner, steps = 8, 25, 60
	// possible[key] holds every state the item may be in; "" is absent.
	type key struct {
		owner string
		id    int
	}
	var mu sync.Mutex
	possible := map[key]map[string]bool{}
	encode := func(r *Record) string {
		if r == nil {
			return ""
		}
		return fmt.Sprintf("%d|%s|%s", r.Gen, r.Body, r.Tag)
	}
	var ops, failed int
	var g errgroup.Group
	for o := 0; o < owners; o++ {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(seed, uint64(o)))
			owner := fmt.Sprintf("o%d", o)
			state := map[int]map[string]bool{}
			cur := map[int]*Record{} // the last state we asked for, to build updates from
			for i := 0; i < perOwner; i++ {
				state[i] = map[string]bool{"": true}
			}
			// after merges an op's outcome into the model: applied for sure,
			// or (err != nil) maybe applied.
			after := func(id int, next *Record, err error) {
				s := encode(next)
				if err == nil {
					state[id] = map[string]bool{s: true}
				} else {
					state[id][s] = true
				}
				cur[id] = next
			}
			gen := 0
			for step := 0; step < steps; step++ {
				gen++
				id := rng.IntN(perOwner)
				tag := []string{"", "red", "blue"}[rng.IntN(3)]
				body := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(200))
				var err error
				switch rng.IntN(4) {
				case 0: // Put
					r := Record{Owner: owner, ID: id, Gen: gen, Body: body, Tag: tag}.withSum()
					_, err = recs.Put(ctx, r)
					after(id, &r, err)
				case 1: // Update (only if it surely exists: otherwise ErrNotFound is a fine outcome)
					if cur[id] == nil || len(state[id]) != 1 {
						continue
					}
					r := *cur[id]
					r.Gen, r.Body, r.Tag = gen, body, tag
					r = r.withSum()
					_, err = recs.Update(Record{Owner: owner, ID: id}).SetFrom(r, "Gen", "Body", "Tag", "Sum").Run(ctx)
					after(id, &r, err)
				case 2: // Delete
					_, err = recs.Delete(ctx, Record{Owner: owner, ID: id})
					if errors.Is(err, singletable.ErrNotFound) {
						err = nil
					}
					after(id, nil, err)
				case 3: // BatchWrite of several puts
					var bops []singletable.WriteOp
					var rs []Record
					seen := map[int]bool{}
					for j := 0; j < 1+rng.IntN(30); j++ {
						bid := rng.IntN(perOwner)
						if seen[bid] {
							continue
						}
						seen[bid] = true
						r := Record{Owner: owner, ID: bid, Gen: gen, Body: body, Tag: tag}.withSum()
						rs = append(rs, r)
						bops = append(bops, recs.PutOp(r))
					}
					err = singletable.BatchWrite(ctx, bops)
					for _, r := range rs {
						after(r.ID, &r, err)
					}
				}
				mu.Lock()
				ops++
				if err != nil {
					failed++
				}
				mu.Unlock()
			}
			mu.Lock()
			for id, s := range state {
				possible[key{owner, id}] = s
			}
			mu.Unlock()
			return nil
		})
	}
	require.NoError(t, g.Wait())
	ft.SetEnabled(false)
	stats := ft.Stats()

	checked, lost, halfWritten, wrongIndex := 0, 0, 0, 0
	for o := 0; o < owners; o++ {
		owner := fmt.Sprintf("o%d", o)
		items, err := recs.Query(Record{Owner: owner}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Collect(ctx)
		require.NoError(t, err)
		got := map[int]*Record{}
		for _, r := range items {
			if _, dup := got[r.ID]; dup {
				t.Errorf("duplicate item %s/%d", owner, r.ID)
			}
			got[r.ID] = &r
			if r.Sum != r.sum() {
				halfWritten++
			}
		}
		for id := 0; id < perOwner; id++ {
			checked++
			s := encode(got[id])
			if !possible[key{owner, id}][s] {
				lost++
				t.Errorf("%s/%d is %q; possible states %v", owner, id, s, possible[key{owner, id}])
			}
		}
	}
	// The sparse index agrees with the items.
	for _, tag := range []string{"red", "blue"} {
		inIndex, err := recs.QueryIndex("GSI1", Record{Tag: tag}).Collect(ctx)
		require.NoError(t, err)
		for _, r := range inIndex {
			fresh, err := recs.Get(ctx, Record{Owner: r.Owner, ID: r.ID}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
			if err != nil || fresh.Tag != tag {
				wrongIndex++
			}
		}
	}
	assert.Zero(t, halfWritten, "half-written items")
	assert.Zero(t, wrongIndex, "stale index entries")
	assert.Greater(t, stats.Total(), 0)
	t.Logf("rate %.0f%%: %d operations (%d returned an error), %d requests, %d faults injected %v; %d items checked, %d lost, %d half-written, %d stale index entries",
		rate*100, ops, failed, stats.Requests, stats.Total(), stats.Faults, checked, lost, halfWritten, wrongIndex)
	reportFaults(testfaults.Row{Suite: "Put/Update/Delete/BatchWrite", Rate: rate, Ops: ops, Errors: failed, Faults: stats.Total(),
		Checked: checked, Lost: lost, Broken: halfWritten + wrongIndex, Notes: "checksum per item; sparse GSI1 agrees with the items"})
}

// Markers around the generated section of docs/reliability.md.
const (
	reportBegin = "<!-- reliability:begin (generated by make reliability; do not edit by hand) -->"
	reportEnd   = "<!-- reliability:end -->"
)

// writeReliabilityReport rewrites the section of the document at path
// between the markers with the figures the suites reported. TestMain calls
// it after every test has run (the suites are parallel).
func writeReliabilityReport(path string) error {
	faults := report.faults.All()
	report.Lock()
	inputs := slices.Clone(report.inputs)
	report.Unlock()
	// Package migrate's rows, which make reliability hands over in a file.
	more, err := testfaults.ReadRows(os.Getenv(testfaults.RowsEnv))
	if err != nil {
		return err
	}
	faults = append(faults, more...)
	sort.Slice(faults, func(i, j int) bool {
		if faults[i].Suite != faults[j].Suite {
			return faults[i].Suite < faults[j].Suite
		}
		return faults[i].Rate < faults[j].Rate
	})
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Suite < inputs[j].Suite })
	var b strings.Builder
	b.WriteString(reportBegin + "\n\n")
	b.WriteString("| suite | fault rate | operations | returned an error | faults injected | items checked | lost | duplicated | broken | what is checked |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	var tot testfaults.Row
	for _, r := range faults {
		fmt.Fprintf(&b, "| %s | %.0f%% | %d | %d | %d | %d | %d | %d | %d | %s |\n",
			r.Suite, r.Rate*100, r.Ops, r.Errors, r.Faults, r.Checked, r.Lost, r.Dups, r.Broken, r.Notes)
		if r.Contrast {
			continue
		}
		tot.Ops += r.Ops
		tot.Errors += r.Errors
		tot.Faults += r.Faults
		tot.Checked += r.Checked
		tot.Lost += r.Lost
		tot.Dups += r.Dups
		tot.Broken += r.Broken
	}
	fmt.Fprintf(&b, "| **total** (contrast rows left out) | | %d | %d | %d | %d | %d | %d | %d | |\n\n", tot.Ops, tot.Errors, tot.Faults, tot.Checked, tot.Lost, tot.Dups, tot.Broken)
	b.WriteString("| bad input | tried | outcomes |\n|---|---|---|\n")
	tried := 0
	for _, r := range inputs {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", r.Suite, r.Tried, r.Outcomes)
		tried += r.Tried
	}
	fmt.Fprintf(&b, "| **total** | %d | |\n\n", tried)
	b.WriteString(reportEnd)

	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(doc, []byte(reportBegin)), bytes.Index(doc, []byte(reportEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s: markers %q … %q not found", path, reportBegin, reportEnd)
	}
	out := append(append(slices.Clone(doc[:i]), b.String()...), doc[j+len(reportEnd):]...)
	return os.WriteFile(path, out, 0o644)
}
