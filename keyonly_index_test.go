package singletable_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// Fields held only in index keys (issue 24 item 2): the online shop's
// order items (aws-samples/amazon-dynamodb-design-patterns, "an online
// shop", its NoSQL Workbench model) as its other service writes them. An
// order item keeps its order and product in PK | SK, the product and the
// order's zone-less time in GSI1-PK | GSI1-SK ("all orders of a product in
// a date range") and its customer and time in GSI2-PK | GSI2-SK ("all
// products a customer ordered in a date range"): no attribute holds the
// customer or the time.

type ShopOrderItem struct {
	OrderID    string    `dynamodbav:"-"`
	ProductID  string    `dynamodbav:"-"`
	CustomerID string    `dynamodbav:"-"`
	Date       time.Time `dynamodbav:"-"`
	Quantity   string
	Price      string
}

const shopLayout = "2006-01-02T15:04:05"

var ShopOrderItems = singletable.MustDefine(singletable.Schema[ShopOrderItem]{
	Type: "orderItem", PK: "o#{OrderID:raw}", SK: "p#{ProductID:raw}",
	KeyOnly: []string{"OrderID", "ProductID", "CustomerID", "Date"},
	Indexes: []singletable.IndexSchema[ShopOrderItem]{
		{Name: "GSI1", PK: "p#{ProductID:raw}", PKAttr: "GSI1-PK", SK: "{Date:" + shopLayout + "}", SKAttr: "GSI1-SK"},
		{Name: "GSI2", PK: "c#{CustomerID:raw}", PKAttr: "GSI2-PK", SK: "p#{Date:" + shopLayout + "}", SKAttr: "GSI2-SK"},
	},
})

// shopOrderItem is an order item exactly as the other service writes it.
func shopOrderItem(order, product, customer, date, qty, price string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": sAV("o#" + order), "SK": sAV("p#" + product), "EntityType": sAV("orderItem"),
		"GSI1-PK": sAV("p#" + product), "GSI1-SK": sAV(date),
		"GSI2-PK": sAV("c#" + customer), "GSI2-SK": sAV("p#" + date),
		"Quantity": sAV(qty), "Price": sAV(price),
	}
}

func shopTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(shopLayout, s)
	require.NoError(t, err)
	return tm
}

// shopTable holds the model's two order items of order 12345 (customer
// 12345), and two more: an order of the same customer outside the date
// range, and another customer's order inside it.
func shopTable(t *testing.T) (*singletable.Table, *countingClient, *singletable.Repo[ShopOrderItem]) {
	var items *singletable.Repo[ShopOrderItem]
	tbl, c := newTable(t, func(tbl *singletable.Table) { items = singletable.MustBind(tbl, ShopOrderItems) })
	rawPut(t, tbl, shopOrderItem("12345", "12345", "12345", "2020-06-21T19:18:00", "2", "100"))
	rawPut(t, tbl, shopOrderItem("12345", "99887", "12345", "2020-06-21T19:20:00", "5", "40"))
	rawPut(t, tbl, shopOrderItem("22222", "12345", "12345", "2020-07-01T10:00:00", "1", "100"))
	rawPut(t, tbl, shopOrderItem("33333", "99887", "54321", "2020-06-21T19:30:00", "1", "40"))
	c.requests.Store(0)
	return tbl, c, items
}

