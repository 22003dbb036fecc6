package singletable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
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
