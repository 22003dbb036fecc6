package tool_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/cmd/singletable/migratecli"
	"github.com/singletable-go/singletable/cmd/singletable/tool"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/migrate"
	"github.com/singletable-go/singletable/workbench"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

// cli runs the tool in this process, as a program's main would.
type cli struct {
	t              *testing.T
	p              tool.Program
	stdout, stderr bytes.Buffer
}

func (c *cli) run(args ...string) int {
	c.t.Helper()
	c.stdout.Reset()
	c.stderr.Reset()
	p := c.p
	p.Stdout, p.Stderr = &c.stdout, &c.stderr
	return tool.Run(context.Background(), p, args)
}

// skillsProgram registers the skills service's table under name, as
// cmd/singletable/examples/skills does, with one of its migrations.
func skillsProgram(name string) tool.Program {
	created := time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)
	return tool.Program{
		Name: "skills-admin",
		Declare: func(client singletable.Client) ([]tool.Table, error) {
			st := skills.NewStore(client, name)
			return []tool.Table{{
				Table:    st.Table,
				Patterns: skills.AccessPatterns(st),
				Accepted: skills.Accepted,
				Samples: []workbench.Sample{
					workbench.Samples(st.Users, skills.User{Username: "john", Name: "John", PasswordHash: "h1", CreatedAt: created, UpdatedAt: created}),
					workbench.Samples(st.Skills, skills.UserSkill{Username: "john", SkillName: "go", Level: "Expert", Years: 8, CreatedAt: created, UpdatedAt: created}),
				},
				Migrations: []migrate.Migration{skills.UsersListingMigration(st)},
			}}, nil
		},
		Migrate: func(o *migratecli.Options) { o.LineInterval = 5 * time.Millisecond },
	}
}

// The commands that read only the declarations: catalog, lint, workbench
// export from the registered samples and import of what it wrote.
func TestDeclarationCommands(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, p: skillsProgram(skills.TableName)}
	st := skills.NewStore(nil, skills.TableName)

	require.Equal(t, tool.ExitOK, c.run("catalog"), c.stderr.String())
	want := catalog.New(st.Table, skills.AccessPatterns(st)...).Accept(skills.Accepted...).Markdown()
	assert.Equal(t, want, c.stdout.String())
	assert.Contains(t, c.stdout.String(), "Accepted by the design, with its reasons:")
	file := filepath.Join(t.TempDir(), "catalog.md")
	require.Equal(t, tool.ExitOK, c.run("catalog", "-o", file, "-table", skills.TableName), c.stderr.String())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
	assert.Empty(t, c.stdout.String())

	// The picture of the registered sample values, as catalog draws it.
	require.Equal(t, tool.ExitOK, c.run("catalog", "-format", "svg"), c.stderr.String())
	created := time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)
	picture := catalog.Picture(st.Table, []map[string]types.AttributeValue{
		st.Users.PutOp(skills.User{Username: "john", Name: "John", PasswordHash: "h1", CreatedAt: created, UpdatedAt: created}).Item(),
		st.Skills.PutOp(skills.UserSkill{Username: "john", SkillName: "go", Level: "Expert", Years: 8, CreatedAt: created, UpdatedAt: created}).Item(),
	})
	assert.Equal(t, picture, c.stdout.String())
	assert.Contains(t, c.stdout.String(), "<svg")

	// The skills design has one lint warning, which the program accepts,
	// and no error: -strict fails on the warning only when not accepted.
	require.Equal(t, tool.ExitOK, c.run("lint"), c.stderr.String())
	assert.Contains(t, c.stdout.String(), "glad-entities: 0 errors, 0 warnings, 0 info, 1 accepted\n  warning UserSkill index GSI1")
	assert.Contains(t, c.stdout.String(), "(key-order); accepted: a level is one of Levels")
	require.Equal(t, tool.ExitOK, c.run("lint", "-strict"), c.stdout.String())
	unaccepted := skillsProgram(skills.TableName)
	declare := unaccepted.Declare
	unaccepted.Declare = func(client singletable.Client) ([]tool.Table, error) {
		ts, err := declare(client)
		ts[0].Accepted = nil
		return ts, err
	}
	u := &cli{t: t, p: unaccepted}
	require.Equal(t, tool.ExitOK, u.run("lint"), u.stderr.String())
	assert.Contains(t, u.stdout.String(), "glad-entities: 0 errors, 1 warnings, 0 info, 0 accepted\n  warning UserSkill index GSI1")
	assert.Equal(t, tool.ExitFailure, u.run("lint", "-strict"))

	require.Equal(t, tool.ExitOK, c.run("workbench", "export", "-date", "2025-01-15T10:30:00Z", "-author", "tests"), c.stderr.String())
	m, err := workbench.Read(bytes.NewReader(c.stdout.Bytes()))
	require.NoError(t, err, "the export reads back strictly")
	require.Len(t, m.DataModel, 1)
	assert.Equal(t, "glad-entities", m.ModelName)
	assert.Equal(t, "tests", m.ModelMetadata.Author)
	items := map[string]int{}
	for _, f := range m.DataModel[0].TableFacets {
		items[f.FacetName] = len(f.TableData)
	}
	assert.Equal(t, 1, items["User"], "facets: %v", items)
	assert.Equal(t, 1, items["UserSkill"], "facets: %v", items)

	model := filepath.Join(t.TempDir(), "model.json")
	require.NoError(t, os.WriteFile(model, c.stdout.Bytes(), 0o644))
	require.Equal(t, tool.ExitOK, c.run("workbench", "import", "-package", "skillsmodel", model), c.stderr.String())
	src := c.stdout.String()
	assert.Contains(t, src, "package skillsmodel")
	assert.Contains(t, src, "singletable.Schema[User]")
	assert.Contains(t, src, "singletable.Schema[UserSkill]")
}