// TestKeyOnlyIndexOrderItemUpdate is the case: an order item whose
// customer lives only in GSI2-PK, updated through the library (its time
// set), keeps GSI2-PK and is still found by the customer's date-range
// query; the library's own writes are the other service's items.
func TestKeyOnlyIndexOrderItemUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, items := shopTable(t)
	key := ShopOrderItem{OrderID: "12345", ProductID: "12345"}
	later := shopTime(t, "2020-06-22T08:00:00")

	got, err := items.Update(key).Set("Date", later).Run(ctx)
	require.NoError(t, err)
	want := ShopOrderItem{OrderID: "12345", ProductID: "12345", CustomerID: "12345", Date: later, Quantity: "2", Price: "100"}
	assert.Equal(t, want, got)
	assert.Equal(t, shopOrderItem("12345", "12345", "12345", "2020-06-22T08:00:00", "2", "100"), rawGet(t, tbl, "o#12345", "p#12345"),
		"both index keys recomputed, the customer read back from GSI2-PK, no attribute added")

	june := items.QueryIndex("GSI2", ShopOrderItem{CustomerID: "12345"}).
		Between("Date", shopTime(t, "2020-06-01T00:00:00"), shopTime(t, "2020-06-30T23:59:59"))
	found, err := june.Collect(ctx)
	require.NoError(t, err)
	require.Len(t, found, 2)
	assert.Equal(t, "99887", found[0].ProductID)
	assert.Equal(t, want, found[1], "the updated item is still in the customer's range, in its new place")

	// Another product of the order, the customer given: nothing read first.
	_, err = items.Update(ShopOrderItem{OrderID: "12345", ProductID: "99887"}).Set("Quantity", "6").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, shopOrderItem("12345", "99887", "12345", "2020-06-21T19:20:00", "6", "40"), rawGet(t, tbl, "o#12345", "p#99887"))

	// The library writes what the other service writes.
	made := ShopOrderItem{OrderID: "44444", ProductID: "12345", CustomerID: "12345", Date: shopTime(t, "2020-06-25T12:00:00"), Quantity: "1", Price: "100"}
	_, err = items.Create(ctx, made)
	require.NoError(t, err)
	assert.Equal(t, shopOrderItem("44444", "12345", "12345", "2020-06-25T12:00:00", "1", "100"), rawGet(t, tbl, "o#44444", "p#12345"))
	found, err = june.Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, found, 3)

	// Clearing the customer takes the item out of GSI2 only; GSI1 keeps it.
	_, err = items.Update(ShopOrderItem{OrderID: "44444", ProductID: "12345"}).Remove("CustomerID").Run(ctx)
	require.NoError(t, err)
	raw := rawGet(t, tbl, "o#44444", "p#12345")
	assert.NotContains(t, raw, "GSI2-PK")
	assert.NotContains(t, raw, "GSI2-SK")
	assert.Equal(t, sAV("2020-06-25T12:00:00"), raw["GSI1-SK"])
}

