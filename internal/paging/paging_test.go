package paging

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// script is a Pager over fixed responses of items numbered by "K".
type script struct {
	pages  [][]int
	next   int
	aheads int
}

func item(n int) Item {
	return Item{"K": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}
}

func num(it Item) int {
	n, _ := strconv.Atoi(it["K"].(*types.AttributeValueMemberN).Value)
	return n
}

func (s *script) Next(context.Context, int) ([]Item, bool, error) {
	var items []Item
	for _, n := range s.pages[s.next] {
		items = append(items, item(n))
	}
	s.next++
	return items, s.next == len(s.pages), nil
}

func (s *script) Ahead(_ context.Context, counts func(Item) bool) (bool, error) {
	s.aheads++
	for _, p := range s.pages[s.next:] {
		for _, n := range p {
			if counts(item(n)) {
				return true, nil
			}
		}
	}
	return false, nil
}

func (s *script) Cursor(it Item) (string, error) {
	if it == nil {
		return "response", nil
	}
	return strconv.Itoa(num(it)), nil
}

// TestPaginateExactFit: a page holds Limit items taken (skipped ones do
// not count), and has a cursor exactly when an item that counts follows.
func TestPaginateExactFit(t *testing.T) {
	odd := func(it Item) bool { return num(it)%2 == 1 }
	all := func(Item) bool { return true }
	cases := []struct {
		name       string
		pages      [][]int
		limit      int
		counts     func(Item) bool
		want       []int
		cursor     string
		lookaheads int
	}{
		{"cut inside a response", [][]int{{1, 2, 3}}, 2, all, []int{1, 2}, "2", 0},
		{"cut at a response's end, more follows", [][]int{{1, 2}, {3}}, 2, all, []int{1, 2}, "2", 1},
		{"cut at a response's end, nothing follows", [][]int{{1, 2}, {}}, 2, all, []int{1, 2}, "", 1},
		{"the read's end", [][]int{{1, 2}, {3}}, 3, all, []int{1, 2, 3}, "", 0},
		{"skipped items do not count", [][]int{{1, 2, 3, 4, 5}}, 2, odd, []int{1, 3}, "3", 0},
		{"skipped items do not count, read ahead", [][]int{{1, 2, 3}, {4, 5}}, 2, odd, []int{1, 3}, "3", 1},
		{"only skipped items follow", [][]int{{1, 2}, {4}}, 1, odd, []int{1}, "", 1},
		{"no limit: one response", [][]int{{1, 2}, {3}}, 0, all, []int{1, 2}, "response", 1},
		{"no limit: empty responses read past", [][]int{{}, {2}, {3}}, 0, all, []int{2}, "response", 1},
	}
	for _, tc := range cases {
		s := &script{pages: tc.pages}
		var got []int
		cursor, err := Paginate(context.Background(), s, tc.limit, func(it Item, _ int) (bool, error) {
			if !tc.counts(it) {
				return false, nil
			}
			got = append(got, num(it))
			return true, nil
		}, &End{Pager: s, Counts: tc.counts})
		if err != nil || !slices.Equal(got, tc.want) || cursor != tc.cursor || s.aheads != tc.lookaheads {
			t.Errorf("%s: items %v cursor %q lookaheads %d, %v; want %v %q %d", tc.name, got, cursor, s.aheads, err, tc.want, tc.cursor, tc.lookaheads)
		}
	}
	s := &script{pages: [][]int{{1, 2}, {3}}}
	var got []int
	_, err := Paginate(context.Background(), s, 0, func(it Item, _ int) (bool, error) {
		got = append(got, num(it))
		return true, ErrStop
	}, nil)
	if err != nil || !slices.Equal(got, []int{1}) {
		t.Errorf("ErrStop: %v, %v; want [1] and no error", got, err)
	}
}

// TestMergeOrders: the shards' items come out in order, ascending or
// descending, however the shards' responses split them.
func TestMergeOrders(t *testing.T) {
	for _, desc := range []bool{false, true} {
		shards := [][][]int{{{1, 4}, {7}}, {{2}, {3, 9}}, {{}, {5}}}
		fs := make([]Feed, len(shards))
		for i, pages := range shards {
			if desc {
				for _, p := range pages {
					slices.Reverse(p)
				}
				slices.Reverse(pages)
			}
			fs[i] = &script{pages: pages}
		}
		m := NewMerge(fs, nil, []string{"K"}, desc, nil, [16]byte{}, nil)
		var got []int
		err := ReadAll(context.Background(), []Feed{m}, 0, func(it Item, _ int) (bool, error) {
			got = append(got, num(it))
			return true, nil
		})
		want := []int{1, 2, 3, 4, 5, 7, 9}
		if desc {
			slices.Reverse(want)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("desc %v: %v, %v; want %v", desc, got, err, want)
		}
	}
}
