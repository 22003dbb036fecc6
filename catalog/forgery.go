package catalog

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/keys"
)

// The lint of forged keys. Rendering is injective within one template,
// not across the templates that write one key attribute: with
// u#{UserID:raw} for users and u#{UserID:raw}#follower for followers, the
// user "12345#follower" has the partition key of user 12345's followers.
// For every two entities writing one key attribute (the table's partition
// and sort keys, each templated index's), the lint intersects the
// languages of their templates (internal/keys' Lang: literals, escaped
// values that hold no delimiter, raw values that hold anything but the
// delimiter after them or what their constraint matches, formats with
// their alphabets and widths) and reports a key both render with one's
// value standing where the other has a literal, with the values that
// forge it. Sort keys are compared only where the two entities'
// partition keys can be equal. Two templates that render the same keys
// with their placeholders in the same places (entities sharing an item
// collection) are not reported.

// shardSuffix is the literal before a write shard's number, appended to
// a sharded index's partition key (internal/keys.AppendShard).
const shardSuffix = "#shard_"

// keyUse is the template one entity writes one key attribute with.
type keyUse struct {
	entity, index string // index is "" for the table
	k             describe.Key
	tpl           keys.Template
	shards        int
	lang          *keys.Lang
	sort          bool
	partition     *keyUse // beside a sort key, the partition key (nil when not templated)
}

// newKeyUse returns the use of template k, nil when there is none.
func newKeyUse(entity, index string, k describe.Key, shards int) *keyUse {
	tp, err := keys.Parse(k.Template)
	if k.Template == "" || err != nil { // a bound entity's templates parse
		return nil
	}
	return &keyUse{entity: entity, index: index, k: k, tpl: tp, shards: shards, lang: langOf(tp, shards)}
}

// langOf is the language of the keys of tp, with a write shard's suffix
// when the key is sharded.
func langOf(tp keys.Template, shards int) *keys.Lang {
	l := keys.NewLang(tp)
	if shards > 0 {
		l = l.ThenDigits(shardSuffix)
	}
	return l
}

// keyUses lists the templated keys of every entity of d.
func keyUses(d describe.Table) []*keyUse {
	var out []*keyUse
	add := func(entity, index string, pk, sk describe.Key, shards int) {
		p := newKeyUse(entity, index, pk, shards)
		if p != nil {
			out = append(out, p)
		}
		if s := newKeyUse(entity, index, sk, 0); s != nil {
			s.sort, s.partition = true, p
			out = append(out, s)
		}
	}
	for _, ed := range d.Entities {
		add(ed.Type, "", ed.PK, ed.SK, 0)
		for _, ix := range ed.Indexes {
			if !ix.MultiAttribute {
				add(ed.Type, ix.Name, ix.PK, ix.SK, ix.Shards)
			}
		}
	}
	return out
}

// mayRenderSame reports whether some key is rendered by both templates
// (both "" for keys that are not defined).
func mayRenderSame(a, b describe.Key) bool {
	if a.Template == "" || b.Template == "" {
		return a.Template == b.Template
	}
	ta, erra := keys.Parse(a.Template)
	tb, errb := keys.Parse(b.Template)
	if erra != nil || errb != nil {
		return false
	}
	_, ok := keys.Intersects(keys.NewLang(ta), keys.NewLang(tb))
	return ok
}

// samePartitions reports whether the items u and v write can share a
// partition: always for partition keys; for sort keys, when their
// partition keys are one attribute and can be equal.
func samePartitions(u, v *keyUse) bool {
	if !u.sort || !v.sort {
		return true
	}
	pu, pv := u.partition, v.partition
	if pu == nil || pv == nil {
		return pu == nil && pv == nil
	}
	if pu.k.Attr != pv.k.Attr {
		return false
	}
	_, ok := keys.Intersects(pu.lang, pv.lang)
	return ok
}

// lintForgery reports every two entities one of whose values can render
// the other's key, once per attribute.
func lintForgery(d describe.Table) []Finding {
	uses := keyUses(d)
	var fs []Finding
	seen := map[string]bool{}
	for i, u := range uses {
		for _, v := range uses[i+1:] {
			id := u.entity + "\x00" + v.entity + "\x00" + u.k.Attr
			if u.entity == v.entity || u.k.Attr != v.k.Attr || seen[id] || !samePartitions(u, v) {
				continue
			}
			if f, ok := keys.Overlap(u.lang, v.lang); ok {
				seen[id] = true
				fs = append(fs, forgeryFinding(u, v, f))
			}
		}
	}
	return fs
}

