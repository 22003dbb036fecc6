package catalog

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/describe"
)

// Picture renders the aggregate view of table t as an SVG document: the
// given items grouped by partition key with their sort keys in order,
// one colour per entity type (the type each item stores, coloured in the
// order the entities are bound, with a legend), the other attributes as
// name=value with long values elided; then the same items seen through
// each global secondary index of the table, where an item appears
// exactly when it holds all of that index's key attributes (so a sparse
// index shows only the items it holds).
//
// The items are raw items, as [PreviewItems] renders them from example
// values or [ScanItems] reads them from a table. The output depends only
// on the declarations and the items, not on their order: partitions are
// shown sorted by key (DynamoDB keeps no order between partitions), items
// by sort key as DynamoDB orders them. Text is set in a monospace font
// and laid out on fixed rows with widths measured conservatively, so no
// two texts overlap.
func Picture(t *singletable.Table, items []map[string]types.AttributeValue) string {
	return picture(t.Describe(), items)
}

// WritePicture writes [Picture] to w.
func WritePicture(w io.Writer, t *singletable.Table, items []map[string]types.AttributeValue) error {
	_, err := io.WriteString(w, Picture(t, items))
	return err
}

// PreviewItems returns the items that fn's writes would put, through
// [singletable.Table.Preview]: each PutItem's item, each put of a
// BatchWriteItem and of a TransactWriteItems (unique guard items
// included), in order. Nothing is sent but the reads a write makes to
// learn what is stored (see Preview), so writes that need none, such as
// Create and Put of entities without a version or unique values, work
// on a table without a client. It is how example values become the
// items of a [Picture]:
//
//	items, err := catalog.PreviewItems(ctx, table, func(ctx context.Context) error {
//		_, err := users.Create(ctx, User{Username: "alice"})
//		return err
//	})
func PreviewItems(ctx context.Context, t *singletable.Table, fn func(ctx context.Context) error) ([]map[string]types.AttributeValue, error) {
	reqs, err := t.Preview(ctx, fn)
	if err != nil {
		return nil, err
	}
	var out []map[string]types.AttributeValue
	for _, r := range reqs {
		switch in := r.Input.(type) {
		case *dynamodb.PutItemInput:
			out = append(out, in.Item)
		case *dynamodb.BatchWriteItemInput:
			for _, table := range sortedKeys(in.RequestItems) {
				for _, w := range in.RequestItems[table] {
					if w.PutRequest != nil {
						out = append(out, w.PutRequest.Item)
					}
				}
			}
		case *dynamodb.TransactWriteItemsInput:
			for _, w := range in.TransactItems {
				if w.Put != nil {
					out = append(out, w.Put.Item)
				}
			}
		}
	}
	return out, nil
}

// ScanItems reads at most limit items of the table named table with
// Scan requests through client (every item when limit is 0): the items
// of a [Picture] of a live table.
func ScanItems(ctx context.Context, client singletable.Client, table string, limit int) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: aws.String(table)}
	for {
		if limit > 0 {
			in.Limit = aws.Int32(int32(min(limit-len(out), 1000)))
		}
		page, err := client.Scan(ctx, in)
		if err != nil {
			return out, err
		}
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Layout of a picture, in pixels. Every text is in a monospace font and
// measured as charWidth per character of its size (a character of a wide
// script as two), which is wider than the monospace fonts browsers use
// (0.6 of the size): a text never reaches past its measured box.
const (
	fontSize   = 12
	titleSize  = 15
	charWidth  = 0.64 // of the font size
	rowHeight  = 22
	pad        = 8
	stripWidth = 6
	attrsWidth = 620 // the attribute region of a row
	keyChars   = 44  // longest key value shown before eliding
	valueChars = 24  // longest attribute value shown before eliding
	fontFamily = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace"
)

// palette is the colour of each entity type, in the order the entities
// are bound to the table (repeating after the last): the Okabe-Ito
// colours, told apart by most colour-blind readers, then three more.
// Guard items and items of types not bound are drawn in otherColour.
// Each row is filled with a light tint of its colour, on which the text
// is dark.
var palette = []string{"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#8C564B", "#17BECF", "#BCBD22"}

const otherColour = "#8C8C8C"

// measure returns the width of s drawn at size.
func measure(s string, size int) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x1100 { // CJK, Hangul, emoji and other wide runes: count them twice
			n++
		}
	}
	return int(float64(n)*charWidth*float64(size) + 0.999)
}