// TestKeyOnlyIndexDecodePaths: every read fills the fields held only in
// index keys (Get, Query of the table and of each index, Scan, Collection,
// BatchGet, TxGet, and the Decoder package streams builds change events
// on).
func TestKeyOnlyIndexDecodePaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, items := shopTable(t)
	a := ShopOrderItem{OrderID: "12345", ProductID: "12345", CustomerID: "12345", Date: shopTime(t, "2020-06-21T19:18:00"), Quantity: "2", Price: "100"}
	b := ShopOrderItem{OrderID: "12345", ProductID: "99887", CustomerID: "12345", Date: shopTime(t, "2020-06-21T19:20:00"), Quantity: "5", Price: "40"}
	c := ShopOrderItem{OrderID: "22222", ProductID: "12345", CustomerID: "12345", Date: shopTime(t, "2020-07-01T10:00:00"), Quantity: "1", Price: "100"}
	d := ShopOrderItem{OrderID: "33333", ProductID: "99887", CustomerID: "54321", Date: shopTime(t, "2020-06-21T19:30:00"), Quantity: "1", Price: "40"}

	got, err := items.Get(ctx, ShopOrderItem{OrderID: "12345", ProductID: "12345"})
	require.NoError(t, err)
	assert.Equal(t, a, got, "Get")
	order, err := items.Query(ShopOrderItem{OrderID: "12345"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []ShopOrderItem{a, b}, order, "Query")
	byProduct, err := items.QueryIndex("GSI1", ShopOrderItem{ProductID: "12345"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []ShopOrderItem{a, c}, byProduct, "QueryIndex GSI1")
	byCustomer, err := items.QueryIndex("GSI2", ShopOrderItem{CustomerID: "12345"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []ShopOrderItem{a, b, c}, byCustomer, "QueryIndex GSI2")
	scanned, err := items.Scan().Collect(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []ShopOrderItem{a, b, c, d}, scanned, "Scan")
	var coll []ShopOrderItem
	_, err = items.Collection(ShopOrderItem{OrderID: "12345"}).Collect(ctx, items.Into(&coll))
	require.NoError(t, err)
	assert.Equal(t, []ShopOrderItem{a, b}, coll, "Collection")
	var ba, bd ShopOrderItem
	found, err := singletable.BatchGet(ctx, []singletable.GetOp{items.GetOp(ShopOrderItem{OrderID: "12345", ProductID: "12345"}, &ba),
		items.GetOp(ShopOrderItem{OrderID: "33333", ProductID: "99887"}, &bd)})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, found)
	assert.Equal(t, [2]ShopOrderItem{a, d}, [2]ShopOrderItem{ba, bd}, "BatchGet")
	var ta ShopOrderItem
	_, err = singletable.TxGet(ctx, []singletable.GetOp{items.GetOp(ShopOrderItem{OrderID: "22222", ProductID: "12345"}, &ta)})
	require.NoError(t, err)
	assert.Equal(t, c, ta, "TxGet")
	dec, err := tbl.Decoder([]*singletable.Target{items.Member()})
	require.NoError(t, err)
	typ, v, err := dec.Decode(shopOrderItem("33333", "99887", "54321", "2020-06-21T19:30:00", "1", "40"))
	require.NoError(t, err)
	assert.Equal(t, "orderItem", typ)
	assert.Equal(t, d, v, "Decoder (stream images)")

	// Fields naming only key-only fields read the keys, which hold them.
	part, err := items.Get(ctx, ShopOrderItem{OrderID: "12345", ProductID: "99887"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Price"} })
	require.NoError(t, err)
	assert.Equal(t, ShopOrderItem{OrderID: "12345", ProductID: "99887", Price: "40"}, part, "a projection without the index keys leaves their fields out")
	part, err = items.Get(ctx, ShopOrderItem{OrderID: "12345", ProductID: "99887"}, func(o *singletable.ReadOptions) { o.Fields = []string{"CustomerID"} })
	require.NoError(t, err)
	assert.Equal(t, ShopOrderItem{OrderID: "12345", ProductID: "99887", CustomerID: "12345"}, part, "Fields naming one reads the key holding it")
	proj, err := items.QueryIndex("GSI1", ShopOrderItem{ProductID: "99887"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Date", "Quantity"} }).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []ShopOrderItem{{OrderID: "12345", ProductID: "99887", Date: b.Date, Quantity: "5"}, {OrderID: "33333", ProductID: "99887", Date: d.Date, Quantity: "1"}}, proj)
}

// TestKeyOnlyIndexKeysDisagree: two keys holding one field with different
// values is reported, never one of them picked: by Get as its error, by a
// page in Skipped, beside the items that decode.
func TestKeyOnlyIndexKeysDisagree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _, items := shopTable(t)
	odd := shopOrderItem("12345", "55555", "12345", "2020-06-21T19:40:00", "1", "9")
	odd["GSI2-SK"] = sAV("p#2020-06-21T19:41:00") // the time GSI1-SK does not hold
	rawPut(t, tbl, odd)
	odd2 := shopOrderItem("12345", "66666", "12345", "2020-06-21T19:50:00", "1", "9")
	odd2["GSI1-PK"] = sAV("p#77777") // another product than SK's
	rawPut(t, tbl, odd2)

	check := func(err error, key, field string) {
		t.Helper()
		var ke *singletable.KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, key, ke.Key)
		assert.Contains(t, ke.Error(), "field "+field)
		assert.NotContains(t, ke.Error(), "19:41", "no value in the error")
	}
	_, err := items.Get(ctx, ShopOrderItem{OrderID: "12345", ProductID: "55555"})
	check(err, "GSI2-SK", "Date")
	page, err := items.Query(ShopOrderItem{OrderID: "12345"}).Page(ctx)
	require.NoError(t, err)
	require.Len(t, page.Items, 2, "the items that decode")
	require.Len(t, page.Skipped, 2)
	assert.Equal(t, sAV("p#55555"), page.Skipped[0].Key["SK"])
	check(page.Skipped[0], "GSI2-SK", "Date")
	assert.Equal(t, sAV("p#66666"), page.Skipped[1].Key["SK"])
	check(page.Skipped[1], "GSI1-PK", "ProductID")
}

// TestKeyOnlyIndexUnparsableKey: an update that must read a field from a
// stored key that does not parse refuses with a *KeyError naming the
// field, and writes nothing (no index key removed).
func TestKeyOnlyIndexUnparsableKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, c, items := shopTable(t)
	odd := shopOrderItem("12345", "55555", "12345", "2020-06-21T19:40:00", "1", "9")
	odd["GSI2-PK"] = sAV("customer-12345")
	rawPut(t, tbl, odd)
	c.requests.Store(0)

	_, err := items.Update(ShopOrderItem{OrderID: "12345", ProductID: "55555"}).Set("Date", shopTime(t, "2020-06-22T00:00:00")).Run(ctx)
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, []string{"CustomerID"}, ke.Missing)
	assert.Equal(t, "GSI2", ke.Index)
	assert.Equal(t, "GSI2-PK", ke.Key)
	assert.Equal(t, int64(1), c.requests.Load(), "the read only")
	assert.Equal(t, odd, rawGet(t, tbl, "o#12345", "p#55555"), "nothing written")
	// An update that needs no such key goes on.
	_, err = items.Update(ShopOrderItem{OrderID: "12345", ProductID: "55555"}).Set("Price", "10").Run(ctx)
	var de *singletable.KeyError
	require.ErrorAs(t, err, &de, "applied, but the item read back does not decode")
	assert.Equal(t, sAV("10"), rawGet(t, tbl, "o#12345", "p#55555")["Price"])
}

// ShopOrderItemStored declares the customer and time as stored fields:
// the other service's items have no attribute for them all the same.
type ShopOrderItemStored struct {
	OrderID    string    `dynamodbav:"-"`
	ProductID  string    `dynamodbav:"-"`
	CustomerID string    `dynamodbav:"customer"`
	Date       time.Time `dynamodbav:"date,layout=2006-01-02T15:04:05"`
	Quantity   string
	Price      string
}

// TestIndexKeyFieldAbsentNotKeyOnly: without KeyOnly, an update of an item
// with no attribute for an index key's field reads it from the stored key
// and keeps the key (it used to send REMOVE GSI2-PK, GSI2-SK); a field the
// update clears removes the key.
func TestIndexKeyFieldAbsentNotKeyOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var items *singletable.Repo[ShopOrderItemStored]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		items = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[ShopOrderItemStored]{
			Type: "orderItem", PK: "o#{OrderID:raw}", SK: "p#{ProductID:raw}", KeyOnly: []string{"OrderID", "ProductID"},
			Indexes: []singletable.IndexSchema[ShopOrderItemStored]{
				{Name: "GSI1", PK: "p#{ProductID:raw}", PKAttr: "GSI1-PK", SK: "{Date:" + shopLayout + "}", SKAttr: "GSI1-SK"},
				{Name: "GSI2", PK: "c#{CustomerID:raw}", PKAttr: "GSI2-PK", SK: "p#{Date:" + shopLayout + "}", SKAttr: "GSI2-SK"},
			},
		}))
	})
	rawPut(t, tbl, shopOrderItem("12345", "12345", "12345", "2020-06-21T19:18:00", "2", "100"))
	key := ShopOrderItemStored{OrderID: "12345", ProductID: "12345"}

	got, err := items.Update(key).Set("Quantity", "3").Set("Date", shopTime(t, "2020-06-22T08:00:00")).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "12345", got.CustomerID)
	want := shopOrderItem("12345", "12345", "12345", "2020-06-22T08:00:00", "3", "100")
	want["date"] = sAV("2020-06-22T08:00:00")
	assert.Equal(t, want, rawGet(t, tbl, "o#12345", "p#12345"), "GSI2 kept; the field set is stored, the other stays in the key")

	_, err = items.Update(key).Remove("CustomerID").Run(ctx)
	require.NoError(t, err)
	raw := rawGet(t, tbl, "o#12345", "p#12345")
	assert.NotContains(t, raw, "GSI2-PK", "a field the update clears takes the item out of the index")
	assert.NotContains(t, raw, "GSI2-SK")
}

