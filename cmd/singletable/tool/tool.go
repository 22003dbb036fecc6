// Package tool is the singletable command-line tool: the catalog and the
// picture of a table, the key-design lint, the drift check, NoSQL Workbench export and import,
// migrations and DynamoDB Local, behind one command with one registration.
//
// The tool reads a program's declarations through a [Program] that the
// program itself provides: a tiny main that declares its tables (with their
// access patterns, sample values and migrations) and calls [Main]:
//
//	func main() {
//		tool.Main(tool.Program{
//			Declare: func(client singletable.Client) ([]tool.Table, error) {
//				st := skills.NewStore(client, skills.TableName)
//				return []tool.Table{{
//					Table:      st.Table,
//					Patterns:   skills.AccessPatterns(st),
//					Migrations: []migrate.Migration{skills.UsersListingMigration(st)},
//				}}, nil
//			},
//		})
//	}
//
// One registration serves every subcommand: catalog, lint and workbench
// export read the declarations alone, check and migrate reach the live
// tables. The command `singletable` built from this module's root has no
// registration; it runs the subcommands that need none (workbench import,
// local) and says how to register for the others. docs/cli.md has every
// subcommand's help.
//
// Exit codes, the same for every subcommand: [ExitOK] (0) success, lint
// without error findings, no drift, verify without difference;
// [ExitFailure] (1) the command failed or found what it checks for (lint
// errors, drift, failed items, differences); [ExitUsage] (2) bad
// arguments, or a subcommand that needs declarations run without them.
package tool

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/cmd/singletable/migratecli"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
	"github.com/singletable-go/singletable/workbench"
)

// Exit codes returned by [Run] (and passed to os.Exit by [Main]). They
// keep the meaning of [migratecli]'s.
const (
	ExitOK      = migratecli.ExitOK      // done; lint: no error; check: no drift; verify: no difference
	ExitFailure = migratecli.ExitFailure // the command failed or found lint errors, drift, failed items, differences
	ExitUsage   = migratecli.ExitUsage   // bad arguments, or no declarations registered
)

// Program is what a program registers with the tool: its declarations and
// where the tool writes.
type Program struct {
	// Name is the command's name in help and messages; default the
	// executable's base name.
	Name string
	// Declare returns the program's tables, declared on client. The tool
	// calls it once per command: with nil for the commands that read only
	// the declarations (catalog, lint, workbench export from samples), with
	// a live client for those that reach a table (check, migrate,
	// catalog and workbench export with -scan). A program without it registers nothing.
	Declare func(client singletable.Client) ([]Table, error)
	// Client returns the client for the commands that reach a table;
	// default: DynamoDB Local at the -endpoint flag or $DYNAMODB_ENDPOINT
	// when set, otherwise the AWS SDK's default configuration
	// (environment, shared config, instance role).
	Client func(ctx context.Context, endpoint string) (singletable.Client, error)
	// Migrate sets the migrate subcommand's options (defaults for every
	// run, such as a rate limit) before the tool sets its output.
	Migrate func(*migratecli.Options)
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// Table is one declared table with what the tool shows of it.
type Table struct {
	// Table is the table with its entities bound.
	Table *singletable.Table
	// Patterns are its access patterns, for catalog.
	Patterns []catalog.Pattern
	// Accepted are the lint findings the design accepts, with the reason:
	// catalog and lint record them apart instead of warning.
	Accepted []catalog.Acceptance
	// Samples are example values of its entities, for workbench export
	// and catalog -format svg.
	Samples []workbench.Sample
	// Migrations are its migrations, for migrate.
	Migrations []migrate.Migration
	// Create is what the program creates the table with, when more than
	// the declarations (CreateTableOptions.Indexes: indexes no entity
	// declares): check compares the live table with what it creates.
	Create func(*singletable.CreateTableOptions)
}

// Main runs the command in os.Args, stopping on Ctrl-C or SIGTERM, and
// exits with its code.
func Main(p Program) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, p, os.Args[1:])
	stop()
	os.Exit(code)
}

// Run runs the command in args (the arguments after the program's name)
// and returns the exit code.
func Run(ctx context.Context, p Program, args []string) int {
	r := &runner{p: p, name: p.Name, stdout: p.Stdout, stderr: p.Stderr}
	if r.name == "" {
		r.name = filepath.Base(os.Args[0])
	}
	if r.stdout == nil {
		r.stdout = os.Stdout
	}
	if r.stderr == nil {
		r.stderr = os.Stderr
	}
	if len(args) == 0 {
		r.usage(r.stderr)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	if name == "workbench" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = "workbench "+rest[0], rest[1:]
	}
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 {
			r.usage(r.stdout)
			return ExitOK
		}
		return Run(ctx, p, append(rest, "--help"))
	}
	for _, c := range commands {
		if c.name == name {
			code, err := c.run(ctx, r, c, rest)
			return r.exit(c, code, err)
		}
	}
	if name == "workbench" {
		if len(rest) > 0 && (rest[0] == "-h" || rest[0] == "-help" || rest[0] == "--help") {
			r.usage(r.stdout)
			return ExitOK
		}
		fmt.Fprintf(r.stderr, "%s workbench: want export or import\n", r.name)
	} else {
		fmt.Fprintf(r.stderr, "%s: unknown command %q\n", r.name, name)
	}
	r.usage(r.stderr)
	return ExitUsage
}

