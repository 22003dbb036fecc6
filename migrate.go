package singletable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/migration"
)

// Migrations: a copy of another table through a transform
// ([CopyMigration]) and a backfill that re-renders an entity's keys after
// its declaration changed ([Repo.BackfillMigration]), run by a [Migrator]
// that keeps their ledger in the table. This file is their public face;
// the engine (runner, ledger, checkpoints, verification) is in
// internal/migration, and migrate_backfill.go is the generic edge that
// renders an entity's items and writes them through the write plan.

// Migration is one named data migration: a copy of another table through a
// transform ([CopyMigration]) or a backfill that re-renders an entity's keys
// after its declaration changed ([Repo.BackfillMigration]). Register
// migrations with [NewMigrator], which records their progress in the table
// itself.
type Migration struct {
	// ID names the migration in the ledger: 1 to 128 characters from
	// [A-Za-z0-9._-], for example "000-users-to-glad-entities". IDs are
	// forever: a finished migration never runs again under the same ID.
	ID string
	// Description says what the migration does, for `migrate status`.
	Description string

	kind string // "copy", "backfill" or "guards"
	// engine makes the engine's form of the migration for a run on t whose
	// batch writes use batch; it refuses a migration that cannot run on t.
	engine func(t *Table, batch BatchOptions) (migration.Kind, error)
}

// Transform maps one raw item of a copy's source table to the writes it
// becomes in the target: usually one put made with [Repo.PutOp], none to
// skip the item, several to split it into entities.
//
// A transform must be deterministic (the same item gives the same ops) and
// safe for concurrent use: a resumed or repeated run transforms items
// again and must write the same content, and [Migrator.Verify] compares
// the table with the transform's output.
type Transform func(item map[string]types.AttributeValue) ([]WriteOp, error)

// TransformAs returns a [Transform] that decodes each raw item into S with
// the SDK's attributevalue.UnmarshalMap (so `dynamodbav` tags apply) and
// passes it to fn. A decoding error fails the item.
func TransformAs[S any](fn func(S) ([]WriteOp, error)) Transform {
	return func(item map[string]types.AttributeValue) ([]WriteOp, error) {
		var s S
		if err := attributevalue.UnmarshalMap(item, &s); err != nil {
			return nil, fmt.Errorf("singletable: transform: decode source item: %w", err)
		}
		return fn(s)
	}
}

// CopySource names the table a copy migration reads.
type CopySource struct {
	// Table is the source table's name. Its key schema can be anything.
	Table string
	// Client reaches the source table; nil means the migrator's table's
	// client.
	Client Client
}

// CopyMigration returns a migration that scans src and writes what
// transform makes of each item, with batch writes ([BatchWrite]) whose
// unprocessed items are retried with backoff. See [Migrator.Run] for the
// options (segments, writers, rate limit, dry run, progress) and
// [MigrationCounts] for how items are counted.
func CopyMigration(id string, src CopySource, transform Transform) Migration {
	return Migration{ID: id, kind: "copy", engine: func(t *Table, batch BatchOptions) (migration.Kind, error) {
		if src.Table == "" || transform == nil {
			return nil, validationErr("", "CopySource", "a copy needs a source table and a transform")
		}
		return copyEngine(t, src, transform, batch), nil
	}}
}

// MigrationState is the state of a migration as its ledger records it.
type MigrationState string

// The states of a migration.
const (
	// MigrationPending: the migration has never run.
	MigrationPending MigrationState = "pending"
	// MigrationRunning: a run holds the migration's lease now.
	MigrationRunning MigrationState = "running"
	// MigrationInterrupted: a run started and stopped before the end
	// (cancelled, crashed, or an error); the next run resumes from the
	// per-segment checkpoints.
	MigrationInterrupted MigrationState = "interrupted"
	// MigrationCompleted: every item was migrated; the migration does not
	// run again.
	MigrationCompleted MigrationState = "completed"
	// MigrationFailed: a run reached the end with failed items; the next
	// run starts again from the beginning (writes are idempotent).
	MigrationFailed MigrationState = "failed"
)

