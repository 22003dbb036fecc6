package elections_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/singletable-go/singletable/examples/elections"
)

// ballots expands "count ORDER" groups (ORDER lists candidates from most to
// least preferred, one letter each) into ranked ballots.
func ballots(groups map[string]int) [][]elections.Ranking {
	var out [][]elections.Ranking
	for order, count := range groups {
		var b []elections.Ranking
		for i, c := range strings.Split(order, "") {
			b = append(b, elections.Ranking{CandidateName: c, Rank: i + 1})
		}
		for range count {
			out = append(out, b)
		}
	}
	return out
}

// The worked example of the Wikipedia article "Schulze method": 45 voters,
// 5 candidates, winner E, order E > A > C > B > D. The article gives the
// matrix of pairwise preferences and of strongest paths; both are checked.
func TestSchulzeWikipediaExample(t *testing.T) {
	t.Parallel()
	b := ballots(map[string]int{
		"ACBED": 5, "ADECB": 5, "BEDAC": 8, "CABED": 3,
		"CAEBD": 7, "CBADE": 2, "DCEBA": 7, "EBADC": 8,
	})
	assert.Len(t, b, 45)
	tally := elections.Schulze([]string{"A", "B", "C", "D", "E"}, b)
	assert.Equal(t, [][]int{
		{0, 20, 26, 30, 22},
		{25, 0, 16, 33, 18},
		{19, 29, 0, 17, 24},
		{15, 12, 28, 0, 14},
		{23, 27, 21, 31, 0},
	}, tally.Preferences)
	assert.Equal(t, [][]int{
		{0, 28, 28, 30, 24},
		{25, 0, 28, 33, 24},
		{25, 29, 0, 29, 24},
		{25, 28, 28, 0, 24},
		{25, 28, 28, 31, 0},
	}, tally.Strongest)
	assert.Equal(t, []string{"E"}, tally.Winners())
	assert.Equal(t, [][]string{{"E"}, {"A"}, {"C"}, {"B"}, {"D"}}, tally.Places)
}

func TestSchulzeTiesAndPartialBallots(t *testing.T) {
	t.Parallel()
	cands := []string{"Kotlin", "Go", "Rust"}
	// A perfect tie between two candidates; the unranked one is last.
	tie := elections.Schulze(cands, [][]elections.Ranking{
		{{CandidateName: "Kotlin", Rank: 1}},
		{{CandidateName: "Go", Rank: 1}},
	})
	assert.Equal(t, [][]string{{"Go", "Kotlin"}, {"Rust"}}, tie.Places)
	// Equal ranks on a ballot express no preference between them.
	eq := elections.Schulze(cands, [][]elections.Ranking{
		{{CandidateName: "Kotlin", Rank: 1}, {CandidateName: "Go", Rank: 1}, {CandidateName: "Rust", Rank: 2}},
	})
	assert.Equal(t, 0, eq.Preferences[0][1])
	assert.Equal(t, 1, eq.Preferences[1][2])
	assert.Equal(t, [][]string{{"Go", "Kotlin"}, {"Rust"}}, eq.Places)
	// No ballots: everyone ties.
	assert.Equal(t, [][]string{{"Go", "Kotlin", "Rust"}}, elections.Schulze(cands, nil).Places)
	// A Condorcet cycle (rock-paper-scissors with unequal margins) is
	// resolved by the strongest paths: A>B 3:2... etc.
	cyc := elections.Schulze([]string{"A", "B", "C"}, ballots(map[string]int{"ABC": 4, "BCA": 3, "CAB": 2}))
	// d: A>B 6, B>C 7, C>A 5; the weakest link is C>A, so A wins.
	assert.Equal(t, []string{"A"}, cyc.Winners())
	assert.Equal(t, [][]string{{"A"}, {"B"}, {"C"}}, cyc.Places)
}
