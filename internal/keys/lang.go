package keys

// The keys a template can render, as an automaton over runes, for the
// catalog lint: whether two templates writing one key attribute can
// render the same key (Intersects), and whether they can with their
// placeholders at different places in it, one template's value standing
// where the other has a literal (Overlap): a forged key. Each part's
// language is what the renderer accepts for it:
//
//   - a literal, its runes;
//   - a default placeholder, escaped text: runes from 0x26 up (not
//     U+10FFFF) and %XX escapes, a superset of every default encoding
//     (numbers, times, bools are written in those runes);
//   - a raw placeholder, any rune but U+10FFFF and the delimiter after
//     it, and only what its constraint (Pattern) matches;
//   - another format, the runes its values can contain (format.Produces),
//     as many as its width when it has one.
//
// Searching the product of two automata breadth first finds the shortest
// such key, whose parts name the placeholders that forge it.

import (
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/format"
)

// runeSet is a set of runes as sorted, disjoint, non-adjacent [lo, hi]
// pairs.
type runeSet []rune

// union returns the normalized union of s and t.
func (s runeSet) union(t runeSet) runeSet {
	all := append(slices.Clone(s), t...)
	type pair struct{ lo, hi rune }
	ps := make([]pair, 0, len(all)/2)
	for i := 0; i+1 < len(all); i += 2 {
		ps = append(ps, pair{all[i], all[i+1]})
	}
	slices.SortFunc(ps, func(a, b pair) int { return int(a.lo - b.lo) })
	var out runeSet
	for _, p := range ps {
		if n := len(out); n > 0 && p.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], p.hi)
			continue
		}
		out = append(out, p.lo, p.hi)
	}
	return out
}

// intersect returns the runes in both s and t.
func (s runeSet) intersect(t runeSet) runeSet {
	var out runeSet
	for i, j := 0, 0; i < len(s) && j < len(t); {
		lo, hi := max(s[i], t[j]), min(s[i+1], t[j+1])
		if lo <= hi {
			out = append(out, lo, hi)
		}
		if s[i+1] < t[j+1] {
			i += 2
		} else {
			j += 2
		}
	}
	return out
}

// without returns s without r.
func (s runeSet) without(r rune) runeSet {
	return s.intersect(runeSet{0, r - 1, r + 1, unicode.MaxRune})
}

func (s runeSet) empty() bool { return len(s) == 0 }

// pick returns a rune of s for an example key: a digit or letter if s has
// one, else printable ASCII, else its lowest rune.
func (s runeSet) pick() rune {
	for _, want := range []runeSet{{'0', '9'}, {'a', 'z'}, {'A', 'Z'}, {'!', '~'}} {
		if in := s.intersect(want); !in.empty() {
			return in[0]
		}
	}
	return s[0]
}

// pickPreferring returns the first of the preferred runes in s, else
// pick's.
func (s runeSet) pickPreferring(prefer ...rune) rune {
	for _, r := range prefer {
		if r >= 0 && !s.intersect(runeSet{r, r}).empty() {
			return r
		}
	}
	return s.pick()
}

var (
	anyRune     = runeSet{0, MaxRune - 1}
	escapedRune = runeSet{DelimLimit + 1, MaxRune - 1}
	hexDigit    = runeSet{'0', '9', 'A', 'F'}
	decDigit    = runeSet{'0', '9'}
)

// Lang is the language of a key template: the keys it renders, as a
// nondeterministic automaton over runes whose transitions say which
// placeholder (or a literal) each rune of a key belongs to.
type Lang struct {
	states []langState
	accept int
	fields int
}

type langState struct {
	eps   []int
	edges []langEdge
}

type langEdge struct {
	set    runeSet
	to     int
	part   int  // the placeholder the rune is in (counting from 0), or -1 in a literal
	prefer rune // the rune an example key takes here when it can (a real date's digit), or -1
}

func (l *Lang) add() int {
	l.states = append(l.states, langState{})
	return len(l.states) - 1
}

func (l *Lang) edge(from, to int, set runeSet, part int) { l.edgePrefer(from, to, set, part, -1) }

func (l *Lang) edgePrefer(from, to int, set runeSet, part int, prefer rune) {
	if !set.empty() {
		l.states[from].edges = append(l.states[from].edges, langEdge{set, to, part, prefer})
	}
}

func (l *Lang) literal(cur int, lit string) int {
	for _, r := range lit {
		next := l.add()
		l.edge(cur, next, runeSet{r, r}, -1)
		cur = next
	}
	return cur
}

// NewLang returns the language of t.
func NewLang(t Template) *Lang {
	l := &Lang{}
	cur := l.add()
	for i := range t.Parts {
		p := &t.Parts[i]
		if !p.IsPlaceholder() {
			cur = l.literal(cur, p.Literal)
			continue
		}
		cur = l.placeholder(cur, p, l.fields)
		l.fields++
	}
	l.accept = cur
	return l
}

