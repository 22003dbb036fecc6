// Package migrate runs a table's data migrations and keeps their ledger in
// the table itself: a copy of another table through a transform ([Copy]),
// a backfill that re-renders an entity's keys after its declaration
// changed ([Backfill]), and the adoption of the unique guards of items
// written without them ([UniqueGuards]). A [Migrator] runs them in
// parallel scan segments, a page at a time, with a pool of writers, a rate
// limit, progress reports, checkpoints from which a stopped run resumes,
// dry runs, shared runs over several processes, and verification.
//
//	m, err := migrate.New(table,
//		migrate.Copy("000-users", migrate.Source{Table: "users"}, transform),
//		migrate.Backfill("001-skills-gsi1", skills),
//	)
//	rep, err := m.Run(ctx, "000-users")
//
// Every write goes through the library's write plan, as every other
// write does: a copy's transform makes [singletable.WriteOp] values with
// [singletable.Repo.PutOp], written with [singletable.BatchWrite]; a
// backfill and a guard migration plan and apply each item's change with
// [singletable.StoredItems]. The singletable command-line tool, a module of
// its own, gives a service's migrations the `migrate status | run | verify`
// subcommands, with a progress display ([migratecli], docs/cli.md).
//
// [migratecli]: https://pkg.go.dev/github.com/singletable-go/singletable/cmd/singletable/migratecli
package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/attrvalue"
)

// Migration is one named data migration, made by [Copy], [Backfill] or
// [UniqueGuards]. Register migrations with [New], which records their
// progress in the table itself.
type Migration struct {
	// ID names the migration in the ledger: 1 to 128 characters from
	// [A-Za-z0-9._-], for example "000-users-to-glad-entities". IDs are
	// forever: a finished migration never runs again under the same ID.
	ID string
	// Description says what the migration does, for `migrate status`.
	Description string

	kind kind
}

// kind is what a kind of migration plugs into the engine: *copyKind,
// *backfillKind or *guardsKind.
type kind interface {
	// name is "copy", "backfill" or "guards", as the ledger records it.
	name() string
	// check refuses a migration that cannot run on t.
	check(t *table) error
	// source describes the scan that feeds the migration.
	source(ctx context.Context, t *table) (scanSpec, error)
	// process decides the outcome of every item of a scanned page,
	// submitting writes to the runner's pool (nothing in a dry run).
	process(ctx context.Context, r *runner, p *scanPage)
	// verify compares what the migration should have produced with the
	// table's contents.
	verify(ctx context.Context, t *table, o VerifyOptions) (*VerifyReport, error)
}

// table is the migrated table, which also holds the ledger.
type table struct {
	t      *singletable.Table
	client singletable.Client
	name   string
	// pk and sk ("" for none) name the key attributes; typeAttr the
	// attribute holding each item's entity type.
	pk, sk, typeAttr string
	now              func() time.Time
}

func newTable(t *singletable.Table) *table {
	o := t.Options()
	return &table{t: t, client: t.Client(), name: t.Name(), pk: o.PartitionKey, sk: o.SortKey, typeAttr: o.EntityTypeAttr, now: o.Now}
}

// keyOf extracts t's primary key attributes from item.
func (t *table) keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{t.pk: item[t.pk]}
	if t.sk != "" {
		k[t.sk] = item[t.sk]
	}
	return k
}

// Transform maps one raw item of a copy's source table to the writes it
// becomes in the target: usually one put made with
// [singletable.Repo.PutOp], none to skip the item, several to split it
// into entities.
//
// A transform must be deterministic (the same item gives the same ops) and
// safe for concurrent use: a resumed or repeated run transforms items
// again and must write the same content, and [Migrator.Verify] compares
// the table with the transform's output.
type Transform func(item map[string]types.AttributeValue) ([]singletable.WriteOp, error)

// TransformAs returns a [Transform] that decodes each raw item into S with
// the SDK's attributevalue.UnmarshalMap (so `dynamodbav` tags apply) and
// passes it to fn. A decoding error fails the item.
func TransformAs[S any](fn func(S) ([]singletable.WriteOp, error)) Transform {
	return func(item map[string]types.AttributeValue) ([]singletable.WriteOp, error) {
		var s S
		if err := attributevalue.UnmarshalMap(item, &s); err != nil {
			return nil, fmt.Errorf("singletable: transform: decode source item: %w", err)
		}
		return fn(s)
	}
}

