package ddblocal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var shared atomic.Pointer[Server]

// Run starts one DynamoDB Local for the test binary (or reuses
// DYNAMODB_ENDPOINT), runs the tests and stops the server. Use it from
// TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
//
// If the server cannot start, Run prints why on stderr and returns 1 without
// running the tests. Shared returns the server while the tests run.
func Run(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse() // for testing.Verbose; m.Run does the same
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzz worker runs only the fuzz target, which needs no server;
		// starting one per worker would just load the machine.
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounds install + start
	start := time.Now()
	s, err := Start(ctx, Options{})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ddblocal.Run: cannot start DynamoDB Local, so no test ran:\n%v\n", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "ddblocal: DynamoDB Local %s at %s (ready in %v)\n", Version, s.Endpoint(), time.Since(start).Round(time.Millisecond))
	}
	shared.Store(s)
	code := m.Run()
	shared.Store(nil)
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "ddblocal.Run: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Shared returns the server started by Run. It panics if Run is not running
// the tests, since then there is no server to return.
func Shared() *Server {
	s := shared.Load()
	if s == nil {
		panic("ddblocal.Shared: no DynamoDB Local; call ddblocal.Run from TestMain: " +
			"func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }")
	}
	return s
}

// maxTableName is DynamoDB's limit on table name length.
const maxTableName = 255

// TableName returns a table name unique to this call, derived from the test's
// name plus a random suffix: 3 to 255 characters from [a-zA-Z0-9_.-], so it is
// valid for DynamoDB however the test or its subtests are named.
func TableName(t testing.TB) string {
	t.Helper()
	const suffixLen = 1 + 16 // "-" + 16 hex digits
	var b strings.Builder
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	base := b.String()
	if len(base) > maxTableName-suffixLen {
		base = base[:maxTableName-suffixLen]
	}
	if base == "" {
		base = "test"
	}
	return fmt.Sprintf("%s-%016x", base, rand.Uint64())
}

// DeleteTableOnCleanup registers a t.Cleanup that deletes table name with c.
// A table that no longer exists is not an error; any other failure is
// reported with t.Errorf.
func DeleteTableOnCleanup(t testing.TB, c *dynamodb.Client, name string) {
	t.Helper()
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var notFound *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &notFound) {
			t.Errorf("ddblocal: delete table %s: %v", name, err)
		}
	})
}
