package docs_test

import (
	"io"
	"os"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/workbench"
)

// The code of workbench.md.

type Note struct {
	Owner string `dynamodbav:"owner"`
	ID    string `dynamodbav:"id"`
	Text  string `dynamodbav:"text"`
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{
	Type: "Note", PK: "USER#{Owner:raw}", SK: "NOTE#{ID:raw}",
})

func exportNotes(table *singletable.Table, notes *singletable.Repo[Note], w io.Writer) error {
	m, err := workbench.Export(table, func(o *workbench.ExportOptions) {
		o.Date = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
		o.Samples = []workbench.Sample{workbench.Samples(notes, Note{Owner: "ann", ID: "1", Text: "hello"})}
	})
	if err != nil {
		return err
	}
	return m.Write(w)
}

func generateDevices(m *workbench.Model) error {
	src, err := workbench.Generate(m, func(o *workbench.GenerateOptions) { o.Package = "devices" })
	if err != nil {
		return err
	}
	return os.WriteFile("devices/model.go", src, 0o644)
}

var _, _ = exportNotes, generateDevices
