package sequences_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

type PItem struct {
	Part  string `dynamodbav:"Part"`
	Seq   int    `dynamodbav:"Seq"`
	Grp   string `dynamodbav:"Grp"`
	Score int    `dynamodbav:"Score"`
	Flag  bool   `dynamodbav:"Flag"`
	Kind  string `dynamodbav:"Kind"`
}

type PNote struct {
	Part string `dynamodbav:"Part"`
	Seq  int    `dynamodbav:"Seq"`
	Kind string `dynamodbav:"Kind"`
}

var PItems = singletable.MustDefine(singletable.Schema[PItem]{
	Type: "PItem", PK: "P#{Part}", SK: "I#{Seq}",
	Indexes: []singletable.IndexSchema[PItem]{
		{Name: "GSI1", PK: "G#{Grp}", SK: "S#{Score}#{Seq}", Shards: 3},
		{Name: "GSI2", PK: "F#{Part}", SK: "I#{Seq}", When: func(v PItem) bool { return v.Flag }, WhenFields: []string{"Flag"}},
		{Name: "MA1", PartitionAttrs: []string{"Grp"}, SortAttrs: []string{"Score", "Seq"}},
	},
})

var PNotes = singletable.MustDefine(singletable.Schema[PNote]{
	Type: "PNote", PK: "P#{Part}", SK: "N#{Seq}",
})

// pkey is an item of the model: 'I' (PItem) or 'N' (PNote), and its seq.
type pkey struct {
	ent byte
	seq int
}

type pmodel struct {
	items map[int]PItem
	notes map[int]PNote
}

