package catalog

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file is the capacity and cost report: from the catalog's access
// patterns and the traffic expected on each (a [Workload]), the read and
// write capacity every pattern consumes on the table and on each index,
// what that costs a month on demand and provisioned, the write
// amplification of each index, and the partitions that would run past
// DynamoDB's per-partition limits.
//
// The arithmetic is DynamoDB's:
//   - a write consumes one write unit per KB of the item, rounded up, and
//     a transactional write twice that; every index the item is in takes a
//     write of the item's projected size too;
//   - a read consumes one read unit per 4 KB, rounded up: a Get rounds each
//     item, a Query or Scan rounds the sum of the items it reads; an
//     eventually consistent read (every index read, and table reads unless
//     Consistent) takes half, a transactional read twice;
//   - one partition serves at most 1,000 write units and 3,000 read units a
//     second.

// Per-partition throughput limits of DynamoDB, in capacity units per second.
const (
	PartitionWriteLimit = 1000
	PartitionReadLimit  = 3000
)

// Load is the traffic expected on one access pattern.
type Load struct {
	// Pattern is the access pattern's Name, as given to [New].
	Pattern string
	// PerSecond is the average number of requests a second.
	PerSecond float64
	// ItemKB is the size of one item read or written, in KB (1,024 bytes).
	ItemKB float64
	// Items is how many items one request reads (a Query page, a batch)
	// or writes (a batch, a transaction); 0 means 1.
	Items int
	// OtherItems is how many items of other entities, up to 1 KB each, a
	// write pattern's request writes or checks besides its Items in the
	// same request: a counter updated, a unique guard, a ConditionCheck
	// of a transaction. Each takes one write unit on the table (two in a
	// transaction) and nothing on the entity's indexes.
	OtherItems int
	// Consistent marks strongly consistent table reads, which take a whole
	// read unit per 4 KB instead of half. Index reads are always
	// eventually consistent.
	Consistent bool
	// Partitions is how many partitions the requests spread evenly over,
	// for the hot-partition check. 0 derives it from the key declaration:
	// one partition for a constant partition key, the shard count of a
	// write-sharded index, and otherwise spread wide enough not to be
	// checked.
	Partitions int
	// Measured, when set, is the capacity one request consumed, as
	// DynamoDB reported it while the pattern ran (see [Recorder]); it
	// replaces the estimate made from ItemKB and Items. The read units
	// measured for a write pattern (the reads a write makes to learn what
	// is stored) are reported as a read line of the pattern.
	Measured *Units
}

// Units is capacity consumed per request, on the table and on each index.
type Units struct {
	Read, Write           float64
	IndexRead, IndexWrite map[string]float64
}

// Stored is what one entity keeps at rest.
type Stored struct {
	Entity string
	Items  int64
	// ItemKB is the average item size in KB.
	ItemKB float64
}

// Workload is the traffic and data a table is expected to carry, the input
// of [Catalog.Cost].
type Workload struct {
	Loads   []Load
	Storage []Stored
	// IndexItemKB is the size in KB of an item's projection into an index,
	// by index name, for indexes that project less than the whole item;
	// by default an index entry is as large as the item.
	IndexItemKB map[string]float64
}

// Prices are DynamoDB's prices in US dollars, for the table class and
// region of the table.
type Prices struct {
	// Region and AsOf say where and since when the prices apply.
	Region, AsOf string
	// ReadRequestUnit and WriteRequestUnit are on-demand prices per
	// million request units.
	ReadRequestUnit, WriteRequestUnit float64
	// ReadCapacityUnitHour and WriteCapacityUnitHour are provisioned
	// prices per capacity unit and hour.
	ReadCapacityUnitHour, WriteCapacityUnitHour float64
	// StorageGBMonth is the price of a GB stored for a month.
	StorageGBMonth float64
}

// USEast1 are the list prices of the Standard table class in us-east-1 in
// effect since 1 November 2024 (on-demand throughput was halved that day).
// Pass your own [Prices] for another region, table class or date.
var USEast1 = Prices{
	Region: "us-east-1", AsOf: "2024-11-01",
	ReadRequestUnit: 0.125, WriteRequestUnit: 0.625,
	ReadCapacityUnitHour: 0.00013, WriteCapacityUnitHour: 0.00065,
	StorageGBMonth: 0.25,
}

// A month is taken as 30 days, for on-demand and provisioned prices alike.
const (
	hoursPerMonth   = 720
	secondsPerMonth = hoursPerMonth * 3600
)