// elide cuts s to at most n characters, ending it with "…" when cut.
func elide(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// show renders an attribute value in short: a string or number as it is,
// a binary value by its size, a list or map by its length, a set as its
// members.
func show(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("<%d bytes>", len(v.Value))
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(v.Value)
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberL:
		return fmt.Sprintf("[%d]", len(v.Value))
	case *types.AttributeValueMemberM:
		return fmt.Sprintf("{%d}", len(v.Value))
	case *types.AttributeValueMemberSS:
		return "{" + strings.Join(slices.Sorted(slices.Values(v.Value)), ",") + "}"
	case *types.AttributeValueMemberNS:
		return "{" + strings.Join(v.Value, ",") + "}"
	case *types.AttributeValueMemberBS:
		return fmt.Sprintf("{%d binary}", len(v.Value))
	}
	return "?"
}

// compareAV orders key values as DynamoDB does: numbers by value,
// strings and binaries by their bytes; values of different types by
// type.
func compareAV(a, b types.AttributeValue) int {
	switch a := a.(type) {
	case *types.AttributeValueMemberN:
		if b, ok := b.(*types.AttributeValueMemberN); ok {
			x, _, errX := big.ParseFloat(a.Value, 10, 256, big.ToNearestEven)
			y, _, errY := big.ParseFloat(b.Value, 10, 256, big.ToNearestEven)
			if errX == nil && errY == nil {
				if c := x.Cmp(y); c != 0 {
					return c
				}
			}
			return strings.Compare(a.Value, b.Value)
		}
	case *types.AttributeValueMemberB:
		if b, ok := b.(*types.AttributeValueMemberB); ok {
			return bytes.Compare(a.Value, b.Value)
		}
	}
	if c := strings.Compare(fmt.Sprintf("%T", a), fmt.Sprintf("%T", b)); c != 0 {
		return c
	}
	return strings.Compare(keyText(a), keyText(b))
}

// keyText is a key value as shown: a binary one in base64.
func keyText(v types.AttributeValue) string {
	if b, ok := v.(*types.AttributeValueMemberB); ok {
		return base64.StdEncoding.EncodeToString(b.Value)
	}
	return show(v)
}