// TestPagingUnderWrites walks queries page by page (random Limit, PageSize,
// filter, direction, index kind) while random writes happen between
// pages. Properties: items come in strict order, none twice; every item
// that existed unchanged during the whole walk and matches is returned
// exactly once; with no writes the walk equals the model exactly.
func TestPagingUnderWrites(t *testing.T) {
	t.Parallel()
	seed := uint64(1)
	if v := os.Getenv("PSEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	ctx := context.Background()
	var items *singletable.Repo[PItem]
	var notes *singletable.Repo[PNote]
	tbl, plain := newTable(t, nil, func(tb *singletable.Table) {
		items = singletable.MustBind(tb, PItems)
		notes = singletable.MustBind(tb, PNotes)
	})
	rng := rand.New(rand.NewPCG(seed, 7))
	m := pmodel{items: map[int]PItem{}, notes: map[int]PNote{}}
	next := 0
	newItem := func() PItem {
		next++
		return PItem{Part: "p", Seq: next, Grp: "g", Score: rng.IntN(6) - 2, Flag: rng.IntN(2) == 0, Kind: []string{"a", "b"}[rng.IntN(2)]}
	}
	for i := 0; i < 40; i++ {
		it := newItem()
		if _, err := items.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		m.items[it.Seq] = it
		if rng.IntN(2) == 0 {
			// An item of another entity type beside it, in the table
			// partition and in every index partition.
			raw := maps.Clone(items.PutOp(it).Item())
			raw["EntityType"] = &types.AttributeValueMemberS{Value: "Other"}
			raw["SK"] = &types.AttributeValueMemberS{Value: s(raw["SK"]) + "#o"}
			if _, err := plain.PutItem(ctx, &dynamodb.PutItemInput{TableName: ptr(tbl.Name()), Item: raw}); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(2) == 0 {
			n := PNote{Part: "p", Seq: it.Seq, Kind: it.Kind}
			if _, err := notes.Put(ctx, n); err != nil {
				t.Fatal(err)
			}
			m.notes[n.Seq] = n
		}
	}
	kinds := []string{"table", "sharded", "ma", "sparse", "collection", "scan"}
	for round := 0; round < 60; round++ {
		kind := kinds[rng.IntN(len(kinds))]
		limit := 1 + rng.IntN(7)
		pageSize := 0
		if rng.IntN(3) == 0 {
			pageSize = 1 + rng.IntN(5)
		}
		filter := rng.IntN(2) == 0
		desc := rng.IntN(2) == 0
		writes := rng.IntN(2) == 0
		fields := rng.IntN(3) == 0
		sortOp := rng.IntN(7) // 0 none, 1..5 Eq..Ge, 6 Between
		pivot, hi := rng.IntN(40), 0
		if kind == "sharded" || kind == "ma" {
			pivot = rng.IntN(6) - 2
		}
		hi = pivot + rng.IntN(20)
		if kind == "sharded" || kind == "ma" {
			hi = pivot + rng.IntN(3)
		}
		if kind == "scan" {
			sortOp, desc = 0, false
		}
		if sortOp == 1 && kind != "sharded" && kind != "ma" {
			sortOp = 5
		}
		name := fmt.Sprintf("r%d-%s-limit%d-ps%d-filter%v-desc%v-writes%v-sort%d(%d,%d)-fields%v", round, kind, limit, pageSize, filter, desc, writes, sortOp, pivot, hi, fields)
		sortOK := func(v int) bool {
			switch sortOp {
			case 1:
				return v == pivot
			case 2:
				return v < pivot
			case 3:
				return v <= pivot
			case 4:
				return v > pivot
			case 5:
				return v >= pivot
			case 6:
				return v >= pivot && v <= hi
			}
			return true
		}
		// order key of a model entry for this query kind
		less := func(a, b pkey) int {
			switch kind {
			case "sharded", "ma":
				ia, ib := m.items[a.seq], m.items[b.seq]
				return cmp.Or(cmp.Compare(ia.Score, ib.Score), cmp.Compare(a.seq, b.seq))
			case "collection":
				return cmp.Or(cmp.Compare(a.ent, b.ent), cmp.Compare(a.seq, b.seq))
			}
			return cmp.Compare(a.seq, b.seq)
		}
		matches := func(k pkey) bool {
			if k.ent == 'N' {
				n := m.notes[k.seq]
				if sortOp != 0 {
					return false // a condition on PItem's sort key reads PItem's shape only
				}
				return !filter || n.Kind == "a"
			}
			it := m.items[k.seq]
			sv := it.Seq
			if kind == "sharded" || kind == "ma" {
				sv = it.Score
			}
			if !sortOK(sv) {
				return false
			}
			if kind == "sparse" && !it.Flag {
				return false
			}
			return !filter || it.Kind == "a"
		}
		snapshot := func() []pkey {
			var out []pkey
			for s := range m.items {
				if k := (pkey{'I', s}); matches(k) {
					out = append(out, k)
				}
			}
			if kind == "collection" {
				for s := range m.notes {
					if k := (pkey{'N', s}); matches(k) {
						out = append(out, k)
					}
				}
			}
			slices.SortFunc(out, less)
			if desc {
				slices.Reverse(out)
			}
			return out
		}
		before := snapshot()
		touched := map[pkey]bool{}
		var got []pkey
		var gotOrderKeys []PItem // for order checks of index kinds
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 200 {
				t.Fatalf("%s: too many pages", name)
			}
			var pg []pkey
			var pgItems []PItem
			var nextCur string
			var err error
			cond := expression.Name("Kind").Equal(expression.Value("a"))
			switch kind {
			case "scan":
				q := items.Scan().ConsistentRead().Limit(limit).After(cursor)
				if pageSize > 0 {
					q = q.PageSize(pageSize)
				}
				if filter {
					q = q.Filter(cond)
				}
				if fields {
					q = q.Fields("Kind")
				}
				var p singletable.Page[PItem]
				p, err = q.Page(ctx)
				for _, v := range p.Items {
					pg = append(pg, pkey{'I', v.Seq})
					pgItems = append(pgItems, v)
				}
				nextCur = p.Cursor
			case "collection":
				c := items.Collection(PItem{Part: "p"}).SkipUnknown().Limit(limit).After(cursor)
				if pageSize > 0 {
					c = c.PageSize(pageSize)
				}
				if filter {
					c = c.Filter(cond)
				}
				if desc {
					c = c.Desc()
				}
				if fields {
					c = c.Fields("Kind")
				}
				if sortOp >= 1 && sortOp <= 5 {
					c = c.Where(items.SortWhere(singletable.SortOp(sortOp), PItem{Seq: pivot}, "Seq"))
				} else if sortOp == 6 {
					c = c.Where(items.SortBetween(PItem{Seq: pivot}, PItem{Seq: hi}, "Seq"))
				}
				var p singletable.Page[any]
				p, err = c.Page(ctx, items.Member(), notes.Member())
				for _, v := range p.Items {
					switch v := v.(type) {
					case PItem:
						pg = append(pg, pkey{'I', v.Seq})
						pgItems = append(pgItems, v)
					case PNote:
						pg = append(pg, pkey{'N', v.Seq})
						pgItems = append(pgItems, PItem{Seq: v.Seq})
					}
				}
				nextCur = p.Cursor
			default:
				var q *singletable.Query[PItem]
				switch kind {
				case "table":
					q = items.Query(PItem{Part: "p"}).ConsistentRead()
				case "sharded":
					q = items.QueryIndex("GSI1", PItem{Grp: "g"})
				case "ma":
					q = items.QueryIndex("MA1", PItem{Grp: "g"})
				case "sparse":
					q = items.QueryIndex("GSI2", PItem{Part: "p"})
				}
				sf := "Seq"
				var key PItem
				switch kind {
				case "table":
					key = PItem{Part: "p", Seq: pivot}
				case "sharded", "ma":
					sf, key = "Score", PItem{Grp: "g", Score: pivot}
				case "sparse":
					key = PItem{Part: "p", Seq: pivot}
				}
				switch kind {
				case "table":
					q = items.Query(key).ConsistentRead()
				default:
					q = items.QueryIndex(map[string]string{"sharded": "GSI1", "ma": "MA1", "sparse": "GSI2"}[kind], key)
				}
				if sortOp >= 1 && sortOp <= 5 {
					q = q.Where(singletable.SortOp(sortOp), sf)
				} else if sortOp == 6 {
					hk := key
					hk.Seq, hk.Score = hi, hi
					q = q.Between(hk, sf)
				}
				q = q.Limit(limit).After(cursor)
				if pageSize > 0 {
					q = q.PageSize(pageSize)
				}
				if filter {
					q = q.Filter(cond)
				}
				if desc {
					q = q.Desc()
				}
				if fields {
					q = q.Fields("Kind")
				}
				if pages == 0 && !writes {
					n, err := q.After("").Count(ctx)
					if err != nil || n != len(before) {
						t.Errorf("%s: Count %d (%v), want %d", name, n, err, len(before))
					}
					all := 0
					for _, err := range q.After("").All(ctx) {
						if err != nil {
							t.Fatalf("%s: All: %v", name, err)
						}
						all++
					}
					if want := min(limit, len(before)); all != want {
						t.Errorf("%s: All yields %d, want %d (Limit)", name, all, want)
					}
				}
				var p singletable.Page[PItem]
				p, err = q.Page(ctx)
				for _, v := range p.Items {
					pg = append(pg, pkey{'I', v.Seq})
					pgItems = append(pgItems, v)
				}
				nextCur = p.Cursor
			}
			if err != nil {
				t.Fatalf("%s: page %d: %v", name, pages, err)
			}
			if nextCur != "" && len(pg) != limit {
				t.Errorf("%s: page %d holds %d items with a cursor, limit %d", name, pages, len(pg), limit)
			}
			got = append(got, pg...)
			gotOrderKeys = append(gotOrderKeys, pgItems...)
			if nextCur == "" {
				break
			}
			cursor = nextCur
			if writes && pages < 30 {
				for w := rng.IntN(4); w > 0; w-- {
					switch op := rng.IntN(4); op {
					case 0: // insert
						it := newItem()
						if _, err := items.Put(ctx, it); err != nil {
							t.Fatal(err)
						}
						m.items[it.Seq] = it
						touched[pkey{'I', it.Seq}] = true
					case 1: // delete an item
						if len(m.items) == 0 {
							continue
						}
						s := randKey(rng, m.items)
						if _, err := items.Delete(ctx, PItem{Part: "p", Seq: s}); err != nil {
							t.Fatal(err)
						}
						delete(m.items, s)
						touched[pkey{'I', s}] = true
					case 2: // update Score / Flag / Kind
						if len(m.items) == 0 {
							continue
						}
						sq := randKey(rng, m.items)
						it := m.items[sq]
						it.Score = rng.IntN(6) - 2
						it.Flag = rng.IntN(2) == 0
						it.Kind = []string{"a", "b"}[rng.IntN(2)]
						if _, err := items.Update(PItem{Part: "p", Seq: sq}).SetFrom(it, "Score", "Flag", "Kind").Run(ctx); err != nil {
							t.Fatal(err)
						}
						m.items[sq] = it
						touched[pkey{'I', sq}] = true
					case 3: // note insert/delete
						sq := 1 + rng.IntN(next)
						if _, ok := m.notes[sq]; ok {
							if _, err := notes.Delete(ctx, PNote{Part: "p", Seq: sq}); err != nil {
								t.Fatal(err)
							}
							delete(m.notes, sq)
						} else {
							n := PNote{Part: "p", Seq: sq, Kind: []string{"a", "b"}[rng.IntN(2)]}
							if _, err := notes.Put(ctx, n); err != nil {
								t.Fatal(err)
							}
							m.notes[sq] = n
						}
						touched[pkey{'N', sq}] = true
					}
				}
			}
		}
		// checks
		if kind == "scan" {
			slices.SortFunc(got, less)
			gotOrderKeys = nil
		}
		if !writes {
			if !slices.Equal(got, before) {
				t.Errorf("%s: got %v\nwant %v", name, got, before)
			}
			continue
		}
		seen := map[pkey]int{}
		for _, k := range got {
			seen[k]++
		}
		for k, n := range seen {
			if n > 1 && !touched[k] {
				t.Errorf("%s: untouched %v returned %d times", name, k, n)
			}
		}
		for _, k := range before {
			if !touched[k] && seen[k] != 1 {
				t.Errorf("%s: untouched %v present throughout returned %d times\ngot %v", name, k, seen[k], got)
			}
		}
		// order: by the values as returned
		for i := 1; i < len(gotOrderKeys); i++ {
			a, b := gotOrderKeys[i-1], gotOrderKeys[i]
			var c int
			switch kind {
			case "sharded", "ma":
				c = cmp.Or(cmp.Compare(a.Score, b.Score), cmp.Compare(a.Seq, b.Seq))
			case "collection":
				c = cmp.Or(cmp.Compare(got[i-1].ent, got[i].ent), cmp.Compare(a.Seq, b.Seq))
			default:
				c = cmp.Compare(a.Seq, b.Seq)
			}
			if desc {
				c = -c
			}
			if c >= 0 && !touched[got[i]] && !touched[got[i-1]] && !(fields && (kind == "sharded" || kind == "ma")) {
				t.Errorf("%s: out of order at %d: %v then %v", name, i, got[i-1], got[i])
			}
		}
	}
}

func randKey[V any](rng *rand.Rand, m map[int]V) int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}
