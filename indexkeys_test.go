package singletable_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// DeviceLog is the device log of a published single-table design: a log
// entry is keyed DEVICE#<id> | <state>#<date>, and GSI2 = EscalatedTo | SK
// holds the entries escalated to someone (sparse: an entry nobody handles
// has no EscalatedTo). Inverted = SK | PK lists a state's entries.
type DeviceLog struct {
	DeviceID    string
	State       string
	Date        string
	EscalatedTo string
	Message     string
}

var deviceLogs = singletable.MustDefine(singletable.Schema[DeviceLog]{
	Type: "DeviceLog", PK: "DEVICE#{DeviceID}", SK: "{State}#{Date}", MatchKeys: true,
	Indexes: []singletable.IndexSchema[DeviceLog]{
		{Name: "GSI2", PK: "{EscalatedTo:raw}", PKAttr: "EscalatedTo", SK: "{State}#{Date}", SKAttr: "SK"},
		{Name: "Inverted", PK: "{State}#{Date}", PKAttr: "SK", SK: "DEVICE#{DeviceID}", SKAttr: "PK"},
	},
})

// escalated returns the entries GSI2 holds for person, by state prefix
// when state is not "".
func escalated(t *testing.T, repo *singletable.Repo[DeviceLog], person, state string) []string {
	t.Helper()
	q := repo.QueryIndex("GSI2", DeviceLog{EscalatedTo: person})
	if state != "" {
		q = q.Where("State", singletable.Eq, state)
	}
	got, err := q.Collect(context.Background())
	require.NoError(t, err)
	var out []string
	for _, l := range got {
		require.Equal(t, person, l.EscalatedTo)
		out = append(out, l.DeviceID+"/"+l.State+"#"+l.Date)
	}
	return out
}

