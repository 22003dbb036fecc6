package sequences_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// newTable makes a fresh table; bind binds the entities. With ft non-nil
// the table's client goes through it; plain is always the fault-free client.
func newTable(t *testing.T, ft *ddbfault.Transport, bind func(*singletable.Table), opts ...func(*singletable.TableOptions)) (tbl *singletable.Table, plain *dynamodb.Client) {
	t.Helper()
	srv := ddblocal.Shared(t)
	plain = srv.Client()
	client := plain
	if ft != nil {
		client = srv.Client(func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	}
	name := ddblocal.TableName(t)
	tbl = singletable.NewTable(client, name, opts...)
	bind(tbl)
	if ft != nil {
		ft.SetEnabled(false)
	}
	if err := tbl.CreateTable(context.Background()); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if ft != nil {
		ft.SetEnabled(true)
	}
	ddblocal.DeleteTableOnCleanup(t, plain, name)
	return tbl, plain
}

// rawScan reads the whole table, strongly consistent.
func rawScan(t *testing.T, c *dynamodb.Client, name string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		res, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: &name, ConsistentRead: ptr(true), ExclusiveStartKey: start})
		if err != nil {
			t.Fatalf("raw scan: %v", err)
		}
		out = append(out, res.Items...)
		if len(res.LastEvaluatedKey) == 0 {
			return out
		}
		start = res.LastEvaluatedKey
	}
}

func ptr[T any](v T) *T { return &v }

func s(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case nil:
		return ""
	}
	return "?"
}

func ddblocalPlain(t *testing.T) *dynamodb.Client { return ddblocal.Shared(t).Client() }
