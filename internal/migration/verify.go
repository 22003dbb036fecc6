package migration

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable/internal/attrvalue"
)

// VerifyOptions tunes Verify; see the root's VerifyOptions. Normalize
// fills in the defaults.
type VerifyOptions struct {
	Sample         float64
	Segments       int
	PageSize       int32
	MaxDifferences int
}

// Normalize sets the defaults of unset fields.
func (o *VerifyOptions) Normalize() {
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
}

// VerifyReport is what Verify found; see the root's VerifyReport.
type VerifyReport struct {
	ID, Kind        string
	SourceItems     int64
	Expected        map[string]int64
	Found           map[string]int64
	Compared        int64
	Missing         int64
	Different       int64
	Unexpected      int64
	TransformErrors int64
	Differences     []Difference
}

// Difference is one item that does not match.
type Difference struct {
	Entity string
	Key    map[string]types.AttributeValue
	// KeyAttrs names the key attributes of Key's table, partition key first.
	KeyAttrs []string
	// Kind is "missing", "different", "unexpected" or "stale".
	Kind  string
	Attrs []string
}

// Verify compares what mig should have produced with t's contents. It
// writes nothing.
func Verify(ctx context.Context, t *Table, mig Migration, o VerifyOptions) (*VerifyReport, error) {
	o.Normalize()
	rep, err := mig.Kind.verify(ctx, t, o)
	if rep != nil {
		rep.ID = mig.ID
	}
	return rep, err
}

// verifier collects a verification's findings from concurrent scans.
type verifier struct {
	t   *Table
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
	h.Write([]byte(v.t.KeyText(key)))
	// FNV leaves keys that differ only at the end close together; the
	// splitmix64 finalizer spreads them over the whole range.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x) < v.o.Sample*math.MaxUint64
}

// scanAll scans spec's table in parallel segments and calls fn with each
// page's items (concurrently for different segments).
func scanAll(ctx context.Context, spec scanSpec, segments int, pageSize int32, projection string, fn func([]map[string]types.AttributeValue) error) error {
	g, ctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			in := spec.input(seg, segments, pageSize, projection)
			for {
				out, err := spec.page(ctx, in)
				if err != nil {
					return fmt.Errorf("singletable: verify: scan %s: %w", spec.table, err)
				}
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
func countTypes(ctx context.Context, t *Table, o VerifyOptions) (map[string]int64, error) {
	var mu sync.Mutex
	found := map[string]int64{}
	spec := scanSpec{client: t.Client, table: t.Name}
	err := scanAll(ctx, spec, o.Segments, o.PageSize, t.EntityTypeAttr, func(items []map[string]types.AttributeValue) error {
		local := map[string]int64{}
		for _, it := range items {
			if typ := getS(it, t.EntityTypeAttr); typ != ledgerEntity {
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

func (c *Copy) verify(ctx context.Context, t *Table, o VerifyOptions) (*VerifyReport, error) {
	spec, err := c.source(ctx, t)
	if err != nil {
		return nil, err
	}
	v := &verifier{t: t, o: o, rep: &VerifyReport{Kind: c.Name(), Expected: map[string]int64{}}}
	err = scanAll(ctx, spec, o.Segments, o.PageSize, "", func(items []map[string]types.AttributeValue) error {
		expected := map[string]int64{}
		var check []Op
		var transformErrs int64
		for _, item := range items {
			ops, err := c.Transform(item)
			if err != nil {
				transformErrs++
				continue
			}
			for _, op := range ops {
				if op.Put != nil {
					expected[op.Entity]++
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
		return v.compare(ctx, c, check)
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
func (v *verifier) compare(ctx context.Context, c *Copy, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	got, err := c.Read(ctx, ops)
	if err != nil {
		return err
	}
	for i, op := range ops {
		item := got[i]
		d := Difference{Entity: op.Entity, Key: op.Key, KeyAttrs: op.KeyAttrs}
		switch {
		case op.Put == nil && item != nil:
			d.Kind = "unexpected"
		case op.Put != nil && item == nil:
			d.Kind = "missing"
		case op.Put != nil:
			if d.Attrs = diffAttrs(op.Put, item); len(d.Attrs) > 0 {
				d.Kind = "different"
			}
		}
		if d.Kind != "" {
			v.note(d)
		}
	}
	return nil
}

func (b *Backfill) verify(ctx context.Context, t *Table, o VerifyOptions) (*VerifyReport, error) {
	return verifyEach(ctx, t, o, b.Name(), b.Entity, b.Select, func(v *verifier, d Difference, item map[string]types.AttributeValue) error {
		w, err := b.Plan(item)
		switch {
		case err != nil:
			d.Kind, d.Attrs = "different", []string{err.Error()}
		case w.Changed():
			d.Kind, d.Attrs = "stale", w.Attrs()
		default:
			return nil
		}
		v.note(d)
		return nil
	})
}

// verifyEach scans the items of entity and passes each sampled one to
// check, with the Difference that names it; it counts what it read and
// compared.
func verifyEach(ctx context.Context, t *Table, o VerifyOptions, kind, entity string, sel Selection,
	check func(v *verifier, d Difference, item map[string]types.AttributeValue) error) (*VerifyReport, error) {
	spec, err := entityScan(ctx, t, entity, sel)
	if err != nil {
		return nil, err
	}
	v := &verifier{t: t, o: o, rep: &VerifyReport{Kind: kind, Found: map[string]int64{}}}
	err = scanAll(ctx, spec, o.Segments, o.PageSize, "", func(items []map[string]types.AttributeValue) error {
		var compared int64
		for _, item := range items {
			key := t.KeyOf(item)
			if !v.sampled(key) {
				continue
			}
			compared++
			if err := check(v, Difference{Entity: entity, Key: key, KeyAttrs: t.KeyAttrs()}, item); err != nil {
				return err
			}
		}
		v.mu.Lock()
		v.rep.SourceItems += int64(len(items))
		v.rep.Found[entity] += int64(len(items))
		v.rep.Compared += compared
		v.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v.rep, nil
}
