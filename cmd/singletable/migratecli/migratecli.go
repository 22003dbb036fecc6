// Package migratecli gives a service's own command the `migrate`
// subcommands of a [migrate.Migrator]:
//
//	migrate status                 the ledger entry of every migration
//	migrate run [flags] ID         run or resume a migration
//	migrate verify [flags] ID      compare what it should have produced
//
// It lives in the command-line tool's module
// (github.com/singletable-go/singletable/cmd/singletable), so the library's
// go.mod carries no command-line dependencies. The tool's `migrate`
// subcommand runs it over the migrations a program registers (see
// docs/cli.md); a service can also hand the arguments after "migrate" to
// [Main] in its own binary:
//
//	func main() {
//		if len(os.Args) > 1 && os.Args[1] == "migrate" {
//			m, err := migrate.New(table,
//				migrate.Copy("000-users", migrate.Source{Table: "users"}, transform),
//				migrate.Backfill("001-skills-gsi1", skills),
//			)
//			if err != nil {
//				log.Fatal(err)
//			}
//			os.Exit(migratecli.Main(ctx, m, os.Args[2:]))
//		}
//		// ... serve
//	}
//
// While a migration runs or is verified, a progress bar is drawn on
// standard error when it is a terminal; otherwise a progress line is
// printed every ten seconds, so logs stay readable. Ctrl-C (the context's cancellation) stops the run
// after its in-flight writes; running it again resumes from the
// checkpoints.
package migratecli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/singletable-go/singletable/migrate"
)

// Options configures [Main]. The zero value of a field means its default.
type Options struct {
	// Stdout receives reports; default os.Stdout.
	Stdout io.Writer
	// Stderr receives progress and errors; default os.Stderr. The
	// progress bar is drawn only when it is a terminal.
	Stderr io.Writer
	// LineInterval is how often a progress line is printed when Stderr is
	// not a terminal; default 10s.
	LineInterval time.Duration
	// Run is applied to every run's options before the command-line flags,
	// to set defaults for this service (a rate limit, more writers).
	Run func(*migrate.RunOptions)
	// Command is how the usage names the subcommand; default "migrate"
	// (the tool sets "singletable migrate").
	Command string
}

// Exit codes returned by [Main].
const (
	ExitOK      = 0 // done (or help asked for); for verify, no difference
	ExitFailure = 1 // the command failed, items failed, or verify found differences
	ExitUsage   = 2 // bad arguments
)

