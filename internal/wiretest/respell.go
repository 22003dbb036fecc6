package wiretest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Spelling says how Respell spells a document: the chance of each
// character of a string being written as a \u escape (a surrogate pair
// past U+FFFF), and of each short escape (\n, \") as its \u form; the
// chance of a lone surrogate (or a reversed pair) put into a string
// value of an S or SS (never a member name or a binary's base64, nor
// with Anywhere false a number's or a Count's text); the chance of white space
// after each structural character.
type Spelling struct {
	Escape, Lone, Space float64
	Anywhere            bool
}

// Respell returns the JSON document b spelled as sp says, standing for
// the same values except where a lone surrogate was put in a string.
func (g *Gen) Respell(b []byte, sp Spelling) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	var stack []byte
	key := false
	var member []byte // the last member name, raw
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '"':
			j := stringEnd(b, i)
			lone := 0.0
			if !key && (sp.Anywhere && string(member) != "B" && string(member) != "BS" || string(member) == "S" || string(member) == "SS") {
				lone = sp.Lone
			}
			out = g.respellString(out, b[i+1:j], sp.Escape, lone)
			if key {
				member = b[i+1 : j]
			}
			i = j + 1
			continue
		case '{', '[':
			stack = append(stack, c)
			key = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
			key = false
		}
		out = append(out, c)
		i++
		if strings.IndexByte("{}[],:", c) >= 0 && g.chance(sp.Space) {
			out = append(out, " \n\t\r"[g.R.IntN(4)])
		}
	}
	return out
}

// stringEnd returns the index of the quote that ends the string starting
// at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b) - 1
}

// shortEscapes are JSON's two-character escapes and what they stand for.
var shortEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (g *Gen) respellString(out, raw []byte, escape, lone float64) []byte {
	out = append(out, '"')
	for i := 0; i < len(raw); {
		if g.chance(lone) {
			out = g.lone(out)
		}
		if raw[i] == '\\' {
			if r, ok := shortEscapes[raw[i+1]]; ok && g.chance(escape) {
				out = fmt.Appendf(out, `\u%04x`, r)
				i += 2
				continue
			}
			n := 2
			if raw[i+1] == 'u' {
				n = 6
			}
			out = append(out, raw[i:i+n]...)
			i += n
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		switch {
		case r == utf8.RuneError && size == 1, !g.chance(escape):
			out = append(out, raw[i:i+size]...)
		case r > 0xffff:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		case r == '/' && g.chance(0.5):
			out = append(out, `\/`...)
		default:
			out = fmt.Appendf(out, `\u%04X`, r)
		}
		i += size
	}
	if g.chance(lone) {
		out = g.lone(out)
	}
	return append(out, '"')
}

// lone appends a surrogate escape that is not a pair: alone, reversed, or
// a high one followed by an escape of a letter.
func (g *Gen) lone(out []byte) []byte {
	switch g.R.IntN(4) {
	case 0:
		return fmt.Appendf(out, `\u%04x`, 0xd800+g.R.IntN(0x400))
	case 1:
		return fmt.Appendf(out, `\u%04x`, 0xdc00+g.R.IntN(0x400))
	case 2:
		return fmt.Appendf(out, `\udc00\ud800`)
	}
	return fmt.Appendf(out, `\ud83d\u0041`)
}

// Member is a member of a response body: its name and its JSON.
type Member struct {
	Name string
	JSON []byte
}

// Body returns a response body of members in a random order, items (each
// an item's JSON) being the array member named items (none when items is
// "").
func (g *Gen) Body(items string, its [][]byte, more ...Member) []byte {
	if items != "" {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, it := range its {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it)
		}
		b.WriteByte(']')
		more = append(more, Member{items, b.Bytes()})
	}
	g.R.Shuffle(len(more), func(i, j int) { more[i], more[j] = more[j], more[i] })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range more {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", m.Name)
		b.Write(m.JSON)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Counts are a Query or Scan body's Count and ScannedCount members for n
// items.
func Counts(n int) []Member {
	return []Member{{"Count", []byte(strconv.Itoa(n))}, {"ScannedCount", []byte(strconv.Itoa(n + 3))}}
}
