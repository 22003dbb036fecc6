package singletable_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// UnstoredLog's key fields are tagged "-": the keys hold them, the item
// has no attribute of their own, under any name.
type UnstoredLog struct {
	DeviceID string `dynamodbav:"-"`
	State    string `dynamodbav:"-"`
	Date     string `dynamodbav:"-"`
	Owner    string `dynamodbav:"owner"`
	Note     string `dynamodbav:"note"`
}

var UnstoredLogs = singletable.MustDefine(singletable.Schema[UnstoredLog]{
	Type: "UnstoredLog", PK: "DEV#{DeviceID}", SK: "{State}#{Date}",
	KeyOnly: []string{"DeviceID", "State", "Date"},
	Indexes: []singletable.IndexSchema[UnstoredLog]{{Name: "GSI1", PK: "OWNER#{Owner}", SK: "DEV#{DeviceID}#{Date}"}},
})

// TestKeyOnlyFieldsTaggedDash: KeyOnly fields tagged dynamodbav:"-" are
// written in the keys only, and every read fills them from the keys: Get,
// Query, a query of an index whose key renders one, Scan, an update's
// result; the item another service writes reads the same. A filter
// naming one is refused before the network, not sent to match nothing.
func TestKeyOnlyFieldsTaggedDash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logs *singletable.Repo[UnstoredLog]
	tbl, c := newTable(t, func(tbl *singletable.Table) { logs = singletable.MustBind(tbl, UnstoredLogs) })

	a := UnstoredLog{DeviceID: "d1", State: "open", Date: "2024-01-02", Owner: "ann", Note: "a"}
	_, err := logs.Create(ctx, a)
	require.NoError(t, err)
	item := rawGet(t, tbl, "DEV#d1", "open#2024-01-02")
	assert.Equal(t, sAV("ann"), item["owner"])
	for _, attr := range []string{"DeviceID", "State", "Date", ""} {
		assert.NotContains(t, item, attr, "a key-only field is not stored")
	}
	assert.Equal(t, sAV("OWNER#ann"), item["GSI1PK"])
	assert.Equal(t, sAV("DEV#d1#2024-01-02"), item["GSI1SK"])
	// Another service's item: the keys and its own attributes only.
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("DEV#d1"), "SK": sAV("closed#2024-01-01"),
		"EntityType": sAV("UnstoredLog"), "owner": sAV("ann"), "note": sAV("b"),
		"GSI1PK": sAV("OWNER#ann"), "GSI1SK": sAV("DEV#d1#2024-01-01")})
	b := UnstoredLog{DeviceID: "d1", State: "closed", Date: "2024-01-01", Owner: "ann", Note: "b"}

	got, err := logs.Get(ctx, UnstoredLog{DeviceID: "d1", State: "open", Date: "2024-01-02"})
	require.NoError(t, err)
	assert.Equal(t, a, got)
	part, err := logs.Get(ctx, UnstoredLog{DeviceID: "d1", State: "open", Date: "2024-01-02"},
		func(o *singletable.ReadOptions) { o.Fields = []string{"DeviceID", "Owner"} })
	require.NoError(t, err)
	assert.Equal(t, UnstoredLog{DeviceID: "d1", State: "open", Date: "2024-01-02", Owner: "ann"}, part, "Fields naming one reads the keys")
	open, err := logs.Query(UnstoredLog{DeviceID: "d1"}).Where("State", singletable.Eq, "open").Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []UnstoredLog{a}, open)
	all, err := logs.Query(UnstoredLog{DeviceID: "d1"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []UnstoredLog{b, a}, all)
	owned, err := logs.QueryIndex("GSI1", UnstoredLog{Owner: "ann"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []UnstoredLog{b, a}, owned)
	scanned, err := logs.Scan().Collect(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []UnstoredLog{a, b}, scanned)

	updated, err := logs.Update(UnstoredLog{DeviceID: "d1", State: "closed", Date: "2024-01-01"}).Set("Note", "c").Run(ctx)
	require.NoError(t, err)
	b.Note = "c"
	assert.Equal(t, b, updated)
	got, err = logs.Get(ctx, UnstoredLog{DeviceID: "d1", State: "closed", Date: "2024-01-01"})
	require.NoError(t, err)
	assert.Equal(t, b, got)
	assert.NotContains(t, rawGet(t, tbl, "DEV#d1", "closed#2024-01-01"), "DeviceID")

	c.requests.Store(0)
	var ve *singletable.ValidationError
	_, err = logs.Query(UnstoredLog{DeviceID: "d1"}).Filter(expression.Name("State").Equal(expression.Value("open"))).Collect(ctx)
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "State")
	assert.Zero(t, c.requests.Load(), "refused before the network")
	assert.Equal(t, []string{"DeviceID", "State", "Date"}, tbl.Describe().Entities[0].KeyOnly)
}
