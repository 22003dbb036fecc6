package migrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/expr"
)

// The ledger lives in the migrated table: one header item per migration
// and one checkpoint item per scan segment, all under the partition key
// "_MIGRATION#<id>" (with the sort keys "STATUS" and "SEGMENT#00000"; in a
// table without a sort key, the sort key's text is appended to the
// partition key). Their entity type "_Migration" keeps them out of every
// entity's queries and backfills.
const (
	ledgerEntity = singletable.MigrationLedgerType
	ledgerPrefix = "_MIGRATION#"
	ledgerHeader = "STATUS"
)

// Attribute names of ledger items.
const (
	lgID          = "MigrationID"
	lgKind        = "Kind"
	lgDescription = "Description"
	lgStatus      = "Status"
	lgSegments    = "Segments"
	lgRuns        = "Runs"
	lgCreatedAt   = "CreatedAt"
	lgStartedAt   = "StartedAt"
	lgUpdatedAt   = "UpdatedAt"
	lgFinishedAt  = "FinishedAt"
	lgLeaseOwner  = "LeaseOwner"
	lgLeaseUntil  = "LeaseUntil" // unix milliseconds, so that it compares as a number
	lgLastError   = "LastError"
	lgSegment     = "Segment"
	lgDone        = "Done"
	lgLastKey     = "LastKey"
	lgPages       = "Pages"
	lgOwner       = "Owner"
	lgScanned     = "Scanned"
	lgRead        = "Read"
	lgWritten     = "Written"
	lgSkipped     = "Skipped"
	lgFailed      = "Failed"
	// Attempt numbers the restarts of a failed migration by shared runs
	// (absent: 0). A segment checkpoint of another attempt than the
	// header's is stale: its segment starts from the beginning.
	lgAttempt = "Attempt"
)

// errCompleted tells Run that the migration had completed.
var errCompleted = errors.New("singletable: migration already completed")

// ledger reads and writes one migration's ledger items on behalf of one
// run (owner).
type ledger struct {
	t     *table
	id    string
	owner string
	// attempt is the header's Attempt, written into every checkpoint.
	attempt int64
	// lease, when set (shared runs), is the per-segment lease: checkpoints
	// carry LeaseUntil = now+lease while the segment is unfinished.
	lease time.Duration
}

func newLedger(t *table, id, owner string) *ledger {
	return &ledger{t: t, id: id, owner: owner}
}

// newRunOwner returns a token naming one run: host, process and a random
// part, so that two runs never share one.
func newRunOwner() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func (l *ledger) key(sk string) map[string]types.AttributeValue {
	t := l.t
	if t.sk == "" {
		return map[string]types.AttributeValue{t.pk: avS(ledgerPrefix + l.id + "#" + sk)}
	}
	return map[string]types.AttributeValue{t.pk: avS(ledgerPrefix + l.id), t.sk: avS(sk)}
}

func segmentSK(n int) string { return fmt.Sprintf("SEGMENT#%05d", n) }

// headerRecord is a decoded header item.
type headerRecord struct {
	Kind, Description string
	Status            State // running, completed or failed
	Segments, Runs    int
	Counts            Counts
	CreatedAt         time.Time
	StartedAt         time.Time
	UpdatedAt         time.Time
	FinishedAt        time.Time
	LeaseOwner        string
	LeaseUntil        time.Time
	LastError         string
	Attempt           int64
}

// state derives the state a reader sees at time now.
func (h headerRecord) state(now time.Time) State {
	switch h.Status {
	case Completed, Failed:
		return h.Status
	}
	if h.LeaseOwner != "" && now.Before(h.LeaseUntil) {
		return Running
	}
	return Interrupted
}

func decodeHeader(item map[string]types.AttributeValue) headerRecord {
	return headerRecord{
		Kind:        getS(item, lgKind),
		Description: getS(item, lgDescription),
		Status:      State(getS(item, lgStatus)),
		Segments:    int(getN(item, lgSegments)),
		Runs:        int(getN(item, lgRuns)),
		Counts:      decodeCounts(item),
		CreatedAt:   getTime(item, lgCreatedAt),
		StartedAt:   getTime(item, lgStartedAt),
		UpdatedAt:   getTime(item, lgUpdatedAt),
		FinishedAt:  getTime(item, lgFinishedAt),
		LeaseOwner:  getS(item, lgLeaseOwner),
		LeaseUntil:  time.UnixMilli(getN(item, lgLeaseUntil)),
		LastError:   getS(item, lgLastError),
		Attempt:     getN(item, lgAttempt),
	}
}