// check, workbench export -scan and migrate against a live table.
// Not parallel: it sets DYNAMODB_ENDPOINT.
func TestTableCommands(t *testing.T) {
	ctx := context.Background()
	endpoint := ddblocal.Shared(t).Endpoint()
	name := ddblocal.TableName(t)
	c := &cli{t: t, p: skillsProgram(name)}

	// No table yet: drift, exit 1.
	require.Equal(t, tool.ExitFailure, c.run("check", "-endpoint", endpoint), c.stderr.String())
	assert.Contains(t, c.stdout.String(), name+": DIFFERS: ")

	st := skills.NewStore(ddblocal.Shared(t).Client(), name)
	require.NoError(t, st.Table.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), name)
	require.Equal(t, tool.ExitOK, c.run("check", "-endpoint", endpoint), c.stdout.String()+c.stderr.String())
	assert.Equal(t, name+": matches the declarations\n", c.stdout.String())

	// A user written as the Go service does (no GSI1 listing keys) is
	// what the registered backfill is for.
	created := time.Date(2024, 1, 7, 10, 0, 0, 0, time.UTC)
	_, err := st.Users.Put(ctx, skills.User{Username: "ann", Name: "Ann", PasswordHash: "h", CreatedAt: created, UpdatedAt: created})
	require.NoError(t, err)

	t.Setenv("DYNAMODB_ENDPOINT", endpoint) // the default of -endpoint
	require.Equal(t, tool.ExitOK, c.run("workbench", "export", "-scan", "10"), c.stderr.String())
	assert.Contains(t, c.stderr.String(), "scanning "+name+" for up to 10 items ...\nread 1 items from "+name)
	m, err := workbench.Read(bytes.NewReader(c.stdout.Bytes()))
	require.NoError(t, err)
	require.Len(t, m.DataModel, 1)
	var users int
	for _, f := range m.DataModel[0].TableFacets {
		if f.FacetName == "User" {
			users = len(f.TableData)
		}
	}
	assert.Equal(t, 1, users, "the item read from the table, in its entity's facet")

	require.Equal(t, tool.ExitOK, c.run("catalog", "-format", "svg", "-scan", "10"), c.stderr.String())
	assert.Contains(t, c.stderr.String(), "read 1 items from "+name)
	assert.Contains(t, c.stdout.String(), "USER#ann", "the picture of the item read from the table")

	require.Equal(t, tool.ExitOK, c.run("migrate", "status"), c.stderr.String())
	assert.Regexp(t, `001-users-listing\s+backfill\s+pending`, c.stdout.String())
	require.Equal(t, tool.ExitOK, c.run("migrate", "-table", name, "run", "001-users-listing"), c.stderr.String())
	assert.Contains(t, c.stdout.String(), "001-users-listing: completed\n")
	require.Equal(t, tool.ExitOK, c.run("migrate", "verify", "001-users-listing"), c.stdout.String())
	assert.Contains(t, c.stdout.String(), "\nOK\n")
	assert.Equal(t, tool.ExitUsage, c.run("migrate", "run"))
	assert.Contains(t, c.stderr.String(), "skills-admin migrate: run takes one migration ID")
	assert.Equal(t, tool.ExitFailure, c.run("migrate", "run", "no-such-migration"))
	assert.Contains(t, c.stderr.String(), "unknown migration ID")
	require.Equal(t, tool.ExitOK, c.run("migrate", "run", "--help"))
	assert.Contains(t, c.stdout.String(), "skills-admin migrate run [flags] ID")

	// Drift: a live table without the declared indexes.
	drifted := ddblocal.TableName(t)
	in := skills.NewStore(nil, drifted).Table.CreateTableInput()
	in.GlobalSecondaryIndexes = nil
	keys := in.AttributeDefinitions[:0]
	for _, a := range in.AttributeDefinitions {
		if *a.AttributeName == "PK" || *a.AttributeName == "SK" {
			keys = append(keys, a)
		}
	}
	in.AttributeDefinitions = keys
	_, err = ddblocal.Shared(t).Client().CreateTable(ctx, in)
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), drifted)
	d := &cli{t: t, p: skillsProgram(drifted)}
	require.Equal(t, tool.ExitFailure, d.run("check"), d.stderr.String())
	assert.Contains(t, d.stdout.String(), drifted+": DIFFERS: ")
	assert.Contains(t, d.stdout.String(), "GSI1")

	// An index the program creates beside the declarations (Table.Create):
	// check looks for it too.
	audit := func(o *singletable.CreateTableOptions) {
		o.Indexes = []describe.Index{{Name: "Audit", Partition: []describe.KeyAttribute{{Name: "AuditPK"}}}}
	}
	withAudit := func(table string) *cli {
		p := skillsProgram(table)
		declare := p.Declare
		p.Declare = func(client singletable.Client) ([]tool.Table, error) {
			ts, err := declare(client)
			for i := range ts {
				ts[i].Create = audit
			}
			return ts, err
		}
		return &cli{t: t, p: p}
	}
	a := withAudit(name)
	require.Equal(t, tool.ExitFailure, a.run("check"), a.stderr.String())
	assert.Contains(t, a.stdout.String(), name+": DIFFERS: ")
	assert.Contains(t, a.stdout.String(), "index Audit is missing")
	audited := ddblocal.TableName(t)
	require.NoError(t, skills.NewStore(ddblocal.Shared(t).Client(), audited).Table.CreateTable(ctx, audit))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), audited)
	a = withAudit(audited)
	require.Equal(t, tool.ExitOK, a.run("check"), a.stdout.String())
	assert.Equal(t, audited+": matches the declarations\n", a.stdout.String())
}

