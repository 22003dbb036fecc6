package docs_test

import (
	"os"

	"github.com/singletable-go/singletable/workbench"
)

// The code of workbench.md; its export is workbench's ExampleExport
// (exportNotes in workbench/example_test.go).

func generateDevices(m *workbench.Model) error {
	src, err := workbench.Generate(m, func(o *workbench.GenerateOptions) { o.Package = "devices" })
	if err != nil {
		return err
	}
	return os.WriteFile("devices/model.go", src, 0o644)
}

var _ = generateDevices
