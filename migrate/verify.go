package migrate

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/attrvalue"
)

// VerifyOptions tunes [Migrator.Verify]. The zero value of a field means
// its default.
type VerifyOptions struct {
	// Sample is the fraction of items compared attribute by attribute, in
	// (0, 1]; default 1, every item. The sample is chosen by a hash of
	// each item's key, so it is the same on every call. Counts always
	// cover every item.
	Sample float64
	// Segments is the number of parallel scan segments; default 4.
	Segments int
	// PageSize is the number of items a scan request evaluates; default 1000.
	PageSize int32
	// MaxDifferences caps VerifyReport.Differences; default 100.
	MaxDifferences int
	// Progress, if set, is called every ProgressInterval (default 1s) and
	// once at the end, from a single goroutine: Scanned counts the items
	// the verification's scans evaluated (the source, then for a copy the
	// table's items counted by type), Read the items compared, and Total
	// estimates what the scans evaluate in all (0 when unknown).
	Progress func(Progress)
	// ProgressInterval is how often Progress is called; default 1s.
	ProgressInterval time.Duration

	seen *verifyCounts // what the scans have done, for Progress
}

// verifyCounts is what a verification's scans have done so far.
type verifyCounts struct{ scanned, compared, total atomic.Int64 }

// normalize sets the defaults of unset fields.
func (o *VerifyOptions) normalize() {
	if o.Sample <= 0 || o.Sample > 1 {
		o.Sample = 1
	}
	if o.Segments <= 0 {
		o.Segments = 4
	}
	if o.PageSize <= 0 {
		o.PageSize = 1000
	}
	if o.MaxDifferences <= 0 {
		o.MaxDifferences = 100
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = time.Second
	}
	o.seen = &verifyCounts{}
}

// VerifyReport is what [Migrator.Verify] found.
type VerifyReport struct {
	ID   string
	Kind string
	// SourceItems counts the items of the source (a copy's source table; a
	// backfill's entity items).
	SourceItems int64
	// Expected counts, per entity type, the puts the migration makes: for
	// a copy, what the transform makes of every source item; nil for a
	// backfill.
	Expected map[string]int64
	// Found counts, per entity type, the items in the table (ledger items
	// excluded).
	Found map[string]int64
	// Compared counts the items compared attribute by attribute.
	Compared int64
	// Missing counts items a copy should have put and the table lacks.
	Missing int64
	// Different counts items whose attributes differ from what the copy
	// puts, or (backfill) whose keys are not those of the declaration.
	Different int64
	// Unexpected counts items a copy should have deleted and the table
	// still holds.
	Unexpected int64
	// TransformErrors counts source items the transform rejected.
	TransformErrors int64
	// Differences lists the first differences found.
	Differences []Difference
}

// OK reports whether nothing differs: no missing, different or unexpected
// item, no transform error, and for a copy, as many items of each entity
// type in the table as the transform makes.
func (r *VerifyReport) OK() bool {
	if r.Missing+r.Different+r.Unexpected+r.TransformErrors > 0 {
		return false
	}
	for typ, n := range r.Expected {
		if r.Found[typ] != n {
			return false
		}
	}
	return true
}

// Difference is one item that does not match.
type Difference struct {
	// Entity is the item's entity type.
	Entity string
	// Key is the item's primary key in the table.
	Key map[string]types.AttributeValue
	// Kind is "missing", "different", "unexpected" or "stale" (a
	// backfilled item whose keys are not those of the declaration).
	Kind string
	// Attrs names the attributes that differ, for "different" and "stale".
	Attrs []string

	pk, sk string // the key attributes of Key's table, to print it in key order
}

// String renders the difference for logs, e.g. "missing User {PK=USER#john SK=PROFILE}".
func (d Difference) String() string {
	s := fmt.Sprintf("%s %s %v", d.Kind, d.Entity, attrvalue.KeyText(d.Key, d.pk, d.sk))
	if len(d.Attrs) > 0 {
		s += fmt.Sprintf(" attrs %v", d.Attrs)
	}
	return s
}

