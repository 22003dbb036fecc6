package keys

// Constrained raw values: {UserID:raw=[0-9]+}. A raw placeholder writes
// its value verbatim, so at the end of a template it accepts any string
// (the delimiter too), and two templates sharing a key attribute can then
// render one key: with u#{UserID:raw} for users and
// u#{UserID:raw}#follower for followers, the user "12345#follower" has
// the key of user 12345's followers. Rendering is injective within one
// template, not across templates. A constraint after "raw=" is a regular
// expression (RE2 syntax, as package regexp) that the whole value must
// match: a value that does not is refused before the network, and a key
// read back whose value does not is not decoded. The catalog lint reads
// the same constraint (Lang, lang.go), so a class that keeps the other
// template's literal out of the value closes the gap it reports.

import (
	"errors"
	"fmt"
	"math/bits"
	"regexp/syntax"
	"strings"
	"unicode"

	"github.com/singletable-go/singletable/internal/format"
)

// RawConstraint starts the spec of a constrained raw placeholder; the
// pattern follows it: {UserID:raw=[0-9]+}.
const RawConstraint = "raw="

// maxPatternInsts bounds the compiled size of a constraint, so that a
// set of its states fits in a fixed array and checking a value
// allocates nothing.
const maxPatternInsts = 256

// stateSet is a set of instructions of a constraint's program.
type stateSet [maxPatternInsts / 64]uint64

func (s *stateSet) add(pc uint32)      { s[pc/64] |= 1 << (pc % 64) }
func (s *stateSet) has(pc uint32) bool { return s[pc/64]&(1<<(pc%64)) != 0 }
func (s *stateSet) or(t *stateSet) {
	for i := range s {
		s[i] |= t[i]
	}
}
func (s *stateSet) meets(t *stateSet) bool {
	for i := range s {
		if s[i]&t[i] != 0 {
			return true
		}
	}
	return false
}

// each calls fn with every instruction of s, in order.
func (s *stateSet) each(fn func(pc uint32)) {
	for w, x := range s {
		for ; x != 0; x &= x - 1 {
			fn(uint32(w*64 + bits.TrailingZeros64(x)))
		}
	}
}

// Pattern is the constraint of a raw placeholder: a regular expression
// the whole value must match (an anchor at either end is allowed and
// changes nothing). It runs as a Thompson automaton over the compiled
// program, so checking a value allocates nothing and takes time linear
// in its length.
type Pattern struct {
	// Source is the pattern as written after "raw=".
	Source string
	prog   *syntax.Prog
	start  stateSet   // where matching starts: the closure of the program's start
	after  []stateSet // per consuming instruction: the closure of its successor
	match  stateSet   // the InstMatch instructions
	live   stateSet   // the consuming instructions from which a match is reachable
}

// ParseSpec parses a placeholder's spec, the text after ':': a format of
// the table (format.Key), or a constrained raw format, raw=<pattern>.
// The template parser and the catalog lint both read specs through it,
// so there is one grammar.
func ParseSpec(spec string) (*format.Format, *Pattern, error) {
	if src, ok := strings.CutPrefix(spec, RawConstraint); ok {
		p, err := CompilePattern(src)
		if err != nil {
			return nil, nil, err
		}
		return format.Raw, p, nil
	}
	f, err := format.Key(spec)
	return f, nil, err
}

// CompilePattern compiles the constraint src of a raw placeholder.
// Anchors inside the pattern (other than at its ends) and word boundaries
// are refused, as are patterns that match nothing and programs of more
// than 256 instructions.
func CompilePattern(src string) (*Pattern, error) {
	if src == "" {
		return nil, errors.New("empty constraint after raw=: give the pattern every value must match, e.g. raw=[0-9]+")
	}
	if quotes(src) {
		return nil, fmt.Errorf("constraint %s: \\Q quoting is not allowed in a key constraint (it runs to the pattern's end): escape each character instead", src)
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("constraint %s: %v", src, err)
	}
	re = stripAnchors(re)
	if hasEmptyWidth(re) {
		return nil, fmt.Errorf("constraint %s: anchors and word boundaries are not allowed inside it (the whole value must match)", src)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("constraint %s: %v", src, err)
	}
	if len(prog.Inst) > maxPatternInsts {
		return nil, fmt.Errorf("constraint %s: too complex for a key constraint (%d instructions, at most %d)", src, len(prog.Inst), maxPatternInsts)
	}
	p := &Pattern{Source: src, prog: prog, after: make([]stateSet, len(prog.Inst))}
	p.start = p.closure(uint32(prog.Start))
	for pc := range prog.Inst {
		switch in := &prog.Inst[pc]; in.Op {
		case syntax.InstMatch:
			p.match.add(uint32(pc))
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			p.after[pc] = p.closure(in.Out)
		}
	}
	p.markLive()
	if !p.start.meets(&p.live) {
		return nil, fmt.Errorf("constraint %s: matches no value", src)
	}
	return p, nil
}

// quotes reports whether src uses \Q (outside an escaped backslash).
func quotes(src string) bool {
	for i := 0; i+1 < len(src); i++ {
		if src[i] == '\\' {
			if src[i+1] == 'Q' {
				return true
			}
			i++ // the escaped character
		}
	}
	return false
}