// An index whose sort key attribute is the table's SK and whose partition
// key attribute is an ordinary field's own (issue 24, item 1): every item
// is written with its table sort key, in the sparse index or not; an
// update that removes EscalatedTo removes only it (never SK) and moves the
// item out of GSI2, and setting it moves the item back in; queries on
// GSI2 and on the inverted index find the library's items and those
// another service writes with the SDK alone.
func TestIndexKeyIsTableSortKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[DeviceLog]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, deviceLogs) })
	require.NoError(t, tbl.Check(ctx))
	in := tbl.CreateTableInput()
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+" "+string(d.AttributeType))
	}
	assert.Equal(t, []string{"EscalatedTo S", "PK S", "SK S"}, defs)
	assert.Equal(t, []describe.Index{
		{Name: "GSI2", Partition: []describe.KeyAttribute{{Name: "EscalatedTo", Type: "S"}}, Sort: []describe.KeyAttribute{{Name: "SK", Type: "S"}}, Projection: "ALL"},
		{Name: "Inverted", Partition: []describe.KeyAttribute{{Name: "SK", Type: "S"}}, Sort: []describe.KeyAttribute{{Name: "PK", Type: "S"}}, Projection: "ALL"},
	}, tbl.Describe().Indexes)

	// The library's writes: Create, Put, BatchWrite and Tx, in and out of
	// the sparse index.
	_, err := repo.Create(ctx, DeviceLog{DeviceID: "d1", State: "WARNING1", Date: "2020-04-24T14:40:00", Message: "hot"})
	require.NoError(t, err)
	_, err = repo.Put(ctx, DeviceLog{DeviceID: "d1", State: "WARNING2", Date: "2020-04-24T14:50:00", EscalatedTo: "Sara"})
	require.NoError(t, err)
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		repo.PutOp(DeviceLog{DeviceID: "d2", State: "WARNING1", Date: "2020-04-25T08:00:00"}),
		repo.PutOp(DeviceLog{DeviceID: "d2", State: "WARNING2", Date: "2020-04-25T09:00:00", EscalatedTo: "Sara"}),
	}))
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{
		repo.CreateOp(DeviceLog{DeviceID: "d3", State: "WARNING1", Date: "2020-04-26T08:00:00"}),
		repo.CreateOp(DeviceLog{DeviceID: "d3", State: "WARNING1", Date: "2020-04-26T09:00:00", EscalatedTo: "Ben"}),
	}))
	// Another service's items, written with the SDK alone.
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("DEVICE#d4"), "SK": sAV("WARNING1#2020-04-27T10:00:00"), "EscalatedTo": sAV("Sara")})
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("DEVICE#d4"), "SK": sAV("WARNING2#2020-04-27T11:00:00")})

	item := rawGet(t, tbl, "DEVICE#d1", "WARNING1#2020-04-24T14:40:00")
	require.NotNil(t, item, "an item outside GSI2 is written with its sort key")
	assert.NotContains(t, item, "EscalatedTo")
	item = rawGet(t, tbl, "DEVICE#d1", "WARNING2#2020-04-24T14:50:00")
	assert.Equal(t, "Sara", attrS(item, "EscalatedTo"))

	// In GSI2's sort key order: the table's SK.
	assert.Equal(t, []string{"d4/WARNING1#2020-04-27T10:00:00", "d1/WARNING2#2020-04-24T14:50:00", "d2/WARNING2#2020-04-25T09:00:00"},
		escalated(t, repo, "Sara", ""))
	assert.Equal(t, []string{"d4/WARNING1#2020-04-27T10:00:00"}, escalated(t, repo, "Sara", "WARNING1"))
	// Paged one by one: a cursor of GSI2 holds EscalatedTo and SK, and PK.
	var paged []string
	for cur, n := "", 0; n == 0 || cur != ""; n++ {
		require.Less(t, n, 5)
		page, err := repo.QueryIndex("GSI2", DeviceLog{EscalatedTo: "Sara"}).PageSize(1).Limit(1).After(cur).Page(ctx)
		require.NoError(t, err)
		for _, l := range page.Items {
			paged = append(paged, l.DeviceID)
		}
		cur = page.Cursor
	}
	assert.Equal(t, []string{"d4", "d1", "d2"}, paged)
	got, err := repo.QueryIndex("GSI2", DeviceLog{EscalatedTo: "Sara", State: "WARNING2"}).
		Where("Date", singletable.Ge, "2020-04-25T00:00:00").Collect(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "d2", got[0].DeviceID)

	// Out of the index and back in, by updates.
	key := DeviceLog{DeviceID: "d1", State: "WARNING2", Date: "2020-04-24T14:50:00"}
	_, err = repo.Update(key).Remove("EscalatedTo").Run(ctx)
	require.NoError(t, err)
	item = rawGet(t, tbl, "DEVICE#d1", "WARNING2#2020-04-24T14:50:00")
	require.NotNil(t, item)
	assert.NotContains(t, item, "EscalatedTo")
	assert.NotContains(t, escalated(t, repo, "Sara", ""), "d1/WARNING2#2020-04-24T14:50:00")
	_, err = repo.Update(key).Set("EscalatedTo", "Ben").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"d3/WARNING1#2020-04-26T09:00:00", "d1/WARNING2#2020-04-24T14:50:00"}, escalated(t, repo, "Ben", ""))
	_, err = repo.Update(key).Set("EscalatedTo", "").Run(ctx)
	require.NoError(t, err, "an empty key value removes the attribute")
	assert.Equal(t, []string{"d3/WARNING1#2020-04-26T09:00:00"}, escalated(t, repo, "Ben", ""))
	// Another service's item, moved into the index by the library.
	_, err = repo.Update(DeviceLog{DeviceID: "d4", State: "WARNING2", Date: "2020-04-27T11:00:00"}).Set("EscalatedTo", "Ben").Run(ctx)
	require.NoError(t, err)
	assert.Contains(t, escalated(t, repo, "Ben", ""), "d4/WARNING2#2020-04-27T11:00:00")
	_, err = repo.Update(DeviceLog{DeviceID: "d4", State: "WARNING1", Date: "2020-04-27T10:00:00"}).Set("Message", "seen").Run(ctx)
	require.NoError(t, err)

	// The inverted index: SK | PK.
	inv, err := repo.QueryIndex("Inverted", DeviceLog{State: "WARNING1", Date: "2020-04-27T10:00:00"}).Collect(ctx)
	require.NoError(t, err)
	require.Len(t, inv, 1)
	assert.Equal(t, DeviceLog{DeviceID: "d4", State: "WARNING1", Date: "2020-04-27T10:00:00", EscalatedTo: "Sara", Message: "seen"}, inv[0])

	// Every item holds its table key, as written; none lost it.
	items := scanRaw(t, tbl.Client(), tbl.Name())
	assert.Len(t, items, 8)
	for _, it := range items {
		assert.Regexp(t, `^DEVICE#d[1-4]$`, attrS(it, "PK"))
		assert.Regexp(t, `^WARNING[12]#2020-04-2\dT\d\d:\d\d:00$`, attrS(it, "SK"))
		if v, ok := it["EscalatedTo"]; ok {
			assert.NotEmpty(t, v.(*types.AttributeValueMemberS).Value)
		}
	}
}