// Verify compares what a migration should have produced with the table.
// For a copy it scans the source, runs the transform on every item and
// counts the expected items per entity type; it reads the sampled items'
// targets (BatchGetItem, consistent) and compares them attribute by
// attribute; and it counts the table's items per entity type. For a
// backfill it checks that every item of the entity has the keys the
// declaration renders. Verify writes nothing.
func (m *Migrator) Verify(ctx context.Context, id string, optFns ...func(*VerifyOptions)) (*VerifyReport, error) {
	var o VerifyOptions
	for _, fn := range optFns {
		fn(&o)
	}
	mig, err := m.migration(ctx, id)
	if err != nil {
		return nil, err
	}
	o.normalize()
	if o.Progress != nil {
		start := time.Now()
		stop := every(o.ProgressInterval, func(done bool) { o.Progress(o.seen.progress(mig.ID, start, done)) })
		defer stop()
	}
	rep, err := mig.kind.verify(ctx, m.t, o)
	if rep != nil {
		rep.ID = mig.ID
	}
	return rep, err
}

// progress snapshots the verification of migration id started at start.
func (c *verifyCounts) progress(id string, start time.Time, done bool) Progress {
	p := Progress{ID: id, Counts: Counts{Scanned: c.scanned.Load(), Read: c.compared.Load()},
		Total: c.total.Load(), Elapsed: time.Since(start), Done: done}
	if secs := p.Elapsed.Seconds(); secs > 0 {
		p.Rate = float64(p.Scanned) / secs
		if p.Rate > 0 && p.Total > p.Scanned && !done {
			p.ETA = time.Duration(float64(p.Total-p.Scanned) / p.Rate * float64(time.Second))
		}
	}
	return p
}

// verifier collects a verification's findings from concurrent scans.
type verifier struct {
	t   *table
	o   VerifyOptions
	mu  sync.Mutex
	rep *VerifyReport
}

func (v *verifier) note(d Difference) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch d.Kind {
	case "missing":
		v.rep.Missing++
	case "unexpected":
		v.rep.Unexpected++
	default:
		v.rep.Different++
	}
	if len(v.rep.Differences) < v.o.MaxDifferences {
		v.rep.Differences = append(v.rep.Differences, d)
	}
}

// sampled reports whether the item with this key is in the sample.
func (v *verifier) sampled(key map[string]types.AttributeValue) bool {
	if v.o.Sample >= 1 {
		return true
	}
	h := fnv.New64a()
	// The key's text in attribute name order: the same whichever table
	// (source or target) the key belongs to.
	h.Write([]byte(attrvalue.KeyText(key, "", "")))
	// FNV leaves keys that differ only at the end close together; the
	// splitmix64 finalizer spreads them over the whole range.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x) < v.o.Sample*math.MaxUint64
}

