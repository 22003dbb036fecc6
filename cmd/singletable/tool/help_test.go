package tool_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/cmd/singletable/tool"
	"github.com/singletable-go/singletable/examples/skills"
)

var update = flag.Bool("update", false, "rewrite the help blocks of docs/cli.md from the tool's output")

// cliDoc is the document that shows every subcommand's help.
var cliDoc = filepath.Join("..", "..", "..", "docs", "cli.md")

// helpBlock is a ```text block of docs/cli.md that starts with
// "$ singletable ...": the command and the lines after it.
type helpBlock struct {
	args       []string
	start, end int // the block's body: lines[start:end], after the command line
}

// helpBlocks finds the help blocks of the document's lines.
func helpBlocks(t *testing.T, lines []string) []helpBlock {
	t.Helper()
	var blocks []helpBlock
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```text" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "$ singletable") {
			continue
		}
		b := helpBlock{args: strings.Fields(lines[i+1])[2:], start: i + 2}
		for b.end = b.start; b.end < len(lines) && lines[b.end] != "```"; b.end++ {
		}
		require.Less(t, b.end, len(lines), "unterminated block for %q", lines[i+1])
		blocks = append(blocks, b)
		i = b.end
	}
	return blocks
}

// docProgram is the tool as docs/cli.md shows it: named singletable, with
// a registration (the help of a build without one says so).
func docProgram(out *bytes.Buffer) tool.Program {
	return tool.Program{
		Name: "singletable",
		Declare: func(client singletable.Client) ([]tool.Table, error) {
			st := skills.NewStore(client, skills.TableName)
			return []tool.Table{{Table: st.Table}}, nil
		},
		Stdout: out, Stderr: out,
	}
}

// TestHelpInDocs checks docs/cli.md's help blocks against the tool's real
// output, one for the tool and one for every subcommand; with -update it
// rewrites them.
func TestHelpInDocs(t *testing.T) {
	t.Setenv("DYNAMODB_ENDPOINT", "") // the help does not depend on it
	b, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	blocks := helpBlocks(t, lines)
	shown := map[string]bool{}
	var rewritten []string
	last := 0
	for _, blk := range blocks {
		var out bytes.Buffer
		code := tool.Run(context.Background(), docProgram(&out), blk.args)
		require.Equal(t, tool.ExitOK, code, "singletable %s: %s", strings.Join(blk.args, " "), out.String())
		got := strings.TrimRight(out.String(), "\n")
		want := strings.Join(lines[blk.start:blk.end], "\n")
		if !*update {
			assert.Equal(t, want, got, "docs/cli.md's block for singletable %s (go test ./tool -run TestHelpInDocs -update rewrites it)",
				strings.Join(blk.args, " "))
		}
		rewritten = append(append(rewritten, lines[last:blk.start]...), strings.Split(got, "\n")...)
		last = blk.end
		if n := len(blk.args); n > 0 && blk.args[n-1] == "--help" {
			shown[strings.Join(blk.args[:n-1], " ")] = true
		}
	}
	rewritten = append(rewritten, lines[last:]...)
	for _, c := range append([]string{""}, tool.Commands()...) {
		assert.True(t, shown[c], "docs/cli.md has no block for singletable %s --help", c)
	}
	if *update {
		require.NoError(t, os.WriteFile(cliDoc, []byte(strings.Join(rewritten, "\n")), 0o644))
	}
}