// Source names the table a copy migration reads.
type Source struct {
	// Table is the source table's name. Its key schema can be anything.
	Table string
	// Client reaches the source table; nil means the migrator's table's
	// client.
	Client singletable.Client
}

// Copy returns a migration that scans src and writes what transform makes
// of each item, with batch writes ([singletable.BatchWrite]) whose
// unprocessed items are retried with backoff. See [Migrator.Run] for the
// options (segments, writers, rate limit, dry run, progress) and [Counts]
// for how items are counted.
func Copy(id string, src Source, transform Transform) Migration {
	return Migration{ID: id, kind: &copyKind{src: src, transform: transform}}
}

// Entity is a repository whose entity's stored items a [Backfill] or a
// [UniqueGuards] migration rewrites: any *[singletable.Repo], bound to the
// migrator's table.
type Entity interface {
	StoredItems() *singletable.StoredItems
}

// Backfill returns a migration that brings every stored item of r's entity
// in line with the entity's current declaration: it scans the table for
// items of the entity type, renders their primary key and index attributes
// again, and rewrites the items whose attributes differ
// ([singletable.StoredItems.Rewrite]). Use it after adding an index (GSI1
// on items that exist), changing a template, or adding a sparse predicate.
// Deploy the new declaration first, so that the application's own writes
// already render the new keys.
//
// A change of index attributes only is an UpdateItem that sets and removes
// just those attributes, on condition that the attributes they are
// rendered from still hold the values read. A change of primary key is one
// transaction: a put of the item at its new key (which must be free) and a
// delete of the old item on condition that every attribute read is
// unchanged (and that no attribute of the entity absent then has
// appeared). So a concurrent writer is never overwritten and no concurrent
// update is lost: when a condition fails, the item is read again and its
// rewrite planned anew. Attributes that the entity does not declare are
// carried over untouched.
//
// A re-key whose new key holds another item with different content fails
// that item with [singletable.ErrAlreadyExists] (two items that the new
// template maps to one key, or an item written there since) rather than
// lose either.
func Backfill(id string, r Entity) Migration {
	return Migration{ID: id, kind: &backfillKind{entityKind: newEntityKind(r)}}
}

// UniqueGuards returns a migration that gives every stored item of r's
// entity the unique guard items its [singletable.Schema].Unique
// declarations call for: the adoption of a table whose items another
// service wrote without guards, or that existed before a Unique was
// declared (or changed, e.g. to Hash). Deploy the declaration first, so
// that the application's own writes already claim their values.
//
// For each item it reads the guard of each unique value present
// (consistently) and ([singletable.StoredItems.ClaimGuards]):
//   - claims a missing guard;
//   - leaves a guard the item already holds;
//   - takes over a stale guard, whose owner no longer exists or no longer
//     holds the value (another service changed or deleted it);
//   - reports a value another stored item also holds: the item fails with
//     a *[DuplicateError] naming both items' keys, which matches
//     [singletable.ErrAlreadyExists]. The guard stays with the item that
//     held it (the first claimed, in scan order), so that no third item can
//     take the value meanwhile, but the migration picks no winner: it ends
//     failed ([Error] lists the duplicates), and once each duplicate is
//     resolved (one item changed or deleted) it runs again from the start.
//
// The claims of an item are one transaction, conditioned on the item (and
// any owner read) still holding the values read and on each guard being as
// read, so a concurrent writer is never overridden: when a condition fails
// the item is read again and its claims planned anew. The migration is
// idempotent and resumable like a backfill; a run counts an item as
// written when it claimed a guard, skipped when it held them all, failed
// for a duplicate. [Migrator.Verify] lists the items lacking a guard
// ("missing") and the duplicates ("different") without writing.
func UniqueGuards(id string, r Entity) Migration {
	return Migration{ID: id, kind: &guardsKind{entityKind: newEntityKind(r)}}
}