// TestKeyOnlyIndexStoredNowhere: a KeyOnly field held only in an index's
// keys must be in them whenever it has a value; a write that would store
// it nowhere is a *KeyError before the network.
func TestKeyOnlyIndexStoredNowhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Ticket struct {
		ID       string
		Assignee string `dynamodbav:"-"`
		Open     bool
	}
	var tickets *singletable.Repo[Ticket]
	tbl, c := newTable(t, func(tbl *singletable.Table) {
		tickets = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Ticket]{
			Type: "Ticket", PK: "T#{ID}", SK: "T", KeyOnly: []string{"Assignee"},
			Indexes: []singletable.IndexSchema[Ticket]{{Name: "GSI1", PK: "A#{Assignee}", SK: "T#{ID}",
				When: func(t Ticket) bool { return t.Open }, WhenFields: []string{"Open"}}},
		}))
	})
	_, err := tickets.Create(ctx, Ticket{ID: "1", Assignee: "ann"})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "GSI1", ke.Index)
	assert.Contains(t, err.Error(), "stored nowhere")
	assert.Zero(t, c.requests.Load())

	_, err = tickets.Create(ctx, Ticket{ID: "1", Assignee: "ann", Open: true})
	require.NoError(t, err)
	got, err := tickets.Get(ctx, Ticket{ID: "1"})
	require.NoError(t, err)
	assert.Equal(t, Ticket{ID: "1", Assignee: "ann", Open: true}, got)
	_, err = tickets.Update(Ticket{ID: "1"}).Set("Assignee", "bob").Set("Open", false).Run(ctx)
	require.ErrorAs(t, err, &ke)
	_, err = tickets.Update(Ticket{ID: "1"}).Set("Assignee", "bob").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, sAV("A#bob"), rawGet(t, tbl, "T#1", "T")["GSI1PK"])
}

