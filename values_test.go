package singletable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/codec"
)

// everyRequest counts every data-plane request that reaches DynamoDB
// Local, batches and transactions included (countingClient counts the
// single-item ones and Query).
type everyRequest struct {
	*dynamodb.Client
	n atomic.Int64
}

func (c *everyRequest) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n.Add(1)
	return c.Client.GetItem(ctx, in, o...)
}
func (c *everyRequest) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n.Add(1)
	return c.Client.PutItem(ctx, in, o...)
}
func (c *everyRequest) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n.Add(1)
	return c.Client.UpdateItem(ctx, in, o...)
}
func (c *everyRequest) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.n.Add(1)
	return c.Client.DeleteItem(ctx, in, o...)
}
func (c *everyRequest) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.n.Add(1)
	return c.Client.Query(ctx, in, o...)
}
func (c *everyRequest) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.n.Add(1)
	return c.Client.BatchWriteItem(ctx, in, o...)
}
func (c *everyRequest) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.n.Add(1)
	return c.Client.BatchGetItem(ctx, in, o...)
}
func (c *everyRequest) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.n.Add(1)
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// newEveryRequestTable is newTable with a client that counts every
// request (from 0 once the table exists).
func newEveryRequestTable(t *testing.T, bind func(*singletable.Table)) (*singletable.Table, *everyRequest) {
	t.Helper()
	c := &everyRequest{Client: ddblocal.Shared(t).Client()}
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(c, name)
	bind(tbl)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, c.Client, name)
	c.n.Store(0)
	return tbl, c
}

// Reading holds every kind of value DynamoDB may refuse: floats, sets of
// each kind, free-form maps and strings.
type Reading struct {
	Sensor  string
	At      int
	Value   float64
	Scale   float32
	Tags    []string      `dynamodbav:",stringset,omitempty"`
	Codes   []int         `dynamodbav:",numberset,omitempty"`
	Amounts []json.Number `dynamodbav:",numberset,omitempty"`
	Blobs   [][]byte      `dynamodbav:",omitempty"`
	Extra   map[string]any
	Note    string
}

var Readings = singletable.MustDefine(singletable.Schema[Reading]{Type: "Reading", PK: "SENSOR#{Sensor}", SK: "AT#{At}"})

// ssValue is a condition operand that is a string set.
type ssValue []string

func (s ssValue) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberSS{Value: s}, nil
}