// forgeryFinding words a forged key: which entity's value renders which
// other's key, the values, and how to close the gap.
func forgeryFinding(u, v *keyUse, f keys.Forgery) Finding {
	side := 0
	if f.Forger[0] < 0 {
		side = 1
	}
	forger, other := [2]*keyUse{u, v}[side], [2]*keyUse{u, v}[1-side]
	ph := placeholderAt(forger.tpl, f.Forger[side])
	whose := other.entity + "'s key"
	if vals := valueList(other.tpl, f.Values[1-side]); vals != "" {
		whose += " for " + vals
	}
	msg := fmt.Sprintf("%s's %s = %s can render %s's keys (%s = %s): %s renders %s %q, %s, so a value can reach another entity's items. %s",
		forger.entity, forger.k.Attr, forger.k.Template, other.entity, other.k.Attr, other.k.Template,
		valueList(forger.tpl, f.Values[side]), forger.k.Attr, f.Key, whose,
		closeAdvice(forger, other, ph, f.Forger[side], f.Covered[side]))
	return finding(SeverityWarning, RuleForgedKey, forger.entity, forger.index, msg)
}

// closeAdvice says how to close the gap: a constraint that keeps the
// covered rune out of the forging raw value, checked to close it, or
// literals that tell the templates apart.
func closeAdvice(forger, other *keyUse, ph *keys.Part, n int, covered rune) string {
	apart := "give the two templates literals that tell their keys apart"
	if ph.Format != format.Raw {
		return strings.ToUpper(apart[:1]) + apart[1:]
	}
	if ph.Pattern != nil {
		return fmt.Sprintf("Narrow the constraint of %s so that its values cannot hold %q, or %s", ph.Placeholder(), covered, apart)
	}
	spec := keys.RawConstraint + "[^" + classRune(covered) + "]+"
	fixed, err := keys.Parse(withSpec(forger.tpl, n, spec))
	if err == nil {
		if _, still := keys.Overlap(langOf(fixed, forger.shards), other.lang); !still {
			return fmt.Sprintf("Constrain the raw values so that they cannot hold %q: {%s:%s} (or a stricter class, such as [0-9]+ for numeric IDs) closes it; or %s",
				covered, ph.Field, spec, apart)
		}
	}
	return fmt.Sprintf("Constrain the raw values of %s (raw=<pattern>) so that they cannot hold %q, or %s", ph.Placeholder(), covered, apart)
}

// placeholderAt returns the n-th placeholder of tp (counting from 0).
func placeholderAt(tp keys.Template, n int) *keys.Part {
	for i := range tp.Parts {
		if tp.Parts[i].IsPlaceholder() {
			if n == 0 {
				return &tp.Parts[i]
			}
			n--
		}
	}
	return nil
}

// withSpec writes tp with the n-th placeholder's spec replaced.
func withSpec(tp keys.Template, n int, spec string) string {
	var b strings.Builder
	for i := range tp.Parts {
		p := &tp.Parts[i]
		switch {
		case !p.IsPlaceholder():
			b.WriteString(p.Literal)
		case n == 0:
			b.WriteString("{" + p.Field + ":" + spec + "}")
			n--
		default:
			b.WriteString(p.Placeholder())
			n--
		}
	}
	return b.String()
}

// classRune writes r for a regular expression's character class.
func classRune(r rune) string {
	switch {
	case strings.ContainsRune(`\]^-[`, r):
		return `\` + string(r)
	case r < 0x80 && unicode.IsPrint(r):
		return string(r)
	}
	return fmt.Sprintf(`\x{%x}`, r)
}

// valueList writes the placeholders' values in a key: `UserID = "12345"`
// (an escaped value unescaped, when it is canonical).
func valueList(tp keys.Template, vals []string) string {
	var out []string
	for i, f := range tp.Fields() {
		v := vals[i]
		if p := placeholderAt(tp, i); p.Format == nil {
			if raw, err := keys.Unescape(v); err == nil {
				v = raw
			}
		}
		out = append(out, fmt.Sprintf("%s = %q", f, v))
	}
	return strings.Join(out, ", ")
}