// MigrationCounts counts what a migration did with the items it met. The
// counts add up: Read = Written + Skipped + Failed.
//
// For a copy, Read counts source items; an item is Written when its
// transform returned at least one op and every op was applied (in a dry
// run: would be applied), Skipped when the transform returned no op, and
// Failed when the transform returned an error or an invalid op, or any of
// its ops could not be applied after the retries (its other ops may have
// been applied; a later run applies them again, to the same content).
// An item that becomes several ops counts once.
//
// For a backfill, Read counts the entity's items; an item is Written when
// it was rewritten (an update of its index attributes, or a re-key),
// Skipped when its keys were already those of the current declaration or
// it was deleted meanwhile, and Failed otherwise. A re-keyed item may be
// met again by the scan at its new key; it is then read again and skipped.
type MigrationCounts struct {
	// Scanned counts the items the scan evaluated, before its filter.
	Scanned int64
	Read    int64
	Written int64
	Skipped int64
	Failed  int64
}

// RunOptions tunes [Migrator.Run]. Set fields in the option functions; the
// zero value of a field means its default.
type RunOptions struct {
	// Segments is the number of parallel scan segments; default 4. It is
	// fixed by a migration's first run: a resumed run uses the recorded
	// number so that the checkpoints still mean the same thing.
	Segments int
	// Writers is the number of write requests in flight at once (batch
	// writes of 25 for a copy, single-item rewrites for a backfill);
	// default 8.
	Writers int
	// PageSize is the number of items a scan request evaluates; default
	// 1000. A scan without a limit is slow on DynamoDB Local (quadratic)
	// and checkpoints are taken once per page.
	PageSize int32
	// WCU limits the write capacity units consumed per second by the
	// migration's writes to the base table (0: no limit). A put or update
	// costs ceil(size/1 KB) units, a transactional write twice that.
	WCU float64
	// DryRun reports what would be written and writes nothing, not even
	// the ledger. It scans from the beginning.
	DryRun bool
	// Progress, if set, is called every ProgressInterval (default 1s) and
	// once at the end, from a single goroutine.
	Progress func(Progress)
	// ProgressInterval is how often Progress is called; default 1s.
	ProgressInterval time.Duration
	// Batch tunes the retries of each batch write (its Concurrency is
	// ignored: Writers says how many are in flight).
	Batch BatchOptions
	// Lease is how long a run's claim on the migration lasts without
	// renewal; default 1 minute. A crashed run blocks others that long
	// (in a shared run: a crashed worker's segments wait that long before
	// another worker takes them over).
	Lease time.Duration
	// Shared makes this run one worker of several, in this process or
	// others, on this machine or others, that run the migration together.
	// Instead of holding the whole migration, each worker claims scan
	// segments one at a time, each by a lease of its own in the segment's
	// checkpoint (renewed while it scans), and stays until every segment is
	// done: a worker that dies has its segments taken over, from their
	// last checkpoints, once their leases expire. The first worker's
	// Segments fixes the number of segments; choose several per worker
	// (for example 4 workers × WorkerSegments 2 × 2 = 16) so the work
	// spreads evenly. Counts add up across workers: each report's Counts
	// are the migration's totals and RunCounts this worker's share. The
	// worker that sees the last segment done records the migration
	// completed (or failed); the others report that state. Shared workers
	// and a run without Shared keep each other out ([ErrMigrationRunning]).
	// A dry run ignores Shared.
	Shared bool
	// WorkerSegments is how many segments a shared worker scans at once;
	// default 2.
	WorkerSegments int
}

// Progress is a snapshot of a running migration, passed to
// [RunOptions].Progress.
type Progress struct {
	ID string
	// MigrationCounts are totals so far, including earlier runs of the
	// migration that this run resumes.
	MigrationCounts
	// Total estimates how many items the scan evaluates in all (the
	// scanned table's item count, which DynamoDB updates about every six
	// hours); 0 when unknown.
	Total int64
	// Elapsed is the time since this run started.
	Elapsed time.Duration
	// Rate is items read per second in this run.
	Rate float64
	// WCURate is write capacity units consumed per second in this run.
	WCURate float64
	// ETA estimates the time left; 0 when unknown.
	ETA time.Duration
	// Done is set on the last call.
	Done bool
}

