package workbench

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/keys"
)

// Inference of key templates from a facet's sample items. Each key value
// is split on '#' (the library's and most designs' delimiter); a part
// that holds another attribute of the same item, in every sample, becomes
// a placeholder of that attribute's field, in the format that writes it
// byte for byte; a part that is the same in every sample is a literal; a
// part that varies and holds no attribute is a field of its own, held
// only in the key. What the samples cannot settle is said in a note,
// which the generated code carries as a comment.

// field is a generated struct field.
type field struct {
	name, attr string
	goType     string
	opts       []string       // dynamodbav tag options after the name
	keyOnly    bool           // not stored: a part of a primary key
	derived    bool           // a part of an index key only, stored though no sample holds it
	attrType   string         // the model's type of the attribute
	timeOpt    string         // a time's tag option
	bound      bool           // goType and timeOpt settled by a key placeholder
	vals       map[int]string // a key-only field's value in each item, by index
	notes      []string
}

// candidate is one way a key part can hold an attribute of its item.
type candidate struct {
	attr   string
	kind   string // "raw", "escaped", "time", "int", "bool"
	keyFmt string // the placeholder's format: "", "raw", "rfc3339", "%08d", …
	attrOp string // a time's tag option
	goType string
}

func (c candidate) id() string {
	return c.attr + "\x00" + c.kind + "\x00" + c.keyFmt + "\x00" + c.attrOp
}

// keyTimeFormats are the key formats a time part is tried in, the
// library's default (fixed width, nine fraction digits) first.
var keyTimeFormats = []string{"", "rfc3339", "rfc3339milli", "date", "isoformat",
	"2006-01-02T15:04:05", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05.000000", "2006-01-02 15:04:05",
	"2006-01-02T15:04"}

// attrTimeOptions are the tag options a stored time text is tried in
// ("" is attributevalue's RFC 3339).
var attrTimeOptions = []string{"", "rfc3339", "rfc3339milli", "date", "isoformat",
	"layout=2006-01-02T15:04:05", "layout=2006-01-02T15:04:05.000", "layout=2006-01-02T15:04:05.000000",
	"layout=2006-01-02 15:04:05", "layout=2006-01-02T15:04"}

// parseExact reads s in the key format spec ("" the default), only when
// writing the time back gives s again.
func parseKeyTime(spec, s string) (time.Time, bool) {
	f := format.KeyTime
	if spec != "" {
		var err error
		if f, err = format.Key(spec); err != nil || f.Kind != format.Time {
			return time.Time{}, false
		}
	}
	t, ok := f.ParseTime(s)
	return t, ok && string(f.AppendTime(nil, t)) == s
}

// parseAttrTime reads a stored time text with tag option opt, only when
// the attribute codec writes it back as s.
func parseAttrTime(opt, s string) (time.Time, bool) {
	f := format.StoredTime
	if opt != "" {
		var err error
		if f, err = format.Attr(opt); err != nil || f == nil {
			return time.Time{}, false
		}
	}
	var t time.Time
	var err error
	if f == format.StoredTime {
		t, err = time.Parse(time.RFC3339Nano, s)
	} else {
		var ok bool
		if f.Custom() {
			t, ok = f.ParseIn(s, nil)
		} else {
			t, ok = f.ParseTime(s)
		}
		if !ok {
			return t, false
		}
	}
	return t, err == nil && string(f.AppendTime(nil, t)) == s
}

// candidates lists how part p can hold the attributes of item it, in
// order of preference.
func candidates(p string, it Item, sources []string) []candidate {
	var out []candidate
	for _, a := range sources {
		v, ok := it[a]
		if !ok {
			continue
		}
		switch v.Type() {
		case "S":
			s := *v.S
			// A time first: text that reads as a time in a layout the
			// library writes is declared a time.Time.
			out = append(out, timeCandidates(a, s, p)...)
			if s == p && s != "" {
				out = append(out, candidate{attr: a, kind: "raw", keyFmt: "raw", goType: "string"})
			}
			if s != "" && string(keys.AppendEscaped(nil, s)) == p {
				out = append(out, candidate{attr: a, kind: "escaped", goType: "string"})
			}
		case "N":
			n, err := strconv.ParseInt(*v.N, 10, 64)
			if err != nil || n < 0 || !digits(p) {
				continue
			}
			if len(p) == 19 && p == fmt.Sprintf("%019d", n) {
				out = append(out, candidate{attr: a, kind: "int", goType: "int64"})
			} else if len(p) <= 18 && p == fmt.Sprintf("%0*d", len(p), n) {
				out = append(out, candidate{attr: a, kind: "int", keyFmt: fmt.Sprintf("%%0%dd", len(p)), goType: "int64"})
			}
		case "BOOL":
			if strconv.FormatBool(*v.BOOL) == p {
				out = append(out, candidate{attr: a, kind: "bool", goType: "bool"})
			}
		}
	}
	return out
}

