package codec

import (
	"reflect"
	"strings"
)

// tag holds the dynamodbav struct tag options, as attributevalue parses them.
type tag struct {
	Name                         string
	Ignore                       bool
	OmitEmpty                    bool
	OmitEmptyElem                bool
	NullEmpty                    bool
	NullEmptyElem                bool
	AsString                     bool
	AsBinSet, AsNumSet, AsStrSet bool
	AsUnixTime                   bool
}

const tagKey = "dynamodbav"

func parseTag(st reflect.StructTag) tag {
	var t tag
	s := st.Get(tagKey)
	if s == "" {
		return t
	}
	parts := strings.Split(s, ",")
	if parts[0] == "-" {
		t.Ignore = true
	} else {
		t.Name = parts[0]
	}
	for _, opt := range parts[1:] {
		switch opt {
		case "omitempty":
			t.OmitEmpty = true
		case "omitemptyelem":
			t.OmitEmptyElem = true
		case "nullempty":
			t.NullEmpty = true
		case "nullemptyelem":
			t.NullEmptyElem = true
		case "string":
			t.AsString = true
		case "binaryset":
			t.AsBinSet = true
		case "numberset":
			t.AsNumSet = true
		case "stringset":
			t.AsStrSet = true
		case "unixtime":
			t.AsUnixTime = true
		}
	}
	return t
}

// elemTag is the tag attributevalue applies to the elements of a slice,
// array or map encoded under field tag t.
func (t tag) elemTag() tag {
	return tag{OmitEmpty: t.OmitEmptyElem, OmitEmptyElem: t.OmitEmptyElem, NullEmpty: t.NullEmptyElem}
}

// decodeTag keeps only the options decoding reads.
func (t tag) decodeTag() tag {
	return tag{AsString: t.AsString, AsUnixTime: t.AsUnixTime}
}

// structTag renders t back into a struct tag naming the field name, for the
// single-field structs that delegate a value to attributevalue.
func (t tag) structTag(name string) reflect.StructTag {
	opts := []string{name}
	add := func(on bool, s string) {
		if on {
			opts = append(opts, s)
		}
	}
	add(t.OmitEmpty, "omitempty")
	add(t.OmitEmptyElem, "omitemptyelem")
	add(t.NullEmpty, "nullempty")
	add(t.NullEmptyElem, "nullemptyelem")
	add(t.AsString, "string")
	add(t.AsBinSet, "binaryset")
	add(t.AsNumSet, "numberset")
	add(t.AsStrSet, "stringset")
	add(t.AsUnixTime, "unixtime")
	return reflect.StructTag(tagKey + `:"` + strings.Join(opts, ",") + `"`)
}
