package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// The recurring payments design (AWS's "Recurring payments schema design
// in DynamoDB", its RecurringPaymentsSchema.json): subscriptions and
// receipts under ACC#<AccountId>, untyped, and two sparse indexes with
// INCLUDE projections, GSI-1 (NextReminderDate | LastReminderDate) for the
// reminders due on a date and GSI-2 (NextPaymentDate | LastPaymentDate)
// for the payments due on a date. Their NonKeyAttributes list PK and SK
// too, as the design does. GSI-3 (SKU | Email, KEYS_ONLY) is ours: the
// customers of a product, which receipts are in too.

type Subscription struct {
	AccountID        string            `dynamodbav:"-"`
	SubID            string            `dynamodbav:"-"`
	SKU              string            `dynamodbav:"SKU"`
	Email            string            `dynamodbav:"Email"`
	PaymentDay       string            `dynamodbav:"PaymentDay"`
	PaymentAmount    string            `dynamodbav:"PaymentAmount"`
	LastPaymentDate  time.Time         `dynamodbav:"LastPaymentDate,rfc3339milli"`
	NextPaymentDate  time.Time         `dynamodbav:"NextPaymentDate,date"`
	LastReminderDate time.Time         `dynamodbav:"LastReminderDate,rfc3339milli"`
	NextReminderDate time.Time         `dynamodbav:"NextReminderDate,date"`
	PaymentDetails   map[string]string `dynamodbav:"PaymentDetails"`
	CreatedDate      time.Time         `dynamodbav:"CreatedDate,rfc3339milli"`
}

type PaymentReceipt struct {
	AccountID       string `dynamodbav:"-"`
	Processed       string `dynamodbav:"-"` // the key's own form
	SKU             string `dynamodbav:"SKU"`
	Email           string `dynamodbav:"Email"`
	ProcessedAmount string `dynamodbav:"ProcessedAmount"`
}

var (
	gsi1Include = []string{"SK", "PK", "SKU", "Email", "NextPaymentDate"}
	gsi2Include = []string{"PK", "SK", "Email", "PaymentDay", "PaymentAmount", "SKU", "PaymentDetails"}
)

func subscriptionSchema() singletable.Schema[Subscription] {
	return singletable.Schema[Subscription]{
		Type: "Subscription", PK: "ACC#{AccountID}", SK: "SUB#{SubID}#SKU#{SKU}",
		MatchKeys: true, KeyOnly: []string{"AccountID", "SubID"},
		Indexes: []singletable.IndexSchema[Subscription]{
			{Name: "GSI-1", MultiAttribute: true, PartitionAttrs: []string{"NextReminderDate"}, SortAttrs: []string{"LastReminderDate"},
				Projection: types.ProjectionTypeInclude, Include: gsi1Include},
			{Name: "GSI-2", MultiAttribute: true, PartitionAttrs: []string{"NextPaymentDate"}, SortAttrs: []string{"LastPaymentDate"},
				Projection: types.ProjectionTypeInclude, Include: gsi2Include},
			{Name: "GSI-3", MultiAttribute: true, PartitionAttrs: []string{"SKU"}, SortAttrs: []string{"Email"}, Projection: types.ProjectionTypeKeysOnly},
		},
	}
}

var (
	subscriptionEntity   = singletable.MustDefine(subscriptionSchema())
	paymentReceiptEntity = singletable.MustDefine(singletable.Schema[PaymentReceipt]{
		Type: "Receipt", PK: "ACC#{AccountID}", SK: "REC#{Processed:raw}#SKU#{SKU}",
		MatchKeys: true, KeyOnly: []string{"AccountID", "Processed"},
	})
)

type paymentsTable struct {
	tbl       *singletable.Table
	c         *countingClient
	subs      *singletable.Repo[Subscription]
	receipts  *singletable.Repo[PaymentReceipt]
	batchGets func() int
}

