package migrate_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// The test binary doubles as a service's migration worker: with
// migrateWorkerEnv set to "<source table> <target table>", TestMain runs
// migrateWorkerMain instead of the tests, with the run flags in
// migrateWorkerArgsEnv, against DYNAMODB_ENDPOINT.
const (
	migrateWorkerEnv     = "SINGLETABLE_TEST_MIGRATE_WORKER"
	migrateWorkerArgsEnv = "SINGLETABLE_TEST_MIGRATE_ARGS"
)

// migrateWorkerMain is the skills service's migration worker: the legacy
// users copy run by Migrator.Run with migrateWorkerArgsEnv's "run [flags] ID"
// (the flags of the command-line tool's `migrate run`), printing progress lines
// on standard error and the run's report on standard output.
func migrateWorkerMain() int {
	tables := strings.Fields(os.Getenv(migrateWorkerEnv))
	if len(tables) != 2 {
		fmt.Fprintf(os.Stderr, "%s: want \"<source> <target>\"\n", migrateWorkerEnv)
		return 2
	}
	var ro migrate.RunOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.IntVar(&ro.Segments, "segments", 0, "")
	fs.IntVar(&ro.Writers, "writers", 0, "")
	pageSize := fs.Int("page-size", 0, "")
	fs.BoolVar(&ro.Shared, "shared", false, "")
	fs.IntVar(&ro.WorkerSegments, "worker-segments", 0, "")
	fs.DurationVar(&ro.Lease, "lease", 0, "")
	args := strings.Fields(os.Getenv(migrateWorkerArgsEnv))
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintf(os.Stderr, "%s: want \"run [flags] ID\", got %q\n", migrateWorkerArgsEnv, args)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintf(os.Stderr, "%s: want run flags and one migration ID (%v)\n", migrateWorkerArgsEnv, err)
		return 2
	}
	ro.PageSize = int32(*pageSize)
	id := fs.Arg(0)
	tbl := singletable.NewTable(ddblocal.NewClient(os.Getenv(ddblocal.EndpointEnv)), tables[1])
	users := singletable.MustBind(tbl, Users)
	singletable.MustBind(tbl, UserSkills)
	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: tables[0]}, usersTransform(users)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rep, err := m.Run(context.Background(), id, func(r *migrate.RunOptions) {
		*r = ro
		r.ProgressInterval = 100 * time.Millisecond
		r.Progress = func(p migrate.Progress) {
			if !p.Done {
				fmt.Fprintf(os.Stderr, "migrate %s: read %d (written %d)\n", id, p.Read, p.Written)
			}
		}
	})
	if rep != nil {
		rc, c := rep.RunCounts, rep.Counts
		fmt.Printf("%s: %s\n", rep.ID, rep.State)
		fmt.Printf("  this worker: read %d = written %d + skipped %d + failed %d; %d segments claimed, %d taken over\n",
			rc.Read, rc.Written, rc.Skipped, rc.Failed, rep.Claimed, rep.TakenOver)
		fmt.Printf("  read %d = written %d + skipped %d + failed %d (scanned %d, %d segments)\n",
			c.Read, c.Written, c.Skipped, c.Failed, c.Scanned, rep.Segments)
		fmt.Printf("  %d WCU in %v\n", rep.WCU, rep.Elapsed.Round(time.Millisecond))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerReport is what one worker process printed.
type workerReport struct {
	out     string
	read    int64
	taken   int
	elapsed time.Duration
}

var (
	workerLine  = regexp.MustCompile(`this worker: read (\d+) = .*; (\d+) segments claimed, (\d+) taken over`)
	elapsedLine = regexp.MustCompile(`\d+ WCU in (\S+)`)
	progressRe  = regexp.MustCompile(`migrate 000-users: read (\d+)`)
)

func parseWorkerReport(t *testing.T, out string) workerReport {
	t.Helper()
	r := workerReport{out: out}
	m := workerLine.FindStringSubmatch(out)
	require.NotNil(t, m, "no worker line in:\n%s", out)
	r.read, _ = strconv.ParseInt(m[1], 10, 64)
	r.taken, _ = strconv.Atoi(m[3])
	e := elapsedLine.FindStringSubmatch(out)
	require.NotNil(t, e, "no elapsed time in:\n%s", out)
	var err error
	r.elapsed, err = time.ParseDuration(e[1])
	require.NoError(t, err)
	return r
}

// The must-show of shared migrations: a copy of 20,000 users by three
// worker processes (this test binary re-executed as a worker running
// `run -shared`),
// one of them killed with SIGKILL mid-run. The two others take its
// segments over once their leases expire; the migration completes with the
// counts of one pass, and the table equals the one a single process makes.
// It also measures each worker's throughput against a single worker (the
// figures in docs/migrations.md).
func TestMigrateWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 20,000 items twice with OS processes; run without -short")
	}
	ctx := context.Background()
	const n = 20000
	src := newLegacyTable(t, n)
	endpoint := ddblocal.Shared(t).Endpoint()
	// The lease is long enough that a loaded machine renews it in time (a
	// survivor that lost one would stop); the killed worker's segments wait
	// that long before they are taken over.
	args := "run -shared -segments 12 -worker-segments 2 -writers 8 -page-size 250 -lease 10s 000-users"
	worker := func(dst string) *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), migrateWorkerEnv+"="+src+" "+dst, migrateWorkerArgsEnv+"="+args,
			ddblocal.EndpointEnv+"="+endpoint)
		return cmd
	}

	// One worker alone: the reference table and the single-worker rate.
	ref, _, _ := usersTarget(t)
	start := time.Now()
	out, err := worker(ref.Name()).Output()
	require.NoError(t, err, "%s", out)
	single := parseWorkerReport(t, string(out))
	singleWall := time.Since(start)
	assert.Contains(t, single.out, "000-users: completed")
	assert.Equal(t, int64(n), single.read)

	// Three workers; worker 0 is killed once it has checkpointed 2,000 items.
	tbl, users, _ := usersTarget(t)
	cmds := make([]*exec.Cmd, 3)
	outs := make([]*bytes.Buffer, 3)
	for i := range cmds {
		cmds[i] = worker(tbl.Name())
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout = outs[i]
	}
	progress, err := cmds[0].StderrPipe()
	require.NoError(t, err)
	start = time.Now()
	for _, cmd := range cmds {
		require.NoError(t, cmd.Start())
	}
	var killedAt int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(progress)
		for sc.Scan() {
			if m := progressRe.FindStringSubmatch(sc.Text()); m != nil && killedAt == 0 {
				if read, _ := strconv.ParseInt(m[1], 10, 64); read >= 2000 {
					killedAt = read
					_ = cmds[0].Process.Kill() // SIGKILL
				}
			}
		}
	}()
	wg.Wait()
	err = cmds[0].Wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "killed")
	require.NotZero(t, killedAt, "worker 0 finished before it could be killed:\n%s", outs[0])
	var survivors []workerReport
	for i := 1; i < 3; i++ {
		require.NoError(t, cmds[i].Wait(), "%s", outs[i])
		r := parseWorkerReport(t, outs[i].String())
		assert.Contains(t, r.out, "000-users: completed")
		assert.Contains(t, r.out, "read 20000 = written 19800 + skipped 200 + failed 0 (scanned 20000, 12 segments)")
		survivors = append(survivors, r)
	}
	wall := time.Since(start)

	m, err := migrate.New(tbl, migrate.Copy("000-users", migrate.Source{Table: src}, usersTransform(users)))
	require.NoError(t, err)
	st := must(m.Status(ctx))[0]
	want := migrate.Counts{Scanned: n, Read: n, Written: n - n/100, Skipped: n / 100}
	assert.Equal(t, migrate.Completed, st.State)
	assert.Equal(t, want, st.Counts, "pages redone after the kill are counted once")
	assert.Equal(t, 12, st.SegmentsDone)
	assert.Equal(t, 3, st.Runs)
	taken := survivors[0].taken + survivors[1].taken
	assert.Positive(t, taken, "the killed worker's segments were taken over")
	assert.Less(t, survivors[0].read+survivors[1].read, int64(n), "the killed worker's checkpoints count")
	assert.Equal(t, contents(t, ref), contents(t, tbl), "the same table as a single process makes")

	rate := func(r workerReport) float64 { return float64(r.read) / r.elapsed.Seconds() }
	t.Logf("single worker: %d items in %v: %.0f items/s (process wall time %v)", single.read, single.elapsed.Round(time.Millisecond), rate(single), singleWall.Round(time.Millisecond))
	t.Logf("worker 0: killed at %d items checkpointed", killedAt)
	for i, r := range survivors {
		t.Logf("worker %d: %d items in %v: %.0f items/s (%.2f of the single worker), %d segments taken over",
			i+1, r.read, r.elapsed.Round(time.Millisecond), rate(r), rate(r)/rate(single), r.taken)
	}
	t.Logf("three workers, one killed: %d items in %v wall: %.0f items/s", n, wall.Round(time.Millisecond), float64(n)/wall.Seconds())
}