func decodeCounts(item map[string]types.AttributeValue) Counts {
	return Counts{
		Scanned: getN(item, lgScanned),
		Read:    getN(item, lgRead),
		Written: getN(item, lgWritten),
		Skipped: getN(item, lgSkipped),
		Failed:  getN(item, lgFailed),
	}
}

// countAttrs yields the attributes that hold counts c, in a fixed order.
func countAttrs(c Counts) iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		_ = yield(lgScanned, c.Scanned) && yield(lgRead, c.Read) && yield(lgWritten, c.Written) &&
			yield(lgSkipped, c.Skipped) && yield(lgFailed, c.Failed)
	}
}

func putCounts(item map[string]types.AttributeValue, c Counts) {
	for a, n := range countAttrs(c) {
		item[a] = avN(n)
	}
}

func getS(item map[string]types.AttributeValue, a string) string {
	if s, ok := item[a].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func getN(item map[string]types.AttributeValue, a string) int64 {
	if n, ok := item[a].(*types.AttributeValueMemberN); ok {
		v, _ := strconv.ParseInt(n.Value, 10, 64)
		return v
	}
	return 0
}

func getTime(item map[string]types.AttributeValue, a string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, getS(item, a))
	return t
}

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func avTime(t time.Time) types.AttributeValue { return avS(t.UTC().Format(time.RFC3339Nano)) }

// header reads the header item (consistently); ok is false when the
// migration has never run.
func (l *ledger) header(ctx context.Context) (headerRecord, bool, error) {
	out, err := l.t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &l.t.name, Key: l.key(ledgerHeader), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return headerRecord{}, false, fmt.Errorf("singletable: migration %s: read ledger: %w", l.id, err)
	}
	if len(out.Item) == 0 {
		return headerRecord{}, false, nil
	}
	return decodeHeader(out.Item), true, nil
}

// acquire claims the migration for this run until now+lease, marking it
// running. It returns the header as it was before (existed is false on a
// first run). It fails with errCompleted when the migration has completed,
// and with ErrRunning when another run holds an unexpired lease.
func (l *ledger) acquire(ctx context.Context, mig Migration, segments int, lease time.Duration) (prev headerRecord, existed bool, err error) {
	now := l.t.now()
	var b expr.Builder
	var u expr.Update
	l.startRun(&b, &u, mig, now)
	u.SetIfNotExists(b.Name(lgSegments), b.Value(avN(int64(segments))))
	u.Set(b.Name(lgLeaseOwner), b.ValueS(l.owner))
	u.Set(b.Name(lgLeaseUntil), b.Value(avN(now.Add(lease).UnixMilli())))
	update := u.String()
	// New, or not completed and free: no lease, an expired one, or this
	// run's own claim, resent by the SDK after a lost response.
	cond := expr.Or(
		expr.AttributeNotExists(b.Name(l.t.pk)),
		expr.And(
			expr.Compare(b.Name(lgStatus), expr.OpNe, b.ValueS(string(Completed))),
			expr.Or(l.noExclusiveLease(&b, now), b.Holds(lgLeaseOwner, avS(l.owner))),
		),
	)
	out, err := l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &l.t.name,
		Key:                                 l.key(ledgerHeader),
		UpdateExpression:                    &update,
		ConditionExpression:                 &cond,
		ExpressionAttributeNames:            b.Names(),
		ExpressionAttributeValues:           b.Values(),
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			h := decodeHeader(ccf.Item)
			if h.Status == Completed {
				return h, true, errCompleted
			}
			return h, true, l.held(h, err)
		}
		return headerRecord{}, false, fmt.Errorf("singletable: migration %s: claim ledger: %w", l.id, err)
	}
	if len(out.Attributes) == 0 {
		return headerRecord{}, false, nil
	}
	return decodeHeader(out.Attributes), true, nil
}