const (
	dueDay    = "2023-06-28"
	nDue      = 23 // subscriptions due on dueDay
	nReceipts = 4
)

// subscriptionItem is subscription i as the payment service writes it.
func subscriptionItem(i int, due string) map[string]types.AttributeValue {
	last := time.Date(2023, 5, 18, 14, 15, 39, 247e6, time.UTC).Add(time.Duration(i) * time.Minute)
	return map[string]types.AttributeValue{
		"PK": sAV(fmt.Sprintf("ACC#%d", 100+i)), "SK": sAV(fmt.Sprintf("SUB#%d#SKU#999", 200+i)),
		"Email": sAV(fmt.Sprintf("s%02d@s.com", i)), "PaymentDay": sAV("28"), "PaymentAmount": sAV("12.99"),
		"LastPaymentDate":  sAV(last.Format("2006-01-02T15:04:05.000Z")),
		"NextPaymentDate":  sAV(due),
		"LastReminderDate": sAV("2023-05-21T14:15:39.247Z"),
		"NextReminderDate": sAV("2023-06-21"),
		"SKU":              sAV("999"),
		"PaymentDetails": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"default-card": sAV("1234123412341234"), "default-address": sAV("12 Bridge Street, Birmingham, B12 7ST")}},
		"CreatedDate": sAV("2023-05-18T09:41:25.856Z"),
	}
}

// paymentsFixture creates the table through the library and writes the
// items with the SDK alone: nDue subscriptions due on dueDay, 3 due the
// day after, and receipts (in GSI-3 too: they hold SKU and Email).
func paymentsFixture(t *testing.T) *paymentsTable {
	var batchGets atomic.Int64
	p := &paymentsTable{batchGets: func() int { return int(batchGets.Load()) }}
	p.tbl, p.c = newTable(t, func(tbl *singletable.Table) {
		p.subs = singletable.MustBind(tbl, subscriptionEntity)
		p.receipts = singletable.MustBind(tbl, paymentReceiptEntity)
	}, func(o *singletable.TableOptions) {
		o.Observe = func(_ context.Context, ob *singletable.Observation) {
			if ob.Op == "BatchGetItem" {
				batchGets.Add(1)
			}
		}
	})
	for i := range nDue + 3 {
		due := dueDay
		if i >= nDue {
			due = "2023-06-29"
		}
		rawPut(t, p.tbl, subscriptionItem(i, due))
	}
	for i := range nReceipts {
		rawPut(t, p.tbl, map[string]types.AttributeValue{
			"PK": sAV(fmt.Sprintf("ACC#%d", 100+i)), "SK": sAV("REC#2023-05-28T14:15:39.247Z#SKU#999"),
			"Email": sAV(fmt.Sprintf("s%02d@s.com", i)), "SKU": sAV("999"),
			"ProcessedDate": sAV("2023-05-28T14:15:39.247Z"), "ProcessedAmount": sAV("12.99"), "TTL": nAV("1700318200"),
		})
	}
	p.c.requests.Store(0)
	return p
}

func dueOn(day string) Subscription {
	d, _ := time.Parse(time.DateOnly, day)
	return Subscription{NextPaymentDate: d}
}

// TestProjectionCreateTable: CreateTable declares each index's projection,
// INCLUDE's attributes without the keys DynamoDB projects anyway.
func TestProjectionCreateTable(t *testing.T) {
	t.Parallel()
	p := paymentsFixture(t)
	out, err := p.tbl.Client().DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(p.tbl.Name())})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		attrs := slices.Clone(g.Projection.NonKeyAttributes)
		slices.Sort(attrs)
		got[aws.ToString(g.IndexName)] = fmt.Sprintf("%s %v", g.Projection.ProjectionType, attrs)
	}
	want := map[string]string{
		"GSI-1": "INCLUDE [Email NextPaymentDate SKU]",
		"GSI-2": "INCLUDE [Email PaymentAmount PaymentDay PaymentDetails SKU]",
		"GSI-3": "KEYS_ONLY []",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("projections %v, want %v", got, want)
	}
	if err := p.tbl.Check(context.Background()); err != nil {
		t.Errorf("Check of the table CreateTable made: %v", err)
	}
	d := p.tbl.Describe()
	for _, ix := range d.Indexes {
		if s := fmt.Sprintf("%s %v", ix.Projection, ix.Include); s != want[ix.Name] {
			t.Errorf("Describe: index %s projection %s, want %s", ix.Name, s, want[ix.Name])
		}
	}
}

