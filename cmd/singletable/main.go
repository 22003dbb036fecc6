// Command singletable is the singletable command-line tool without a
// program's declarations: it runs the subcommands that need none
// (workbench import, local) and the help of every one.
//
//	go run github.com/singletable-go/singletable/cmd/singletable@latest --help
//
// For catalog, lint, check, workbench export and migrate, a program
// registers its tables with [tool.Main] in a tiny main of its own;
// docs/cli.md says how, and examples/skills in this module is one.
package main

import "github.com/singletable-go/singletable/cmd/singletable/tool"

func main() {
	tool.Main(tool.Program{Name: "singletable"})
}