func compareTuple(a, b []types.AttributeValue) int {
	for i := range min(len(a), len(b)) {
		if c := compareAV(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// pictureRow is one item in one view.
type pictureRow struct {
	pk, sk []types.AttributeValue
	typ    string
	colour string
	attrs  [][2]string // name, value shown
}

// pictureView is the table or one index, its items by partition.
type pictureView struct {
	title                   string
	pkHead, skHead, typHead string
	parts                   [][]pictureRow
}

// legendEntry is one entity type with its colour and item count.
type legendEntry struct {
	typ, colour string
	n           int
}

// itemType returns the entity type of item: the type attribute's value,
// or for an item without one, the first bound entity whose key templates
// parse its keys ("" when none does).
func itemType(d describe.Table, item map[string]types.AttributeValue) string {
	if s, ok := item[d.EntityTypeAttr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	str := func(attr string) (string, bool) {
		s, ok := item[attr].(*types.AttributeValueMemberS)
		if !ok {
			return "", attr == ""
		}
		return s.Value, true
	}
	pk, okP := str(d.PartitionKey)
	sk, okS := str(d.SortKey)
	for _, e := range d.Entities {
		if okP && okS && matchKey(e.PK.Parts, pk) && matchKey(e.SK.Parts, sk) {
			return e.Type
		}
	}
	return noType
}

// noType stands for the type of an item that has none.
const noType = "(no type)"

// matchKey reports whether s can be rendered from a template's parts:
// its literals in order, each placeholder standing for one or more bytes.
func matchKey(parts []describe.KeyPart, s string) bool {
	if len(parts) == 0 {
		return s == ""
	}
	p := parts[0]
	if p.Field == "" {
		rest, ok := strings.CutPrefix(s, p.Literal)
		return ok && matchKey(parts[1:], rest)
	}
	for i := 1; i <= len(s); i++ {
		if matchKey(parts[1:], s[i:]) {
			return true
		}
	}
	return false
}

// keyValues returns item's values of attrs, false unless it holds all.
func keyValues(item map[string]types.AttributeValue, attrs []string) ([]types.AttributeValue, bool) {
	out := make([]types.AttributeValue, len(attrs))
	for i, a := range attrs {
		v, ok := item[a]
		if !ok {
			return nil, false
		}
		if _, null := v.(*types.AttributeValueMemberNULL); null {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// buildView groups the items holding every one of pk's and sk's
// attributes by partition, sorted by key; lead are the attributes shown
// first on each row (the table's keys in an index view), before the rest
// by name. It returns the view and how many items it holds.
func buildView(d describe.Table, colours map[string]string, title string, pk, sk, lead []string,
	items []map[string]types.AttributeValue) (pictureView, int) {
	v := pictureView{title: title, pkHead: strings.Join(pk, " · "), skHead: strings.Join(sk, " · "), typHead: d.EntityTypeAttr}
	skip := map[string]bool{d.EntityTypeAttr: true}
	indexKeys := map[string]bool{}
	for _, ix := range d.Indexes {
		for _, a := range slices.Concat(ix.Partition, ix.Sort) {
			indexKeys[a.Name] = !ix.MultiAttribute // a multi-attribute index's keys are data
		}
	}
	for _, a := range slices.Concat(pk, sk) {
		skip[a] = true
	}
	var rows []pictureRow
	for _, it := range items {
		pv, okP := keyValues(it, pk)
		sv, okS := keyValues(it, sk)
		if !okP || !okS {
			continue
		}
		typ := itemType(d, it)
		colour, ok := colours[typ]
		if !ok {
			colour = otherColour
		}
		r := pictureRow{pk: pv, sk: sv, typ: typ, colour: colour}
		for _, a := range lead {
			if x, ok := it[a]; ok && !skip[a] {
				r.attrs = append(r.attrs, [2]string{a, show(x)})
			}
		}
		var keys, empty [][2]string
		for _, a := range sortedKeys(it) {
			switch s := show(it[a]); {
			case skip[a] || slices.Contains(lead, a):
			case s == "" || s == "{}" || s == "null":
				empty = append(empty, [2]string{a, `""`})
			case indexKeys[a]:
				keys = append(keys, [2]string{a, s})
			default:
				r.attrs = append(r.attrs, [2]string{a, s})
			}
		}
		// Templated indexes' keys after the data, empty values last.
		r.attrs = slices.Concat(r.attrs, keys, empty)
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b pictureRow) int {
		if c := compareTuple(a.pk, b.pk); c != 0 {
			return c
		}
		if c := compareTuple(a.sk, b.sk); c != 0 {
			return c
		}
		return strings.Compare(a.typ, b.typ)
	})
	for i, r := range rows {
		if i == 0 || compareTuple(rows[i-1].pk, r.pk) != 0 {
			v.parts = append(v.parts, nil)
		}
		v.parts[len(v.parts)-1] = append(v.parts[len(v.parts)-1], r)
	}
	return v, len(rows)
}

// picture builds the views of d's table and indexes over items and draws
// them.
func picture(d describe.Table, items []map[string]types.AttributeValue) string {
	colours := map[string]string{singletable.UniqueGuardType: otherColour}
	var legend []legendEntry
	for i, e := range d.Entities {
		colours[e.Type] = palette[i%len(palette)]
		legend = append(legend, legendEntry{typ: e.Type, colour: colours[e.Type]})
	}
	counts := map[string]int{}
	for _, it := range items {
		counts[itemType(d, it)]++
	}
	for _, typ := range sortedKeys(counts) {
		if !slices.ContainsFunc(legend, func(l legendEntry) bool { return l.typ == typ }) {
			legend = append(legend, legendEntry{typ: typ, colour: otherColour})
		}
	}
	for i := range legend {
		legend[i].n = counts[legend[i].typ]
	}
	tableKey := []string{d.PartitionKey}
	var sortKey []string
	if d.SortKey != "" {
		tableKey = append(tableKey, d.SortKey)
		sortKey = []string{d.SortKey}
	}
	main, n := buildView(d, colours, "", []string{d.PartitionKey}, sortKey, nil, items)
	main.title = fmt.Sprintf("Table %s: %d items in %d partitions", d.Name, n, len(main.parts))
	views := []pictureView{main}
	for _, ix := range d.Indexes {
		var pk, sk []string
		for _, a := range ix.Partition {
			pk = append(pk, a.Name)
		}
		for _, a := range ix.Sort {
			sk = append(sk, a.Name)
		}
		v, held := buildView(d, colours, "", pk, sk, tableKey, items)
		what := "holds every item"
		if held < len(items) {
			what = fmt.Sprintf("sparse: holds %d of %d items (those with %s)", held, len(items), strings.Join(slices.Concat(pk, sk), ", "))
		}
		v.title = fmt.Sprintf("Index %s: %s, in %d partitions", ix.Name, what, len(v.parts))
		views = append(views, v)
	}
	return draw(d.Name, legend, views, len(items))
}