// CustomerOrder's customer is stored as its own attribute "customer",
// which is also the partition key of ByCustomer: its value is the key,
// verbatim (another service queries it with the customer id as is).
type CustomerOrder struct {
	OrderID  string
	Customer string `dynamodbav:"customer"`
	Date     string
}

var customerOrders = singletable.MustDefine(singletable.Schema[CustomerOrder]{
	Type: "CustomerOrder", PK: "ORDER#{OrderID}", SK: "ORDER",
	Indexes: []singletable.IndexSchema[CustomerOrder]{
		{Name: "ByCustomer", PK: "{Customer:raw}", PKAttr: "customer", SK: "ORDER#{Date}", SKAttr: "ByCustomerSK"},
	},
})

// An index whose partition key attribute is a plain field's own attribute
// (issue 24, item 1): the field is stored once, as written, and is the
// key; an item without it is outside the index; another service's item
// keyed the same way is found; removing the field moves the item out.
func TestIndexKeyIsFieldAttribute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[CustomerOrder]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, customerOrders) })
	require.NoError(t, tbl.Check(ctx))

	_, err := repo.Put(ctx, CustomerOrder{OrderID: "o1", Customer: "c#1", Date: "2024-01-02"})
	require.NoError(t, err)
	_, err = repo.Put(ctx, CustomerOrder{OrderID: "o2", Date: "2024-01-03"})
	require.NoError(t, err)
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("ORDER#o3"), "SK": sAV("ORDER"), "EntityType": sAV("CustomerOrder"),
		"customer": sAV("c#1"), "Date": sAV("2024-01-01"), "ByCustomerSK": sAV("ORDER#2024-01-01")})
	item := rawGet(t, tbl, "ORDER#o1", "ORDER")
	assert.Equal(t, "c#1", attrS(item, "customer"))
	assert.NotContains(t, rawGet(t, tbl, "ORDER#o2", "ORDER"), "customer")

	ids := func(customer string) []string {
		got, err := repo.QueryIndex("ByCustomer", CustomerOrder{Customer: customer}).Collect(ctx)
		require.NoError(t, err)
		var out []string
		for _, o := range got {
			out = append(out, o.OrderID)
		}
		return out
	}
	assert.Equal(t, []string{"o3", "o1"}, ids("c#1"))
	_, err = repo.Update(CustomerOrder{OrderID: "o1"}).Remove("Customer").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"o3"}, ids("c#1"))
	_, err = repo.Update(CustomerOrder{OrderID: "o2"}).Set("Customer", "c#1").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"o3", "o2"}, ids("c#1"))
	assert.Equal(t, "c#1", attrS(rawGet(t, tbl, "ORDER#o2", "ORDER"), "customer"))
}

