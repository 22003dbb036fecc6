package workbench_test

import (
	"os"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
)

// TestMain runs the tests with one DynamoDB Local for the round trip.
func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