// Values DynamoDB refuses (numbers out of range, NaN and infinities,
// duplicate set members, numerically equal number set members) and
// invalid UTF-8 (which the SDK would silently send as U+FFFD) are a
// *ValidationError on every write path — Put, Create, Update.Set,
// Update.Add, batches, transactions, conditions and filters — and no
// request is sent (issue 12, items 4 and 12).
func TestRefusedValuesBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var readings *singletable.Repo[Reading]
	_, c := newEveryRequestTable(t, func(tbl *singletable.Table) { readings = singletable.MustBind(tbl, Readings) })
	base := Reading{Sensor: "s1", At: 1, Value: 20.5}
	_, err := readings.Put(ctx, base)
	require.NoError(t, err)
	c.n.Store(0)

	bad := map[string]func(r *Reading){
		"+Inf":                      func(r *Reading) { r.Value = math.Inf(1) },
		"-Inf":                      func(r *Reading) { r.Value = math.Inf(-1) },
		"NaN":                       func(r *Reading) { r.Value = math.NaN() },
		"float32 NaN":               func(r *Reading) { r.Scale = float32(math.NaN()) },
		"1e126":                     func(r *Reading) { r.Value = 1e126 },
		"1e-200":                    func(r *Reading) { r.Value = 1e-200 },
		"1e300 in a map":            func(r *Reading) { r.Extra = map[string]any{"x": []any{1e300}} },
		"duplicate strings":         func(r *Reading) { r.Tags = []string{"a", "b", "a"} },
		"duplicate numbers":         func(r *Reading) { r.Codes = []int{7, 7} },
		"numbers 1 and 1.0":         func(r *Reading) { r.Amounts = []json.Number{"1", "1.0"} },
		"numbers 10 and 1e1":        func(r *Reading) { r.Amounts = []json.Number{"10", "1e1"} },
		"39 significant digits":     func(r *Reading) { r.Amounts = []json.Number{json.Number(strings.Repeat("1", 39))} },
		"not a number":              func(r *Reading) { r.Amounts = []json.Number{"12abc"} },
		"duplicate binaries":        func(r *Reading) { r.Blobs = [][]byte{{1, 2}, {1, 2}} },
		"invalid UTF-8":             func(r *Reading) { r.Note = "caf\xe9" },
		"invalid UTF-8 in a map":    func(r *Reading) { r.Extra = map[string]any{"k": "\xff"} },
		"invalid UTF-8 in a set":    func(r *Reading) { r.Tags = []string{"ok", "\xc3("} },
		"invalid UTF-8 map key":     func(r *Reading) { r.Extra = map[string]any{"\xfe": 1} },
		"float set 0.5 and 0.50000": func(r *Reading) { r.Amounts = []json.Number{"0.5", "0.50000"} },
	}
	sets := map[string]func(u *singletable.Update[Reading]) *singletable.Update[Reading]{
		"Set +Inf":   func(u *singletable.Update[Reading]) *singletable.Update[Reading] { return u.Set("Value", math.Inf(1)) },
		"Set 1e-131": func(u *singletable.Update[Reading]) *singletable.Update[Reading] { return u.Set("Value", 1e-131) },
		"Set duplicate strings": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Tags", []string{"x", "x"})
		},
		"Set 1 and 1.0": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Amounts", []json.Number{"1", "1.0"})
		},
		"Set duplicate binaries": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Blobs", [][]byte{{9}, {9}})
		},
		"Set invalid UTF-8": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Note", "bad\xffbytes")
		},
		"Set NaN in a map": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Extra", map[string]any{"n": math.NaN()})
		},
		"Add NaN": func(u *singletable.Update[Reading]) *singletable.Update[Reading] { return u.Add("Value", math.NaN()) },
		"condition with +Inf": func(u *singletable.Update[Reading]) *singletable.Update[Reading] {
			return u.Set("Note", "n").If(expression.Name("Value").LessThan(expression.Value(math.Inf(1))))
		},
	}
	tried := 0
	check := func(what string, err error) {
		t.Helper()
		tried++
		var ve *singletable.ValidationError
		if assert.True(t, errors.As(err, &ve), "%s: got %T %v", what, err, err) {
			assert.True(t, strings.HasPrefix(err.Error(), "singletable:"), "%s: %v", what, err)
		}
	}
	for name, mutate := range bad {
		r := base
		r.At = 2
		mutate(&r)
		_, err := readings.Put(ctx, r)
		check("Put "+name, err)
		_, err = readings.Create(ctx, r)
		check("Create "+name, err)
		check("PutOp "+name, singletable.BatchWrite(ctx, []singletable.WriteOp{readings.PutOp(base), readings.PutOp(r)}))
		check("PutOp in a Tx "+name, singletable.Tx(ctx, []singletable.WriteOp{readings.PutOp(r)}))
	}
	for name, set := range sets {
		_, err := set(readings.Update(base)).Run(ctx)
		check("Update "+name, err)
		check("Update.Op "+name, singletable.Tx(ctx, []singletable.WriteOp{set(readings.Update(base)).Op()}))
	}
	_, err = readings.Put(ctx, base,
		func(o *singletable.WriteOptions) {
			o.If = expression.Name("Tags").Equal(expression.Value(ssValue{"a", "a"}))
		})
	check("Put with a condition on a duplicate set", err)
	_, err = readings.Delete(ctx, base, func(o *singletable.WriteOptions) { o.If = expression.Name("Value").Equal(expression.Value(math.NaN())) })
	check("Delete with a NaN condition", err)
	_, err = readings.Query(Reading{Sensor: "s1"}).Filter(expression.Name("Value").GreaterThan(expression.Value(1e200))).Collect(ctx)
	check("Query filtering on 1e200", err)
	check("CheckOp on -Inf", singletable.Tx(ctx, []singletable.WriteOp{readings.CheckOp(base, expression.Name("Value").Equal(expression.Value(math.Inf(-1))))}))
	assert.Zero(t, c.n.Load(), "requests sent for values DynamoDB refuses")

	// The edges of what DynamoDB accepts are stored and read back.
	edge := Reading{Sensor: "s1", At: 3, Value: 1e-130, Scale: 1.5e38, Tags: []string{"a", "A", "a "},
		Codes: []int{1, 10, -1}, Amounts: []json.Number{"1", "1.5", "9.9999999999999999999999999999999999999e+125", "-1e-130"},
		Blobs: [][]byte{{1}, {1, 0}}, Extra: map[string]any{"max": 9.999999999999998e125}, Note: "café"}
	_, err = readings.Put(ctx, edge)
	require.NoError(t, err)
	got, err := readings.Get(ctx, edge)
	require.NoError(t, err)
	assert.Equal(t, edge.Value, got.Value)
	assert.Equal(t, edge.Extra, got.Extra)
	assert.ElementsMatch(t, edge.Tags, got.Tags)
	assert.Len(t, got.Amounts, 4)
	_, err = readings.Update(edge).Set("Value", -9.999999999999998e125).Set("Note", "naïve").Run(ctx)
	require.NoError(t, err)
	reportInputs(inputRow{Suite: "values DynamoDB refuses or alters (NaN/Inf, out-of-range numbers, duplicate set members, invalid UTF-8) on Put, Create, batch, transaction, Update.Set/Add, conditions, filters",
		Tried: tried, Outcomes: fmt.Sprintf("%d *ValidationError; 0 requests sent", tried)})
}

