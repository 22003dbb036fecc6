package codec

import (
	"reflect"
	"sort"
)

// field is one attribute of a struct type as attributevalue resolves it.
// The enumeration below follows attributevalue's field.go (itself based on
// encoding/json's typeFields) step by step, so that the set of attributes,
// their names and the Go fields behind them are the same.
type field struct {
	tag
	Name        string
	NameFromTag bool
	Index       []int
	Type        reflect.Type

	// exotic is set when attributevalue would reach the field through an
	// unexported embedded pointer or the field itself is unexported: the
	// whole struct is then delegated to attributevalue.
	exotic bool
}

func enumFields(t reflect.Type) []field {
	current := []field{}
	next := []field{{Type: t}}
	var count map[reflect.Type]int
	nextCount := map[reflect.Type]int{}
	visited := map[reflect.Type]struct{}{}
	var fields []field

	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}

		for _, f := range current {
			if _, ok := visited[f.Type]; ok {
				continue
			}
			visited[f.Type] = struct{}{}

			for i := 0; i < f.Type.NumField(); i++ {
				sf := f.Type.Field(i)
				if sf.PkgPath != "" && !sf.Anonymous {
					continue
				}
				ft0 := parseTag(sf.Tag)
				if ft0.Ignore {
					continue
				}
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				sfld := field{Name: sf.Name, Type: ft, tag: ft0, exotic: f.exotic}
				if ft0.Name != "" {
					sfld.NameFromTag = true
					sfld.Name = ft0.Name
				}
				sfld.Index = make([]int, len(f.Index)+1)
				copy(sfld.Index, f.Index)
				sfld.Index[len(f.Index)] = i

				if !sf.Anonymous || ft0.Name != "" || ft.Kind() != reflect.Struct {
					if sf.PkgPath != "" {
						sfld.exotic = true
					}
					// Keep the declared type (attributevalue keeps the
					// dereferenced one, but only uses it for embedding).
					sfld.Type = sf.Type
					fields = append(fields, sfld)
					if count[f.Type] > 1 {
						fields = append(fields, sfld)
					}
					continue
				}
				if sf.PkgPath != "" && sf.Type.Kind() == reflect.Pointer {
					sfld.exotic = true
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, sfld)
				}
			}
		}
	}
	return fields
}

func visibleFields(t reflect.Type) []field {
	fields := enumFields(t)
	sort.Sort(byName(fields))
	out := fields[:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		fi := fields[i]
		name := fi.Name
		for advance = 1; i+advance < len(fields); advance++ {
			if fields[i+advance].Name != name {
				break
			}
		}
		if advance == 1 {
			out = append(out, fi)
			continue
		}
		if dominant, ok := dominantField(fields[i : i+advance]); ok {
			out = append(out, dominant)
		}
	}
	sort.Sort(byIndex(out))
	return out
}

func dominantField(fields []field) (field, bool) {
	length := len(fields[0].Index)
	tagged := -1
	for i, f := range fields {
		if len(f.Index) > length {
			fields = fields[:i]
			break
		}
		if f.NameFromTag {
			if tagged >= 0 {
				return field{}, false
			}
			tagged = i
		}
	}
	if tagged >= 0 {
		return fields[tagged], true
	}
	if len(fields) > 1 {
		return field{}, false
	}
	return fields[0], true
}

type byName []field

func (x byName) Len() int      { return len(x) }
func (x byName) Swap(i, j int) { x[i], x[j] = x[j], x[i] }
func (x byName) Less(i, j int) bool {
	if x[i].Name != x[j].Name {
		return x[i].Name < x[j].Name
	}
	if len(x[i].Index) != len(x[j].Index) {
		return len(x[i].Index) < len(x[j].Index)
	}
	if x[i].NameFromTag != x[j].NameFromTag {
		return x[i].NameFromTag
	}
	return byIndex(x).Less(i, j)
}

type byIndex []field

func (x byIndex) Len() int      { return len(x) }
func (x byIndex) Swap(i, j int) { x[i], x[j] = x[j], x[i] }
func (x byIndex) Less(i, j int) bool {
	for k, xik := range x[i].Index {
		if k >= len(x[j].Index) {
			return false
		}
		if xik != x[j].Index[k] {
			return xik < x[j].Index[k]
		}
	}
	return len(x[i].Index) < len(x[j].Index)
}