// ThenDigits returns the language of l's keys followed by lit and one or
// more decimal digits, a literal suffix the library adds (a write shard's
// "#shard_<n>").
func (l *Lang) ThenDigits(lit string) *Lang {
	c := &Lang{states: slices.Clone(l.states), fields: l.fields}
	for i := range c.states {
		c.states[i].eps = slices.Clone(c.states[i].eps)
		c.states[i].edges = slices.Clone(c.states[i].edges)
	}
	cur := c.literal(l.accept, lit)
	d := c.add()
	c.edge(cur, d, decDigit, -1)
	c.edge(d, d, decDigit, -1)
	c.accept = d
	return c
}

// placeholder adds the states of placeholder p, the part-th, after cur
// and returns the state its values end in.
func (l *Lang) placeholder(cur int, p *Part, part int) int {
	switch {
	case p.Format == nil:
		// Escaped text: copied runes, and %XX.
		e1, pct, hex1 := l.add(), l.add(), l.add()
		for _, from := range []int{cur, e1} {
			l.edge(from, e1, escapedRune, part)
			l.edge(from, pct, runeSet{'%', '%'}, part)
		}
		l.edge(pct, hex1, hexDigit, part)
		l.edge(hex1, e1, hexDigit, part)
		return e1
	case p.Pattern != nil:
		return l.constrained(cur, p, part)
	}
	set := p.alphabet()
	if cols := p.timeColumns(); cols != nil {
		for _, c := range cols {
			next := l.add()
			l.edgePrefer(cur, next, c.set, part, c.prefer)
			cur = next
		}
		return cur
	}
	end := l.add()
	if w := p.Format.Width; w > 0 {
		for i := 1; i < w; i++ {
			next := l.add()
			l.edge(cur, next, set, part)
			cur = next
		}
		l.edge(cur, end, set, part)
		return end
	}
	l.edge(cur, end, set, part)
	l.edge(end, end, set, part)
	return end
}

// alphabet returns the runes a value of p's (non-default) format can
// hold: for raw, every rune but U+10FFFF and the delimiter after it.
func (p *Part) alphabet() runeSet {
	if p.Format.Kind == format.Text {
		if p.Delim >= 0 {
			return anyRune.without(rune(p.Delim))
		}
		return anyRune
	}
	var set runeSet
	for b := 0; b < utf8.RuneSelf; b++ {
		if p.Format.Produces(byte(b)) {
			set = set.union(runeSet{rune(b), rune(b)})
		}
	}
	for b := utf8.RuneSelf; b < 256; b++ {
		if p.Format.Produces(byte(b)) {
			return set.union(runeSet{utf8.RuneSelf, MaxRune - 1})
		}
	}
	return set
}

// column is what one position of a fixed-width time format holds.
type column struct {
	set    runeSet
	prefer rune
}

// timeSamples are times whose every digit differs from the others' at
// some position of any numeric layout (2024/1999/0815, 01/12/10, 03/23/14,
// …), so a position that holds one rune in all three is a literal.
var timeSamples = []time.Time{
	time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC),
	time.Date(1999, 12, 31, 23, 59, 58, 987654321, time.UTC),
	time.Date(815, 10, 20, 14, 37, 46, 555555555, time.UTC),
}

// timeColumns returns, for a fixed-width time format, what each position
// holds: a literal, a digit, or (a position holding a non-digit that
// varies, AM/PM) the format's alphabet; nil for other formats. Writing
// sample times finds the positions from the format itself.
func (p *Part) timeColumns() []column {
	f := p.Format
	if f.Kind != format.Time || f.Width == 0 {
		return nil
	}
	var rows []string
	for _, t := range timeSamples {
		t = t.Truncate(f.Cut)
		if f.Check(t) != nil {
			return nil
		}
		if row := string(f.AppendTime(nil, t)); len(row) == f.Width && utf8.RuneCountInString(row) == f.Width {
			rows = append(rows, row)
		}
	}
	if len(rows) != len(timeSamples) {
		return nil
	}
	cols := make([]column, f.Width)
	for i := range cols {
		c, same, digits := rows[0][i], true, true
		for _, row := range rows {
			same = same && row[i] == c
			digits = digits && '0' <= row[i] && row[i] <= '9'
		}
		switch {
		case same:
			cols[i] = column{runeSet{rune(c), rune(c)}, rune(c)}
		case digits:
			cols[i] = column{decDigit, rune(c)}
		default:
			cols[i] = column{p.alphabet(), rune(c)}
		}
	}
	return cols
}