// TestProjectionIncludeQueryPages: getDuePaymentsByDate on GSI-2, paged
// with cursors: no filter on the entity type (DynamoDB would refuse it),
// items told by their key shape, decoded with what GSI-2 holds and the
// keys, the rest listed in Page.Unprojected.
func TestProjectionIncludeQueryPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := paymentsFixture(t)
	q := p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Limit(5)
	in, err := q.Request()
	if err != nil {
		t.Fatal(err)
	}
	if in.FilterExpression != nil {
		t.Errorf("query of GSI-2 filters on %q: GSI-2 does not hold the entity type", *in.FilterExpression)
	}
	var pages int
	var unprojected []string
	got, skipped := pageAll(t, func(after string) (singletable.Page[Subscription], error) {
		pages++
		page, err := q.After(after).Page(ctx)
		unprojected = page.Unprojected
		return page, err
	})
	if len(skipped) > 0 {
		t.Errorf("skipped %v", skipped)
	}
	if pages != 5 || len(got) != nDue {
		t.Fatalf("%d items in %d pages, want %d in 5", len(got), pages, nDue)
	}
	if want := []string{"LastReminderDate", "NextReminderDate", "CreatedDate"}; !slices.Equal(unprojected, want) {
		t.Errorf("Unprojected %v, want %v", unprojected, want)
	}
	for i, s := range got {
		last := time.Date(2023, 5, 18, 14, 15, 39, 247e6, time.UTC).Add(time.Duration(i) * time.Minute)
		want := Subscription{AccountID: fmt.Sprint(100 + i), SubID: fmt.Sprint(200 + i), SKU: "999",
			Email: fmt.Sprintf("s%02d@s.com", i), PaymentDay: "28", PaymentAmount: "12.99",
			LastPaymentDate: last, NextPaymentDate: dueOn(dueDay).NextPaymentDate,
			PaymentDetails: map[string]string{"default-card": "1234123412341234", "default-address": "12 Bridge Street, Birmingham, B12 7ST"}}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("item %d\n got %+v\nwant %+v", i, s, want)
		}
	}
	n, err := p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Count(ctx)
	if err != nil || n != nDue {
		t.Errorf("Count = %d, %v; want %d", n, err, nDue)
	}
	all, err := p.subs.QueryIndex("GSI-1", Subscription{NextReminderDate: dueOn("2023-06-21").NextPaymentDate}).Desc().Collect(ctx)
	if err != nil || len(all) != nDue+3 || all[0].Email == "" || all[0].NextPaymentDate.IsZero() || !all[0].CreatedDate.IsZero() {
		t.Errorf("getDueRemindersByDate on GSI-1: %d items, first %+v, %v", len(all), all, err)
	}
}

