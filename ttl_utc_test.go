package singletable_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

type EpochLease struct {
	ID      string    `dynamodbav:"ID"`
	Expires time.Time `dynamodbav:"expires"`
	Seen    time.Time `dynamodbav:"seen,unixtime"`
	Milli   time.Time `dynamodbav:"milli,unixmilli"`
	At      time.Time `dynamodbav:"at"`
}

var EpochLeases = singletable.MustDefine(singletable.Schema[EpochLease]{
	Type: "EpochLease", PK: "LEASE#{ID}", SK: "LEASE", TTL: "Expires",
})

// TestEpochTimesDecodeInUTC: the TTL field and unixtime and unixmilli
// attributes decode in UTC, as every other time does, whether the library
// or another service wrote them and whichever read decodes them, so that
// equal instants are equal values. The location is checked itself: an
// epoch decoded in local time has location time.Local, which is not
// time.UTC whatever TZ the test runs in.
func TestEpochTimesDecodeInUTC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var leases *singletable.Repo[EpochLease]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { leases = singletable.MustBind(tbl, EpochLeases) })
	zone := time.FixedZone("X", -(3*3600 + 1800))
	// In the future: DynamoDB Local deletes items whose TTL has passed.
	at := time.Date(2036, 3, 4, 5, 6, 7, 0, time.UTC)
	want := EpochLease{ID: "a", Expires: at.Add(time.Hour), Seen: at, Milli: at.Add(123 * time.Millisecond), At: at}

	created, err := leases.Create(ctx, EpochLease{ID: "a", Expires: want.Expires.In(zone), Seen: at.In(zone),
		Milli: want.Milli.In(zone), At: at})
	require.NoError(t, err)
	assert.Equal(t, want, created, "Create returns the times as a read decodes them")
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("LEASE#b"), "SK": sAV("LEASE"), "ID": sAV("b"),
		"EntityType": sAV("EpochLease"), "expires": nAV("2082758400"), "seen": nAV("2082758400"), "milli": nAV("2082758400123"),
		"at": sAV("2036-01-01T00:00:00Z")})
	jan := time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	wantB := EpochLease{ID: "b", Expires: jan, Seen: jan, Milli: jan.Add(123 * time.Millisecond), At: jan}

	utc := func(what string, l EpochLease) {
		t.Helper()
		for name, tm := range map[string]time.Time{"Expires": l.Expires, "Seen": l.Seen, "Milli": l.Milli, "At": l.At} {
			assert.Same(t, time.UTC, tm.Location(), "%s: %s", what, name)
		}
	}
	got, err := leases.Get(ctx, EpochLease{ID: "a"})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	utc("Get", got)
	got, err = leases.Get(ctx, EpochLease{ID: "b"})
	require.NoError(t, err)
	assert.Equal(t, wantB, got, "another service's epoch numbers")
	utc("Get of another service's item", got)
	all, err := leases.Scan().Collect(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, l := range all {
		utc("Scan", l)
	}
}