// startRun writes into u the header attributes every run start sets: the
// migration's description, status Running, one more run, the start and
// update times (the creation time on the first run), and no end or error.
func (l *ledger) startRun(b *expr.Builder, u *expr.Update, mig Migration, now time.Time) {
	nowV := b.Value(avTime(now))
	u.Set(b.Name(l.t.typeAttr), b.ValueS(ledgerEntity))
	u.Set(b.Name(lgID), b.ValueS(mig.ID))
	u.Set(b.Name(lgKind), b.ValueS(mig.kind.name()))
	u.Set(b.Name(lgDescription), b.ValueS(mig.Description))
	u.Set(b.Name(lgStatus), b.ValueS(string(Running)))
	runs := b.Name(lgRuns)
	u.Set(runs, expr.Plus(expr.IfNotExists(runs, b.Value(avN(0))), b.Value(avN(1))))
	u.SetIfNotExists(b.Name(lgCreatedAt), nowV)
	u.Set(b.Name(lgStartedAt), nowV)
	u.Set(b.Name(lgUpdatedAt), nowV)
	u.Remove(b.Name(lgFinishedAt))
	u.Remove(b.Name(lgLastError))
}

// held is ErrRunning for a migration whose header h shows another run's
// lease.
func (l *ledger) held(h headerRecord, cause error) error {
	return wrap(ErrRunning,
		fmt.Sprintf("%s is held by %s until %s", l.id, h.LeaseOwner, h.LeaseUntil.UTC().Format(time.RFC3339)), cause)
}

// update applies u, written through b, to the header provided this run
// still holds the lease; losing it is ErrRunning.
func (l *ledger) update(ctx context.Context, b *expr.Builder, u *expr.Update) error {
	update := u.String()
	cond := b.Holds(lgLeaseOwner, avS(l.owner))
	_, err := l.t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &l.t.name,
		Key:                       l.key(ledgerHeader),
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	})
	return l.leaseErr(err)
}

func (l *ledger) leaseErr(err error) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return wrap(ErrRunning, l.id+": this run lost its lease", err)
	}
	return fmt.Errorf("singletable: migration %s: write ledger: %w", l.id, err)
}

// setSegments records the number of segments (when a failed migration
// starts over, possibly with a different number).
func (l *ledger) setSegments(ctx context.Context, n int) error {
	var b expr.Builder
	var u expr.Update
	u.Set(b.Name(lgSegments), b.Value(avN(int64(n))))
	return l.update(ctx, &b, &u)
}

// renew extends the lease to now+lease.
func (l *ledger) renew(ctx context.Context, lease time.Duration) error {
	now := l.t.now()
	var b expr.Builder
	var u expr.Update
	u.Set(b.Name(lgLeaseUntil), b.Value(avN(now.Add(lease).UnixMilli())))
	u.Set(b.Name(lgUpdatedAt), b.Value(avTime(now)))
	return l.update(ctx, &b, &u)
}

// release gives the lease up after a run that stopped early, recording why.
func (l *ledger) release(ctx context.Context, cause error) error {
	var b expr.Builder
	var u expr.Update
	u.Set(b.Name(lgUpdatedAt), b.Value(avTime(l.t.now())))
	if cause != nil {
		u.Set(b.Name(lgLastError), b.ValueS(cause.Error()))
	}
	u.Remove(b.Name(lgLeaseOwner))
	u.Remove(b.Name(lgLeaseUntil))
	return l.update(ctx, &b, &u)
}

// setFinished sets, in u, the ledger's state, its finish time and the
// run's totals c.
func setFinished(b *expr.Builder, u *expr.Update, state State, c Counts, now time.Time) {
	u.Set(b.Name(lgStatus), b.ValueS(string(state)))
	u.Set(b.Name(lgFinishedAt), b.Value(avTime(now)))
	u.Set(b.Name(lgUpdatedAt), b.Value(avTime(now)))
	for a, n := range countAttrs(c) {
		u.Set(b.Name(a), b.Value(avN(n)))
	}
}

// finish records the end of the scan: state completed or failed, totals,
// and gives the lease up.
func (l *ledger) finish(ctx context.Context, state State, c Counts) error {
	var b expr.Builder
	var u expr.Update
	setFinished(&b, &u, state, c, l.t.now())
	u.Remove(b.Name(lgLeaseOwner))
	u.Remove(b.Name(lgLeaseUntil))
	err := l.update(ctx, &b, &u)
	if errors.Is(err, ErrRunning) {
		// The SDK may have resent the request after a lost response: if
		// the first one was applied, the migration is finished and free.
		if h, ok, rerr := l.header(ctx); rerr == nil && ok && h.Status == state && h.LeaseOwner == "" {
			return nil
		}
	}
	return err
}