// ItemFailure is one item a migration could not migrate.
type ItemFailure struct {
	// Segment is the scan segment the item came from.
	Segment int
	// Key is the item's primary key in the scanned table.
	Key map[string]types.AttributeValue
	// Err says why.
	Err error
}

// MigrationReport describes one call of [Migrator.Run].
type MigrationReport struct {
	ID   string
	Kind string
	// State is the migration's state after the call.
	State MigrationState
	// DryRun is set when nothing was written.
	DryRun bool
	// AlreadyCompleted is set when the migration had completed before and
	// the call did nothing; Counts are those recorded.
	AlreadyCompleted bool
	// Resumed is set when the run continued from checkpoints of an earlier
	// run.
	Resumed bool
	// Segments is the number of scan segments used.
	Segments int
	// Counts are the migration's totals, earlier runs (and, in a shared
	// run, the other workers) included.
	Counts MigrationCounts
	// RunCounts are what this run itself migrated: the pages it
	// checkpointed. The RunCounts of the workers of a shared run, and of the
	// runs before them, add up to Counts.
	RunCounts MigrationCounts
	// Claimed counts the segments a shared run claimed, and TakenOver those
	// of them another run had left part-way (its lease expired, or it
	// stopped).
	Claimed, TakenOver int
	// Ops counts the writes of this run by entity type and kind, for
	// example "User put", "UserSkill update", "UserSkill re-key". In a dry
	// run these are the writes that would be made.
	Ops map[string]int64
	// Retried counts the rewrites of this run that were planned again
	// because a concurrent writer changed the item meanwhile (backfill).
	Retried int64
	// WCU is the write capacity this run consumed (would consume, in a dry
	// run), computed from item sizes.
	WCU int64
	// Elapsed is the duration of this run.
	Elapsed time.Duration
	// Failures lists the items this run failed, up to 1,000 of them
	// (Counts.Failed has them all).
	Failures []ItemFailure
}

// ErrMigrationRunning is returned by [Migrator.Run] when another run holds
// the migration's lease, and when a run loses its lease (it stops at once).
var ErrMigrationRunning = errors.New("singletable: migration is running elsewhere")

// MigrationError reports a run that reached the end of its scan with
// failed items. The migration is recorded as failed; running it again
// starts over.
type MigrationError struct {
	ID       string
	Failed   int64         // items that failed, in all
	Failures []ItemFailure // the first of them
}

// Error lists the first failures.
func (e *MigrationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "singletable: migration %s: %d item(s) failed", e.ID, e.Failed)
	for i, f := range e.Failures {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", e.Failed-int64(i))
			break
		}
		fmt.Fprintf(&b, "; %v", f.Err)
	}
	return b.String()
}

// Unwrap returns the distinct errors of the listed failures.
func (e *MigrationError) Unwrap() []error {
	var out []error
	seen := map[string]bool{}
	for _, f := range e.Failures {
		if f.Err != nil && !seen[f.Err.Error()] {
			seen[f.Err.Error()] = true
			out = append(out, f.Err)
		}
	}
	return out
}

// Migrator runs the migrations of one table and keeps their ledger in it:
// items with partition key "_MIGRATION#<id>" and entity type "_Migration",
// holding each migration's state, counts and per-segment scan positions.
type Migrator struct {
	t    *Table
	list []Migration
	byID map[string]int
}

// NewMigrator returns a migrator for t's migrations. IDs must be valid and
// unique; every migration must come from [CopyMigration] or
// [Repo.BackfillMigration], and be able to run on t (a copy names its
// source and transform; a backfill's repository is bound to t).
func NewMigrator(t *Table, migrations ...Migration) (*Migrator, error) {
	m := &Migrator{t: t, byID: map[string]int{}}
	for i, mig := range migrations {
		if err := checkMigrationID(mig.ID); err != nil {
			return nil, err
		}
		if mig.engine == nil {
			return nil, validationErr("", mig.ID, "migration not made by CopyMigration or Repo.BackfillMigration")
		}
		if _, err := mig.engine(t, BatchOptions{}); err != nil {
			return nil, err
		}
		if _, dup := m.byID[mig.ID]; dup {
			return nil, validationErr("", mig.ID, "duplicate migration ID")
		}
		m.byID[mig.ID] = i
		m.list = append(m.list, mig)
	}
	return m, nil
}

