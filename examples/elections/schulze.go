package elections

import (
	"slices"
	"strings"
)

// Ranking is one candidate's rank on a ballot: 1 is the most preferred.
// Equal ranks are ties; candidates a ballot leaves out rank below all it
// ranks.
type Ranking struct {
	CandidateName string `dynamodbav:"candidate_name" json:"candidate_name"`
	Rank          int    `dynamodbav:"rank" json:"rank"`
}

// Tally is the result of the Schulze method over a set of ballots.
type Tally struct {
	// Candidates in the order the matrices use.
	Candidates []string
	// Preferences[i][j] is the number of ballots that rank candidate i
	// strictly above candidate j.
	Preferences [][]int
	// Strongest[i][j] is the strength of the strongest path from i to j
	// in the pairwise-defeat graph.
	Strongest [][]int
	// Places lists the candidates by place: Places[0] holds the winners
	// (more than one on a tie), Places[1] the runners-up, and so on.
	Places [][]string
}

// Winners returns the candidates in first place.
func (t Tally) Winners() []string {
	if len(t.Places) == 0 {
		return nil
	}
	return t.Places[0]
}

// Schulze tallies ranked ballots with the Schulze method: build the
// pairwise preference matrix d, compute the strongest paths p with a
// Floyd–Warshall-style widest-path pass, and order candidates so that X is
// above Y when p[X][Y] > p[Y][X]. That relation is transitive, so ranking by
// the number of candidates each beats gives the places; candidates who beat
// the same number tie. Rankings naming unknown candidates are ignored.
func Schulze(candidates []string, ballots [][]Ranking) Tally {
	n := len(candidates)
	idx := make(map[string]int, n)
	for i, c := range candidates {
		idx[c] = i
	}
	d := square(n)
	for _, b := range ballots {
		// rank[i] is candidate i's rank on this ballot; unranked
		// candidates share a rank below every ranked one.
		rank := make([]int, n)
		worst := 0
		for _, r := range b {
			worst = max(worst, r.Rank)
		}
		for i := range rank {
			rank[i] = worst + 1
		}
		for _, r := range b {
			if i, ok := idx[r.CandidateName]; ok {
				rank[i] = r.Rank
			}
		}
		for i := range n {
			for j := range n {
				if i != j && rank[i] < rank[j] {
					d[i][j]++
				}
			}
		}
	}
	p := square(n)
	for i := range n {
		for j := range n {
			if i != j && d[i][j] > d[j][i] {
				p[i][j] = d[i][j]
			}
		}
	}
	for k := range n {
		for i := range n {
			if i == k {
				continue
			}
			for j := range n {
				if j != i && j != k {
					p[i][j] = max(p[i][j], min(p[i][k], p[k][j]))
				}
			}
		}
	}
	wins := make([]int, n)
	for i := range n {
		for j := range n {
			if i != j && p[i][j] > p[j][i] {
				wins[i]++
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if wins[a] != wins[b] {
			return wins[b] - wins[a]
		}
		return strings.Compare(candidates[a], candidates[b])
	})
	var places [][]string
	for k, i := range order {
		if k > 0 && wins[i] == wins[order[k-1]] {
			places[len(places)-1] = append(places[len(places)-1], candidates[i])
			continue
		}
		places = append(places, []string{candidates[i]})
	}
	return Tally{Candidates: slices.Clone(candidates), Preferences: d, Strongest: p, Places: places}
}

func square(n int) [][]int {
	m := make([][]int, n)
	for i := range m {
		m[i] = make([]int, n)
	}
	return m
}