// Usage errors exit 2 with a hint; failures exit 1.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, p: skillsProgram(skills.TableName)}
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"workbench"},
		{"workbench", "frob"},
		{"lint", "extra"},
		{"lint", "-no-such-flag"},
		{"catalog", "-table", "nope"},
		{"workbench", "import"},
		{"workbench", "export", "-date", "yesterday"},
		{"catalog", "-format", "png"},
		{"catalog", "-scan", "3"},
		{"migrate", "-table", "nope", "status"},
	} {
		assert.Equal(t, tool.ExitUsage, c.run(args...), "%q", args)
		assert.NotEmpty(t, c.stderr.String(), "%q says why", args)
		assert.Empty(t, c.stdout.String(), "%q", args)
	}
	assert.Contains(t, c.run0("catalog", "-table", "nope"), `no table "nope" is registered (registered: glad-entities)`)
	assert.Contains(t, c.run0("lint", "extra"), "Run 'skills-admin lint --help' for usage.")

	assert.Equal(t, tool.ExitFailure, c.run("workbench", "import", filepath.Join(t.TempDir(), "missing.json")))
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "lint"}, {"lint", "-h"}, {"workbench", "export", "-help"}, {"workbench", "--help"}, {"migrate", "status", "--help"}} {
		assert.Equal(t, tool.ExitOK, c.run(args...), "%q", args)
		assert.Contains(t, c.stdout.String(), "usage:", "%q prints the help on standard output", args)
		assert.Empty(t, c.stderr.String(), "%q", args)
	}

	// A build without declarations: the commands that need them say how to
	// register; the others run.
	bare := &cli{t: t, p: tool.Program{Name: "singletable"}}
	for _, args := range [][]string{{"catalog"}, {"lint"}, {"check", "-table", "x"}, {"migrate", "status"}, {"workbench", "export"}} {
		assert.Equal(t, tool.ExitUsage, bare.run(args...), "%q", args)
		assert.Contains(t, bare.stderr.String(), "registers no tables", "%q", args)
	}
	require.Equal(t, tool.ExitOK, bare.run("lint", "--help"))
	assert.Contains(t, bare.stdout.String(), "This build of singletable registers no declarations")

	failing := &cli{t: t, p: tool.Program{Name: "x", Declare: func(singletable.Client) ([]tool.Table, error) {
		return nil, errors.New("no config")
	}}}
	assert.Equal(t, tool.ExitFailure, failing.run("lint"))
	assert.Equal(t, "x lint: declarations: no config\n", failing.stderr.String())
}