// The library's number and set checks (codec.Check) agree with DynamoDB
// Local on texts at and around every limit: each is sent raw, bypassing
// the library, and DynamoDB's verdict is compared with the check's.
func TestNumberCheckMatchesDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, client, name)

	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	values := []types.AttributeValue{}
	for _, s := range []string{"0", "-0", "+5", "5.", ".5", "-.5", "1E5", "1e+5", "0e500", "00.00", "0000001",
		"1e-130", "1e-131", "-1e-130", "0.1e-129", "0.1e-130", "1e-200",
		"9.9999999999999999999999999999999999999e+125", "1e126", "-1e126", "10e125", "99e124",
		"12345678901234567890123456789012345678", "123456789012345678901234567890123456789",
		"1234567890123456789012345678901234567800000", "1.000000000000000000000000000000000000001",
		"0.00000000000000000000000000000000000000000001",
		"NaN", "+Inf", "-Inf", "Infinity", "", " 5", "5 ", "1e", "e5", ".", "+", "1.2.3", "0x10", "--1", "1e99999999999"} {
		values = append(values, n(s))
	}
	ns := func(s ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: s} }
	ss := func(s ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: s} }
	bs := func(b ...[]byte) types.AttributeValue { return &types.AttributeValueMemberBS{Value: b} }
	values = append(values,
		ns("1", "1.0"), ns("1", "1e0"), ns("0", "-0"), ns("10", "1e1"), ns("0.5", "5e-1"), ns("1", "2"), ns("1", "-1"),
		ns("1", "1e200"), ns("1", "1.00000000000000000000000000000000000000001"), ns(),
		ss("a", "a"), ss("a", "A"), ss("", "x"), ss("a", "a "), ss(),
		bs([]byte("a"), []byte("a")), bs([]byte("a"), []byte("a\x00")), bs([]byte{}, []byte("x")),
		&types.AttributeValueMemberL{Value: []types.AttributeValue{n("1e126")}},
		&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": ss("q", "q")}},
	)
	disagree := 0
	for i, av := range values {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}, "A": av}})
		dynamo := err == nil
		ours := codec.Check(av) == nil
		if !assert.Equal(t, dynamo, ours, "%#v: DynamoDB Local accepts: %v (%v); codec.Check accepts: %v", av, dynamo, err, ours) {
			disagree++
		}
	}
	reportInputs(inputRow{Suite: "number and set texts at DynamoDB's limits, sent raw: codec.Check against DynamoDB Local's verdict",
		Tried: len(values), Outcomes: fmt.Sprintf("%d agree, %d disagree", len(values)-disagree, disagree)})
}
