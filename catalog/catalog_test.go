package catalog_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/describe"
)

type catA struct {
	ID, Name, Day string
	N             int
}

type catB struct {
	ID, Other, Shard string
}

func findings(c *catalog.Catalog) []string {
	var out []string
	for _, f := range c.Findings {
		out = append(out, f.String())
	}
	return out
}

func TestCatalogLint(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a    singletable.Schema[catA]
		b    singletable.Schema[catB]
		want []string // substrings, one per finding, in order
	}{
		{
			name: "distinct prefixes are clean",
			a:    singletable.Schema[catA]{Type: "A", PK: "X#{ID}", SK: "A#{Name}"},
			b:    singletable.Schema[catB]{Type: "B", PK: "X#{ID}", SK: "B#{Other}"},
		},
		{
			name: "same key shapes overwrite each other",
			a:    singletable.Schema[catA]{Type: "A", PK: "X#{ID}", SK: "ITEM#{Name}"},
			b:    singletable.Schema[catB]{Type: "B", PK: "X#{Shard}", SK: "ITEM#{Other}"},
			want: []string{"error A: A and B render the same table keys"},
		},
		{
			name: "sort prefix of another entity",
			a:    singletable.Schema[catA]{Type: "A", PK: "X#{ID}", SK: "SKILL{Name}"},
			b:    singletable.Schema[catB]{Type: "B", PK: "X#{ID}", SK: "SKILLSET#{Other}"},
			want: []string{`warning A: A shares its table partitions (PK = X#{ID}) with B, and A's sort key prefix "SKILL" is a prefix of B's`},
		},
		{
			name: "different partitions never collide",
			a:    singletable.Schema[catA]{Type: "A", PK: "X#{ID}", SK: "ITEM#{Name}"},
			b:    singletable.Schema[catB]{Type: "B", PK: "Y#{ID}", SK: "ITEM#{Other}"},
		},
		{
			name: "constant partitions",
			a:    singletable.Schema[catA]{Type: "A", PK: "EVENTS", SK: "{N}#{Day}"},
			b:    singletable.Schema[catB]{Type: "B", PK: "METADATA", SK: "COUNTS"},
			want: []string{"warning A: constant partition key PK = EVENTS", "info B: singleton item (PK = METADATA, SK = COUNTS)"},
		},
		{
			name: "constant index partition",
			a: singletable.Schema[catA]{Type: "A", PK: "A#{ID}", SK: "A", Indexes: []singletable.IndexSchema[catA]{
				{Name: "GSI1", PK: "ALL", SK: "{Name}"}}},
			b:    singletable.Schema[catB]{Type: "B", PK: "B#{ID}", SK: "B"},
			want: []string{"warning A index GSI1: constant partition key GSI1PK = ALL"},
		},
		{
			name: "index sort overlap is a warning",
			a: singletable.Schema[catA]{Type: "A", PK: "A#{ID}", SK: "A", Indexes: []singletable.IndexSchema[catA]{
				{Name: "GSI1", PK: "T#{ID}", SK: "{Name}"}}},
			b: singletable.Schema[catB]{Type: "B", PK: "B#{ID}", SK: "B", Indexes: []singletable.IndexSchema[catB]{
				{Name: "GSI1", PK: "T#{ID}", SK: "{Other}"}}},
			want: []string{"warning A index GSI1: A and B render the same index GSI1 keys"},
		},
		{
			name: "keys matched by distinct literals are clean",
			a:    singletable.Schema[catA]{Type: "A", PK: "METADATA", SK: "COUNTS", MatchKeys: true},
			b:    singletable.Schema[catB]{Type: "B", PK: "METADATA", SK: "SYNC", MatchKeys: true},
			want: []string{"info A: singleton item", "info B: singleton item"},
		},
		{
			name: "a placeholder can hold another template's literal",
			a:    singletable.Schema[catA]{Type: "A", PK: "E#{ID}", SK: "{Name}", MatchKeys: true},
			b:    singletable.Schema[catB]{Type: "B", PK: "E#{ID}", SK: "VOTER{Other}", MatchKeys: true},
			want: []string{"warning A: A shares its table partitions",
				`warning A: A's SK = {Name} can render B's keys (SK = VOTER{Other}): Name = "VOTER0" renders SK "VOTER0", B's key for Other = "0"`,
				"warning A: A and B both match keys (MatchKeys) and a key can parse with both's templates"},
		},
		{
			name: "a delimiter keeps the shapes apart",
			a:    singletable.Schema[catA]{Type: "A", PK: "E#{ID}", SK: "V#{Name}", MatchKeys: true},
			b:    singletable.Schema[catB]{Type: "B", PK: "E#{ID}", SK: "V#{Other}#{Shard}", MatchKeys: true},
			want: []string{"warning A: A shares its table partitions", "warning B: B shares its table partitions"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl := singletable.NewTable(nil, "t")
			singletable.MustBind(tbl, singletable.MustDefine(c.a))
			singletable.MustBind(tbl, singletable.MustDefine(c.b))
			got := findings(catalog.New(tbl))
			require.Len(t, got, len(c.want), "findings: %q", got)
			for i, w := range c.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

func TestCatalogPatterns(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "t")
	a := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[catA]{
		Type: "A", PK: "A#{ID}", SK: "DAY#{Day}#N#{N}",
		Indexes: []singletable.IndexSchema[catA]{
			{Name: "GSI1", PK: "NAME#{Name}", SK: "{Day}",
				When: func(v catA) bool { return v.N > 0 }, WhenFields: []string{"N"}},
			{Name: "GSI2", PartitionAttrs: []string{"Name"}, SortAttrs: []string{"Day", "N"}},
			{Name: "GSI3", PK: "UNUSED#{Name}"},
		},
	}))
	k := catA{}
	cases := []struct {
		q    *singletable.Query[catA]
		want string
	}{
		{a.Query(k), "PK = A#{ID} AND begins_with(SK, DAY#)"},
		{a.Query(k).Where("Day", singletable.Eq, k.Day), "PK = A#{ID} AND begins_with(SK, DAY#{Day}#N#)"},
		{a.Query(k).Where("N", singletable.Eq, k.N), "PK = A#{ID} AND SK = DAY#{Day}#N#{N}"},
		{a.Query(k).Where("N", singletable.Ge, k.N).Desc(), "PK = A#{ID} AND SK >= DAY#{Day}#N#{N} (descending)"},
		{a.Query(k).Between("Day", k.Day, k.Day), "PK = A#{ID} AND SK BETWEEN DAY#{Day} AND DAY#{Day:high}"},
		{a.Query(k).BeginsWith("Day", "2024-01"), "PK = A#{ID} AND begins_with(SK, DAY#{Day:prefix})"},
		{a.QueryIndex("GSI1", k).Filter(expression.Name("N").GreaterThan(expression.Value(1))), "GSI1PK = NAME#{Name} (filtered)"},
		{a.QueryIndex("GSI2", k).Where("N", singletable.Lt, k.N), "Name = {Name} AND Day = {Day} AND N < {N}"},
	}
	var pats []catalog.Pattern
	for i, c := range cases {
		p := catalog.Query("Q", "d", c.q)
		assert.Equal(t, c.want, p.Condition, "case %d", i)
		pats = append(pats, p)
	}
	pats = append(pats, catalog.Item("P", "put", catalog.OpPut, a),
		catalog.Pattern{Name: "X", Entity: "Nope", Operation: catalog.OpGet})
	c := catalog.New(tbl, pats...)
	got := findings(c)
	require.Len(t, got, 2, "%q", got)
	assert.Contains(t, got[0], "error Nope: access pattern X names an entity not bound")
	assert.Contains(t, got[1], "warning index GSI3: no listed access pattern queries this index")
	md := c.Markdown()
	assert.Contains(t, md, "GSI1: `GSI1PK = NAME#{Name}`, `GSI1SK = {Day}`; in the index when Name, Day present and When(N) holds")
	assert.Contains(t, md, "| GSI2 | multi-attribute | Name (S) | Day (S), N (N) | A | Q |")
	assert.Equal(t, 1, strings.Count(md, "## Lint"))
}

