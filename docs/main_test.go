// Package docs_test holds the Go code of the documents in this folder and
// of the README: every ```go block there is a part of a function or
// declaration here, and TestDocSnippets fails when one is not, so the
// documentation always compiles and, where an example has an Output
// comment, runs as shown.
package docs_test

import (
	"os"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }
