package migrate

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"

	"github.com/singletable-go/singletable"
)

// Engine unit tests: no DynamoDB needed. The migration behaviour is tested
// through the public API (package migrate_test), which also resumes a run
// recorded by an earlier version of the ledger.

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func testTable(sortKey string) *table {
	return &table{name: "t", pk: "PK", sk: sortKey, typeAttr: "EntityType",
		now: func() time.Time { return fixedNow }}
}

// The checkpoint item's stored form, which a resumed run of any version
// reads back: pinned attribute by attribute.
func TestLedgerSegmentItem(t *testing.T) {
	l := newLedger(testTable("SK"), "000-users", "host/1/abc")
	s := &segmentState{Segment: 1, LastKey: map[string]types.AttributeValue{"username": avS("user00142")},
		Counts: Counts{Scanned: 100, Read: 100, Written: 99, Skipped: 1}, Pages: 2}
	assert.Equal(t, map[string]types.AttributeValue{
		"PK":          avS("_MIGRATION#000-users"),
		"SK":          avS("SEGMENT#00001"),
		"EntityType":  avS("_Migration"),
		"MigrationID": avS("000-users"),
		"Segment":     avN(1),
		"Done":        &types.AttributeValueMemberBOOL{Value: false},
		"LastKey":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"username": avS("user00142")}},
		"Scanned":     avN(100),
		"Read":        avN(100),
		"Written":     avN(99),
		"Skipped":     avN(1),
		"Failed":      avN(0),
		"Pages":       avN(2),
		"Owner":       avS("host/1/abc"),
		"UpdatedAt":   avS("2026-01-02T03:04:05.000000006Z"),
	}, l.segmentItem(s))

	// A table without a sort key appends the sort key's text to the
	// partition key.
	l = newLedger(testTable(""), "000-users", "")
	assert.Equal(t, map[string]types.AttributeValue{"PK": avS("_MIGRATION#000-users#STATUS")}, l.key(ledgerHeader))
}

// A header's state as a reader sees it: a live lease is running, an
// expired or released one interrupted; completed and failed are final.
func TestLedgerHeaderState(t *testing.T) {
	item := map[string]types.AttributeValue{
		"Status": avS("running"), "Segments": avN(2), "Runs": avN(1), "Read": avN(150),
		"LeaseOwner": avS("host/1/abc"), "LeaseUntil": avN(fixedNow.Add(time.Minute).UnixMilli()),
		"StartedAt": avS("2026-01-02T03:04:05.000000006Z"),
	}
	h := decodeHeader(item)
	assert.Equal(t, Running, h.state(fixedNow))
	assert.Equal(t, Interrupted, h.state(fixedNow.Add(2*time.Minute)))
	assert.Equal(t, Counts{Read: 150}, h.Counts)
	assert.Equal(t, fixedNow, h.StartedAt)
	h.LeaseOwner = ""
	assert.Equal(t, Interrupted, h.state(fixedNow))
	h.Status = Completed
	assert.Equal(t, Completed, h.state(fixedNow))
}

// An item without a decision when its page is committed counts as failed,
// so that the counts add up.
func TestPageCountsAddUp(t *testing.T) {
	p := newPage(0, &dynamodb.ScanOutput{Items: make([]map[string]types.AttributeValue, 4), ScannedCount: 9})
	p.set(0, outWritten)
	p.set(1, outSkipped)
	p.fail(2, errors.New("bad"))
	p.set(2, outWritten) // a failure is final
	assert.Equal(t, Counts{Scanned: 9, Read: 4, Written: 1, Skipped: 1, Failed: 2}, p.counts())
}

// A batch refused as a whole is one error for every op, other than an
// unprocessed item; then the ops are sent one by one.
func TestCopyRejectedWhole(t *testing.T) {
	unprocessed := wrap(singletable.ErrUnprocessed, "PutItem", nil)
	refused := errors.New("ValidationException")
	assert.True(t, rejectedWhole(map[int]error{0: refused, 1: refused}, 2))
	assert.False(t, rejectedWhole(map[int]error{0: refused}, 2), "not every op")
	assert.False(t, rejectedWhole(map[int]error{0: refused, 1: errors.New("ValidationException")}, 2), "not the same error")
	assert.False(t, rejectedWhole(map[int]error{0: unprocessed, 1: unprocessed}, 2), "unprocessed items are retried, not refused")
}

// The sample of a verification is chosen by the key, the same on every
// call, and covers about the fraction asked for.
func TestVerifySample(t *testing.T) {
	v := &verifier{t: testTable("SK"), o: VerifyOptions{Sample: 0.25}}
	in := 0
	for i := range 4000 {
		key := map[string]types.AttributeValue{"PK": avS("USER#" + string(rune('a'+i%26)) + avN(int64(i)).(*types.AttributeValueMemberN).Value)}
		first := v.sampled(key)
		assert.Equal(t, first, v.sampled(key))
		if first {
			in++
		}
	}
	assert.InDelta(t, 1000, in, 120)
}

// A difference and a duplicate print keys in the order of their table's
// keys, as the root package's errors do.
func TestKeysInKeyOrder(t *testing.T) {
	key := map[string]types.AttributeValue{"At": avS("b"), "Tenant": avS("a")}
	d := Difference{Entity: "E", Key: key, Kind: "missing", pk: "Tenant", sk: "At"}
	assert.Equal(t, "missing E {Tenant=a At=b}", d.String())
	holder := map[string]types.AttributeValue{"At": avS("c"), "Tenant": avS("a")}
	e := &DuplicateError{Entity: "E", Fields: []string{"Email"}, Key: key, Holder: holder, pk: "Tenant", sk: "At"}
	assert.Equal(t, "singletable: E [Email]: item {Tenant=a At=b} holds the same value as item {Tenant=a At=c}, which holds its guard; change or delete one of them, then run the migration again", e.Error())
	assert.ErrorIs(t, e, singletable.ErrAlreadyExists)
}
