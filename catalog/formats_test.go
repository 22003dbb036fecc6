package catalog_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
)

type fmtA struct {
	ID, Name string
	At       time.Time
	Seq      int
}

type fmtB struct {
	ID, Other string
	When      time.Time
}

func TestCatalogLintFormats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a    singletable.Schema[fmtA]
		b    singletable.Schema[fmtB]
		want []string // substrings, one per finding, in order
	}{
		{
			name: "default formats are clean",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID}", SK: "A#{At}#{Seq}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "X#{ID}", SK: "B#{When}"},
		},
		{
			name: "unix is not fixed width",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID}", SK: "A#{At:unix}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "X#{ID}", SK: "B#{When:unixmilli}"},
			want: []string{"warning A: SK = A#{At:unix}: {At:unix} is not fixed width", "warning B: SK = B#{When:unixmilli}: {When:unixmilli} is not fixed width"},
		},
		{
			name: "raw before a delimiter",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID:raw}", SK: "A#{Name:raw}#{Seq}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "Y#{ID}", SK: "B#{Other:raw}"},
			want: []string{`warning A: SK = A#{Name:raw}#{Seq}: a {Name:raw} value holding a byte that sorts before the "#"`},
		},
		{
			name: "mixed precision in shared partitions",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID}", SK: "AT#{At:rfc3339}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "X#{ID}", SK: "AT#{When:rfc3339milli}"},
			want: []string{
				"error A: A and B render the same table keys",
				"warning A: A (SK = AT#{At:rfc3339}) and B (SK = AT#{When:rfc3339milli}) share partitions and write a time at the same position of the sort key as rfc3339 and rfc3339milli",
				"info A: SK = AT#{At:rfc3339}: {At:rfc3339} holds whole seconds",
				"info B: SK = AT#{When:rfc3339milli}: {When:rfc3339milli} holds whole milliseconds",
			},
		},
		{
			name: "mixed with the default format",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID}", SK: "T#{At}#A"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "X#{ID}", SK: "T#{When:date}#B"},
			want: []string{
				`warning A: A shares its table partitions (PK = X#{ID}) with B, and A's sort key prefix "T#"`,
				`warning B: B shares its table partitions (PK = X#{ID}) with A`,
				"warning A: A (SK = T#{At}#A) and B (SK = T#{When:date}#B) share partitions and write a time at the same position of the sort key as the default (nine fraction digits) and date",
				"info B: SK = T#{When:date}#B: {When:date} holds midnight UTC",
			},
		},
		{
			name: "same formats in other partitions are clean",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "X#{ID}", SK: "AT#{At}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "Y#{ID}", SK: "AT#{When:unixmilli}"},
			want: []string{"warning B: SK = AT#{When:unixmilli}"},
		},
		{
			name: "padded numbers",
			a:    singletable.Schema[fmtA]{Type: "A", PK: "EVENTS", SK: "{Seq:%08d}#{At:rfc3339}"},
			b:    singletable.Schema[fmtB]{Type: "B", PK: "B#{ID}", SK: "B"},
			want: []string{"warning A: constant partition key", "info A: SK = {Seq:%08d}#{At:rfc3339}: {Seq:%08d} holds 0 up to", "info A: SK = {Seq:%08d}#{At:rfc3339}: {At:rfc3339} holds whole seconds"},
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
