package migrate_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/testfaults"
)

// TestMain starts one DynamoDB Local for the package's tests (or uses
// DYNAMODB_ENDPOINT's), each of which makes its own fresh tables. With
// migrateWorkerEnv set, the binary is a worker process of
// TestMigrateWorkerProcesses instead.
func TestMain(m *testing.M) {
	if os.Getenv(migrateWorkerEnv) != "" {
		os.Exit(migrateWorkerMain()) // TestMigrateWorkerProcesses re-executed this binary
	}
	flag.Parse()
	raiseParallelDefault(16)
	code := ddblocal.Run(m)
	if path := os.Getenv(testfaults.RowsEnv); path != "" && code == 0 {
		if err := faultRows.AppendTo(path); err != nil {
			os.Stderr.WriteString("reliability rows: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// raiseParallelDefault lets up to n parallel tests run at once unless
// -test.parallel was given: the tests here mostly wait on DynamoDB Local,
// as the root package's do (see its main_test.go).
func raiseParallelDefault(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && n > runtime.GOMAXPROCS(0) {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