// run0 runs args and returns what the tool wrote on standard error.
func (c *cli) run0(args ...string) string {
	c.t.Helper()
	c.run(args...)
	return c.stderr.String()
}

// lockedBuffer is a bytes.Buffer that the tool writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// local starts DynamoDB Local in the foreground, says where, serves, and
// stops on Ctrl-C (the context's cancellation) with exit code 0.
func TestLocal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- tool.Run(ctx, tool.Program{Name: "singletable", Stdout: &out, Stderr: &errOut}, []string{"local", "-port", "0", "-quiet"})
	}()
	const prefix = "export " + ddblocal.EndpointEnv + "="
	var endpoint string
	ready := func() bool {
		select {
		case code := <-done:
			if strings.Contains(errOut.String(), ddblocal.ErrUnavailable.Error()) && !ddblocal.Required() {
				t.Skipf("DynamoDB Local cannot run here: %s", errOut.String())
			}
			t.Fatalf("local exited with %d before it was ready: %s", code, errOut.String())
		default:
		}
		_, after, ok := strings.Cut(out.String(), prefix)
		endpoint, _, _ = strings.Cut(after, "\n")
		return ok && strings.HasSuffix(after, "\n")
	}
	require.Eventually(t, ready, 5*time.Minute, 20*time.Millisecond, "local never said where it listens: %s", errOut.String())
	assert.Contains(t, out.String(), "listening on "+endpoint)
	_, err := ddblocal.NewClient(endpoint).ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err, "the server answers at %s", endpoint)
	cancel()
	assert.Equal(t, tool.ExitOK, <-done, errOut.String())
	assert.Contains(t, errOut.String(), "stopping DynamoDB Local")
}