// TestKeyOnlyCarriesKeyAttrName: a KeyOnly field may carry the name of a
// key attribute (the table's partition key, an index key), although it is
// never stored under it.
func TestKeyOnlyCarriesKeyAttrName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Reading struct {
		DeviceID string
		Owner    string `dynamodbav:"GSI1PK"`
		At       string `dynamodbav:"at"`
		Value    int    `dynamodbav:"value"`
	}
	var readings *singletable.Repo[Reading]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		readings = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Reading]{
			Type: "Reading", PK: "DEVICE#{DeviceID}", SK: "AT#{At}", KeyOnly: []string{"DeviceID", "Owner"},
			Indexes: []singletable.IndexSchema[Reading]{{Name: "GSI1", PK: "OWNER#{Owner}", SK: "AT#{At}"}},
		}))
	}, func(o *singletable.TableOptions) { o.PartitionKey = "DeviceID" })
	r := Reading{DeviceID: "d1", Owner: "ann", At: "2024-01-02", Value: 7}
	_, err := readings.Create(ctx, r)
	require.NoError(t, err)
	got, err := readings.Get(ctx, Reading{DeviceID: "d1", At: "2024-01-02"})
	require.NoError(t, err)
	assert.Equal(t, r, got)
	owned, err := readings.QueryIndex("GSI1", Reading{Owner: "ann"}).Collect(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Reading{r}, owned)
	d := tbl.Describe()
	assert.Equal(t, []string{"DeviceID", "Owner"}, d.Entities[0].KeyOnly)
	assert.Contains(t, d.Entities[0].Fields, describe.Field{Name: "Owner", Attr: "-"})
	assert.Equal(t, "DEVICE#d1", attrS(scanRaw(t, tbl.Client(), tbl.Name())[0], "DeviceID"))
}

// TestKeyOnlyIndexDescribe: Describe lists every key-only field, and shows
// "-" for the attribute none of them has.
func TestKeyOnlyIndexDescribe(t *testing.T) {
	tbl := singletable.NewTable(nil, "shop")
	items := singletable.MustBind(tbl, ShopOrderItems)
	d := items.Describe()
	assert.Equal(t, []string{"OrderID", "ProductID", "CustomerID", "Date"}, d.KeyOnly)
	attrs := map[string]string{}
	for _, f := range d.Fields {
		attrs[f.Name] = f.Attr
	}
	assert.Equal(t, map[string]string{"OrderID": "-", "ProductID": "-", "CustomerID": "-", "Date": "-", "Quantity": "Quantity", "Price": "Price"}, attrs)
	assert.True(t, slices.ContainsFunc(d.Indexes, func(ix describe.EntityIndex) bool {
		return ix.PK.Attr == "GSI2-PK" && strings.Contains(ix.PK.Template, "{CustomerID:raw}")
	}))
}

// TestKeyOnlyIndexRefused: what KeyOnly refuses, each a *ValidationError.
func TestKeyOnlyIndexRefused(t *testing.T) {
	type L struct {
		User, Day, Tag string
		N              int
	}
	for name, s := range map[string]singletable.Schema[L]{
		"a multi-attribute key's": {Type: "L", PK: "U#{User}", SK: "D#{Day}", KeyOnly: []string{"N"},
			Indexes: []singletable.IndexSchema[L]{{Name: "GSI1", PartitionAttrs: []string{"N"}}}},
		"only read by When": {Type: "L", PK: "U#{User}", SK: "D#{Day}", KeyOnly: []string{"Tag"},
			Indexes: []singletable.IndexSchema[L]{{Name: "GSI1", PK: "D#{Day}", When: func(L) bool { return true }, WhenFields: []string{"Tag"}}}},
	} {
		_, err := singletable.Define(s)
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want a *ValidationError", name, err)
		}
	}
}
