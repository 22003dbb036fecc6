package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// Pages that survive a bad item (issue 24 items 6 and 11): receipts
// another service writes, one with an attribute of the wrong type, two
// keyed off their documented form, among valid ones and items of other
// entities.

type OddReceipt struct {
	User   string    `dynamodbav:"user"`
	At     time.Time `dynamodbav:"at"`
	ID     string    `dynamodbav:"id"`
	Amount int       `dynamodbav:"amount"`
}

type OddNote struct {
	User string `dynamodbav:"user"`
	N    string `dynamodbav:"n"`
	Text string `dynamodbav:"text"`
}

var (
	OddReceipts = singletable.MustDefine(singletable.Schema[OddReceipt]{
		Type: "RECEIPT", PK: "USER#{User}", SK: "REC#{At:date}#{ID}", MatchKeys: true,
	})
	OddNotes = singletable.MustDefine(singletable.Schema[OddNote]{
		Type: "NOTE", PK: "USER#{User}", SK: "REC#NOTE#{N}", MatchKeys: true,
	})
)

type oddTable struct {
	tbl      *singletable.Table
	receipts *singletable.Repo[OddReceipt]
	notes    *singletable.Repo[OddNote]
}

// The sort keys of the partition USER#u, as the other service wrote them.
const (
	skBadType  = "REC#2024-01-02#b1"    // typed, amount is a string
	skBadKey   = "REC#2024-01-03x#b3"   // typed, its date has a suffix
	skSelected = "REC#2024-01-04T06#b2" // untyped, selected by REC#, does not parse
)

func oddReceiptsTable(t *testing.T) *oddTable {
	s := &oddTable{}
	s.tbl, _ = newTable(t, func(tbl *singletable.Table) {
		s.receipts = singletable.MustBind(tbl, OddReceipts)
		s.notes = singletable.MustBind(tbl, OddNotes)
	}, func(o *singletable.TableOptions) { o.EntityTypeAttr = "entity_type" })
	typed := func(pk, sk string, attrs map[string]types.AttributeValue) {
		item := map[string]types.AttributeValue{"PK": sAV(pk), "SK": sAV(sk), "entity_type": sAV("RECEIPT")}
		for k, v := range attrs {
			item[k] = v
		}
		rawPut(t, s.tbl, item)
	}
	for i := 1; i <= 5; i++ { // valid receipts, their fields only in the key
		typed("USER#u", fmt.Sprintf("REC#2024-01-0%d#g%d", i, i), map[string]types.AttributeValue{"amount": nAV(fmt.Sprint(i))})
	}
	typed("USER#v", "REC#2024-01-01#g9", map[string]types.AttributeValue{"amount": nAV("9")}) // another partition
	typed("USER#u", skBadType, map[string]types.AttributeValue{"amount": sAV("twelve")})
	typed("USER#u", skBadKey, nil)
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("USER#u"), "SK": sAV(skSelected), "amount": nAV("7")})
	// Other entities' items, left out without noise by a receipts read.
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("USER#u"), "SK": sAV("REC#NOTE#n1"), "text": sAV("hi")})                 // a note: parses with its template
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("USER#u"), "SK": sAV("REC#NOTE#"), "text": sAV("no name")})              // a note's prefix
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("USER#u"), "SK": sAV("REC#2024-01-01#o1"), "entity_type": sAV("OTHER")}) // another type
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("USER#u"), "SK": sAV("PROFILE"), "name": sAV("u")})                      // another prefix
	rawPut(t, s.tbl, map[string]types.AttributeValue{"PK": sAV("TENANT#u"), "SK": sAV("REC#2024-01-01#x"), "amount": nAV("1")})         // another PK prefix
	return s
}

// pageAll reads every page of a read, limit items each, following cursors.
func pageAll[T any](t *testing.T, page func(after string) (singletable.Page[T], error)) ([]T, []*singletable.DecodeError) {
	t.Helper()
	var items []T
	var skipped []*singletable.DecodeError
	after := ""
	for range 50 {
		p, err := page(after)
		if err != nil {
			t.Fatalf("page after %q: %v", after, err)
		}
		items, skipped = append(items, p.Items...), append(skipped, p.Skipped...)
		if after = p.Cursor; after == "" {
			return items, skipped
		}
	}
	t.Fatal("more than 50 pages")
	return nil, nil
}

func receiptIDs(rs []OddReceipt) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.User+"/"+r.ID)
	}
	sort.Strings(ids)
	return ids
}

// skippedSKs checks each reported item's error and returns their sort keys.
func skippedSKs(t *testing.T, skipped []*singletable.DecodeError) []string {
	t.Helper()
	var sks []string
	for _, de := range skipped {
		sk := de.Key["SK"].(*types.AttributeValueMemberS).Value
		sks = append(sks, sk)
		var ve *singletable.ValidationError
		if !errors.As(de, &ve) {
			t.Errorf("%s: %v is not a *ValidationError", sk, de)
		}
		if strings.Contains(de.Error(), "twelve") || len(de.Key) != 2 {
			t.Errorf("%s: the error holds a value, or more than the key: %v %v", sk, de, de.Key)
		}
		var ke *singletable.KeyError
		switch sk {
		case skBadType:
			if errors.As(de, &ke) || !strings.Contains(de.Error(), "amount") {
				t.Errorf("%s: %v, want the codec's error naming amount", sk, de)
			}
		case skBadKey, skSelected:
			if !errors.As(de, &ke) || ke.Key != "SK" || !strings.Contains(de.Error(), "{At}") {
				t.Errorf("%s: %v, want a *KeyError naming SK's {At}", sk, de)
			}
		}
	}
	sort.Strings(sks)
	return sks
}