func TestCatalogGuards(t *testing.T) {
	t.Parallel()
	type Account struct {
		ID, Email string
		Version   int
		Created   time.Time
		Expires   time.Time
	}
	tbl := singletable.NewTable(nil, "t")
	singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Account]{
		Type: "Account", PK: "ACCOUNT#{ID}", SK: "A",
		Unique: []singletable.Unique{{Fields: []string{"Email"}}}, Version: "Version", CreatedAt: "Created", TTL: "Expires",
	}))
	c := catalog.New(tbl)
	require.Len(t, c.Entities, 1)
	e := c.Entities[0]
	assert.Equal(t, []describe.Unique{{Fields: []string{"Email"}}}, e.Unique)
	assert.Equal(t, "Version", e.Version)
	assert.Equal(t, "Created", e.CreatedAt)
	assert.Equal(t, "Expires", e.TTL)
	md := c.Markdown()
	assert.Contains(t, md, "- Unique `Email`: a guard item per value")
	assert.Contains(t, md, "- Version `Version`: optimistic locking")
	assert.Contains(t, md, "- Managed timestamps: Created\n")
	assert.Contains(t, md, "- TTL `Expires`")
}

// TestCatalogProjections: an index that holds less than everything says
// so in the catalog's Indexes.
func TestCatalogProjections(t *testing.T) {
	t.Parallel()
	type Sub struct{ ID, SKU, Email, Amount string }
	tbl := singletable.NewTable(nil, "payments")
	singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Sub]{
		Type: "Sub", PK: "SUB#{ID}", SK: "S",
		Indexes: []singletable.IndexSchema[Sub]{
			{Name: "BySKU", PartitionAttrs: []string{"SKU"}, Projection: types.ProjectionTypeKeysOnly},
			{Name: "ByEmail", PK: "{Email}", Projection: types.ProjectionTypeInclude, Include: []string{"Amount", "SKU"}},
			{Name: "All", PK: "SUBS", SK: "{ID}"},
		},
	}))
	c := catalog.New(tbl)
	require.Len(t, c.Indexes, 3)
	assert.Equal(t, []string{"INCLUDE (Amount, SKU)", "KEYS_ONLY", "ALL"},
		[]string{c.Indexes[1].Projection, c.Indexes[2].Projection, c.Indexes[0].Projection})
	md := c.Markdown()
	assert.Contains(t, md, "| BySKU | multi-attribute, projects KEYS_ONLY | SKU (S) |")
	assert.Contains(t, md, "| ByEmail | templated, projects INCLUDE (Amount, SKU) | ByEmailPK (S) |")
	assert.Contains(t, md, "| All | templated | AllPK (S) |")
}