// CostLine is the capacity one access pattern consumes in one place (the
// table or an index), for reads or for writes.
type CostLine struct {
	Pattern, Entity string
	// Index is the index name; "" for the table.
	Index string
	// Write is true for write capacity, false for read capacity.
	Write bool
	// PerSecond is the pattern's request rate.
	PerSecond float64
	// Units is the capacity consumed a second: read units (a strongly
	// consistent 4 KB read a second each) or write units.
	Units float64
	// Partitions is the number of partitions the capacity spreads over;
	// 0 when wide enough not to be checked.
	Partitions int
	// Measured is set when Units come from capacity measured while a
	// workload ran ([Load.Measured]), not from an estimate.
	Measured bool
	// OnDemand and Provisioned are the monthly costs in US dollars:
	// request units billed on demand, and capacity provisioned at exactly
	// Units (add headroom for auto scaling's target utilisation).
	OnDemand, Provisioned float64
}

// CostReport is the capacity and cost of a [Workload] on a cataloged
// table. Render it with [CostReport.Markdown].
type CostReport struct {
	Table  string
	Prices Prices
	// Lines are the capacity of every pattern, in the workload's order:
	// for each pattern, the table first, then its indexes.
	Lines []CostLine
	// StorageGB is the data at rest, table and indexes, with its monthly
	// cost.
	StorageGB, StorageCost float64
	// OnDemand and Provisioned are the monthly throughput totals.
	OnDemand, Provisioned float64
	// Findings are the partitions pushed past DynamoDB's limits.
	Findings []Finding
}

// Total returns the capacity units a second and on-demand cost a month of
// the lines selected by keep.
func (r *CostReport) Total(keep func(CostLine) bool) (units, onDemand float64) {
	for _, l := range r.Lines {
		if keep(l) {
			units += l.Units
			onDemand += l.OnDemand
		}
	}
	return units, onDemand
}