func checkMigrationID(id string) error {
	if id == "" || len(id) > 128 {
		return validationErr("", "Migration.ID", "migration ID %q must be 1 to 128 characters", id)
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return validationErr("", "Migration.ID", "migration ID %q: only [A-Za-z0-9._-] allowed", id)
		}
	}
	return nil
}

// engineMigration returns the registered migration id as the engine runs
// it, its batch writes using batch.
func (m *Migrator) engineMigration(id string, batch BatchOptions) (migration.Migration, error) {
	i, ok := m.byID[id]
	if !ok {
		return migration.Migration{}, validationErr("", id, "unknown migration ID")
	}
	mig := m.list[i]
	k, err := mig.engine(m.t, batch)
	return migration.Migration{ID: mig.ID, Description: mig.Description, Kind: k}, err
}

// engineTable describes m's table to the engine.
func (m *Migrator) engineTable() *migration.Table {
	t := m.t
	return &migration.Table{
		Client:         migrationClient{t},
		Name:           t.name,
		PartitionKey:   t.opts.PartitionKey,
		SortKey:        t.opts.SortKey,
		EntityTypeAttr: t.opts.EntityTypeAttr,
		Now:            t.opts.Now,
		Wrap:           wrapSentinel,
		Running:        ErrMigrationRunning,
		KeyText:        keyNames{}.text,
	}
}

// Run runs the migration with the given ID, or resumes it from its
// checkpoints if an earlier run stopped part-way. A completed migration
// does not run again: Run returns its recorded counts with
// AlreadyCompleted set. A migration that failed (items failed in its last
// run) starts over from the beginning.
//
// The scan runs in parallel segments, a page at a time; after every page,
// once all the page's writes are done, the segment's checkpoint (scan
// position and counts) is saved in the ledger. A run stopped by ctx or by
// an error leaves the migration interrupted, and the next run resumes
// after the last saved page: the writes of unsaved pages are made again,
// with the same content.
//
// Run returns a *MigrationError when items failed, [ErrMigrationRunning]
// when another run holds the migration, and the cause when it stopped
// early (ctx's error, a scan or ledger error). The report is returned in
// every case but an unknown ID or a failure to read the ledger.
func (m *Migrator) Run(ctx context.Context, id string, optFns ...func(*RunOptions)) (*MigrationReport, error) {
	var o RunOptions
	for _, fn := range optFns {
		fn(&o)
	}
	mig, err := m.engineMigration(id, o.Batch)
	if err != nil {
		return nil, err
	}
	eo := migration.Options{
		Segments: o.Segments, Writers: o.Writers, PageSize: o.PageSize, WCU: o.WCU, DryRun: o.DryRun,
		ProgressInterval: o.ProgressInterval, Lease: o.Lease, Shared: o.Shared, WorkerSegments: o.WorkerSegments,
	}
	if o.Progress != nil {
		eo.Progress = func(p migration.Progress) { o.Progress(publicProgress(p)) }
	}
	rep, err := migration.Run(ctx, m.engineTable(), mig, eo)
	var fe *migration.FailedError
	if errors.As(err, &fe) {
		err = &MigrationError{ID: fe.ID, Failed: fe.Failed, Failures: publicFailures(fe.Failures)}
	}
	if rep == nil {
		return nil, err
	}
	return publicReport(rep), err
}

