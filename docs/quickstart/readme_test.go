package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsThisCode checks that the README's quick start blocks are
// this program and its test, word for word, so the README cannot drift
// from code that compiles and runs.
func TestREADMEShowsThisCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(string(readme))
	for _, name := range []string{"main.go", "main_test.go"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range blocks {
			if b == string(src) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md has no ```go block equal to docs/quickstart/%s; paste the file into the README's quick start", name)
		}
	}
}

// goBlocks returns the contents of the ```go fenced blocks of a Markdown
// text, each ending in a newline.
func goBlocks(md string) []string {
	var blocks []string
	var cur strings.Builder
	in := false
	for _, line := range strings.SplitAfter(md, "\n") {
		switch trimmed := strings.TrimSpace(line); {
		case !in && trimmed == "```go":
			in = true
			cur.Reset()
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, cur.String())
		case in:
			cur.WriteString(line)
		}
	}
	return blocks
}
