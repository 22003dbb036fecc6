package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkedDocs are the documents whose Go blocks TestDocSnippets checks.
// Add a document here when its code moves into docs/*_test.go.
var checkedDocs = []string{
	"single-table-design.md",
	"entity-addition-protocol.md",
	"testing.md",
	"runbook.md",
	"architecture.md",
	"performance.md",
	"adopting.md",
	"streams.md",
	"observability.md",
	"workbench.md",
	"cli.md",
	"security.md",
	filepath.Join("..", "README.md"),
}

// TestDocSnippets checks that every ```go block of the documents appears,
// line by line and ignoring indentation and blank lines, in one of this
// folder's test files, which the compiler checks (and, for examples with an
// Output comment, runs).
func TestDocSnippets(t *testing.T) {
	docs := checkedDocs
	sources, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	quickstart, err := filepath.Glob(filepath.Join("quickstart", "*.go")) // the README's quick start
	if err != nil {
		t.Fatal(err)
	}
	sources = append(sources, quickstart...)
	launcher, err := filepath.Glob(filepath.Join("..", "ddblocal", "testcontainers", "*_test.go")) // its own module
	if err != nil {
		t.Fatal(err)
	}
	sources = append(sources, launcher...)
	lambdaEvents, err := filepath.Glob(filepath.Join("..", "streams", "lambdaevent", "*_test.go")) // its own module
	if err != nil {
		t.Fatal(err)
	}
	sources = append(sources, lambdaEvents...)
	wb, err := filepath.Glob(filepath.Join("..", "workbench", "*_test.go")) // workbench.md's export is its example's
	if err != nil {
		t.Fatal(err)
	}
	sources = append(sources, wb...)
	tool, err := filepath.Glob(filepath.Join("..", "cmd", "singletable", "examples", "*", "*.go")) // the tool's module
	if err != nil {
		t.Fatal(err)
	}
	sources = append(sources, tool...)
	var code [][]string
	for _, s := range sources {
		code = append(code, normalized(t, s))
	}
	blocks := 0
	for _, d := range docs {
		for i, b := range goBlocks(t, d) {
			blocks++
			if !anyContains(code, b) {
				t.Errorf("%s: go block %d is not in docs/*_test.go, so nothing compiles it:\n%s", d, i+1, strings.Join(b, "\n"))
			}
		}
	}
	if blocks < 10 {
		t.Errorf("found only %d go blocks; is the extraction broken?", blocks)
	}
}

func normalized(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return normLines(strings.Split(string(b), "\n"))
}

func normLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// goBlocks returns the ```go fenced blocks of a Markdown file.
func goBlocks(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks [][]string
	var cur []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```go":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, normLines(cur))
		case in:
			cur = append(cur, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if in {
		t.Fatalf("%s: unterminated ```go block", path)
	}
	return blocks
}

func anyContains(files [][]string, block []string) bool {
	if len(block) == 0 {
		return true
	}
	for _, f := range files {
		for i := 0; i+len(block) <= len(f); i++ {
			if f[i] == block[0] && equal(f[i:i+len(block)], block) {
				return true
			}
		}
	}
	return false
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
