package singletable_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/rawitems"
)

func TestMain(m *testing.M) {
	flag.Parse()
	raiseParallelDefault(16)
	code := ddblocal.Run(m)
	// make reliability: the figures the fault and bad-input suites
	// reported, written into docs/reliability.md once every test is done.
	if path := os.Getenv("RELIABILITY_REPORT"); path != "" && code == 0 {
		if err := writeReliabilityReport(path); err != nil {
			fmt.Fprintln(os.Stderr, "reliability report:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// raiseParallelDefault lets up to n parallel tests run at once unless
// -test.parallel was given. go test's default, GOMAXPROCS, suits tests that
// keep a CPU busy; most tests here wait on DynamoDB Local or sleep in the
// SDK's retry backoff (the fault suites spend most of their time there), so
// with 2 CPUs only 2 of them at a time would leave the machine mostly idle.
// When fuzzing, -test.parallel is the number of fuzz workers, left as is.
func raiseParallelDefault(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		given = true
	}
	if !given && n > runtime.GOMAXPROCS(0) {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}

// countingClient counts the requests that reach DynamoDB Local, so tests can
// show that bad input is rejected before the network.
type countingClient struct {
	*dynamodb.Client
	requests atomic.Int64
}

func (c *countingClient) count() { c.requests.Add(1) }

func (c *countingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count()
	return c.Client.GetItem(ctx, in, o...)
}
func (c *countingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count()
	return c.Client.PutItem(ctx, in, o...)
}
func (c *countingClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count()
	return c.Client.UpdateItem(ctx, in, o...)
}
func (c *countingClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count()
	return c.Client.DeleteItem(ctx, in, o...)
}
func (c *countingClient) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count()
	return c.Client.Query(ctx, in, o...)
}
func (c *countingClient) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.count()
	return c.Client.Scan(ctx, in, o...)
}

// countOps counts, as the methods above do, the calls of those six
// operations, in a middleware (on the wire path the table must hold the
// *dynamodb.Client itself, not a wrapper).
func (c *countingClient) countOps(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("countRequests", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		switch middleware.GetOperationName(ctx) {
		case "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan":
			c.count()
		}
		return next.HandleInitialize(ctx, in)
	}), middleware.Before)
}

// table is the client newTable's tables hold: c, or with make test-wire
// (ddblocal.Wire) its *dynamodb.Client, which the direct wire path needs
// to be the table's client itself.
func (c *countingClient) table() singletable.Client {
	if ddblocal.Wire() {
		return c.Client
	}
	return c
}

// newTable returns a fresh, uniquely named table bound to the given
// binders, created in DynamoDB Local and deleted when the test ends.
func newTable(t testing.TB, bind func(*singletable.Table), optFns ...func(*singletable.TableOptions)) (*singletable.Table, *countingClient) {
	t.Helper()
	c := &countingClient{}
	if ddblocal.Wire() {
		c.Client = ddblocal.Shared(t).Client(func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.countOps) })
	} else {
		c.Client = ddblocal.Shared(t).Client()
	}
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(c.table(), name, optFns...)
	bind(tbl)
	if err := tbl.CreateTable(context.Background()); err != nil {
		t.Fatalf("create table: %v", err)
	}
	ddblocal.DeleteTableOnCleanup(t, c.Client, name)
	c.requests.Store(0)
	return tbl, c
}

// runSuffix makes client request tokens unique to this test run: DynamoDB
// keeps a token for 10 minutes across tables, so a token reused by a rerun
// against the same server (DYNAMODB_ENDPOINT) would be a mismatch.
var runSuffix = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

// runToken is name made unique to this test run.
func runToken(name string) string { return name + "-" + runSuffix }

// scanRaw returns every item of a table; attrS is an item's string
// attribute (internal/rawitems).
var (
	scanRaw = rawitems.Scan
	attrS   = rawitems.Str
)