// stripAnchors drops a leading ^ (\A) and a trailing $ (\z): the whole
// value matches anyway.
func stripAnchors(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpBeginText, syntax.OpEndText:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case syntax.OpConcat:
		subs := re.Sub
		if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
			subs = subs[1:]
		}
		if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
			subs = subs[:len(subs)-1]
		}
		c := *re
		c.Sub = subs
		return &c
	}
	return re
}

func hasEmptyWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasEmptyWidth(s) {
			return true
		}
	}
	return false
}

// closure returns the consuming and matching instructions reachable from
// pc without consuming a rune.
func (p *Pattern) closure(pc uint32) stateSet {
	var s, seen stateSet
	var walk func(pc uint32)
	walk = func(pc uint32) {
		if seen.has(pc) {
			return
		}
		seen.add(pc)
		switch in := &p.prog.Inst[pc]; in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			walk(in.Out)
			walk(in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			walk(in.Out)
		case syntax.InstMatch, syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			s.add(pc)
		}
	}
	walk(pc)
	return s
}

// markLive finds the consuming instructions from which a match is
// reachable (a fixpoint over the successors; an empty class is dead).
func (p *Pattern) markLive() {
	live := p.match
	for changed := true; changed; {
		changed = false
		for pc := range p.prog.Inst {
			if p.consumes(uint32(pc)) && !live.has(uint32(pc)) && p.after[pc].meets(&live) && !p.runes(uint32(pc)).empty() {
				live.add(uint32(pc))
				changed = true
			}
		}
	}
	p.live = live
}

func (p *Pattern) consumes(pc uint32) bool {
	switch p.prog.Inst[pc].Op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// matchRune reports whether the consuming instruction pc accepts r.
func (p *Pattern) matchRune(pc uint32, r rune) bool {
	switch in := &p.prog.Inst[pc]; in.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	default:
		return in.MatchRune(r)
	}
}

// run returns the states after reading s from the start.
func (p *Pattern) run(s string) stateSet {
	cur := p.start
	for _, r := range s {
		var next stateSet
		cur.each(func(pc uint32) {
			if p.consumes(pc) && p.matchRune(pc, r) {
				next.or(&p.after[pc])
			}
		})
		if cur = next; cur == (stateSet{}) {
			break
		}
	}
	return cur
}

// Match reports whether the whole of s matches the pattern.
func (p *Pattern) Match(s string) bool {
	end := p.run(s)
	return end.meets(&p.match)
}

// MatchPrefix reports whether some string matching the pattern starts
// with s (a BeginsWith prefix of a constrained raw value).
func (p *Pattern) MatchPrefix(s string) bool {
	end := p.run(s)
	return end.meets(&p.live)
}

// runes returns the runes the consuming instruction pc accepts, as
// sorted [lo, hi] pairs (a case-folded literal brings its fold orbit).
func (p *Pattern) runes(pc uint32) runeSet {
	in := &p.prog.Inst[pc]
	switch in.Op {
	case syntax.InstRuneAny:
		return runeSet{0, unicode.MaxRune}
	case syntax.InstRuneAnyNotNL:
		return runeSet{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	}
	if len(in.Rune) == 1 {
		r := in.Rune[0]
		set := runeSet{r, r}
		if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				set = set.union(runeSet{f, f})
			}
		}
		return set
	}
	return runeSet(in.Rune).union(nil)
}

// MayHold reports whether a value matching the pattern can hold a rune
// in [lo, hi] (the lint asks whether one can hold a byte that sorts
// before the delimiter after it).
func (p *Pattern) MayHold(lo, hi rune) bool {
	found := false
	p.live.each(func(pc uint32) {
		if p.consumes(pc) && !p.runes(pc).intersect(runeSet{lo, hi}).empty() {
			found = true
		}
	})
	return found
}

// placeholderEnd returns the offset of the '}' that closes the
// placeholder opened at s[open]. In a constraint (after ":raw=") braces
// nest, so that a pattern can count ([0-9]{5}), and a backslash escapes
// the byte after it; elsewhere a placeholder holds no brace.
func placeholderEnd(s string, open int) (int, error) {
	body := s[open+1:]
	if c := strings.IndexAny(body, "{}:"); c >= 0 && body[c] == ':' && strings.HasPrefix(body[c+1:], RawConstraint) {
		depth := 0
		for j := c + 1 + len(RawConstraint); j < len(body); j++ {
			switch body[j] {
			case '\\':
				j++
			case '{':
				depth++
			case '}':
				if depth == 0 {
					return open + 1 + j, nil
				}
				depth--
			}
		}
		return 0, fmt.Errorf("unclosed '{' at offset %d (braces in a constraint must balance)", open)
	}
	end := strings.IndexAny(body, "{}")
	if end < 0 {
		return 0, fmt.Errorf("unclosed '{' at offset %d", open)
	}
	if body[end] == '{' {
		return 0, fmt.Errorf("nested '{' at offset %d", open+1+end)
	}
	return open + 1 + end, nil
}

// checkSplit refuses, as a key not rendered from template tmpl, a key
// whose value v of a constrained raw placeholder does not match the
// constraint: no value the template accepts renders it.
func (p *Part) checkSplit(key, tmpl, v string) error {
	if p.Pattern == nil || p.Pattern.Match(v) {
		return nil
	}
	return fmt.Errorf("singletable: key %q: %w %q: the value of %s does not match its constraint", key, ErrMismatch, tmpl, p.Placeholder())
}