var (
	wantGood    = []string{"u/g1", "u/g2", "u/g3", "u/g4", "u/g5"}
	wantSkipped = []string{skBadType, skBadKey, skSelected}
)

func init() { sort.Strings(wantSkipped) }

func TestUndecodableQueryPages(t *testing.T) {
	ctx := context.Background()
	s := oddReceiptsTable(t)
	q := s.receipts.Query(OddReceipt{User: "u"})
	for _, limit := range []int{0, 1, 2, 3, 4, 10} {
		for _, desc := range []bool{false, true} {
			items, skipped := pageAll(t, func(after string) (singletable.Page[OddReceipt], error) {
				p := q.Limit(limit).After(after)
				if desc {
					p = p.Desc()
				}
				return p.Page(ctx)
			})
			if got := receiptIDs(items); !slices.Equal(got, wantGood) {
				t.Errorf("limit %d desc %v: items %v, want %v", limit, desc, got, wantGood)
			}
			if got := skippedSKs(t, skipped); !slices.Equal(got, wantSkipped) {
				t.Errorf("limit %d desc %v: skipped %v, want each of %v once", limit, desc, got, wantSkipped)
			}
		}
	}
	// PageSize 1: every response holds one item, the bad ones too.
	items, skipped := pageAll(t, func(after string) (singletable.Page[OddReceipt], error) {
		return q.PageSize(1).After(after).Page(ctx)
	})
	if got, sks := receiptIDs(items), skippedSKs(t, skipped); !slices.Equal(got, wantGood) || !slices.Equal(sks, wantSkipped) {
		t.Errorf("page size 1: items %v, skipped %v", got, sks)
	}
}

func TestUndecodableQueryAllCollectStrict(t *testing.T) {
	ctx := context.Background()
	s := oddReceiptsTable(t)
	q := s.receipts.Query(OddReceipt{User: "u"})
	var items []OddReceipt
	var skipped []*singletable.DecodeError
	for v, err := range q.All(ctx) {
		var de *singletable.DecodeError
		switch {
		case errors.As(err, &de):
			skipped = append(skipped, de)
		case err != nil:
			t.Fatal(err)
		default:
			items = append(items, v)
		}
	}
	if got, sks := receiptIDs(items), skippedSKs(t, skipped); !slices.Equal(got, wantGood) || !slices.Equal(sks, wantSkipped) {
		t.Errorf("All: items %v, skipped %v", got, sks)
	}
	var de *singletable.DecodeError
	if got, err := q.Collect(ctx); !errors.As(err, &de) || got != nil {
		t.Errorf("Collect: %v, %v; want a *DecodeError", got, err)
	}
	strict := func(o *singletable.ReadOptions) { o.StrictDecode = true }
	if _, err := s.receipts.Query(OddReceipt{User: "u"}, strict).Limit(10).Page(ctx); !errors.As(err, &de) {
		t.Errorf("StrictDecode Page: %v, want a *DecodeError", err)
	}
	n := 0
	for _, err := range s.receipts.Query(OddReceipt{User: "u"}, strict).All(ctx) {
		if n++; err != nil && !errors.As(err, &de) {
			t.Errorf("StrictDecode All: %v", err)
		}
	}
	if n > len(wantGood) {
		t.Errorf("StrictDecode All went on after a *DecodeError: %d values", n)
	}
}

func TestUndecodableScanPages(t *testing.T) {
	ctx := context.Background()
	s := oddReceiptsTable(t)
	want := append(slices.Clone(wantGood), "v/g9")
	for _, limit := range []int{0, 1, 2, 3, 5} {
		items, skipped := pageAll(t, func(after string) (singletable.Page[OddReceipt], error) {
			return s.receipts.Scan().Limit(limit).After(after).Page(ctx)
		})
		if got := receiptIDs(items); !slices.Equal(got, want) {
			t.Errorf("limit %d: items %v, want %v", limit, got, want)
		}
		if got := skippedSKs(t, skipped); !slices.Equal(got, wantSkipped) {
			t.Errorf("limit %d: skipped %v, want each of %v once", limit, got, wantSkipped)
		}
	}
}

func TestUndecodableCollectionPages(t *testing.T) {
	ctx := context.Background()
	s := oddReceiptsTable(t)
	c := s.receipts.QueryCollection(OddReceipt{User: "u"}).SkipUnknown()
	// REC#NOTE# is left out of a receipts read (a note's prefix), and
	// reported here, where the notes' key shape selects it.
	wantSks := append(slices.Clone(wantSkipped), "REC#NOTE#")
	sort.Strings(wantSks)
	for _, limit := range []int{0, 1, 2, 3, 10} {
		var receipts []OddReceipt
		var notes []OddNote
		_, skipped := pageAll(t, func(after string) (singletable.Page[any], error) {
			return c.Limit(limit).After(after).Page(ctx, s.receipts.AppendTo(&receipts), s.notes.AppendTo(&notes))
		})
		if got := receiptIDs(receipts); !slices.Equal(got, wantGood) || len(notes) != 1 || notes[0].N != "n1" {
			t.Errorf("limit %d: receipts %v, notes %v", limit, got, notes)
		}
		if got := skippedSKs(t, skipped); !slices.Equal(got, wantSks) {
			t.Errorf("limit %d: skipped %v, want each of %v once", limit, got, wantSks)
		}
		for _, de := range skipped {
			if sk := de.Key["SK"].(*types.AttributeValueMemberS).Value; (sk == "REC#NOTE#") != (de.Entity == "NOTE") {
				t.Errorf("%s reported as %s's", sk, de.Entity)
			}
		}
	}
}
