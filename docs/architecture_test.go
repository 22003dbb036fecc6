package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryFile holds docs/architecture.md to the code: its
// layout names every non-test file of the root package, every package of the
// module, and no root file that is gone.
func TestArchitectureNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	root, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range root {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		have[name] = true
		if !strings.Contains(text, "`"+name+"`") {
			t.Errorf("architecture.md does not name root file %s", name)
		}
	}
	for _, named := range backquotedGoFiles(text) {
		if !strings.Contains(named, "/") && !strings.HasSuffix(named, "_test.go") && !have[named] {
			if _, err := os.Stat(filepath.Join("..", named)); err != nil {
				t.Errorf("architecture.md names %s, which is not a root file", named)
			}
		}
	}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if rel == "." {
			return nil
		}
		base := d.Name()
		if strings.HasPrefix(base, ".") || base == "testdata" || strings.HasPrefix(rel, "bench") ||
			strings.HasPrefix(rel, "examples") || strings.HasPrefix(rel, "docs") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			return filepath.SkipDir // a module of its own, drawn as such
		}
		gofiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(gofiles) > 0 && !strings.Contains(text, filepath.ToSlash(rel)) && !strings.Contains(text, base) {
			t.Errorf("architecture.md does not name package %s", filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// backquotedGoFiles returns the `name.go` spans of text.
func backquotedGoFiles(text string) []string {
	var out []string
	for i, part := range strings.Split(text, "`") {
		if i%2 == 1 && strings.HasSuffix(part, ".go") && !strings.ContainsAny(part, " *(") {
			out = append(out, part)
		}
	}
	return out
}