// Main runs the migrate subcommand in args (the arguments after "migrate")
// and returns the process exit code.
func Main(ctx context.Context, m *migrate.Migrator, args []string, optFns ...func(*Options)) int {
	o := Options{Stdout: os.Stdout, Stderr: os.Stderr, LineInterval: 10 * time.Second, Command: "migrate"}
	for _, fn := range optFns {
		fn(&o)
	}
	if len(args) == 0 {
		usage(o.Stderr, o.Command)
		return ExitUsage
	}
	var err error
	code := ExitOK
	switch args[0] {
	case "status":
		if len(args) > 1 && isHelp(args[1]) {
			usage(o.Stdout, o.Command)
			return ExitOK
		}
		err = status(ctx, m, o)
	case "run":
		code, err = run(ctx, m, args[1:], o)
	case "verify":
		code, err = verify(ctx, m, args[1:], o)
	case "help", "-h", "-help", "--help":
		usage(o.Stdout, o.Command)
		return ExitOK
	default:
		fmt.Fprintf(o.Stderr, "%s: unknown command %q\n", o.Command, args[0])
		usage(o.Stderr, o.Command)
		return ExitUsage
	}
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage(o.Stdout, o.Command)
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(o.Stderr, "%s: %v\n", o.Command, err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(o.Stderr, "%s: %v\n", o.Command, err)
		return ExitFailure
	}
	return code
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usage(w io.Writer, cmd string) {
	fmt.Fprintf(w, `usage:
  %[1]s status                 show every migration's state and counts
  %[1]s run [flags] ID         run a migration, or resume it from its checkpoints
      -segments N   parallel scan segments (first run only)
      -writers N    write requests in flight
      -page-size N  items per scan request
      -wcu R        limit writes to R write capacity units per second
      -dry-run      report what would be written, write nothing
      -shared       run as one worker of several (processes or machines):
                    claim segments one at a time by per-segment leases
      -worker-segments N  segments a shared worker scans at once
      -lease D      lease duration (default 1m): how long a crashed run
                    (or worker's segments) stays claimed
  %[1]s verify [flags] ID      compare the table with what the migration produces
      -sample F     fraction of items compared attribute by attribute (default 1)
      -segments N   parallel scan segments
      -max-diffs N  differences listed

A run or a verification shows its progress on standard error: a bar on a
terminal, otherwise a line every 10s. Ctrl-C stops a run after its
in-flight writes; running it again resumes from its checkpoints.

exit codes: 0 done (verify: no difference), 1 failure, failed items or
differences found, 2 usage.
`, cmd)
}

func status(ctx context.Context, m *migrate.Migrator, o Options) error {
	sts, err := m.Status(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tREAD\tWRITTEN\tSKIPPED\tFAILED\tSEGMENTS\tRUNS\tUPDATED\tDESCRIPTION")
	for _, s := range sts {
		updated := "-"
		if !s.UpdatedAt.IsZero() {
			updated = s.UpdatedAt.UTC().Format(time.RFC3339)
		}
		segs := "-"
		if s.Segments > 0 {
			segs = fmt.Sprintf("%d/%d", s.SegmentsDone, s.Segments)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\n", s.ID, s.Kind, s.State,
			s.Counts.Read, s.Counts.Written, s.Counts.Skipped, s.Counts.Failed, segs, s.Runs, updated, s.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sts {
		if s.LastError != "" && s.State != migrate.Completed {
			fmt.Fprintf(o.Stdout, "%s: last run stopped: %s\n", s.ID, s.LastError)
		}
		if len(s.Workers) > 0 {
			fmt.Fprintf(o.Stdout, "%s: %d workers: %s\n", s.ID, len(s.Workers), strings.Join(s.Workers, ", "))
		}
	}
	return nil
}

// parse parses flags and the one ID argument.
func parse(fs *flag.FlagSet, args []string) (string, error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return "", usageError{fmt.Sprintf("%s takes one migration ID", fs.Name())}
	}
	return fs.Arg(0), nil
}

func run(ctx context.Context, m *migrate.Migrator, args []string, o Options) (int, error) {
	var ro migrate.RunOptions
	if o.Run != nil {
		o.Run(&ro)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.IntVar(&ro.Segments, "segments", ro.Segments, "")
	fs.IntVar(&ro.Writers, "writers", ro.Writers, "")
	pageSize := fs.Int("page-size", int(ro.PageSize), "")
	fs.Float64Var(&ro.WCU, "wcu", ro.WCU, "")
	fs.BoolVar(&ro.DryRun, "dry-run", ro.DryRun, "")
	fs.BoolVar(&ro.Shared, "shared", ro.Shared, "")
	fs.IntVar(&ro.WorkerSegments, "worker-segments", ro.WorkerSegments, "")
	fs.DurationVar(&ro.Lease, "lease", ro.Lease, "")
	id, err := parse(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	ro.PageSize = int32(*pageSize)

	show := newProgressView(id, o)
	rep, err := m.Run(ctx, id, func(r *migrate.RunOptions) {
		*r = ro
		r.Progress = show.update
		r.ProgressInterval = show.interval
	})
	show.finish()
	if rep != nil {
		printReport(o.Stdout, rep)
	}
	if err != nil {
		return ExitFailure, err
	}
	return ExitOK, nil
}

func printReport(w io.Writer, r *migrate.Report) {
	switch {
	case r.AlreadyCompleted:
		fmt.Fprintf(w, "%s: already completed; nothing to do\n", r.ID)
	case r.DryRun:
		fmt.Fprintf(w, "%s: dry run (nothing written)\n", r.ID)
	default:
		fmt.Fprintf(w, "%s: %s", r.ID, r.State)
		if r.Resumed {
			fmt.Fprint(w, " (resumed from checkpoints)")
		}
		fmt.Fprintln(w)
	}
	if r.Claimed > 0 {
		rc := r.RunCounts
		fmt.Fprintf(w, "  this worker: read %d = written %d + skipped %d + failed %d; %d segments claimed, %d taken over\n",
			rc.Read, rc.Written, rc.Skipped, rc.Failed, r.Claimed, r.TakenOver)
	}
	c := r.Counts
	fmt.Fprintf(w, "  read %d = written %d + skipped %d + failed %d (scanned %d, %d segments)\n",
		c.Read, c.Written, c.Skipped, c.Failed, c.Scanned, r.Segments)
	if !r.AlreadyCompleted {
		verb := "writes"
		if r.DryRun {
			verb = "would write"
		}
		kinds := make([]string, 0, len(r.Ops))
		for k := range r.Ops {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "  %s: %d %s\n", verb, r.Ops[k], k)
		}
		fmt.Fprintf(w, "  %d WCU in %v", r.WCU, r.Elapsed.Round(time.Millisecond))
		if r.Retried > 0 {
			fmt.Fprintf(w, ", %d rewrites retried after concurrent changes", r.Retried)
		}
		fmt.Fprintln(w)
	}
	for i, f := range r.Failures {
		if i == 20 {
			fmt.Fprintf(w, "  ... and %d more failures\n", len(r.Failures)-i)
			break
		}
		fmt.Fprintf(w, "  failed: segment %d %s: %v\n", f.Segment, keyString(f.Key), f.Err)
	}
}

func verify(ctx context.Context, m *migrate.Migrator, args []string, o Options) (int, error) {
	var vo migrate.VerifyOptions
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.Float64Var(&vo.Sample, "sample", 1, "")
	fs.IntVar(&vo.Segments, "segments", 0, "")
	fs.IntVar(&vo.MaxDifferences, "max-diffs", 0, "")
	id, err := parse(fs, args)
	if err != nil {
		return ExitUsage, err
	}
	show := newProgressView(id, o)
	show.verify = true
	rep, err := m.Verify(ctx, id, func(v *migrate.VerifyOptions) {
		*v = vo
		v.Progress = show.update
		v.ProgressInterval = show.interval
	})
	show.finish()
	if err != nil {
		return ExitFailure, err
	}
	w := o.Stdout
	fmt.Fprintf(w, "%s (%s): %d source items, %d compared\n", rep.ID, rep.Kind, rep.SourceItems, rep.Compared)
	entities := map[string]bool{}
	for k := range rep.Expected {
		entities[k] = true
	}
	for k := range rep.Found {
		entities[k] = true
	}
	names := make([]string, 0, len(entities))
	for k := range entities {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if exp, ok := rep.Expected[k]; ok {
			mark := "ok"
			if exp != rep.Found[k] {
				mark = "DIFFERS"
			}
			fmt.Fprintf(w, "  %-20s expected %d, found %d  %s\n", k, exp, rep.Found[k], mark)
		} else {
			fmt.Fprintf(w, "  %-20s found %d\n", k, rep.Found[k])
		}
	}
	fmt.Fprintf(w, "  missing %d, different %d, unexpected %d, transform errors %d\n",
		rep.Missing, rep.Different, rep.Unexpected, rep.TransformErrors)
	for _, d := range rep.Differences {
		fmt.Fprintf(w, "  %v\n", d)
	}
	if !rep.OK() {
		fmt.Fprintln(w, "DIFFERENCES FOUND")
		return ExitFailure, nil
	}
	fmt.Fprintln(w, "OK")
	return ExitOK, nil
}

// keyString renders a primary key such as {username=john}.
func keyString(k map[string]types.AttributeValue) string {
	names := make([]string, 0, len(k))
	for a := range k {
		names = append(names, a)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, a := range names {
		var v string
		switch av := k[a].(type) {
		case *types.AttributeValueMemberS:
			v = av.Value
		case *types.AttributeValueMemberN:
			v = av.Value
		case *types.AttributeValueMemberB:
			v = fmt.Sprintf("%x", av.Value)
		}
		parts[i] = a + "=" + v
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// progressView shows a run's or a verification's progress: a bar on a
// terminal, periodic lines elsewhere.
type progressView struct {
	id       string
	w        io.Writer
	bar      *progressbar.ProgressBar
	interval time.Duration
	verify   bool // a verification: Read counts the items compared
}

func newProgressView(id string, o Options) *progressView {
	v := &progressView{id: id, w: o.Stderr, interval: o.LineInterval}
	if f, ok := o.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		v.interval = 200 * time.Millisecond
		v.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(o.Stderr),
			progressbar.OptionSetDescription(id),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("items"),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowElapsedTimeOnFinish(),
		)
	}
	return v
}

func (v *progressView) update(p migrate.Progress) {
	if v.bar == nil {
		if p.Done {
			return // the report follows
		}
		line := fmt.Sprintf("migrate %s: read %d (written %d, skipped %d, failed %d), %.0f items/s",
			v.id, p.Read, p.Written, p.Skipped, p.Failed, p.Rate)
		if v.verify {
			line = fmt.Sprintf("verify %s: scanned %d, compared %d, %.0f items/s", v.id, p.Scanned, p.Read, p.Rate)
		}
		if p.WCURate > 0 {
			line += fmt.Sprintf(", %.0f WCU/s", p.WCURate)
		}
		if p.ETA > 0 {
			line += fmt.Sprintf(", ETA %v", p.ETA.Round(time.Second))
		}
		fmt.Fprintln(v.w, line)
		return
	}
	if p.Total > 0 && p.Total >= p.Scanned {
		v.bar.ChangeMax64(p.Total)
	}
	if v.verify {
		v.bar.Describe(fmt.Sprintf("verify %s: %d compared", v.id, p.Read))
	} else {
		v.bar.Describe(fmt.Sprintf("%s: %d written, %d skipped, %d failed", v.id, p.Written, p.Skipped, p.Failed))
	}
	_ = v.bar.Set64(p.Scanned)
}

func (v *progressView) finish() {
	if v.bar != nil {
		_ = v.bar.Finish()
		fmt.Fprintln(v.w)
	}
}
