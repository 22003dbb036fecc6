package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRefs are phrases that point a reader at documents they do not
// have: the design documents the examples were written from, by number or
// by path. Name a design by what it is instead ("the skills service", "the
// elections service"), and link only to files in this repository.
var outsideRefs = regexp.MustCompile(`(?i)\bseed ?\d{3}\b|\.\./shared\b|\bshared/seeds\b|\bthe seed\b|\bseed's\b|\bseed (design|document|doc)s?\b`)

// TestNoOutsideReferences checks every Markdown file and every Go comment of
// the repository (godoc, examples, tests) for outsideRefs.
func TestNoOutsideReferences(t *testing.T) {
	root := ".."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".md":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			checked++
			for i, line := range strings.Split(string(b), "\n") {
				if m := outsideRefs.FindString(line); m != "" {
					t.Errorf("%s:%d: %q points outside the repository: %s", path, i+1, m, strings.TrimSpace(line))
				}
			}
		case ".go":
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			checked++
			for _, cg := range f.Comments {
				for _, c := range cg.List {
					for i, line := range strings.Split(c.Text, "\n") {
						if m := outsideRefs.FindString(line); m != "" {
							t.Errorf("%s:%d: %q in a comment points outside the repository: %s",
								path, fset.Position(c.Pos()).Line+i, m, strings.TrimSpace(line))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked only %d files; is the walk broken?", checked)
	}
}