// Commands returns the subcommands' names, as their help names them
// ("workbench export"), in the order the usage lists them.
func Commands() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// command is one subcommand: its help and what it runs.
type command struct {
	name     string
	args     string // after the flags in the usage line
	summary  string // one line, in the tool's usage
	about    string // paragraphs, in the command's help
	run      func(ctx context.Context, r *runner, c *command, args []string) (int, error)
	declared bool                     // needs the program's declarations
	more     func(*runner, io.Writer) // more help, after the flags
}

// runner is one run of the tool.
type runner struct {
	p              Program
	name           string
	stdout, stderr io.Writer
}

// usageError is a bad argument: exit code 2 with a hint at the help.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errHelp reports that the help was printed.
var errHelp = errors.New("help printed")

func (r *runner) exit(c *command, code int, err error) int {
	var ue usageError
	switch {
	case errors.Is(err, errHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(r.stderr, "%s %s: %v\nRun '%s %s --help' for usage.\n", r.name, c.name, err, r.name, c.name)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(r.stderr, "%s %s: %v\n", r.name, c.name, err)
		return ExitFailure
	}
	return code
}

func (r *runner) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [flags] [arguments]\n\n", r.name)
	fmt.Fprintf(w, "%s works on the tables, entities, access patterns and migrations\n"+
		"that a program registers (docs/cli.md says how).\n\ncommands:\n", r.name)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Run '%[1]s <command> --help' (or '%[1]s help <command>') for its flags.

Commands that reach a table use DynamoDB Local at -endpoint or
$DYNAMODB_ENDPOINT when set, otherwise the AWS SDK's default configuration
(AWS_REGION, AWS_PROFILE, shared config, instance role).

exit codes:
  0  success: lint found no error, check no drift, verify no difference
  1  failure, or findings: lint errors, drift, failed items, differences
  2  usage: bad arguments, or no declarations registered for the command
`, r.name)
}

// flags returns the flag set of command c.
func (r *runner) flags(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(r.name+" "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args with fs: on -h it prints c's help and returns errHelp,
// on a bad flag a usage error. The arguments left must number between
// minArgs and maxArgs.
func (r *runner) parse(c *command, fs *flag.FlagSet, args []string, minArgs, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			r.help(c, fs)
			return errHelp
		}
		return usageError{err.Error()}
	}
	if n := fs.NArg(); n < minArgs || n > maxArgs {
		if c.args == "" {
			return usagef("takes no arguments, got %q", fs.Args())
		}
		return usagef("want %s, got %q", c.args, fs.Args())
	}
	return nil
}

func (r *runner) help(c *command, fs *flag.FlagSet) {
	w := r.stdout
	line := r.name + " " + c.name + " [flags]"
	if c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", line, strings.TrimSpace(c.about))
	if c.declared && r.p.Declare == nil {
		fmt.Fprintf(w, "\nThis build of %s registers no declarations: build a program that\nregisters them with tool.Main (docs/cli.md).\n", r.name)
	}
	var n int
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if c.more != nil {
		fmt.Fprintln(w)
		c.more(r, w)
	}
}

// tables returns the program's tables declared on client, or only the one
// named table when it is not empty.
func (r *runner) tables(client singletable.Client, table string) ([]Table, error) {
	if r.p.Declare == nil {
		return nil, usagef("this build of %s registers no tables: build a program that declares them and calls tool.Main (docs/cli.md)", r.name)
	}
	all, err := r.p.Declare(client)
	if err != nil {
		return nil, fmt.Errorf("declarations: %w", err)
	}
	names := make([]string, 0, len(all))
	for i, t := range all {
		if t.Table == nil {
			return nil, fmt.Errorf("declarations: table %d has no *singletable.Table", i)
		}
		names = append(names, t.Table.Name())
		if table != "" && t.Table.Name() == table {
			return all[i : i+1], nil
		}
	}
	if table != "" {
		return nil, usagef("no table %q is registered (registered: %s)", table, strings.Join(names, ", "))
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("declarations: no table")
	}
	return all, nil
}

// client returns the client for the commands that reach a table.
func (r *runner) client(ctx context.Context, endpoint string) (singletable.Client, error) {
	if endpoint == "" {
		endpoint = os.Getenv(ddblocal.EndpointEnv)
	}
	if r.p.Client != nil {
		return r.p.Client(ctx, endpoint)
	}
	if endpoint != "" {
		return ddblocal.NewClient(endpoint), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg), nil
}

// endpointFlag adds -endpoint to fs.
func endpointFlag(fs *flag.FlagSet) *string {
	return fs.String("endpoint", "",
		"DynamoDB endpoint, such as DynamoDB Local's http://127.0.0.1:8000\n(default $"+ddblocal.EndpointEnv+"; without either, the AWS SDK's default configuration)")
}

// tableFlag adds -table to fs.
func tableFlag(fs *flag.FlagSet) *string {
	return fs.String("table", "", "only the registered table of this name (default every one)")
}

// output opens path for writing, or returns standard output for "" or "-".
func (r *runner) output(path string) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return r.stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}