// constrained adds the states of a raw placeholder with a constraint: one
// per consuming instruction of its program, reached by reading a rune
// there, so that a value is never empty.
func (l *Lang) constrained(cur int, p *Part, part int) int {
	pat, allowed := p.Pattern, p.alphabet()
	state := make([]int, len(pat.prog.Inst)) // per consuming instruction
	for pc := range pat.prog.Inst {
		if pat.consumes(uint32(pc)) {
			state[pc] = l.add()
		}
	}
	end := l.add()
	step := func(from int, next *stateSet) {
		next.each(func(pc uint32) {
			if pat.consumes(pc) {
				l.edge(from, state[pc], pat.runes(pc).intersect(allowed), part)
			}
		})
	}
	step(cur, &pat.start)
	for pc, s := range state {
		if !pat.consumes(uint32(pc)) {
			continue
		}
		step(s, &pat.after[pc])
		if pat.after[pc].meets(&pat.match) {
			l.states[s].eps = append(l.states[s].eps, end)
		}
	}
	return end
}

// closure returns the states reachable from s by empty transitions.
func (l *Lang) closure(s int) []int {
	out := []int{s}
	for i := 0; i < len(out); i++ {
		for _, t := range l.states[out[i]].eps {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// A Forgery is a key two templates both render with their placeholders
// at different places in it: one template's value stands where the other
// has a literal.
type Forgery struct {
	// Key is the shortest such key.
	Key string
	// Values are, for each template, its placeholders' values in Key, as
	// written there.
	Values [2][]string
	// Forger is, for each template, the first of its placeholders whose
	// value holds a literal rune of the other's (-1 when none does), and
	// Covered the first such rune.
	Forger  [2]int
	Covered [2]rune
}

// Intersects reports whether a and b render a common key, and returns
// the shortest.
func Intersects(a, b *Lang) (string, bool) {
	f, ok := search(a, b, false)
	return f.Key, ok
}

// Overlap reports whether a and b render a common key with their
// placeholders at different places: a value of one template that forges
// a key of the other. Keys where every placeholder of one stands where
// one of the other does (two entities sharing a partition by design) are
// not overlaps.
func Overlap(a, b *Lang) (Forgery, bool) { return search(a, b, true) }

// langNode is a state of the product of two automata: a state of each,
// and whether the two have parted.
type langNode struct {
	sa, sb int
	div    bool
}

// langStep is how search reached a node: from the node at index from (-1
// for the start), reading r, in placeholder pa of the first and pb of the
// second (-1: a literal).
type langStep struct {
	from   int
	r      rune
	pa, pb int
}

// search walks the product of a and b breadth first, one rune at a time,
// remembering whether the two have parted (a rune in a placeholder of
// one and a literal of the other); with parted it looks for a key where
// they have.
func search(a, b *Lang, parted bool) (Forgery, bool) {
	seen := map[langNode]bool{}
	var order []langNode
	var steps []langStep
	visit := func(n langNode, s langStep) {
		if !seen[n] {
			seen[n] = true
			order = append(order, n)
			steps = append(steps, s)
		}
	}
	visit(langNode{0, 0, false}, langStep{from: -1})
	for i := 0; i < len(order); i++ {
		n := order[i]
		ca, cb := a.closure(n.sa), b.closure(n.sb)
		if (n.div || !parted) && slices.Contains(ca, a.accept) && slices.Contains(cb, b.accept) {
			return forgery(a, b, steps, i), true
		}
		for _, x := range ca {
			for _, ea := range a.states[x].edges {
				for _, y := range cb {
					for _, eb := range b.states[y].edges {
						if in := ea.set.intersect(eb.set); !in.empty() {
							visit(langNode{ea.to, eb.to, n.div || (ea.part < 0) != (eb.part < 0)}, langStep{i, in.pickPreferring(ea.prefer, eb.prefer), ea.part, eb.part})
						}
					}
				}
			}
		}
	}
	return Forgery{}, false
}

// forgery reads back from the steps the key ending at node end, and the
// placeholder each of its runes is in.
func forgery(a, b *Lang, steps []langStep, end int) Forgery {
	var path []langStep
	for i := end; steps[i].from >= 0; i = steps[i].from {
		path = append(path, steps[i])
	}
	slices.Reverse(path)
	f := Forgery{Values: [2][]string{make([]string, a.fields), make([]string, b.fields)}, Forger: [2]int{-1, -1}}
	var key []rune
	for _, s := range path {
		key = append(key, s.r)
		parts := [2]int{s.pa, s.pb}
		for side, mine := range parts {
			if mine < 0 {
				continue
			}
			f.Values[side][mine] += string(s.r)
			if parts[1-side] < 0 && f.Forger[side] < 0 {
				f.Forger[side], f.Covered[side] = mine, s.r
			}
		}
	}
	f.Key = string(key)
	return f
}