// scanAll scans spec's table in parallel segments and calls fn with each
// page's items (concurrently for different segments), counting what it
// scans in o.seen.
func scanAll(ctx context.Context, spec scanSpec, o VerifyOptions, projection string, fn func([]map[string]types.AttributeValue) error) error {
	o.seen.total.Add(spec.total)
	g, ctx := errgroup.WithContext(ctx)
	for seg := range o.Segments {
		g.Go(func() error {
			in := spec.input(seg, o.Segments, o.PageSize, projection)
			for {
				out, err := spec.page(ctx, in)
				if err != nil {
					return fmt.Errorf("singletable: verify: scan %s: %w", spec.table, err)
				}
				o.seen.scanned.Add(int64(out.ScannedCount))
				if err := fn(out.Items); err != nil {
					return err
				}
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	return g.Wait()
}

// countTypes counts t's items per entity type, skipping the ledger.
func countTypes(ctx context.Context, t *table, o VerifyOptions) (map[string]int64, error) {
	var mu sync.Mutex
	found := map[string]int64{}
	spec := scanSpec{client: t.client, table: t.name}
	if err := spec.describe(ctx); err != nil {
		return nil, err
	}
	err := scanAll(ctx, spec, o, t.typeAttr, func(items []map[string]types.AttributeValue) error {
		local := map[string]int64{}
		for _, it := range items {
			if typ := getS(it, t.typeAttr); typ != ledgerEntity {
				local[typ]++
			}
		}
		mu.Lock()
		for k, n := range local {
			found[k] += n
		}
		mu.Unlock()
		return nil
	})
	return found, err
}

func (c *copyKind) verify(ctx context.Context, t *table, o VerifyOptions) (*VerifyReport, error) {
	spec, err := c.source(ctx, t)
	if err != nil {
		return nil, err
	}
	v := &verifier{t: t, o: o, rep: &VerifyReport{Kind: c.name(), Expected: map[string]int64{}}}
	err = scanAll(ctx, spec, o, "", func(items []map[string]types.AttributeValue) error {
		expected := map[string]int64{}
		var check []singletable.WriteOp
		var transformErrs int64
		for _, item := range items {
			ops, err := c.ops(item)
			if err != nil {
				transformErrs++
				continue
			}
			for _, op := range ops {
				if isPut(op) {
					expected[op.Entity()]++
				}
			}
			if v.sampled(spec.keyOf(item)) {
				check = append(check, ops...)
			}
		}
		v.mu.Lock()
		v.rep.SourceItems += int64(len(items))
		v.rep.TransformErrors += transformErrs
		for k, n := range expected {
			v.rep.Expected[k] += n
		}
		v.rep.Compared += int64(len(check))
		v.mu.Unlock()
		o.seen.compared.Add(int64(len(check)))
		return v.compare(ctx, check)
	})
	if err != nil {
		return nil, err
	}
	if v.rep.Found, err = countTypes(ctx, t, o); err != nil {
		return nil, err
	}
	return v.rep, nil
}

// diffAttrs returns the sorted names of the attributes whose values differ
// between a and b, or that only one of them has.
func diffAttrs(a, b map[string]types.AttributeValue) []string {
	var out []string
	for k, av := range a {
		if bv, ok := b[k]; !ok || !attrvalue.Equal(av, bv) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (s scanSpec) keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := make(map[string]types.AttributeValue, len(s.keyAttrs))
	for _, a := range s.keyAttrs {
		k[a] = item[a]
	}
	return k
}

// compare reads the targets of ops and notes how they differ from what
// the ops write.
func (v *verifier) compare(ctx context.Context, ops []singletable.WriteOp) error {
	if len(ops) == 0 {
		return nil
	}
	got, err := readOps(ctx, ops)
	if err != nil {
		return err
	}
	for i, op := range ops {
		item := got[i]
		o := op.Table().Options()
		d := Difference{Entity: op.Entity(), Key: op.Key(), pk: o.PartitionKey, sk: o.SortKey}
		switch {
		case !isPut(op) && item != nil:
			d.Kind = "unexpected"
		case isPut(op) && item == nil:
			d.Kind = "missing"
		case isPut(op):
			if d.Attrs = diffAttrs(op.Item(), item); len(d.Attrs) > 0 {
				d.Kind = "different"
			}
		}
		if d.Kind != "" {
			v.note(d)
		}
	}
	return nil
}

// readOps reads the items at the ops' keys, consistently, one request at
// a time per table.
func readOps(ctx context.Context, ops []singletable.WriteOp) ([]map[string]types.AttributeValue, error) {
	byTable := map[*singletable.Table][]int{}
	for i, op := range ops {
		byTable[op.Table()] = append(byTable[op.Table()], i)
	}
	out := make([]map[string]types.AttributeValue, len(ops))
	for t, idx := range byTable {
		keys := make([]map[string]types.AttributeValue, len(idx))
		for k, i := range idx {
			keys[k] = ops[i].Key()
		}
		got, err := t.GetItems(ctx, keys)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = got[k]
		}
	}
	return out, nil
}

// verifyEach scans the items of k's entity and passes each sampled one to
// check, with the Difference that names it; it counts what it read and
// compared.
func verifyEach(ctx context.Context, t *table, o VerifyOptions, kind string, k *entityKind,
	check func(v *verifier, d Difference, item map[string]types.AttributeValue) error) (*VerifyReport, error) {
	spec, err := k.source(ctx, t)
	if err != nil {
		return nil, err
	}
	v := &verifier{t: t, o: o, rep: &VerifyReport{Kind: kind, Found: map[string]int64{}}}
	err = scanAll(ctx, spec, o, "", func(items []map[string]types.AttributeValue) error {
		var compared int64
		for _, item := range items {
			key := t.keyOf(item)
			if !v.sampled(key) {
				continue
			}
			compared++
			if err := check(v, Difference{Entity: k.entity, Key: key, pk: t.pk, sk: t.sk}, item); err != nil {
				return err
			}
		}
		v.mu.Lock()
		v.rep.SourceItems += int64(len(items))
		v.rep.Found[k.entity] += int64(len(items))
		v.rep.Compared += compared
		v.mu.Unlock()
		o.seen.compared.Add(compared)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v.rep, nil
}
