package catalog

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

var writePicture = flag.String("write-picture", "", "write TestPicture's SVG to this file, to look at")

// box is the space a text of the picture takes.
type box struct {
	x0, y0, x1, y1 int
	s              string
}

// svgFacts is what checkSVG reads from a picture.
type svgFacts struct {
	width, height int
	texts         []box
	fills         map[string]int // rect fill colour: rects
}

// checkSVG parses svg as XML (strictly, every token) and checks it as a
// reader would need it: an <svg> root with its size, every text inside
// it, and no two texts overlapping. A text's box is measure wide (its
// characters at the conservative width the layout assumes) and spans
// the font's height: from the size above the baseline to 0.3 of it
// below.
func checkSVG(svg string) (svgFacts, error) {
	f := svgFacts{fills: map[string]int{}}
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	var open []string
	var cur *box
	var size int
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range tok.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			num := func(name string) int { n, _ := strconv.Atoi(attr(name)); return n }
			switch {
			case len(open) == 0:
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					return f, fmt.Errorf("root element %v is not svg", tok.Name)
				}
				f.width, f.height = num("width"), num("height")
				if attr("viewBox") != fmt.Sprintf("0 0 %d %d", f.width, f.height) {
					return f, fmt.Errorf("viewBox %q does not match the size %dx%d", attr("viewBox"), f.width, f.height)
				}
			case tok.Name.Local == "text":
				size = num("font-size")
				cur = &box{x0: num("x"), y0: num("y") - size, x1: num("x"), y1: num("y") + size*3/10}
			case tok.Name.Local == "rect":
				f.fills[attr("fill")]++
			}
			open = append(open, tok.Name.Local)
		case xml.CharData:
			if cur != nil {
				cur.s += string(tok)
			}
		case xml.EndElement:
			open = open[:len(open)-1]
			if tok.Name.Local == "text" {
				cur.x1 = cur.x0 + measure(cur.s, size)
				f.texts = append(f.texts, *cur)
				cur = nil
			}
		}
	}
	for i, a := range f.texts {
		if a.x0 < 0 || a.y0 < 0 || a.x1 > f.width || a.y1 > f.height {
			return f, fmt.Errorf("text %q at %v is outside the picture (%dx%d)", a.s, a, f.width, f.height)
		}
		for _, b := range f.texts[i+1:] {
			if a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 {
				return f, fmt.Errorf("texts %q at %v and %q at %v overlap", a.s, a, b.s, b)
			}
		}
	}
	return f, nil
}

// pictureFixture is a table with every kind of declaration a picture
// shows: a unique value (guard items), a sparse index with When, a
// sharded index, a multi-attribute index, a partition shared by two
// entities, a singleton, long values and many attributes; and its items
// from example values.
func pictureFixture(t *testing.T) (*singletable.Table, []map[string]types.AttributeValue) {
	t.Helper()
	type Account struct {
		ID, Email, Region string
		Score             int `dynamodbav:"score"`
		Bio               string
		Tags              []string `dynamodbav:",stringset"`
		A1, A2, A3, A4    string
		A5, A6, A7, A8    string
		Created           time.Time
	}
	type Note struct{ ID, Note string }
	type Counter struct{ N int }
	tbl := singletable.NewTable(nil, "accounts")
	accounts := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Account]{
		Type: "Account", PK: "ACCOUNT#{ID}", SK: "A", CreatedAt: "Created",
		Unique: []singletable.Unique{{Fields: []string{"Email"}}},
		Indexes: []singletable.IndexSchema[Account]{
			{Name: "ByRegion", PK: "REGION#{Region}", SK: "{Email}", Shards: 2,
				When: func(a Account) bool { return a.Score > 0 }, WhenFields: []string{"Score"}},
			{Name: "ByScore", MultiAttribute: true, PartitionAttrs: []string{"Region"}, SortAttrs: []string{"Score", "Email"}},
		},
	}))
	notes := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Note]{
		Type: "Note", PK: "ACCOUNT#{ID}", SK: "NOTE#{Note}",
	}))
	counters := singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[Counter]{
		Type: "Counter", PK: "COUNTERS", SK: "ALL",
	}))
	items, err := PreviewItems(context.Background(), tbl, func(ctx context.Context) error {
		for i, a := range []Account{
			{ID: "a1", Email: "ann@example.com", Region: "eu", Score: 10, Bio: strings.Repeat("a long biography ", 10), Tags: []string{"x", "b"}},
			{ID: "a2", Email: "bob@example.com", Region: "eu", Score: 9},
			{ID: "a3", Email: "cy@example.com", Region: "us"}, // score 0: not in ByRegion
			{ID: "a4", Email: "dee@example.com", Score: 2},    // no region: in neither index
			{ID: "a5", Email: "eve@example.com", Region: "us", Score: 100, A1: "one", A2: "two", A3: "three", A4: "four",
				A5: "five", A6: "six", A7: "seven", A8: "eight"},
		} {
			a.Created = time.Date(2024, 3, 1, 10, i, 0, 0, time.UTC)
			if _, err := accounts.Create(ctx, a); err != nil {
				return err
			}
		}
		for _, n := range []Note{{"a1", "zebra"}, {"a1", "apple"}, {"a2", "日本語のメモ"}} {
			if _, err := notes.Create(ctx, n); err != nil {
				return err
			}
		}
		_, err := counters.Create(ctx, Counter{N: 5})
		return err
	})
	require.NoError(t, err)
	// An item no entity declares, as another program wrote it.
	items = append(items, map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "LEGACY#1"}, "SK": &types.AttributeValueMemberS{Value: "X"},
		"Blob": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
	})
	return tbl, items
}

