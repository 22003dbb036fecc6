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
	// TimeForm is the stored shape of a time field beyond attributevalue's
	// options: rfc3339, rfc3339milli, date or unixmilli (unix is
	// AsUnixTime, attributevalue's unixtime).
	TimeForm TimeForm
	// JSON stores the value as JSON text in an S (the json option).
	JSON bool
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
		case "unixtime", "unix":
			t.AsUnixTime = true
		case "rfc3339":
			t.TimeForm = TimeRFC3339
		case "rfc3339milli":
			t.TimeForm = TimeRFC3339Milli
		case "date":
			t.TimeForm = TimeDate
		case "unixmilli":
			t.TimeForm = TimeUnixMilli
		case "json":
			t.JSON = true
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
	return tag{AsString: t.AsString, AsUnixTime: t.AsUnixTime, TimeForm: t.TimeForm, JSON: t.JSON}
}

// timeForm is the shape a time is stored in under t: the TimeForm option,
// TimeUnix for unixtime, else TimeDefault (RFC 3339 with nanoseconds).
func (t tag) timeForm() TimeForm {
	if t.TimeForm == TimeDefault && t.AsUnixTime {
		return TimeUnix
	}
	return t.TimeForm
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
	if t.TimeForm != TimeDefault {
		opts = append(opts, t.TimeForm.String())
	}
	add(t.JSON, "json")
	return reflect.StructTag(tagKey + `:"` + strings.Join(opts, ",") + `"`)
}