// segmentState is one scan segment's checkpoint: everything before
// LastKey has been migrated, and Counts count it.
type segmentState struct {
	Segment int
	Done    bool
	LastKey map[string]types.AttributeValue
	Counts  Counts
	Pages   int64

	// Owner and LeaseUntil are the run holding the segment and, for a
	// shared run's per-segment lease, until when (zero: no lease).
	Owner      string
	LeaseUntil time.Time
	// read is the checkpoint item as read (nil: none), which a shared
	// run's claim expects to find unchanged.
	read map[string]types.AttributeValue
}

// leased reports whether another run than owner holds s by a lease that
// has not expired at now.
func (s *segmentState) leased(owner string, now time.Time) bool {
	return s.Owner != owner && !s.LeaseUntil.IsZero() && now.Before(s.LeaseUntil)
}

func (l *ledger) segmentItem(s *segmentState) map[string]types.AttributeValue {
	item := l.key(segmentSK(s.Segment))
	item[l.t.typeAttr] = avS(ledgerEntity)
	item[lgID] = avS(l.id)
	item[lgSegment] = avN(int64(s.Segment))
	item[lgDone] = &types.AttributeValueMemberBOOL{Value: s.Done}
	if len(s.LastKey) > 0 {
		item[lgLastKey] = &types.AttributeValueMemberM{Value: s.LastKey}
	}
	putCounts(item, s.Counts)
	item[lgPages] = avN(s.Pages)
	item[lgOwner] = avS(l.owner)
	now := l.t.now()
	item[lgUpdatedAt] = avTime(now)
	if l.attempt > 0 {
		item[lgAttempt] = avN(l.attempt)
	}
	if l.lease > 0 && !s.Done {
		item[lgLeaseUntil] = avN(now.Add(l.lease).UnixMilli())
	}
	return item
}

// segments reads the checkpoints of segments 0..n-1; a segment without
// one, or with one of another attempt than l.attempt, starts at the
// beginning.
func (l *ledger) segments(ctx context.Context, n int) ([]*segmentState, error) {
	out := make([]*segmentState, n)
	for i := range n {
		res, err := l.t.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &l.t.name, Key: l.key(segmentSK(i)), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("singletable: migration %s: read checkpoint: %w", l.id, err)
		}
		s := &segmentState{Segment: i}
		if it := res.Item; len(it) > 0 {
			s.read = it
			s.Owner = getS(it, lgOwner)
			if ms := getN(it, lgLeaseUntil); ms > 0 {
				s.LeaseUntil = time.UnixMilli(ms)
			}
			if getN(it, lgAttempt) != l.attempt {
				out[i] = s // stale: from the beginning
				continue
			}
			s.Counts = decodeCounts(it)
			s.Pages = getN(it, lgPages)
			if d, ok := it[lgDone].(*types.AttributeValueMemberBOOL); ok {
				s.Done = d.Value
			}
			if m, ok := it[lgLastKey].(*types.AttributeValueMemberM); ok {
				s.LastKey = m.Value
			}
		}
		out[i] = s
	}
	return out, nil
}

// claim makes this run the owner of the segment checkpoints segs, as
// they stand. A run that lost the lease can no longer save checkpoints
// once a newer run claimed them.
func (l *ledger) claim(ctx context.Context, segs []*segmentState) error {
	for _, s := range segs {
		_, err := l.t.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.t.name, Item: l.segmentItem(s)})
		if err != nil {
			return fmt.Errorf("singletable: migration %s: write checkpoint: %w", l.id, err)
		}
		s.Owner = l.owner
	}
	return nil
}

// save writes a segment's checkpoint, provided this run still owns it.
func (l *ledger) save(ctx context.Context, s *segmentState) error {
	var b expr.Builder
	cond := b.Holds(lgOwner, avS(l.owner))
	_, err := l.t.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &l.t.name,
		Item:                      l.segmentItem(s),
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  b.Names(),
		ExpressionAttributeValues: b.Values(),
	})
	return l.leaseErr(err)
}