// MigrationStatus is a migration's entry in the ledger, as [Migrator.Status]
// reports it.
type MigrationStatus struct {
	ID          string
	Kind        string
	Description string
	State       MigrationState
	// Counts are totals over the segments' checkpoints.
	Counts MigrationCounts
	// Segments and SegmentsDone tell how far the scan is.
	Segments, SegmentsDone int
	// Runs counts the runs that started.
	Runs int
	// StartedAt is when the latest run started; FinishedAt when the
	// migration completed or failed; UpdatedAt the latest ledger write.
	StartedAt, UpdatedAt, FinishedAt time.Time
	// LeaseOwner and LeaseUntil identify the run holding the migration.
	LeaseOwner string
	LeaseUntil time.Time
	// Workers lists the shared runs holding a segment by an unexpired
	// lease now (the State is then running).
	Workers []string
	// LastError is why the latest run stopped early, if it did.
	LastError string
}

// Status reads the ledger entry of every registered migration (consistent
// reads).
func (m *Migrator) Status(ctx context.Context) ([]MigrationStatus, error) {
	t := m.engineTable()
	out := make([]MigrationStatus, 0, len(m.list))
	for _, mig := range m.list {
		st, err := migration.ReadStatus(ctx, t, mig.ID, mig.kind, mig.Description)
		if err != nil {
			return nil, err
		}
		out = append(out, MigrationStatus{
			ID: st.ID, Kind: st.Kind, Description: st.Description, State: MigrationState(st.State),
			Counts: MigrationCounts(st.Counts), Segments: st.Segments, SegmentsDone: st.SegmentsDone, Runs: st.Runs,
			StartedAt: st.StartedAt, UpdatedAt: st.UpdatedAt, FinishedAt: st.FinishedAt,
			LeaseOwner: st.LeaseOwner, LeaseUntil: st.LeaseUntil, Workers: st.Workers, LastError: st.LastError,
		})
	}
	return out, nil
}

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

	keys keyNames // the table's, to print Key in key order
}

// String renders the difference for logs, e.g. "missing User {PK=USER#john SK=PROFILE}".
func (d Difference) String() string {
	s := fmt.Sprintf("%s %s %v", d.Kind, d.Entity, d.keys.text(d.Key))
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
	mig, err := m.engineMigration(id, BatchOptions{})
	if err != nil {
		return nil, err
	}
	rep, err := migration.Verify(ctx, m.engineTable(), mig, migration.VerifyOptions(o))
	if rep == nil {
		return nil, err
	}
	out := &VerifyReport{
		ID: rep.ID, Kind: rep.Kind, SourceItems: rep.SourceItems, Expected: rep.Expected, Found: rep.Found,
		Compared: rep.Compared, Missing: rep.Missing, Different: rep.Different, Unexpected: rep.Unexpected,
		TransformErrors: rep.TransformErrors,
	}
	for _, d := range rep.Differences {
		pd := Difference{Entity: d.Entity, Key: d.Key, Kind: d.Kind, Attrs: d.Attrs}
		if len(d.KeyAttrs) > 0 {
			pd.keys.partition = d.KeyAttrs[0]
		}
		if len(d.KeyAttrs) > 1 {
			pd.keys.sort = d.KeyAttrs[1]
		}
		out.Differences = append(out.Differences, pd)
	}
	return out, err
}

func publicProgress(p migration.Progress) Progress {
	return Progress{ID: p.ID, MigrationCounts: MigrationCounts(p.Counts), Total: p.Total, Elapsed: p.Elapsed,
		Rate: p.Rate, WCURate: p.WCURate, ETA: p.ETA, Done: p.Done}
}

func publicFailures(fs []migration.ItemFailure) []ItemFailure {
	out := make([]ItemFailure, len(fs))
	for i, f := range fs {
		out[i] = ItemFailure(f)
	}
	return out
}

func publicReport(r *migration.Report) *MigrationReport {
	return &MigrationReport{
		ID: r.ID, Kind: r.Kind, State: MigrationState(r.State), DryRun: r.DryRun,
		AlreadyCompleted: r.AlreadyCompleted, Resumed: r.Resumed, Segments: r.Segments,
		Counts: MigrationCounts(r.Counts), RunCounts: MigrationCounts(r.RunCounts),
		Claimed: r.Claimed, TakenOver: r.TakenOver, Ops: r.Ops, Retried: r.Retried, WCU: r.WCU,
		Elapsed: r.Elapsed, Failures: publicFailures(r.Failures),
	}
}
