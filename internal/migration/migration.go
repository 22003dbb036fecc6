// Package migration is the engine behind singletable's migrations: the
// runner (parallel scan segments, a pool of writers, the rate limit,
// progress), the ledger of states and checkpoints kept in the migrated
// table, and verification. It is not generic: the root package hands it
// what it needs of entities and repositories as function values (render an
// item again, write ops through the library's write plan and batch writer,
// read items back), and converts its reports into the public types.
package migration

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Client is the part of a DynamoDB client the engine calls itself (the
// writes of migrations go through the root's write plan instead).
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Table is the migrated table, which also holds the ledger.
type Table struct {
	Client Client
	Name   string
	// PartitionKey and SortKey ("" for none) name the key attributes;
	// EntityTypeAttr the attribute holding each item's entity type.
	PartitionKey, SortKey, EntityTypeAttr string
	// Now is the table's clock.
	Now func() time.Time
	// Wrap ties a sentinel error to a detail and its cause, the way the
	// root package's errors do (errors.Is finds the sentinel, errors.As the
	// cause).
	Wrap func(sentinel error, detail string, cause error) error
	// Running is the sentinel of a migration whose lease another run
	// holds, also returned when a run loses its lease (it stops at once).
	Running error
	// KeyText renders a key the way the library's messages do, attributes
	// in name order; Verify's sample hashes it.
	KeyText func(key map[string]types.AttributeValue) string
}

// KeyOf extracts t's primary key attributes from item.
func (t *Table) KeyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{t.PartitionKey: item[t.PartitionKey]}
	if t.SortKey != "" {
		k[t.SortKey] = item[t.SortKey]
	}
	return k
}

// KeyAttrs names t's key attributes, partition key first.
func (t *Table) KeyAttrs() []string {
	if t.SortKey == "" {
		return []string{t.PartitionKey}
	}
	return []string{t.PartitionKey, t.SortKey}
}

// Migration is one registered migration.
type Migration struct {
	ID, Description string
	Kind            Kind
}

// Kind is what a kind of migration plugs into the engine: [*Copy] or
// [*Backfill].
type Kind interface {
	// Name is "copy" or "backfill".
	Name() string
	// source describes the scan that feeds the migration.
	source(ctx context.Context, t *Table) (scanSpec, error)
	// process decides the outcome of every item of a scanned page,
	// submitting writes to the runner's pool (nothing in a dry run).
	process(ctx context.Context, r *runner, p *scanPage)
	// verify compares what the migration should have produced with the
	// table's contents.
	verify(ctx context.Context, t *Table, o VerifyOptions) (*VerifyReport, error)
}

// State is the state of a migration as its ledger records it; the values
// are stored in the ledger.
type State string

// The states of a migration.
const (
	Pending     State = "pending"
	Running     State = "running"
	Interrupted State = "interrupted"
	Completed   State = "completed"
	Failed      State = "failed"
)

// Counts counts what a migration did with the items it met:
// Read = Written + Skipped + Failed.
type Counts struct {
	Scanned int64
	Read    int64
	Written int64
	Skipped int64
	Failed  int64
}

// Add adds d to c.
func (c *Counts) Add(d Counts) {
	c.Scanned += d.Scanned
	c.Read += d.Read
	c.Written += d.Written
	c.Skipped += d.Skipped
	c.Failed += d.Failed
}

// Options tunes a run; see the root's RunOptions for the meaning of each
// field. Normalize fills in the defaults.
type Options struct {
	Segments         int
	Writers          int
	PageSize         int32
	WCU              float64
	DryRun           bool
	Progress         func(Progress)
	ProgressInterval time.Duration
	Lease            time.Duration
	// Shared makes the run one worker of several (see RunShared);
	// WorkerSegments is how many segments it scans at once.
	Shared         bool
	WorkerSegments int
}

// Normalize sets the defaults of unset fields.
func (o *Options) Normalize() {
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

// Progress is a snapshot of a running migration.
type Progress struct {
	ID      string
	Counts  Counts
	Total   int64
	Elapsed time.Duration
	Rate    float64
	WCURate float64
	ETA     time.Duration
	Done    bool
}

// ItemFailure is one item a migration could not migrate.
type ItemFailure struct {
	Segment int
	Key     map[string]types.AttributeValue
	Err     error
}

// Report describes one run.
type Report struct {
	ID, Kind         string
	State            State
	DryRun           bool
	AlreadyCompleted bool
	Resumed          bool
	Segments         int
	Counts           Counts
	RunCounts        Counts
	Claimed          int
	TakenOver        int
	Ops              map[string]int64
	Retried          int64
	WCU              int64
	Elapsed          time.Duration
	Failures         []ItemFailure
}

// MaxFailureDetails caps Report.Failures.
const MaxFailureDetails = 1000

// FailedError reports a run that reached the end of its scan with failed
// items; the migration is recorded as failed.
type FailedError struct {
	ID       string
	Failed   int64
	Failures []ItemFailure
}

func (e *FailedError) Error() string { return "migration " + e.ID + " failed" }

// Status is a migration's entry in the ledger.
type Status struct {
	ID, Kind, Description        string
	State                        State
	Counts                       Counts
	Segments, SegmentsDone, Runs int
	StartedAt, UpdatedAt         time.Time
	FinishedAt                   time.Time
	LeaseOwner                   string
	LeaseUntil                   time.Time
	Workers                      []string
	LastError                    string
}

// ReadStatus reads the ledger entry of the migration id, of the given
// kind and description (consistent reads).
func ReadStatus(ctx context.Context, t *Table, id, kind, description string) (Status, error) {
	st := Status{ID: id, Kind: kind, Description: description, State: Pending}
	l := newLedger(t, id, "")
	h, ok, err := l.header(ctx)
	if err != nil || !ok {
		return st, err
	}
	st.State = h.state(t.Now())
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
	now := t.Now()
	for _, s := range segs {
		st.Counts.Add(s.Counts)
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