// Cost computes the capacity and monthly cost of w on the catalog's table
// at prices p. Each load must name an access pattern of the catalog; a
// load for an unknown pattern, or with a negative rate or size, is an
// error.
func (c *Catalog) Cost(w Workload, p Prices) (*CostReport, error) {
	r := &CostReport{Table: c.Table, Prices: p}
	var errs []error
	for _, ld := range w.Loads {
		i := slices.IndexFunc(c.Patterns, func(ap Pattern) bool { return ap.Name == ld.Pattern })
		if i < 0 {
			errs = append(errs, fmt.Errorf("catalog: load for access pattern %q, which the catalog does not list", ld.Pattern))
			continue
		}
		if ld.PerSecond < 0 || ld.ItemKB < 0 || ld.Items < 0 || ld.OtherItems < 0 || ld.Partitions < 0 {
			errs = append(errs, fmt.Errorf("catalog: load for access pattern %q has a negative rate, size or count", ld.Pattern))
			continue
		}
		ap := c.Patterns[i]
		ei := slices.IndexFunc(c.Entities, func(e Entity) bool { return e.Type == ap.Entity })
		if ei < 0 {
			errs = append(errs, fmt.Errorf("catalog: access pattern %q names entity %q, which is not bound to the table", ap.Name, ap.Entity))
			continue
		}
		r.Lines = append(r.Lines, c.costLines(ap, c.Entities[ei], ld, w, p)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, st := range w.Storage {
		ei := slices.IndexFunc(c.Entities, func(e Entity) bool { return e.Type == st.Entity })
		if ei < 0 {
			return nil, fmt.Errorf("catalog: storage estimate for entity %q, which is not bound to the table", st.Entity)
		}
		kb := float64(st.Items) * st.ItemKB
		for _, ix := range c.Entities[ei].Indexes {
			kb += float64(st.Items) * indexKB(w, ix.Name, st.ItemKB)
		}
		r.StorageGB += kb / (1024 * 1024)
	}
	r.StorageCost = r.StorageGB * p.StorageGBMonth
	for _, l := range r.Lines {
		r.OnDemand += l.OnDemand
		r.Provisioned += l.Provisioned
		limit, what := float64(PartitionReadLimit), "read"
		if l.Write {
			limit, what = PartitionWriteLimit, "write"
		}
		if l.Partitions > 0 && l.Units/float64(l.Partitions) > limit {
			where := "the table"
			if l.Index != "" {
				where = "index " + l.Index
			}
			r.Findings = append(r.Findings, finding(SeverityWarning, RulePartitionLimits, l.Entity, l.Index, fmt.Sprintf(
				"access pattern %s takes %s %s units a second on %s, spread over %d partition(s): %s a partition, over DynamoDB's %s a partition; shard the partition key",
				l.Pattern, num(l.Units), what, where, l.Partitions, num(l.Units/float64(l.Partitions)), num(limit))))
		}
	}
	return r, nil
}

func indexKB(w Workload, index string, itemKB float64) float64 {
	if kb, ok := w.IndexItemKB[index]; ok {
		return kb
	}
	return itemKB
}

// operation kinds, by the pattern's Operation.
func isWrite(op Operation) bool {
	switch op {
	case OpCreate, OpPut, OpUpdate, OpDelete, "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return strings.HasPrefix(string(op), "PutItem") || strings.HasPrefix(string(op), "TransactWrite")
}

func (c *Catalog) costLines(ap Pattern, e Entity, ld Load, w Workload, p Prices) []CostLine {
	items := max(ld.Items, 1)
	line := func(index string, write bool, units float64, parts int) CostLine {
		if ld.Partitions > 0 {
			parts = ld.Partitions
		}
		l := CostLine{Pattern: ap.Name, Entity: e.Type, Index: index, Write: write, PerSecond: ld.PerSecond,
			Units: units, Partitions: parts, Measured: ld.Measured != nil}
		if write {
			l.OnDemand = units * secondsPerMonth * p.WriteRequestUnit / 1e6
			l.Provisioned = units * hoursPerMonth * p.WriteCapacityUnitHour
		} else {
			l.OnDemand = units * secondsPerMonth * p.ReadRequestUnit / 1e6
			l.Provisioned = units * hoursPerMonth * p.ReadCapacityUnitHour
		}
		return l
	}
	if !isWrite(ap.Operation) {
		var per float64
		switch {
		case ld.Measured != nil && ap.Index == "":
			per = ld.Measured.Read
		case ld.Measured != nil:
			per = ld.Measured.IndexRead[ap.Index]
		case ap.Operation == OpGet || ap.Operation == "BatchGetItem" || ap.Operation == "TransactGetItems":
			per = float64(items) * math.Ceil(ld.ItemKB/4)
		default: // Query, Query (COUNT), Scan: the items read are summed, then rounded
			per = math.Ceil(float64(items) * ld.ItemKB / 4)
		}
		if ld.Measured == nil {
			switch {
			case ap.Operation == "TransactGetItems":
				per *= 2
			case ap.Index != "" || !ld.Consistent:
				per /= 2
			}
		}
		return []CostLine{line(ap.Index, false, per*ld.PerSecond, c.partitions(e, ap.Index))}
	}
	// A write: the table, then every index the entity is in.
	var table float64
	if ld.Measured != nil {
		table = ld.Measured.Write
	} else {
		table = float64(items)*math.Max(1, math.Ceil(ld.ItemKB)) + float64(ld.OtherItems)
		guarded := len(e.Unique) > 0 && (ap.Operation == OpCreate || ap.Operation == OpPut || ap.Operation == OpDelete)
		if guarded {
			table += float64(items * len(e.Unique)) // one small guard item per Unique declaration
		}
		if guarded || strings.HasPrefix(string(ap.Operation), "TransactWrite") {
			table *= 2
		}
	}
	out := []CostLine{line("", true, table*ld.PerSecond, c.partitions(e, ""))}
	if ld.Measured != nil && ld.Measured.Read > 0 {
		// the reads the write made to learn what is stored, as measured
		out = append(out, line("", false, ld.Measured.Read*ld.PerSecond, c.partitions(e, "")))
	}
	for _, ix := range e.Indexes {
		var per float64
		if ld.Measured != nil {
			per = ld.Measured.IndexWrite[ix.Name]
		} else {
			per = float64(items) * math.Max(1, math.Ceil(indexKB(w, ix.Name, ld.ItemKB)))
		}
		out = append(out, line(ix.Name, true, per*ld.PerSecond, c.partitions(e, ix.Name)))
	}
	return out
}

// partitions is the number of partitions the entity's items take in the
// table or an index when its partition key is constant (1, or the shard
// count), and 0 (spread) when the key has placeholders.
func (c *Catalog) partitions(e Entity, index string) int {
	if index == "" {
		if !strings.Contains(e.PK, "{") {
			return 1
		}
		return 0
	}
	for _, ix := range e.Indexes {
		if ix.Name != index || ix.MultiAttribute {
			continue
		}
		if ix.Shards > 0 {
			return ix.Shards
		}
		if !strings.Contains(ix.PK, "{") {
			return 1
		}
	}
	return 0
}

// Markdown renders the report: the prices and assumptions, the capacity
// and cost of every access pattern on the table and each index, the write
// amplification of each index, the totals and the partition warnings.
func (r *CostReport) Markdown() string {
	var b strings.Builder
	_ = r.WriteMarkdown(&b)
	return b.String()
}

// WriteMarkdown writes [CostReport.Markdown] to w.
func (r *CostReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capacity and cost of table `%s`\n\n", r.Table)
	b.WriteString("Generated from the entity declarations, the access patterns and the workload estimates by `singletable`; do not edit by hand.\n\n")
	var measured, estimated []string
	for _, l := range r.Lines {
		switch {
		case l.Measured && !slices.Contains(measured, l.Pattern):
			measured = append(measured, l.Pattern)
		case !l.Measured && !slices.Contains(estimated, l.Pattern):
			estimated = append(estimated, l.Pattern)
		}
	}
	if len(measured) > 0 {
		fmt.Fprintf(&b, "Measured: the capacity a request of %s took while a workload ran, as DynamoDB reported it.", cell(strings.Join(measured, ", ")))
		if len(estimated) > 0 {
			fmt.Fprintf(&b, " Estimated from item sizes: %s.", cell(strings.Join(estimated, ", ")))
		}
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Prices: %s, list prices since %s: on demand $%s per million read request units and $%s per million write request units; provisioned $%s per read capacity unit-hour and $%s per write capacity unit-hour; storage $%s per GB-month. A month is 30 days; provisioned costs assume capacity set exactly to the load.\n\n",
		r.Prices.Region, r.Prices.AsOf, price(r.Prices.ReadRequestUnit), price(r.Prices.WriteRequestUnit),
		price(r.Prices.ReadCapacityUnitHour), price(r.Prices.WriteCapacityUnitHour), price(r.Prices.StorageGBMonth))
	b.WriteString("## Access patterns\n\n")
	b.WriteString("| Pattern | Entity | Where | Capacity | Requests/s | Units/s | On demand $/month | Provisioned $/month |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range r.Lines {
		where, kind := "table", "read"
		if l.Index != "" {
			where = l.Index
		}
		if l.Write {
			kind = "write"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(l.Pattern), l.Entity, where, kind,
			num(l.PerSecond), num(l.Units), money(l.OnDemand), money(l.Provisioned))
	}
	b.WriteString("\n## Index write amplification\n\n")
	var indexes []string
	for _, l := range r.Lines {
		if l.Write && l.Index != "" && !slices.Contains(indexes, l.Index) {
			indexes = append(indexes, l.Index)
		}
	}
	slices.Sort(indexes)
	if len(indexes) == 0 {
		b.WriteString("No write of the workload goes to an index.\n")
	} else {
		b.WriteString("Write units an index takes for every write unit on the table, by the entities written.\n\n")
		b.WriteString("| Index | Index write units/s | Table write units/s of those entities | Amplification |\n|---|---|---|---|\n")
	}
	for _, ix := range indexes {
		var iw, tw, table float64
		for _, l := range r.Lines { // a load's table write comes before its index writes
			switch {
			case l.Write && l.Index == "":
				table = l.Units
			case l.Write && l.Index == ix:
				iw += l.Units
				tw += table
			}
		}
		amp := "n/a"
		if tw > 0 {
			amp = num(iw/tw) + "×"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ix, num(iw), num(tw), amp)
	}
	b.WriteString("\n## Totals\n\n")
	tr, trc := r.Total(func(l CostLine) bool { return !l.Write && l.Index == "" })
	tw, twc := r.Total(func(l CostLine) bool { return l.Write && l.Index == "" })
	b.WriteString("| Where | Read units/s | Write units/s | On demand $/month |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| table | %s | %s | %s |\n", num(tr), num(tw), money(trc+twc))
	var all []string
	for _, l := range r.Lines {
		if l.Index != "" && !slices.Contains(all, l.Index) {
			all = append(all, l.Index)
		}
	}
	slices.Sort(all)
	for _, ix := range all {
		ir, irc := r.Total(func(l CostLine) bool { return !l.Write && l.Index == ix })
		iw, iwc := r.Total(func(l CostLine) bool { return l.Write && l.Index == ix })
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ix, num(ir), num(iw), money(irc+iwc))
	}
	fmt.Fprintf(&b, "\nThroughput: %s a month on demand, %s provisioned. Storage: %s GB, %s a month.\n",
		money(r.OnDemand), money(r.Provisioned), num(r.StorageGB), money(r.StorageCost))
	b.WriteString("\n## Partitions\n\n")
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "No partition is pushed past DynamoDB's limits (%d read units, %d write units a second).\n", PartitionReadLimit, PartitionWriteLimit)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "- %s\n", cell(f.String()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num formats a figure with up to three decimals and no trailing zeros.
func num(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// price formats a unit price exactly as given.
func price(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// money formats dollars: cents, or tenths of a cent below a dollar.
func money(f float64) string {
	if f != 0 && f < 1 {
		return "$" + fmt.Sprintf("%.3f", f)
	}
	return "$" + fmt.Sprintf("%.2f", f)
}
