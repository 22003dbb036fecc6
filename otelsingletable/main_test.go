package otelsingletable_test

import (
	"os"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
