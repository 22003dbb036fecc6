package singletable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/format"
)

// secret is a non-key attribute value no error text may contain.
const secret = "S3CRET-7f1c"

// dupInjector adds a string set repeating the secret to every item it
// forwards, so that DynamoDB Local itself answers with its
// ValidationException, whose message lists the set's members: the
// library's checks never let such a set through, but the wrapping of
// DynamoDB's errors must not rely on that.
type dupInjector struct{ *dynamodb.Client }

func dupSet() types.AttributeValue {
	return &types.AttributeValueMemberSS{Value: []string{secret, secret}}
}

func (c dupInjector) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.Item = maps.Clone(in.Item)
	in.Item["Injected"] = dupSet()
	return c.Client.PutItem(ctx, in, o...)
}

func (c dupInjector) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	for _, reqs := range in.RequestItems {
		for i := range reqs {
			if p := reqs[i].PutRequest; p != nil {
				p.Item = maps.Clone(p.Item)
				p.Item["Injected"] = dupSet()
			}
		}
	}
	return c.Client.BatchWriteItem(ctx, in, o...)
}

func (c dupInjector) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for i := range in.TransactItems {
		if p := in.TransactItems[i].Put; p != nil {
			p.Item = maps.Clone(p.Item)
			p.Item["Injected"] = dupSet()
		}
	}
	return c.Client.TransactWriteItems(ctx, in, o...)
}

// docs/security.md promises that errors never contain non-key attribute
// values. Each kind of error is provoked with a secret value — refused
// values, conditions' and filters' operands, items that cannot be
// decoded, DynamoDB's own ValidationException (whose message for a
// duplicate set quotes the members), a transaction's cancellation
// message — and the secret must not appear in err.Error() (issue 12,
// item 13).
func TestErrorsDoNotQuoteValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var readings *singletable.Repo[Reading]
	tbl, c := newEveryRequestTable(t, func(tbl *singletable.Table) { readings = singletable.MustBind(tbl, Readings) })
	key := Reading{Sensor: "s1", At: 1}
	_, err := readings.Put(ctx, Reading{Sensor: "s1", At: 1, Note: "n"})
	require.NoError(t, err)

	// An item another writer stored, with the secret where a number
	// belongs: decoding it fails.
	raw := readings.PutOp(Reading{Sensor: "s2", At: 1}).Item()
	raw["Value"] = &types.AttributeValueMemberS{Value: secret}
	_, err = c.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: raw})
	require.NoError(t, err)

	injected := singletable.MustBind(singletable.NewTable(dupInjector{c.Client}, tbl.Name()),
		singletable.MustDefine(singletable.Schema[Reading]{Type: "Injected", PK: "I#{Sensor}", SK: "AT#{At}"}))

	cases := map[string]func() error{
		"invalid UTF-8": func() error {
			_, err := readings.Put(ctx, Reading{Sensor: "s1", At: 2, Note: secret + "\xff"})
			return err
		},
		"duplicate set": func() error {
			_, err := readings.Put(ctx, Reading{Sensor: "s1", At: 2, Tags: []string{secret, secret}})
			return err
		},
		"not a number": func() error {
			_, err := readings.Put(ctx, Reading{Sensor: "s1", At: 2, Amounts: []json.Number{secret}})
			return err
		},
		"item over 400 KB": func() error {
			_, err := readings.Put(ctx, Reading{Sensor: "s1", At: 2, Note: strings.Repeat(secret, 50000)})
			return err
		},
		"Update.Set duplicates": func() error {
			_, err := readings.Update(key).Set("Tags", []string{secret, secret}).Run(ctx)
			return err
		},
		"Update.Set bad UTF-8": func() error { _, err := readings.Update(key).Set("Note", "\xfe"+secret).Run(ctx); return err },
		"wrong type in Set":    func() error { _, err := readings.Update(key).Set("Note", []byte(secret)).Run(ctx); return err },
		"condition operand": func() error {
			_, err := readings.Put(ctx, key, func(o *singletable.WriteOptions) {
				o.If = expression.Name("Tags").Equal(expression.Value(ssValue{secret, secret}))
			})
			return err
		},
		"filter operand": func() error {
			_, err := readings.Query(Reading{Sensor: "s1"}).Filter(expression.Name("Value").Equal(expression.Value(json.Number(secret)))).Collect(ctx)
			return err
		},
		"decoding, Get": func() error { _, err := readings.Get(ctx, Reading{Sensor: "s2", At: 1}); return err },
		"decoding, Query": func() error {
			_, err := readings.Query(Reading{Sensor: "s2"}).Collect(ctx)
			return err
		},
		"DynamoDB's ValidationException, Put": func() error { _, err := injected.Put(ctx, Reading{Sensor: "x", At: 1}); return err },
		"DynamoDB's ValidationException, batch": func() error {
			return singletable.BatchWrite(ctx, []singletable.WriteOp{injected.PutOp(Reading{Sensor: "x", At: 2})})
		},
		"DynamoDB's ValidationException, transaction": func() error {
			return singletable.Tx(ctx, []singletable.WriteOp{
				injected.PutOp(Reading{Sensor: "x", At: 3}),
				injected.PutOp(Reading{Sensor: "x", At: 4}),
			})
		},
		"a transaction's cancellation message": func() error {
			return &singletable.TransactionError{Reasons: []singletable.TxReason{{Op: "Put", Entity: "Reading", Code: "ValidationError",
				Message: "One or more parameter values were invalid: Input collection [" + secret + ", " + secret + "] contains duplicates"}}}
		},
	}
	for name, run := range cases {
		err := run()
		require.Error(t, err, name)
		t.Logf("%s: %v", name, err)
		assert.NotContains(t, err.Error(), secret, name)
		assert.NotContains(t, err.Error(), secret[:6], name)
		if strings.HasPrefix(name, "DynamoDB's") {
			var ae smithy.APIError
			if assert.True(t, errors.As(err, &ae), "%s: %v does not reach the SDK's error", name, err) {
				assert.Equal(t, "ValidationException", ae.ErrorCode(), name)
				assert.Contains(t, ae.ErrorMessage(), secret, "%s: the SDK's error keeps DynamoDB's message", name)
			}
			assert.Contains(t, err.Error(), "ValidationException", name)
		}
		if strings.HasPrefix(name, "decoding") {
			assert.Contains(t, err.Error(), "attribute Value (string) into float64", name)
		}
	}
	reportInputs(inputRow{Suite: "error texts provoked with a secret non-key value (refused values, operands, decoding, DynamoDB's ValidationException, cancellation messages)",
		Tried: len(cases), Outcomes: fmt.Sprintf("%d errors, none quotes the value", len(cases))})
}