var update = flag.Bool("update", false, "rewrite testdata/*.md from the current output")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./catalog -run %s -update to create it", t.Name())
	assert.Equal(t, string(want), got, "%s is stale: run go test ./catalog -run %s -update", path, t.Name())
}

// TestMarkdown renders a catalog using every kind of declaration and
// pattern: sharded and sparse templated indexes, a multi-attribute index,
// guards, item, query, count and collection patterns, a pattern written
// out, and findings of each severity.
func TestMarkdown(t *testing.T) {
	t.Parallel()
	type Account struct {
		ID, Email, Region string
		Score             int `dynamodbav:"score"`
		Version           int
		Created, Updated  time.Time
		Expires           time.Time
	}
	type Note struct{ ID, Note string }
	type Counter struct{ N int }
	tbl := singletable.NewTable(nil, "accounts")
	accounts := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Account]{
		Type: "Account", PK: "ACCOUNT#{ID}", SK: "A",
		Unique: []singletable.Unique{{Fields: []string{"Email"}}}, Version: "Version", CreatedAt: "Created", UpdatedAt: "Updated", TTL: "Expires",
		Indexes: []singletable.IndexSchema[Account]{
			{Name: "ByRegion", PK: "REGION#{Region}", SK: "{Email}", Shards: 4,
				When: func(a Account) bool { return a.Score > 0 }, WhenFields: []string{"Score"}},
			{Name: "ByScore", PartitionAttrs: []string{"Region"}, SortAttrs: []string{"Score", "Email"}},
			{Name: "All", PK: "ACCOUNTS", SK: "{ID}"},
		},
	}))
	notes := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Note]{
		Type: "Note", PK: "ACCOUNT#{ID}", SK: "NOTE#{Note}",
	}))
	singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Counter]{
		Type: "Counter", PK: "COUNTERS", SK: "ALL",
	}))
	k := Account{}
	c := catalog.New(tbl,
		catalog.Item("A1", "Open an account", catalog.OpCreate, accounts),
		catalog.Item("A2", "Close an account", catalog.OpDelete, accounts),
		catalog.Collection("A3", "An account with its notes", accounts),
		catalog.Query("A4", "Accounts of a region, by email, newest first",
			accounts.QueryIndex("ByRegion", k).Where("Email", singletable.Gt, k.Email).Desc()),
		catalog.Query("A5", "Accounts of a region with a score in a range | piped",
			accounts.QueryIndex("ByScore", k).Between("Score", k.Score, k.Score)),
		catalog.Count("N1", "Count an account's notes", notes.Query(Note{})),
		catalog.Query("N2", "Notes starting with a word", notes.Query(Note{}).BeginsWith("Note", "x").
			Filter(expression.Name("Note").AttributeExists())),
		catalog.Pattern{Name: "T1", Description: "Move a note", Entity: "Note", Operation: "TransactWriteItems",
			Condition: "Delete ACCOUNT#{ID}/NOTE#{Note}; Put ACCOUNT#{ID}/NOTE#{Note} if absent"},
		catalog.Pattern{Name: "X1", Description: "A pattern on an index nobody declares", Entity: "Note",
			Index: "Gone", Operation: catalog.OpQuery, Condition: "GonePK = {ID}"},
	)
	golden(t, "markdown.md", c.Markdown())
	var b strings.Builder
	require.NoError(t, c.WriteMarkdown(&b))
	assert.Equal(t, c.Markdown(), b.String())
}
