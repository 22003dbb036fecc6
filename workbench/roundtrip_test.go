package workbench_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/singletable-go/singletable/ddblocal"

	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/workbench"
)

// TestRoundTrip exports every example app's model, generates Go
// declarations from it, compiles them in a module of their own, writes
// the model's sample items into a fresh table with the raw SDK, and reads
// every one back through the generated repositories: the keys parsed
// from its PK and SK, a Get, and the item the generated declaration
// renders from what Get returned, which must be the sample byte for byte
// (keys, index keys and every attribute). One go run does all models.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a module: not in -short")
	}
	endpoint := ddblocal.Shared(t).Endpoint() // DYNAMODB_ENDPOINT's, or one started for the tests
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	var imports, calls strings.Builder
	for i, x := range exampleModels() {
		m := exportExample(t, x)
		pkg := fmt.Sprintf("m%d", i)
		src, err := workbench.Generate(m, func(o *workbench.GenerateOptions) { o.Package = pkg })
		require.NoError(t, err, "%s", src)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, pkg), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, pkg, "model.go"), src, 0o644))
		var js bytes.Buffer
		require.NoError(t, m.Write(&js))
		require.NoError(t, os.WriteFile(filepath.Join(dir, pkg+".json"), js.Bytes(), 0o644))
		fmt.Fprintf(&imports, "\t%s \"roundtrip/%s\"\n", pkg, pkg)
		fmt.Fprintf(&calls, "\t{\n\t\tm, tb := load(%q)\n\t\tr := %s.New(client, fmt.Sprintf(\"wbrt-%s-%%d\", time.Now().UnixNano()))\n\t\tsetUp(ctx, r.Table, client, tb)\n", pkg+".json", pkg, pkg)
		facets := nonEmptyFacets(m)
		repos := regexp.MustCompile(`(?m)^\t(\w+)\s+\*singletable\.Repo\[`).FindAllStringSubmatch(string(src), -1)
		require.Len(t, repos, len(facets), "a repository per facet with items")
		for j, f := range facets {
			fmt.Fprintf(&calls, "\t\tcheck(ctx, r.%s, m, tb, %q)\n", repos[j][1], f)
		}
		calls.WriteString("\t\tif err := r.Table.DeleteTable(ctx); err != nil {\n\t\t\tpanic(err)\n\t\t}\n\t}\n")
	}
	main := strings.Replace(strings.Replace(roundTripMain, "//IMPORTS\n", imports.String(), 1), "\t//CALLS\n", calls.String(), 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644))
	gomod := "module roundtrip\n\ngo 1.24\n\nrequire github.com/singletable-go/singletable v0.0.0\n\nreplace github.com/singletable-go/singletable => " + repo + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	run := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "DYNAMODB_ENDPOINT="+endpoint)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("mod", "tidy")
	start := time.Now()
	out := run("run", ".")
	t.Logf("go run (build and read back) took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	require.Contains(t, out, "read back")
}

func nonEmptyFacets(m *workbench.Model) []string {
	var out []string
	for _, f := range m.DataModel[0].TableFacets {
		if len(f.TableData) > 0 {
			out = append(out, f.FacetName)
		}
	}
	return out
}

// roundTripMain is the program that writes and reads back the samples.
const roundTripMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/workbench"

//IMPORTS
)

func main() {
	ctx := context.Background()
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(os.Getenv("DYNAMODB_ENDPOINT")),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	//CALLS
	fmt.Println("every sample item read back through the generated repositories:", items)
}

var items int

func load(path string) (*workbench.Model, *workbench.Table) {
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	m, err := workbench.Read(f)
	if err != nil {
		panic(err)
	}
	return m, &m.DataModel[0]
}

// setUp creates the table from the generated declarations and writes
// the model's sample items with the raw SDK.
func setUp(ctx context.Context, t *singletable.Table, client *dynamodb.Client, tb *workbench.Table) {
	if err := t.CreateTable(ctx); err != nil {
		panic(err)
	}
	for _, f := range tb.TableFacets {
		for _, it := range f.TableData {
			av, err := it.AttributeValues()
			if err != nil {
				panic(err)
			}
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.Name()), Item: av}); err != nil {
				panic(err)
			}
		}
	}
}

func check[T any](ctx context.Context, r *singletable.Repo[T], m *workbench.Model, tb *workbench.Table, facet string) {
	for _, f := range tb.TableFacets {
		if f.FacetName != facet {
			continue
		}
		for _, it := range f.TableData {
			var sk string
			if tb.KeyAttributes.SortKey != nil {
				sk = it[tb.KeyAttributes.SortKey.AttributeName].Text()
			}
			key, err := r.Entity().ParseKeys(it[tb.KeyAttributes.PartitionKey.AttributeName].Text(), sk)
			if err != nil {
				fail(facet, it, "parse keys: %v", err)
			}
			got, err := r.Get(ctx, key)
			if err != nil {
				fail(facet, it, "get: %v", err)
			}
			op := r.PutOp(got)
			if op.Err() != nil {
				fail(facet, it, "render: %v", op.Err())
			}
			want, _ := json.Marshal(it)
			have, _ := json.Marshal(workbench.ItemOf(op.Item()))
			if string(want) != string(have) {
				fail(facet, it, "rendered back as\n%s\nnot\n%s", have, want)
			}
			items++
		}
	}
}

func fail(facet string, it workbench.Item, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s: %v: %s\n", facet, it, fmt.Sprintf(format, args...))
	os.Exit(1)
}
`