// Sensitive has one field of each kind a key format writes; each schema of
// TestKeyFormatErrorsDoNotQuoteValues puts one of them in a key.
type Sensitive struct {
	ID       string
	Email    string
	Birthday time.Time
	Count    int64
	Note     string
}

// keyRefusal is a value a key format refuses, set into one field, with
// the rule the error must name and the substrings that would quote it.
type keyRefusal struct {
	name  string
	set   func(*Sensitive)
	rule  string
	leaks []string
	// formatted: refused only by a named format, not by the default.
	formatted bool
}

// keyFormatCase is one format a key placeholder can name (nil: the
// default) and the field of Sensitive of its kind.
type keyFormatCase struct {
	f     *format.Format
	field string
}

func (c keyFormatCase) placeholder() string {
	switch {
	case c.f == nil:
		return "{" + c.field + "}"
	case c.f == format.Padded:
		return "{" + c.field + ":%08d}"
	}
	return "{" + c.field + ":" + c.f.Name + "}"
}

// keyRefusals returns every refusal of a format of kind k: what each
// format of the table can raise for a value.
func keyRefusals(t *testing.T, k format.Kind) []keyRefusal {
	timeLeaks := func(tm time.Time) []string {
		return []string{tm.String(), tm.UTC().Format(time.RFC3339Nano), strconv.FormatInt(tm.Unix(), 10),
			strconv.FormatInt(tm.UnixMilli(), 10), fmt.Sprint(tm.Year())}
	}
	fraction := time.Date(2031, 7, 19, 13, 37, 42, 123456789, time.UTC)
	late := time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC)
	early := time.Date(-4242, 6, 7, 8, 9, 10, 0, time.UTC)
	switch k {
	case format.Text:
		return []keyRefusal{
			{name: "delimiter", set: func(v *Sensitive) { v.Email = "mallory." + secret + "#x@example.com" }, rule: `delimiter '#'`,
				leaks: []string{secret, secret[:6], "mallory", "example.com"}, formatted: true},
			{name: "invalid UTF-8", set: func(v *Sensitive) { v.Email = "mallory." + secret + "\xff" }, rule: "not valid UTF-8",
				leaks: []string{secret, secret[:6], "mallory"}, formatted: true},
			{name: "U+10FFFF", set: func(v *Sensitive) { v.Email = "mallory." + secret + "\U0010FFFF" }, rule: "U+10FFFF",
				leaks: []string{secret, secret[:6], "mallory"}, formatted: true},
			{name: "empty", set: func(v *Sensitive) { v.Email = "" }, rule: "missing Email"},
			{name: "too long", set: func(v *Sensitive) { v.Email = strings.Repeat(secret, 250) }, rule: "over DynamoDB's",
				leaks: []string{secret, secret[:6]}},
		}
	case format.Time:
		return []keyRefusal{
			{name: "fraction", set: func(v *Sensitive) { v.Birthday = fraction }, rule: "the format cannot show",
				leaks: append(timeLeaks(fraction), "13:37", "123456789", "2031-07-19"), formatted: true},
			{name: "year past 9999", set: func(v *Sensitive) { v.Birthday = late }, rule: "year outside 0000–9999", leaks: timeLeaks(late)},
			{name: "negative year", set: func(v *Sensitive) { v.Birthday = early }, rule: "year outside 0000–9999", leaks: timeLeaks(early)},
		}
	case format.Integer:
		return []keyRefusal{
			{name: "negative", set: func(v *Sensitive) { v.Count = -4242424242 }, rule: "negative", leaks: []string{"4242424242"}, formatted: true},
			{name: "too wide", set: func(v *Sensitive) { v.Count = 987654321 }, rule: "wider than 8 digits", leaks: []string{"987654321"}, formatted: true},
		}
	}
	t.Fatalf("no refusals listed for format kind %d: add them to keyRefusals", k)
	return nil
}

