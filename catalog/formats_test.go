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

// fmtC stores its times in shapes that cut them.
type fmtC struct {
	ID  string
	At  time.Time `dynamodbav:"at,rfc3339"`
	Day time.Time `dynamodbav:"day,date"`
	Ms  time.Time `dynamodbav:"ms,unixmilli"`
}

// TestCatalogLintTimeCut: a time placeholder whose field is stored under a
// time option at least as coarse as the key's format is cut before the key
// is rendered, and the lint says so (and the write shows it); a finer or
// default stored form keeps the refusal.
func TestCatalogLintTimeCut(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "t")
	c := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[fmtC]{
		Type: "C", PK: "C#{ID}", SK: "{At:rfc3339}#{Day:date}#{Ms:rfc3339}",
	}))
	got := findings(catalog.New(tbl))
	require.Len(t, got, 3, "findings: %q", got)
	assert.Contains(t, got[0], "{At:rfc3339} holds whole seconds; At is stored with the rfc3339 option, which cuts times")
	assert.Contains(t, got[1], "{Day:date} holds midnight UTC; Day is stored with the date option, which cuts times")
	assert.Contains(t, got[2], "{Ms:rfc3339} holds whole seconds; a time with more precision is refused (*KeyError), not cut")

	at := time.Date(2025, 1, 15, 10, 30, 0, 123_000_000, time.UTC)
	_, sk, err := c.Entity().RenderKeys(fmtC{ID: "x", At: at, Day: at, Ms: at.Truncate(time.Second)})
	require.NoError(t, err, "the stored options cut At and Day")
	assert.Equal(t, "2025-01-15T10:30:00Z#2025-01-15#2025-01-15T10:30:00Z", sk)
	_, _, err = c.Entity().RenderKeys(fmtC{ID: "x", At: at, Day: at, Ms: at})
	var ke *singletable.KeyError
	assert.ErrorAs(t, err, &ke, "unixmilli keeps the milliseconds rfc3339 cannot show")
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
