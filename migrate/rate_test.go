package migrate_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// The WCU limit holds over a 10 s copy, measured from the capacity
// DynamoDB reports for the writes made: never above the limit. Below it is
// not asserted: a loaded machine may not reach the limit, and a rate
// limit promises only a ceiling.
//
// Not parallel: it runs before the parallel tests start, so that the
// limiter, not a DynamoDB Local busy with 20,000-item copies (under -race),
// usually sets the pace (the log line shows how close it came).
func TestMigrateRateLimit(t *testing.T) {
	const (
		// Low enough that a loaded machine running the other tests (with
		// -race) still keeps up: the limit, not the server, sets the pace.
		limit = 100.0 // WCU/s
		n     = 500   // 1, 2 and 3 WCU items: 1,000 WCU, 10 s at the limit
	)
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		items[i] = map[string]types.AttributeValue{
			"username":      &types.AttributeValueMemberS{Value: fmt.Sprintf("user%05d", i)},
			"name":          &types.AttributeValueMemberS{Value: "Rate Limited"},
			"password_hash": &types.AttributeValueMemberS{Value: strings.Repeat("x", 500+1000*(i%3))},
		}
	}
	src := newRawTable(t, "username", items)
	rc := &recordingClient{Client: ddblocal.Shared(t).Client()}
	tbl, users := usersTargetVia(t, rc)
	m, err := migrate.New(tbl, migrate.Copy("rate", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)

	before := time.Now()
	rep, err := m.Run(context.Background(), "rate", func(o *migrate.RunOptions) {
		o.WCU = limit
		o.Segments, o.Writers, o.PageSize = 4, 16, 50
	})
	require.NoError(t, err)
	assert.Equal(t, int64(n), rep.Counts.Written)

	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.NotEmpty(t, rc.consumed, "DynamoDB Local reports consumed capacity")
	var total float64
	for _, c := range rc.consumed {
		total += c.units
	}
	assert.Equal(t, float64(rep.WCU), total, "the library's ceil(size/1KB) matches what DynamoDB charged")
	// Logged: the rate between the first and the last write sent, close to
	// the limit when the limiter, not the machine, set the pace.
	sort.Slice(rc.consumed, func(i, j int) bool { return rc.consumed[i].sent.Before(rc.consumed[j].sent) })
	first, last := rc.consumed[0], rc.consumed[len(rc.consumed)-1]
	span := last.sent.Sub(first.sent)
	measured := (total - first.units) / span.Seconds()
	t.Logf("%.0f WCU in %v: %.1f WCU/s against a limit of %.0f (run took %v)", total, span, measured, limit, rep.Elapsed)
	if testing.Verbose() {
		for i, c := range rc.consumed {
			t.Logf("send %2d at %6.3fs: %3.0f WCU", i, c.sent.Sub(first.sent).Seconds(), c.units)
		}
	}
	// The limiter starts empty during the call and a write is sent only
	// once its units are granted, so from the call's start to the last
	// write sent it granted at most limit units a second (one unit allowed
	// for the rounding of its waits). Delays after a grant (a loaded
	// machine) only make the writes later: the bound holds under any load,
	// where a rate over the span of the sends could be squeezed by a late
	// first send.
	bound := last.sent.Sub(before).Seconds()
	assert.LessOrEqual(t, total, limit*bound+1, "%.0f WCU sent within %.2fs of the call's start: above %.0f WCU/s", total, bound, limit)
}