// countingTx counts reads apart from writes, and TransactGetItems too,
// which everyRequest passes on uncounted.
type countingTx struct {
	*everyRequest
	reads *atomic.Int64
}

func (c countingTx) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.reads.Add(1)
	return c.everyRequest.GetItem(ctx, in, o...)
}

func (c countingTx) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	c.n.Add(1)
	c.reads.Add(1)
	return c.Client.TransactGetItems(ctx, in, o...)
}

// Issue 23, item 2: a value a key format refuses is refused before the
// network, in a *KeyError (or *ValidationError) that names the entity, the
// field and the rule, and never quotes the value, whether the field is in
// the primary key, in an index key, or in a guard key, and whatever
// operation renders the key. The formats are internal/format's table, so
// a new format is covered as soon as it is listed; a new kind of format
// fails here until its refusals are listed in keyRefusals.
func TestKeyFormatErrorsDoNotQuoteValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []keyFormatCase{{nil, "Email"}, {nil, "Birthday"}}
	for _, f := range format.Keyed() {
		field := map[format.Kind]string{format.Text: "Email", format.Time: "Birthday", format.Integer: "Count"}[f.Kind]
		require.NotEmpty(t, field, "format %s: no field of its kind", f.Name)
		cases = append(cases, keyFormatCase{f, field})
	}
	type variant struct {
		c      keyFormatCase
		entity string
		schema singletable.Schema[Sensitive]
		repo   *singletable.Repo[Sensitive]
	}
	var variants []*variant
	for i, c := range cases {
		ph := c.placeholder()
		variants = append(variants,
			&variant{c: c, entity: fmt.Sprintf("SensPrimary%d", i), schema: singletable.Schema[Sensitive]{PK: "S#{ID}", SK: fmt.Sprintf("P%d#", i) + ph + "#X"}},
			&variant{c: c, entity: fmt.Sprintf("SensIndex%d", i), schema: singletable.Schema[Sensitive]{PK: "S#{ID}", SK: fmt.Sprintf("I%d", i),
				Indexes: []singletable.IndexSchema[Sensitive]{{Name: "GSI1", PK: "P#{ID}", SK: ph + "#X"}}}})
		if c.f == nil {
			variants = append(variants, &variant{c: c, entity: fmt.Sprintf("SensUnique%d", i), schema: singletable.Schema[Sensitive]{
				PK: "S#{ID}", SK: fmt.Sprintf("U%d", i), Unique: []singletable.Unique{{Fields: []string{c.field}}}}})
		}
	}
	c := countingTx{&everyRequest{Client: ddblocal.Shared(t).Client()}, new(atomic.Int64)}
	tbl := singletable.NewTable(c, ddblocal.TableName(t))
	for _, v := range variants {
		v.schema.Type = v.entity
		v.repo = singletable.MustBind(tbl, singletable.MustDefine(v.schema))
	}
	require.NoError(t, tbl.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, c.Client, tbl.Name())

	good := Sensitive{ID: "id1", Email: "ok@example.com", Birthday: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), Count: 5, Note: "n"}
	tried := 0
	for _, v := range variants {
		index, unique := v.schema.Indexes != nil, len(v.schema.Unique) > 0
		_, err := v.repo.Put(ctx, good) // stored, so that updates of it reach their keys
		require.NoError(t, err, v.entity)
		for _, h := range keyRefusals(t, func() format.Kind {
			if v.c.f != nil {
				return v.c.f.Kind
			}
			return map[string]format.Kind{"Email": format.Text, "Birthday": format.Time}[v.c.field]
		}()) {
			if h.formatted && v.c.f == nil || v.c.field != h.fieldOf() {
				continue
			}
			if (index || len(v.schema.Unique) > 0) && h.name == "empty" {
				continue // an empty index or unique value is not indexed or claimed: nothing to render
			}
			bad := good
			h.set(&bad)
			r := v.repo
			ops := keyRenderingOps(ctx, r, good, bad, v.c.field, index, unique)
			for opName, run := range ops {
				where := fmt.Sprintf("%s %s, %s: %s", v.entity, v.c.placeholder(), h.name, opName)
				if h.name == "too long" && strings.HasSuffix(opName, "Between") {
					continue // an upper bound longer than any key is clamped (clampUpper), not refused
				}
				before, readsBefore := c.n.Load(), c.reads.Load()
				err := run()
				tried++
				if !assert.Error(t, err, where) {
					continue
				}
				reads := c.reads.Load() - readsBefore
				assert.Equal(t, reads, c.n.Load()-before, "%s: a write was sent", where)
				if !unique || !strings.Contains(opName, "Put") && !strings.Contains(opName, "Update") {
					assert.Zero(t, reads, "%s: a request was sent", where)
				} // a unique entity's Put and Update read the stored item to swap its guards
				var ke *singletable.KeyError
				var ve *singletable.ValidationError
				assert.True(t, errors.As(err, &ke) || errors.As(err, &ve), "%s: %T %v", where, err, err)
				rule := h.rule
				if h.name == "fraction" && v.c.f.Cut >= 24*time.Hour {
					rule = "not midnight UTC"
				}
				text := err.Error()
				assert.Contains(t, text, v.entity, where)
				assert.Contains(t, text, v.c.field, where)
				assert.Contains(t, text, rule, where)
				for _, leak := range h.leaks {
					assert.NotContains(t, text, leak, where)
				}
			}
		}
	}
	// A BeginsWith prefix no value of the format can start with: a raw
	// prefix holding the delimiter, or a byte outside a format's alphabet.
	for _, v := range variants {
		if v.c.f == nil || v.schema.Indexes == nil {
			continue
		}
		prefix, rule := "2031-"+secret, "no value in format "+strings.TrimSuffix(v.c.placeholder()[len(v.c.field)+2:], "}")
		if v.c.f.Kind == format.Text {
			prefix, rule = "mallory."+secret+"#x", `delimiter '#'`
		}
		where := fmt.Sprintf("%s %s: BeginsWith", v.entity, v.c.placeholder())
		before := c.n.Load()
		_, err := v.repo.QueryIndex("GSI1", good).BeginsWith(v.c.field, prefix).Collect(ctx)
		tried++
		var ke *singletable.KeyError
		require.ErrorAs(t, err, &ke, where)
		assert.Equal(t, before, c.n.Load(), "%s: a request was sent", where)
		for _, want := range []string{v.entity, v.c.field, rule} {
			assert.Contains(t, err.Error(), want, where)
		}
		for _, leak := range []string{secret, secret[:6], "mallory", "2031"} {
			assert.NotContains(t, err.Error(), leak, where)
		}
	}
	reportInputs(inputRow{Suite: "key-format refusals (every format of internal/format, in primary, index and guard keys) through every operation that renders keys",
		Tried: tried, Outcomes: fmt.Sprintf("%d errors before the network, each naming entity, field and rule, none quoting the value", tried)})
}