// TestProjectionKeysOnlyQueryPages: GSI-3 holds the keys alone, receipts'
// among them: subscriptions are told by their key shape, receipts left
// out without a report, each item decoded from its keys.
func TestProjectionKeysOnlyQueryPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := paymentsFixture(t)
	q := p.subs.QueryIndex("GSI-3", Subscription{SKU: "999"}).Limit(4)
	var unprojected []string
	got, skipped := pageAll(t, func(after string) (singletable.Page[Subscription], error) {
		page, err := q.After(after).Page(ctx)
		unprojected = page.Unprojected
		return page, err
	})
	if len(skipped) > 0 {
		t.Errorf("skipped %v", skipped)
	}
	if len(got) != nDue+3 {
		t.Fatalf("%d subscriptions, want %d", len(got), nDue+3)
	}
	for i, s := range got {
		want := Subscription{AccountID: fmt.Sprint(100 + i), SubID: fmt.Sprint(200 + i), SKU: "999", Email: fmt.Sprintf("s%02d@s.com", i)}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("item %d\n got %+v\nwant %+v", i, s, want)
		}
	}
	want := []string{"PaymentDay", "PaymentAmount", "LastPaymentDate", "NextPaymentDate", "LastReminderDate", "NextReminderDate", "PaymentDetails", "CreatedDate"}
	if !slices.Equal(unprojected, want) {
		t.Errorf("Unprojected %v, want %v", unprojected, want)
	}
	n, err := p.subs.QueryIndex("GSI-3", Subscription{SKU: "999"}).Count(ctx)
	if err != nil || n != nDue+3 {
		t.Errorf("Count = %d, %v; want %d (the receipts are not subscriptions)", n, err, nDue+3)
	}
	// Each page's query asks for the items still wanted plus one.
	n = 0
	for s, err := range p.subs.QueryIndex("GSI-3", Subscription{SKU: "999"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Email"} }).PageSize(7).All(ctx) {
		if err != nil || s.Email == "" || s.SubID == "" {
			t.Fatalf("All with Fields: %+v, %v", s, err)
		}
		n++
	}
	if n != nDue+3 {
		t.Errorf("All read %d, want %d", n, nDue+3)
	}
}

// TestProjectionComplete: Complete reads each page's items whole from the
// table, one BatchGetItem per response, in the index's order; cursors
// resume where the index query stands.
func TestProjectionComplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := paymentsFixture(t)
	q := p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Limit(10).Complete()
	var pages int
	got, skipped := pageAll(t, func(after string) (singletable.Page[Subscription], error) {
		pages++
		page, err := q.After(after).Page(ctx)
		if err == nil && page.Unprojected != nil {
			t.Errorf("Unprojected %v with Complete", page.Unprojected)
		}
		return page, err
	})
	if len(skipped) > 0 || len(got) != nDue || pages != 3 {
		t.Fatalf("%d items in %d pages, skipped %v; want %d in 3", len(got), pages, skipped, nDue)
	}
	if n := p.batchGets(); n != 3 {
		t.Errorf("%d BatchGetItem requests for 3 pages", n)
	}
	for i, s := range got {
		if s.AccountID != fmt.Sprint(100+i) || s.CreatedDate.IsZero() || s.NextReminderDate.IsZero() || s.LastReminderDate.IsZero() || s.PaymentDay != "28" {
			t.Errorf("item %d not whole: %+v", i, s)
		}
	}
	// Fields are read from the table, held by the index or not; the
	// index's keys (here Email) come with them.
	fields := func(o *singletable.ReadOptions) { o.Fields = []string{"CreatedDate"} }
	all, err := p.subs.QueryIndex("GSI-3", Subscription{SKU: "999"}, fields).Complete().Collect(ctx)
	if err != nil || len(all) != nDue+3 {
		t.Fatalf("Collect with Complete and Fields: %d items, %v", len(all), err)
	}
	for _, s := range all {
		if s.CreatedDate.IsZero() || s.SubID == "" || s.Email == "" || s.PaymentAmount != "" {
			t.Errorf("Fields CreatedDate read whole: %+v", s)
		}
	}
}