func TestPicture(t *testing.T) {
	t.Parallel()
	tbl, items := pictureFixture(t)
	require.Len(t, items, 5*2+3+1+1, "each account with its guard item, three notes, the counter, the legacy item")
	svg := Picture(tbl, items)
	f, err := checkSVG(svg)
	require.NoError(t, err)
	if *writePicture != "" {
		require.NoError(t, os.WriteFile(*writePicture, []byte(svg), 0o644))
	}

	// The same items in any order draw the same picture.
	for range 5 {
		shuffled := slices.Clone(items)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		require.Equal(t, svg, Picture(tbl, shuffled))
	}
	var b strings.Builder
	require.NoError(t, WritePicture(&b, tbl, items))
	assert.Equal(t, svg, b.String())

	texts := func(from, to string) []string {
		var out []string
		in := false
		for _, x := range f.texts {
			if strings.HasPrefix(x.s, from) {
				in = true
			} else if in && strings.HasPrefix(x.s, to) {
				break
			}
			if in {
				out = append(out, x.s)
			}
		}
		return out
	}
	table := texts("Table accounts:", "Index ")
	assert.Equal(t, "Table accounts: 15 items in 12 partitions", table[0])
	// Partitions sorted by key, sort keys in order within them: the
	// account, then its notes (apple before zebra).
	a1 := slices.Index(table, "ACCOUNT#a1")
	require.GreaterOrEqual(t, a1, 0)
	assert.Equal(t, []string{"ACCOUNT#a1", "A", "Account"}, table[a1:a1+3])
	assert.Less(t, slices.Index(table, "NOTE#apple"), slices.Index(table, "NOTE#zebra"))
	assert.Contains(t, table, "NOTE#日本語のメモ")
	// Long values are elided, sets listed sorted, binaries by size, the
	// row that cannot show every attribute says how many are left.
	assert.Contains(t, table, "Bio="+elide(strings.Repeat("a long biography ", 10), valueChars))
	assert.Contains(t, table, "Blob=<3 bytes>")
	assert.True(t, slices.ContainsFunc(table, func(s string) bool { return strings.HasPrefix(s, "+") && strings.HasSuffix(s, " more") }))
	assert.Equal(t, []string{"ACCOUNT#a4", "A", "Account", "Created=2024-03-01T10:03:00Z", "Email=dee@example.com", "ID=a4"},
		table[slices.Index(table, "ACCOUNT#a4"):][:6], "data first, then other indexes' keys, then empty values")
	// A guard item is drawn with its type, in the colour of no entity;
	// the legacy item has no type.
	assert.Contains(t, table, singletable.UniqueGuardType)
	assert.Contains(t, table, noType)

	// The sparse index holds only the items with its key attributes, in
	// its shard partitions; the multi-attribute index shows its key
	// tuples, numbers sorted by value.
	byRegion := texts("Index ByRegion:", "Index ")
	assert.Equal(t, "Index ByRegion: sparse: holds 3 of 15 items (those with ByRegionPK, ByRegionSK), in 3 partitions", byRegion[0])
	byScore := texts("Index ByScore:", "\x00")
	assert.Equal(t, "Index ByScore: sparse: holds 4 of 15 items (those with Region, score, Email), in 2 partitions", byScore[0])
	assert.Equal(t, []string{"Region", "score · Email"}, byScore[1:3])
	assert.Less(t, slices.Index(byScore, "9 · bob@example.com"), slices.Index(byScore, "10 · ann@example.com"))

	// One colour per entity, in the order bound; a tint behind each row.
	for i, n := range map[int]int{0: 5 + 3 + 4, 1: 3, 2: 1} {
		assert.Equal(t, n+1, f.fills[palette[i]], "entity %d: a strip per row (%d in the table and indexes) and a legend swatch", i, n)
		assert.Positive(t, f.fills[tint(palette[i])])
	}
}

func TestPictureValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    types.AttributeValue
		want string
	}{
		{&types.AttributeValueMemberS{Value: "x"}, "x"},
		{&types.AttributeValueMemberN{Value: "-1.5"}, "-1.5"},
		{&types.AttributeValueMemberB{Value: []byte{1, 2}}, "<2 bytes>"},
		{&types.AttributeValueMemberBOOL{Value: true}, "true"},
		{&types.AttributeValueMemberNULL{Value: true}, "null"},
		{&types.AttributeValueMemberL{Value: []types.AttributeValue{nil, nil}}, "[2]"},
		{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": nil}}, "{1}"},
		{&types.AttributeValueMemberSS{Value: []string{"x", "b"}}, "{b,x}"},
		{&types.AttributeValueMemberNS{Value: []string{"2", "1"}}, "{2,1}"},
		{&types.AttributeValueMemberBS{Value: [][]byte{{1}}}, "{1 binary}"},
	} {
		assert.Equal(t, c.want, show(c.v))
	}
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	s := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	assert.Negative(t, compareAV(n("9"), n("10")), "numbers by value")
	assert.Negative(t, compareAV(n("-10"), n("-9.5")))
	assert.Negative(t, compareAV(s("10"), s("9")), "strings by bytes")
	assert.Negative(t, compareAV(s("Z"), s("a")))
	assert.Equal(t, "abc", elide("abc", 3))
	assert.Equal(t, "ab…", elide("abcd", 3))
	assert.Equal(t, measure("abcd", fontSize), measure("日本", fontSize), "wide runes count twice")
	assert.Equal(t, "#F8E3B3", tint("#E69F00"))
}