func timeCandidates(attr, stored, p string) []candidate {
	var out []candidate
	for _, kf := range keyTimeFormats {
		kt, ok := parseKeyTime(kf, p)
		if !ok {
			continue
		}
		for _, ao := range attrTimeOptions {
			if at, ok := parseAttrTime(ao, stored); ok && at.Equal(kt) {
				out = append(out, candidate{attr: attr, kind: "time", keyFmt: kf, attrOp: ao, goType: "time.Time"})
			}
		}
	}
	return out
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keyInference is what the samples say about one key attribute.
type keyInference struct {
	template string
	notes    []string
	own      bool // the value is one varying part that no other attribute holds
	shards   int  // a write-sharded index key: shards seen (highest + 1)
}

var shardSuffix = regexp.MustCompile(`^shard_(\d+)$`)

// inferKey infers the template of key attribute attr from the facet's
// items holding it, with placeholders of the fields of sources; new
// key-only fields are added to g.
func (g *facetGen) inferKey(attr string, idx []int, sources []string) keyInference {
	var inf keyInference
	items := make([]Item, len(idx))
	for i, j := range idx {
		items[i] = g.items[j]
	}
	vals := make([][]string, len(items))
	n := -1
	for i, it := range items {
		vals[i] = strings.Split(it[attr].Text(), "#")
		if n != -1 && len(vals[i]) != n {
			inf.notes = append(inf.notes, fmt.Sprintf("%s splits on '#' into different numbers of parts in different samples: read whole, as one value", attr))
			n = -2
			break
		}
		n = len(vals[i])
	}
	if n == -2 {
		for i, it := range items {
			vals[i] = []string{it[attr].Text()}
		}
		n = 1
	}
	var tpl strings.Builder
	for pos := 0; pos < n; pos++ {
		if pos > 0 {
			tpl.WriteByte('#')
		}
		parts := make([]string, len(items))
		for i := range items {
			parts[i] = vals[i][pos]
		}
		if pos == n-1 && pos > 0 && g.index && allMatch(parts, shardSuffix) {
			for _, p := range parts {
				k, _ := strconv.Atoi(shardSuffix.FindStringSubmatch(p)[1])
				inf.shards = max(inf.shards, k+1)
			}
			s := tpl.String()
			return keyInference{template: s[:len(s)-1], notes: append(inf.notes, fmt.Sprintf(
				"%s ends in #shard_<n> in the samples, the library's write sharding: the samples show %d shards; set Shards to the design's count, which decides each item's shard",
				attr, inf.shards)), shards: inf.shards}
		}
		ph, note := g.placeholder(attr, pos, parts, idx, sources)
		if note != "" {
			inf.notes = append(inf.notes, note)
		}
		tpl.WriteString(ph)
		if n == 1 && strings.HasPrefix(ph, "{") && g.newField != "" {
			inf.own = true
		}
	}
	inf.template = tpl.String()
	return inf
}

func allMatch(ss []string, re *regexp.Regexp) bool {
	for _, s := range ss {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// placeholder returns the template text of part pos of attr's values,
// parts (one per item), and a note when the samples leave it open.
func (g *facetGen) placeholder(attr string, pos int, parts []string, idx []int, sources []string) (string, string) {
	g.newField = ""
	items := make([]Item, len(idx))
	for i, j := range idx {
		items[i] = g.items[j]
	}
	same := true
	for _, p := range parts[1:] {
		same = same && p == parts[0]
	}
	common := candidates(parts[0], items[0], sources)
	for i := 1; i < len(items) && len(common) > 0; i++ {
		ids := map[string]bool{}
		for _, c := range candidates(parts[i], items[i], sources) {
			ids[c.id()] = true
		}
		common = slices.DeleteFunc(common, func(c candidate) bool { return !ids[c.id()] })
	}
	common = g.compatible(common)
	if len(common) > 0 {
		c := common[0]
		f := g.bind(c)
		ph := "{" + f.name
		if c.keyFmt != "" {
			ph += ":" + c.keyFmt
		}
		ph += "}"
		var note string
		switch {
		case same && len(items) > 1:
			note = fmt.Sprintf("part %d of %s is %q in every sample, and %s holds it: read as %s, though it may be a literal", pos+1, attr, parts[0], c.attr, ph)
		case len(items) == 1 && c.kind != "raw":
			note = fmt.Sprintf("part %d of %s read as %s from one sample", pos+1, attr, ph)
		case c.kind == "int" && c.keyFmt != "" && parts[0][0] != '0':
			note = fmt.Sprintf("part %d of %s: no sample has a leading zero, so %s (fixed width) fits the samples but is a guess; values of other widths would be refused", pos+1, attr, ph)
		}
		return ph, note
	}
	if same {
		note := ""
		if len(items) == 1 {
			note = fmt.Sprintf("part %d of %s, %q, is taken as a literal from one sample", pos+1, attr, parts[0])
		}
		return strings.ReplaceAll(strings.ReplaceAll(parts[0], "{", "{{"), "}", "}}"), note
	}
	f := g.keyField(attr, pos, parts, idx)
	g.newField = f.name
	return "{" + f.name + ":raw}", ""
}

// compatible drops the candidates whose time option differs from the
// one the field already has.
func (g *facetGen) compatible(cs []candidate) []candidate {
	return slices.DeleteFunc(cs, func(c candidate) bool {
		f := g.fieldOf(c.attr)
		if f == nil {
			return false
		}
		return f.bound && (f.goType != c.goType || c.kind == "time" && f.timeOpt != c.attrOp)
	})
}
