package catalog

import (
	"fmt"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/keys"
)

// The lint of key formats ({CreatedAt:rfc3339}, {Seq:%08d}, {Name:raw}):
// where a declared format does not keep byte order equal to value order,
// where two templates that can share a partition write the same position
// at different precisions, and what each lossy or bounded format refuses.
// The formats, their properties and the words for them are the table of
// internal/format.

// lintFormats reports the format findings of every key of pairs.
func lintFormats(pairs []keyPair) []Finding {
	var fs []Finding
	seen := map[string]bool{} // one finding per entity, index and key
	for _, p := range pairs {
		for _, k := range []describe.Key{p.pk, p.sk} {
			id := p.entity + "\x00" + p.index + "\x00" + k.Attr
			if k.Template == "" || seen[id] {
				continue
			}
			seen[id] = true
			fs = append(fs, lintKeyFormats(p.entity, p.index, k, p.timeForms)...)
		}
	}
	// Mixed precision: two sort templates that can share a partition and
	// agree up to a time placeholder written at different precisions
	// ("…:00Z" sorts after "…:00.500Z", so ranges misplace items).
	for i, a := range pairs {
		for _, b := range pairs[i+1:] {
			if a.entity == b.entity || a.primary != b.primary || a.index != b.index || a.pk.Attr != b.pk.Attr ||
				shape(a.pk) != shape(b.pk) || !a.hasSortTp || !b.hasSortTp {
				continue
			}
			if fa, fb, field, ok := mixedPrecision(a.sk, b.sk); ok {
				fs = append(fs, Finding{SeverityWarning, a.entity, a.index, fmt.Sprintf(
					"%s (%s = %s) and %s (%s = %s) share partitions and write a time at the same position of the sort key as %s and %s: their keys do not sort by time against each other, so a range over {%s} misplaces items at the boundaries; use one format",
					a.entity, a.sk.Attr, a.sk.Template, b.entity, b.sk.Attr, b.sk.Template, formatName(fa), formatName(fb), field)})
			}
		}
	}
	return fs
}

// mixedPrecision walks two templates while their literals agree and
// reports the first placeholder position holding times in two formats.
func mixedPrecision(a, b describe.Key) (fa, fb, field string, ok bool) {
	for i := 0; i < len(a.Parts) && i < len(b.Parts); i++ {
		pa, pb := a.Parts[i], b.Parts[i]
		if (pa.Field == "") != (pb.Field == "") || (pa.Field == "" && pa.Literal != pb.Literal) {
			return "", "", "", false
		}
		if pa.Field == "" || pa.Format == pb.Format {
			continue
		}
		if isTime(pa.Format) || isTime(pb.Format) {
			return pa.Format, pb.Format, pa.Field, true
		}
		return "", "", "", false
	}
	return "", "", "", false
}

// keyFormat returns the table entry of a placeholder's format spec: the
// default's time for "", raw for a constrained raw spec, nil for a spec
// the table does not know.
func keyFormat(spec string) *format.Format {
	if spec == "" {
		return format.KeyTime
	}
	f, _, _ := keys.ParseSpec(spec)
	return f
}

// orderKept reports whether a constrained raw placeholder (spec) before
// the literal next keeps byte order equal to value order: when its
// constraint lets no value hold a rune below the delimiter.
func orderKept(spec, next string) bool {
	_, pat, err := keys.ParseSpec(spec)
	return err == nil && pat != nil && next != "" && !pat.MayHold(0, rune(next[0])-1)
}

func isTime(spec string) bool {
	f := keyFormat(spec)
	return spec != "" && f != nil && f.Kind == format.Time
}

func formatName(spec string) string { return keyFormat(spec).Title() }

// lintKeyFormats reports the formats of one key template, as the format
// table words them; stored maps the entity's time fields to the option
// they are stored under.
func lintKeyFormats(entity, index string, k describe.Key, stored map[string]string) []Finding {
	var fs []Finding
	for i, p := range k.Parts {
		f := keyFormat(p.Format)
		if p.Field == "" || p.Format == "" || f == nil {
			continue
		}
		next := ""
		if i+1 < len(k.Parts) {
			next = k.Parts[i+1].Literal
		}
		if orderKept(p.Format, next) {
			continue
		}
		text, warn := f.Lint("{"+p.Field+":"+p.Format+"}", p.Field, next, storedForm(stored[p.Field]))
		if text == "" {
			continue
		}
		sev := SeverityInfo
		if warn {
			sev = SeverityWarning
		}
		fs = append(fs, Finding{sev, entity, index, k.Attr + " = " + k.Template + ": " + text})
	}
	return fs
}

// storedForm is the table entry of a time field's stored option (a name,
// or a layout as describe.Field.TimeForm gives it), nil for the default.
func storedForm(option string) *format.Format {
	if f, _ := format.Attr(option); f != nil || option == "" {
		return f
	}
	f, _ := format.Key(option)
	return f
}