// Declarations of index keys on another attribute that DynamoDB would
// refuse, or that the library could not keep correct, are refused before
// any request with a *ValidationError naming the index and the attribute,
// and saying why; those it can keep are accepted.
func TestIndexKeyAttributeRefusals(t *testing.T) {
	t.Parallel()
	type Counted struct {
		ID    string
		Count int    `dynamodbav:"n"`
		Owner string `dynamodbav:"owner"`
	}
	define := func(ix singletable.IndexSchema[Counted]) error {
		_, err := singletable.Define(singletable.Schema[Counted]{Type: "Counted", PK: "ID#{ID}", SK: "META", Indexes: []singletable.IndexSchema[Counted]{ix}})
		return err
	}
	bind := func(ix singletable.IndexSchema[Counted], optFns ...func(*singletable.TableOptions)) error {
		e, err := singletable.Define(singletable.Schema[Counted]{Type: "Counted", PK: "ID#{ID}", SK: "META", Indexes: []singletable.IndexSchema[Counted]{ix}})
		if err != nil {
			return err
		}
		_, err = singletable.Bind(singletable.NewTable(nil, "offline", optFns...), e)
		return err
	}
	always := func(Counted) bool { return true }
	cases := []struct {
		name, where, reason string
		err                 error
	}{
		{"escaped template on a field's attribute", "Owner", "must be {Owner:raw}",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{Owner}", PKAttr: "owner"})},
		{"template with a literal on a field's attribute", "Owner", "must be {Owner:raw}",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "O#{Owner:raw}", PKAttr: "owner"})},
		{"number field's attribute", "Count", "PartitionAttrs",
			define(singletable.IndexSchema[Counted]{Name: "ByCount", PK: "{Count}", PKAttr: "n"})},
		{"another field's placeholder", "Owner", "must be {Owner:raw}",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{ID:raw}", PKAttr: "owner"})},
		{"shards on a field's attribute", "index ByOwner owner", "shard suffix",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", Shards: 4})},
		{"When with only field keys", "index ByOwner", "cannot remove",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", When: always, WhenFields: []string{"ID"}})},
		{"SKAttr without a template", "index ByOwner x", "without an SK template",
			define(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", SKAttr: "x"})},
		{"table sort key with another template", "index ByOwner SK", `must be "META"`,
			bind(singletable.IndexSchema[Counted]{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", SK: "X#{ID}", SKAttr: "SK"})},
		{"table partition key with another template", "index Inv PK", `must be "ID#{ID}"`,
			bind(singletable.IndexSchema[Counted]{Name: "Inv", PK: "META", PKAttr: "SK", SK: "{ID}", SKAttr: "PK"})},
		{"renamed table key", "index Inv pk", `must be "ID#{ID}"`,
			bind(singletable.IndexSchema[Counted]{Name: "Inv", PK: "META", PKAttr: "sk", SK: "X", SKAttr: "pk"},
				func(o *singletable.TableOptions) { o.PartitionKey, o.SortKey = "pk", "sk" })},
		{"entity type attribute with another template", "index ByType EntityType", `must be "Counted"`,
			bind(singletable.IndexSchema[Counted]{Name: "ByType", PK: "Other", PKAttr: "EntityType", SK: "{ID}"})},
		{"When with only table keys", "index Inv", "cannot remove",
			bind(singletable.IndexSchema[Counted]{Name: "Inv", PK: "META", PKAttr: "SK", SK: "ID#{ID}", SKAttr: "PK", When: always, WhenFields: []string{"ID"}})},
		{"shards on the table's key", "index Inv SK", "shard suffix",
			bind(singletable.IndexSchema[Counted]{Name: "Inv", PK: "META", PKAttr: "SK", SK: "ID#{ID}", SKAttr: "PK", Shards: 4})},
	}
	two := func(a, b singletable.IndexSchema[Counted]) error {
		e, err := singletable.Define(singletable.Schema[Counted]{Type: "Counted", PK: "ID#{ID}", SK: "META", Indexes: []singletable.IndexSchema[Counted]{a, b}})
		if err != nil {
			return err
		}
		_, err = singletable.Bind(singletable.NewTable(nil, "offline"), e)
		return err
	}
	cases = append(cases, []struct {
		name, where, reason string
		err                 error
	}{
		{"two templates for one attribute", "index B Shared", "one attribute holds one value",
			two(singletable.IndexSchema[Counted]{Name: "A", PK: "X#{ID}", PKAttr: "Shared"}, singletable.IndexSchema[Counted]{Name: "B", PK: "Y#{ID}", PKAttr: "Shared"})},
		{"one attribute kept under other conditions", "index B Shared", "other conditions",
			two(singletable.IndexSchema[Counted]{Name: "A", PK: "X#{ID}", PKAttr: "Shared"},
				singletable.IndexSchema[Counted]{Name: "B", PK: "X#{ID}", PKAttr: "Shared", SK: "{Owner}"})},
	}...)
	assert.NoError(t, two(singletable.IndexSchema[Counted]{Name: "A", PK: "X#{ID}", PKAttr: "Shared", SK: "{Owner}", SKAttr: "ASK"},
		singletable.IndexSchema[Counted]{Name: "B", PK: "X#{ID}", PKAttr: "Shared", SK: "{Owner}", SKAttr: "BSK"}))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ve *singletable.ValidationError
			require.True(t, errors.As(c.err, &ve), "got %v", c.err)
			assert.Equal(t, c.where, ve.Field)
			assert.Contains(t, ve.Error(), c.reason)
			if !strings.HasPrefix(c.where, "index ") {
				assert.Contains(t, ve.Error(), "is stored as attribute")
			}
		})
	}
	for _, ix := range []singletable.IndexSchema[Counted]{
		{Name: "Inv", PK: "META", PKAttr: "SK", SK: "ID#{ID}", SKAttr: "PK"},
		{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", SK: "META", SKAttr: "SK"},
		{Name: "ByOwner", PK: "{Owner:raw}", PKAttr: "owner", SK: "ID#{ID}", When: always, WhenFields: []string{"ID"}},
		{Name: "ByType", PK: "Counted", PKAttr: "EntityType", SK: "{Owner}"},
	} {
		assert.NoError(t, bind(ix), ix.Name)
	}
}