// State is the state of a migration as its ledger records it; the values
// are stored in the ledger.
type State string

// The states of a migration.
const (
	// Pending: the migration has never run.
	Pending State = "pending"
	// Running: a run holds the migration's lease now.
	Running State = "running"
	// Interrupted: a run started and stopped before the end (cancelled,
	// crashed, or an error); the next run resumes from the per-segment
	// checkpoints.
	Interrupted State = "interrupted"
	// Completed: every item was migrated; the migration does not run
	// again.
	Completed State = "completed"
	// Failed: a run reached the end with failed items; the next run
	// starts again from the beginning (writes are idempotent).
	Failed State = "failed"
)

// Counts counts what a migration did with the items it met. The counts add
// up: Read = Written + Skipped + Failed.
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
type Counts struct {
	// Scanned counts the items the scan evaluated, before its filter.
	Scanned int64
	Read    int64
	Written int64
	Skipped int64
	Failed  int64
}

// add adds d to c.
func (c *Counts) add(d Counts) {
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
	Batch singletable.BatchOptions
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
	// and a run without Shared keep each other out ([ErrRunning]).
	// A dry run ignores Shared.
	Shared bool
	// WorkerSegments is how many segments a shared worker scans at once;
	// default 2.
	WorkerSegments int
}

// normalize sets the defaults of unset fields.
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
	if o.WorkerSegments <= 0 {
		o.WorkerSegments = 2
	}
}