// fieldOf is the field of Sensitive a refusal sets.
func (h keyRefusal) fieldOf() string {
	var v Sensitive
	h.set(&v)
	switch {
	case !v.Birthday.IsZero():
		return "Birthday"
	case v.Count != 0:
		return "Count"
	}
	return "Email"
}

// keyRenderingOps returns every operation that renders a key from bad,
// whose field holds a refused value: with field in the primary key, the
// reads and writes keyed by it; in an index key or a guard key, the
// writes that store it.
func keyRenderingOps(ctx context.Context, r *singletable.Repo[Sensitive], good, bad Sensitive, field string, index, unique bool) map[string]func() error {
	var value any
	switch field {
	case "Email":
		value = bad.Email
	case "Birthday":
		value = bad.Birthday
	default:
		value = bad.Count
	}
	var dst Sensitive
	ops := map[string]func() error{
		"Create": func() error { _, err := r.Create(ctx, bad); return err },
		"Put":    func() error { _, err := r.Put(ctx, bad); return err },
		"BatchWrite PutOp": func() error {
			return singletable.BatchWrite(ctx, []singletable.WriteOp{r.PutOp(bad)})
		},
		"Tx PutOp":    func() error { return singletable.Tx(ctx, []singletable.WriteOp{r.PutOp(bad)}) },
		"Tx CreateOp": func() error { return singletable.Tx(ctx, []singletable.WriteOp{r.CreateOp(bad)}) },
	}
	if index || unique {
		ops["Update.Set"] = func() error { _, err := r.Update(good).Set(field, value).Run(ctx); return err }
		ops["Tx Update.Set"] = func() error {
			return singletable.Tx(ctx, []singletable.WriteOp{r.Update(good).Set(field, value).Op()})
		}
		if index {
			ops["RenderIndexKeys"] = func() error { _, _, err := r.Entity().RenderIndexKeys("GSI1", bad); return err }
			ops["QueryIndex Where"] = func() error {
				_, err := r.QueryIndex("GSI1", bad).Where(field, singletable.Ge, value).Collect(ctx)
				return err
			}
			ops["QueryIndex Between"] = func() error {
				_, err := r.QueryIndex("GSI1", good).Between(field, nil, value).Collect(ctx)
				return err
			}
		}
		return ops
	}
	ops["RenderKeys"] = func() error { _, _, err := r.Entity().RenderKeys(bad); return err }
	ops["Get"] = func() error { _, err := r.Get(ctx, bad); return err }
	ops["Delete"] = func() error { _, err := r.Delete(ctx, bad); return err }
	ops["Update"] = func() error { _, err := r.Update(bad).Set("Note", "m").Run(ctx); return err }
	ops["Query Where"] = func() error { _, err := r.Query(bad).Where(field, singletable.Eq, value).Collect(ctx); return err }
	ops["Query Between"] = func() error { _, err := r.Query(good).Between(field, nil, value).Collect(ctx); return err }
	ops["BatchWrite DeleteOp"] = func() error {
		return singletable.BatchWrite(ctx, []singletable.WriteOp{r.DeleteOp(bad)})
	}
	ops["Tx DeleteOp"] = func() error { return singletable.Tx(ctx, []singletable.WriteOp{r.DeleteOp(bad)}) }
	ops["Tx Update.Op"] = func() error {
		return singletable.Tx(ctx, []singletable.WriteOp{r.Update(bad).Set("Note", "m").Op()})
	}
	ops["Tx CheckOp"] = func() error {
		return singletable.Tx(ctx, []singletable.WriteOp{r.CheckOp(bad, expression.Name("Note").AttributeExists()), r.PutOp(good)})
	}
	ops["BatchGet"] = func() error { _, err := singletable.BatchGet(ctx, []singletable.GetOp{r.GetOp(bad, &dst)}); return err }
	ops["TxGet"] = func() error { _, err := singletable.TxGet(ctx, []singletable.GetOp{r.GetOp(bad, &dst)}); return err }
	return ops
}