// TestProjectionRefusedBeforeNetwork: a filter or Fields naming an
// attribute the index does not hold is a *ValidationError, and nothing
// is sent; one it holds is sent and filters.
func TestProjectionRefusedBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := paymentsFixture(t)
	created := expression.Name("CreatedDate").AttributeExists()
	for name, q := range map[string]*singletable.Query[Subscription]{
		"filter":               p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Filter(created),
		"filter with Complete": p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Filter(created).Complete(),
		"Fields":               p.subs.QueryIndex("GSI-2", dueOn(dueDay), func(o *singletable.ReadOptions) { o.Fields = []string{"NextReminderDate"} }),
	} {
		_, err := q.Page(ctx)
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "GSI-2 does not hold") {
			t.Errorf("%s: %v, want a *ValidationError naming what GSI-2 does not hold", name, err)
		}
	}
	if n := p.c.requests.Load(); n != 0 {
		t.Errorf("%d requests sent for refused queries", n)
	}
	got, err := p.subs.QueryIndex("GSI-2", dueOn(dueDay)).Filter(expression.Name("Email").Equal(expression.Value("s03@s.com"))).Collect(ctx)
	if err != nil || len(got) != 1 || got[0].SubID != "203" {
		t.Errorf("filter on Email, which GSI-2 holds: %+v, %v", got, err)
	}
	// SubID, held only in the table's SK, which every index holds.
	got, err = p.subs.QueryIndex("GSI-3", Subscription{SKU: "999"}).Filter(expression.Name("SubID").Equal(expression.Value("205"))).Collect(ctx)
	if err != nil || len(got) != 1 || got[0].AccountID != "105" {
		t.Errorf("filter on SubID, in the table's SK: %+v, %v", got, err)
	}
}

// TestProjectionCheck: Check takes the design's own table (its INCLUDE
// lists PK and SK too) and reports a live index that holds less than
// declared or another projection.
func TestProjectionCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	gsi := func(name, pk, sk string, proj types.Projection) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{IndexName: aws.String(name), Projection: &proj, KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(sk), KeyType: types.KeyTypeRange}}}
	}
	include := func(attrs ...string) types.Projection {
		return types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: attrs}
	}
	cases := []struct {
		name       string
		gsi2, gsi3 types.Projection
		want       []string // in the error; none: Check passes
	}{
		{"as designed", include(gsi2Include...), types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, nil},
		{"GSI-2 without PaymentDetails", include("PK", "SK", "Email", "PaymentDay", "PaymentAmount", "SKU"), types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
			[]string{"index GSI-2 does not project PaymentDetails, declared INCLUDE (Email, PaymentAmount, PaymentDay, PaymentDetails, SKU)"}},
		{"GSI-2 keys only, GSI-3 all", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, types.Projection{ProjectionType: types.ProjectionTypeAll},
			[]string{"index GSI-2 projects KEYS_ONLY, declared INCLUDE", "index GSI-3 projects ALL, declared KEYS_ONLY"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := ddblocal.TableName(t)
			in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
				KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
				GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
					gsi("GSI-1", "NextReminderDate", "LastReminderDate", include(gsi1Include...)),
					gsi("GSI-2", "NextPaymentDate", "LastPaymentDate", c.gsi2),
					gsi("GSI-3", "SKU", "Email", c.gsi3)}}
			for _, a := range []string{"PK", "SK", "NextReminderDate", "LastReminderDate", "NextPaymentDate", "LastPaymentDate", "SKU", "Email"} {
				in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
			}
			if _, err := client.CreateTable(ctx, in); err != nil {
				t.Fatal(err)
			}
			ddblocal.DeleteTableOnCleanup(t, client, name)
			tbl := singletable.NewTable(client, name)
			singletable.MustBind(tbl, subscriptionEntity)
			err := tbl.Check(ctx)
			var ve *singletable.ValidationError
			switch {
			case c.want == nil && err != nil:
				t.Errorf("Check: %v", err)
			case c.want != nil && !errors.As(err, &ve):
				t.Fatalf("Check = %v, want a *ValidationError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %v, want %q in it", err, w)
				}
			}
		})
	}
}

