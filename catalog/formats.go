package catalog

import (
	"fmt"
	"slices"

	"github.com/singletable-go/singletable"
)

// The lint of key formats ({CreatedAt:rfc3339}, {Seq:%08d}, {Name:raw}):
// where a declared format does not keep byte order equal to value order,
// where two templates that can share a partition write the same position
// at different precisions, and what each lossy or bounded format refuses.

// timeFormats are the formats of time fields.
var timeFormats = []string{"rfc3339", "rfc3339milli", "date", "unix", "unixmilli"}

// lintFormats reports the format findings of every key of pairs.
func lintFormats(pairs []keyPair) []Finding {
	var fs []Finding
	seen := map[string]bool{} // one finding per entity, index and key
	for _, p := range pairs {
		for _, k := range []singletable.KeyDescription{p.pk, p.sk} {
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
func mixedPrecision(a, b singletable.KeyDescription) (fa, fb, field string, ok bool) {
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

func isTime(format string) bool { return slices.Contains(timeFormats, format) }

func formatName(f string) string {
	if f == "" {
		return "the default (nine fraction digits)"
	}
	return f
}

// coarseness orders the time shapes by what they cut: the day, the
// second, the millisecond; the default keeps nanoseconds.
var coarseness = map[string]int{"date": 3, "rfc3339": 2, "unix": 2, "rfc3339milli": 1, "unixmilli": 1}

// lintKeyFormats reports the formats of one key template; stored maps the
// entity's time fields to the option they are stored under.
func lintKeyFormats(entity, index string, k singletable.KeyDescription, stored map[string]string) []Finding {
	var fs []Finding
	for i, p := range k.Parts {
		if p.Field == "" || p.Format == "" {
			continue
		}
		ph := "{" + p.Field + ":" + p.Format + "}"
		next := ""
		if i+1 < len(k.Parts) {
			next = k.Parts[i+1].Literal
		}
		switch p.Format {
		case "unix", "unixmilli":
			fs = append(fs, Finding{SeverityWarning, entity, index, fmt.Sprintf(
				"%s = %s: %s is not fixed width, so keys sort by time only among times with as many digits (epoch seconds have 10 digits from 2001 to 2286) and never across negative ones; prefer rfc3339 or rfc3339milli where you choose the format",
				k.Attr, k.Template, ph)})
		case "raw":
			if next != "" {
				fs = append(fs, Finding{SeverityWarning, entity, index, fmt.Sprintf(
					"%s = %s: a %s value holding a byte that sorts before the %q after it (a space, say) sorts before shorter values (\"a b%s\" < \"a%s\"), so ranges and order over %s follow the key's bytes, not the values'; values holding %q are refused",
					k.Attr, k.Template, ph, next[:1], next[:1], next[:1], p.Field, next[:1])})
			}
		case "rfc3339", "date", "rfc3339milli":
			precision := map[string]string{"rfc3339": "whole seconds", "rfc3339milli": "whole milliseconds", "date": "midnight UTC"}[p.Format]
			if form := stored[p.Field]; coarseness[form] >= coarseness[p.Format] {
				fs = append(fs, Finding{SeverityInfo, entity, index, fmt.Sprintf(
					"%s = %s: %s holds %s; %s is stored with the %s option, which cuts times to what it holds before the key is rendered",
					k.Attr, k.Template, ph, precision, p.Field, form)})
				continue
			}
			fs = append(fs, Finding{SeverityInfo, entity, index, fmt.Sprintf(
				"%s = %s: %s holds %s; a time with more precision is refused (*KeyError), not cut, so truncate times before writing (or store the field with a time option that cuts them, such as %s)",
				k.Attr, k.Template, ph, precision, p.Format)})
		default: // %0Nd
			fs = append(fs, Finding{SeverityInfo, entity, index, fmt.Sprintf(
				"%s = %s: %s holds 0 up to the largest number of its width; a negative or wider value is refused (*KeyError) rather than written out of order",
				k.Attr, k.Template, ph)})
		}
	}
	return fs
}