// Progress is a snapshot of a running migration, passed to
// [RunOptions].Progress.
type Progress struct {
	ID string
	// Counts are totals so far, including earlier runs of the migration
	// that this run resumes.
	Counts
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

// Report describes one call of [Migrator.Run].
type Report struct {
	ID   string
	Kind string
	// State is the migration's state after the call.
	State State
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
	Counts Counts
	// RunCounts are what this run itself migrated: the pages it
	// checkpointed. The RunCounts of the workers of a shared run, and of the
	// runs before them, add up to Counts.
	RunCounts Counts
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

// maxFailureDetails caps Report.Failures.
const maxFailureDetails = 1000

// ErrRunning is returned by [Migrator.Run] when another run holds the
// migration's lease, and when a run loses its lease (it stops at once).
var ErrRunning = errors.New("singletable: migration is running elsewhere")

// errPreview refuses a migration inside a [singletable.Table.Preview].
var errPreview = errors.New("singletable: migrations are not previewed; nothing was sent")

// Error reports a run that reached the end of its scan with failed items.
// The migration is recorded as failed; running it again starts over.
type Error struct {
	ID       string
	Failed   int64         // items that failed, in all
	Failures []ItemFailure // the first of them
}

// Error lists the first failures.
func (e *Error) Error() string {
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
func (e *Error) Unwrap() []error {
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

// DuplicateError reports a value of a [singletable.Unique] declaration
// that two stored items hold, found by [UniqueGuards]. It matches
// [singletable.ErrAlreadyExists]. It names the items by key, not the
// value, which may be personal data (an email).
type DuplicateError struct {
	// Entity is the entity type.
	Entity string
	// Fields are the Go fields of the Unique declaration.
	Fields []string
	// Key is the primary key of the item whose value could not be claimed.
	Key map[string]types.AttributeValue
	// Holder is the primary key of the item whose guard holds the value.
	Holder map[string]types.AttributeValue

	pk, sk string // the table's key attributes, to print keys in key order
}

// Error names the entity, the fields and both items.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("singletable: %s %v: item %s holds the same value as item %s, which holds its guard; change or delete one of them, then run the migration again",
		e.Entity, e.Fields, attrvalue.KeyText(e.Key, e.pk, e.sk), attrvalue.KeyText(e.Holder, e.pk, e.sk))
}

// Is reports whether target is [singletable.ErrAlreadyExists].
func (e *DuplicateError) Is(target error) bool { return target == singletable.ErrAlreadyExists }

// sentinelError ties a sentinel to a detail and its cause, as the root
// package's errors do: errors.Is finds the sentinel, errors.As the cause,
// and the text is the sentinel's and the detail.
type sentinelError struct {
	sentinel error
	detail   string
	cause    error
}

func (e *sentinelError) Error() string {
	if e.detail == "" {
		return e.sentinel.Error()
	}
	return e.sentinel.Error() + ": " + e.detail
}

func (e *sentinelError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func wrap(sentinel error, detail string, cause error) error {
	return &sentinelError{sentinel: sentinel, detail: detail, cause: cause}
}

// validationErr is a *singletable.ValidationError, as the root package
// makes them.
func validationErr(entity, field, format string, args ...any) error {
	return &singletable.ValidationError{Entity: entity, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Migrator runs the migrations of one table and keeps their ledger in it:
// items with partition key "_MIGRATION#<id>" and entity type
// [singletable.MigrationLedgerType], holding each migration's state,
// counts and per-segment scan positions.
type Migrator struct {
	t    *table
	list []Migration
	byID map[string]int
}

// New returns a migrator for t's migrations. IDs must be valid and unique;
// every migration must come from [Copy], [Backfill] or [UniqueGuards], and
// be able to run on t (a copy names its source and transform; a backfill's
// repository is bound to t).
func New(t *singletable.Table, migrations ...Migration) (*Migrator, error) {
	m := &Migrator{t: newTable(t), byID: map[string]int{}}
	for i, mig := range migrations {
		if err := checkID(mig.ID); err != nil {
			return nil, err
		}
		if mig.kind == nil {
			return nil, validationErr("", mig.ID, "migration not made by Copy, Backfill or UniqueGuards")
		}
		if err := mig.kind.check(m.t); err != nil {
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

func checkID(id string) error {
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

// migration returns the registered migration id; inside a Preview it
// refuses, so that a migration run there sends nothing.
func (m *Migrator) migration(ctx context.Context, id string) (Migration, error) {
	if singletable.InPreview(ctx) {
		return Migration{}, errPreview
	}
	i, ok := m.byID[id]
	if !ok {
		return Migration{}, validationErr("", id, "unknown migration ID")
	}
	return m.list[i], nil
}

// Status is a migration's entry in the ledger, as [Migrator.Status]
// reports it.
type Status struct {
	ID          string
	Kind        string
	Description string
	State       State
	// Counts are totals over the segments' checkpoints.
	Counts Counts
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
func (m *Migrator) Status(ctx context.Context) ([]Status, error) {
	if singletable.InPreview(ctx) {
		return nil, errPreview
	}
	out := make([]Status, 0, len(m.list))
	for _, mig := range m.list {
		st, err := readStatus(ctx, m.t, mig)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// readStatus reads the ledger entry of mig (consistent reads).
func readStatus(ctx context.Context, t *table, mig Migration) (Status, error) {
	st := Status{ID: mig.ID, Kind: mig.kind.name(), Description: mig.Description, State: Pending}
	l := newLedger(t, mig.ID, "")
	h, ok, err := l.header(ctx)
	if err != nil || !ok {
		return st, err
	}
	st.State = h.state(t.now())
	st.Counts = h.Counts
	st.Segments = h.Segments
	st.Runs = h.Runs
	st.StartedAt, st.UpdatedAt, st.FinishedAt = h.StartedAt, h.UpdatedAt, h.FinishedAt
	st.LeaseOwner, st.LeaseUntil = h.LeaseOwner, h.LeaseUntil
	st.LastError = h.LastError
	if h.Status == Completed || h.Status == Failed {
		st.SegmentsDone = h.Segments
		return st, nil
	}
	l.attempt = h.Attempt
	segs, err := l.segments(ctx, h.Segments)
	if err != nil {
		return st, err
	}
	st.Counts = Counts{}
	now := t.now()
	for _, s := range segs {
		st.Counts.add(s.Counts)
		if s.Done {
			st.SegmentsDone++
		} else if s.leased("", now) && !slices.Contains(st.Workers, s.Owner) {
			st.Workers = append(st.Workers, s.Owner)
		}
	}
	if len(st.Workers) > 0 {
		st.State = Running
		slices.Sort(st.Workers)
	}
	return st, nil
}