// TestProjectionBindRefusesTwoProjections: entities declaring one index
// declare one projection; Include's Go names and attribute names agree.
func TestProjectionBindRefusesTwoProjections(t *testing.T) {
	t.Parallel()
	type Alert struct {
		ID    string `dynamodbav:"id"`
		Email string `dynamodbav:"Email"`
		SKU   string `dynamodbav:"SKU"`
	}
	alert := func(proj types.ProjectionType, include ...string) *singletable.Entity[Alert] {
		return singletable.MustDefine(singletable.Schema[Alert]{Type: "Alert", PK: "ALERT#{ID}", SK: "A",
			Indexes: []singletable.IndexSchema[Alert]{{Name: "GSI-3", MultiAttribute: true, PartitionAttrs: []string{"SKU"}, SortAttrs: []string{"Email"}, Projection: proj, Include: include}}})
	}
	cases := []struct {
		name string
		e    *singletable.Entity[Alert]
		ok   bool
	}{
		{"same", alert(types.ProjectionTypeKeysOnly), true},
		{"all", alert(""), false},
		{"include", alert(types.ProjectionTypeInclude, "ID"), false},
		// INCLUDE of keys alone is KEYS_ONLY: SKU and Email are GSI-3's keys.
		{"include of keys", alert(types.ProjectionTypeInclude, "SKU", "PK"), true},
	}
	for _, c := range cases {
		tbl := singletable.NewTable(nil, "payments")
		singletable.MustBind(tbl, subscriptionEntity)
		_, err := singletable.Bind(tbl, c.e)
		var ve *singletable.ValidationError
		if c.ok != (err == nil) || !c.ok && (!errors.As(err, &ve) || !strings.Contains(err.Error(), "an index has one projection")) {
			t.Errorf("%s: Bind = %v", c.name, err)
		}
	}
	for _, bad := range []singletable.IndexSchema[Alert]{
		{Name: "X", PK: "X#{ID}", Projection: "SOME"},
		{Name: "X", PK: "X#{ID}", Projection: types.ProjectionTypeKeysOnly, Include: []string{"Email"}},
		{Name: "X", PK: "X#{ID}", Projection: types.ProjectionTypeInclude},
	} {
		_, err := singletable.Define(singletable.Schema[Alert]{Type: "Alert", PK: "ALERT#{ID}", SK: "A", Indexes: []singletable.IndexSchema[Alert]{bad}})
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(err.Error(), "singletable: Alert: index X Projection: ") {
			t.Errorf("Define with %s %v: %v", bad.Projection, bad.Include, err)
		}
	}
}

// TestProjectionTypedKeyShape: an entity whose items carry the entity
// type attribute (no MatchKeys) is read from a KEYS_ONLY index by key
// shape, another entity's items in the same partition left out.
func TestProjectionTypedKeyShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Ticket struct {
		ID    string `dynamodbav:"id"`
		Queue string `dynamodbav:"queue"`
		Title string `dynamodbav:"title"`
	}
	type Note struct {
		ID    string `dynamodbav:"id"`
		Queue string `dynamodbav:"queue"`
	}
	// One index partition holds both, sorted by ID alone: the index keys
	// cannot tell them apart, the primary keys do.
	tickets := singletable.MustDefine(singletable.Schema[Ticket]{Type: "Ticket", PK: "T#{ID}", SK: "T",
		Indexes: []singletable.IndexSchema[Ticket]{{Name: "ByQueue", PK: "Q#{Queue}", SK: "{ID}", Projection: types.ProjectionTypeKeysOnly}}})
	notes := singletable.MustDefine(singletable.Schema[Note]{Type: "Note", PK: "N#{ID}", SK: "N",
		Indexes: []singletable.IndexSchema[Note]{{Name: "ByQueue", PK: "Q#{Queue}", SK: "{ID}", Projection: types.ProjectionTypeKeysOnly}}})
	var tr *singletable.Repo[Ticket]
	var nr *singletable.Repo[Note]
	newTable(t, func(tbl *singletable.Table) {
		tr, nr = singletable.MustBind(tbl, tickets), singletable.MustBind(tbl, notes)
	})
	for i := range 7 {
		if _, err := tr.Create(ctx, Ticket{ID: fmt.Sprint(i), Queue: "q", Title: "t"}); err != nil {
			t.Fatal(err)
		}
		if _, err := nr.Create(ctx, Note{ID: fmt.Sprint(i), Queue: "q"}); err != nil {
			t.Fatal(err)
		}
	}
	got, skipped := pageAll(t, func(after string) (singletable.Page[Ticket], error) {
		return tr.QueryIndex("ByQueue", Ticket{Queue: "q"}).Limit(3).After(after).Page(ctx)
	})
	if len(got) != 7 || len(skipped) > 0 {
		t.Fatalf("%d tickets, skipped %v", len(got), skipped)
	}
	for i, tk := range got { // the queue comes back from the index key
		if tk != (Ticket{ID: fmt.Sprint(i), Queue: "q"}) {
			t.Errorf("ticket %d: %+v", i, tk)
		}
	}
	whole, err := tr.QueryIndex("ByQueue", Ticket{Queue: "q"}).Complete().Collect(ctx)
	if err != nil || len(whole) != 7 || whole[6] != (Ticket{ID: "6", Queue: "q", Title: "t"}) {
		t.Errorf("Complete: %+v, %v", whole, err)
	}
	if n, err := nr.QueryIndex("ByQueue", Note{Queue: "q"}).Count(ctx); n != 7 || err != nil {
		t.Errorf("notes Count = %d, %v", n, err)
	}
}

