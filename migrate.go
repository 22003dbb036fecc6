package singletable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Migration is one named data migration: a copy of another table through a
// transform ([CopyMigration]) or a backfill that re-renders an entity's keys
// after its declaration changed ([BackfillMigration]). Register migrations
// with [NewMigrator], which records their progress in the table itself.
type Migration struct {
	// ID names the migration in the ledger: 1 to 128 characters from
	// [A-Za-z0-9._-], for example "000-users-to-glad-entities". IDs are
	// forever: a finished migration never runs again under the same ID.
	ID string
	// Description says what the migration does, for `migrate status`.
	Description string

	impl migrationImpl
}

// WithDescription returns a copy of m with the given description.
func (m Migration) WithDescription(d string) Migration {
	m.Description = d
	return m
}

// Kind returns "copy" or "backfill".
func (m Migration) Kind() string {
	if m.impl == nil {
		return ""
	}
	return m.impl.kind()
}

// migrationImpl is what a kind of migration plugs into the engine.
type migrationImpl interface {
	kind() string
	// source describes the scan that feeds the migration.
	source(ctx context.Context, t *Table) (scanSpec, error)
	// process decides the outcome of every item of a scanned page,
	// submitting writes to the runner's pool (nothing in a dry run).
	process(ctx context.Context, r *runner, p *scanPage)
	// verify compares what the migration should have produced with the
	// table's contents.
	verify(ctx context.Context, m *Migrator, o VerifyOptions) (*VerifyReport, error)
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

func (c *MigrationCounts) add(d MigrationCounts) {
	c.Scanned += d.Scanned
	c.Read += d.Read
	c.Written += d.Written
	c.Skipped += d.Skipped
	c.Failed += d.Failed
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
	Batch BatchWriteOptions
	// Lease is how long a run's claim on the migration lasts without
	// renewal; default 1 minute. A crashed run blocks others that long.
	Lease time.Duration
}

func (o *RunOptions) normalize() {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	if o.Writers <= 0 {
		o.Writers = 8
	}
	if o.PageSize <= 0 {
		o.PageSize = 1000
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
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
	// Counts are the migration's totals, earlier runs included.
	Counts MigrationCounts
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

// maxFailureDetails caps MigrationReport.Failures.
const maxFailureDetails = 1000

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
// [BackfillMigration].
func NewMigrator(t *Table, migrations ...Migration) (*Migrator, error) {
	m := &Migrator{t: t, byID: map[string]int{}}
	for i, mig := range migrations {
		if err := checkMigrationID(mig.ID); err != nil {
			return nil, err
		}
		if mig.impl == nil {
			return nil, validationErr("", mig.ID, "migration not made by CopyMigration or BackfillMigration")
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

// Table returns the migrator's table.
func (m *Migrator) Table() *Table { return m.t }

// Migrations returns the registered migrations in registration order.
func (m *Migrator) Migrations() []Migration { return append([]Migration(nil), m.list...) }

func (m *Migrator) lookup(id string) (Migration, error) {
	i, ok := m.byID[id]
	if !ok {
		return Migration{}, validationErr("", id, "unknown migration ID")
	}
	return m.list[i], nil
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
	// LastError is why the latest run stopped early, if it did.
	LastError string
}

// Status reads the ledger entry of every registered migration (consistent
// reads).
func (m *Migrator) Status(ctx context.Context) ([]MigrationStatus, error) {
	out := make([]MigrationStatus, 0, len(m.list))
	for _, mig := range m.list {
		st, err := m.status(ctx, mig)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func (m *Migrator) status(ctx context.Context, mig Migration) (MigrationStatus, error) {
	st := MigrationStatus{ID: mig.ID, Kind: mig.Kind(), Description: mig.Description, State: MigrationPending}
	l := m.ledger(mig, "")
	h, ok, err := l.header(ctx)
	if err != nil || !ok {
		return st, err
	}
	st.State = h.state(m.t.opts.Now())
	st.Counts = h.Counts
	st.Segments = h.Segments
	st.Runs = h.Runs
	st.StartedAt, st.UpdatedAt, st.FinishedAt = h.StartedAt, h.UpdatedAt, h.FinishedAt
	st.LeaseOwner, st.LeaseUntil = h.LeaseOwner, h.LeaseUntil
	st.LastError = h.LastError
	if h.Status == MigrationCompleted || h.Status == MigrationFailed {
		st.SegmentsDone = h.Segments
		return st, nil
	}
	segs, err := l.segments(ctx, h.Segments)
	if err != nil {
		return st, err
	}
	st.Counts = MigrationCounts{}
	for _, s := range segs {
		st.Counts.add(s.Counts)
		if s.Done {
			st.SegmentsDone++
		}
	}
	return st, nil
}