// TestProjectionScanIndex: a Scan of an index that does not hold the
// entity type sends no filter on it and tells the items by key shape, as
// a Query of it does: the receipts in GSI-3 are left out, the typed
// tickets are told from the notes, pages resume from cursors, and a
// Filter or Fields naming an attribute the index lacks is refused before
// the network.
func TestProjectionScanIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := paymentsFixture(t)
	var unprojected []string
	got, skipped := pageAll(t, func(after string) (singletable.Page[Subscription], error) {
		page, err := p.subs.ScanIndex("GSI-3").Limit(4).After(after).Page(ctx)
		unprojected = page.Unprojected
		return page, err
	})
	if len(got) != nDue+3 || len(skipped) > 0 {
		t.Fatalf("%d subscriptions, skipped %v; want %d", len(got), skipped, nDue+3)
	}
	for _, s := range got {
		if s.SKU != "999" || s.Email == "" || s.SubID == "" || s.PaymentAmount != "" {
			t.Errorf("scanned %+v", s)
		}
	}
	if !slices.Contains(unprojected, "PaymentAmount") || slices.Contains(unprojected, "Email") {
		t.Errorf("Unprojected %v", unprojected)
	}
	if n, err := p.subs.ScanIndex("GSI-3").Count(ctx); n != nDue+3 || err != nil {
		t.Errorf("Count = %d, %v; want %d (the receipts are not subscriptions)", n, err, nDue+3)
	}
	all, err := p.subs.ScanIndex("GSI-3").Segments(2).Collect(ctx)
	if err != nil || len(all) != nDue+3 {
		t.Errorf("two segments: %d, %v", len(all), err)
	}
	before := p.c.requests.Load()
	created := expression.Name("CreatedDate").Equal(expression.Value("x"))
	if _, err := p.subs.ScanIndex("GSI-3").Filter(created).Collect(ctx); !errors.As(err, new(*singletable.ValidationError)) {
		t.Errorf("Filter on an attribute GSI-3 lacks: %v, want a *ValidationError", err)
	}
	if _, err := p.subs.ScanIndex("GSI-3", func(o *singletable.ReadOptions) { o.Fields = []string{"PaymentAmount"} }).Collect(ctx); !errors.As(err, new(*singletable.ValidationError)) {
		t.Errorf("Fields an attribute GSI-3 lacks: %v, want a *ValidationError", err)
	}
	if n := p.c.requests.Load(); n != before {
		t.Errorf("%d requests sent for refused scans", n-before)
	}
}
