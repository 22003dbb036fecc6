package codec

import (
	"reflect"
	"strings"

	"github.com/singletable-go/singletable/internal/format"
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
	// TimeForm is the stored format of a time field beyond
	// attributevalue's options, a time format of internal/format's table
	// (rfc3339, rfc3339milli, date, unixmilli, isoformat, or a Go layout
	// as layout=15:04:05); unix is AsUnixTime, attributevalue's unixtime.
	// With the string option an epoch format is stored as an S.
	TimeForm *format.Format
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
		f, _ := format.Attr(opt) // a layout the table refuses: TagError
		if f == format.Unix {    // attributevalue's unixtime, by the name key templates use
			opt, f = "unixtime", nil
		}
		for _, o := range tagOptions {
			if o.name == opt {
				*o.field(&t) = true
			}
		}
		if f != nil {
			t.TimeForm = f
		}
	}
	return t
}

// tagOptions are the boolean options of a dynamodbav tag, in the order
// structTag writes them. The time formats beyond unixtime are named by
// internal/format's table.
var tagOptions = []struct {
	name  string
	field func(*tag) *bool
}{
	{"omitempty", func(t *tag) *bool { return &t.OmitEmpty }},
	{"omitemptyelem", func(t *tag) *bool { return &t.OmitEmptyElem }},
	{"nullempty", func(t *tag) *bool { return &t.NullEmpty }},
	{"nullemptyelem", func(t *tag) *bool { return &t.NullEmptyElem }},
	{"string", func(t *tag) *bool { return &t.AsString }},
	{"binaryset", func(t *tag) *bool { return &t.AsBinSet }},
	{"numberset", func(t *tag) *bool { return &t.AsNumSet }},
	{"stringset", func(t *tag) *bool { return &t.AsStrSet }},
	{"unixtime", func(t *tag) *bool { return &t.AsUnixTime }},
	{"json", func(t *tag) *bool { return &t.JSON }},
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

// timeForm is the format a time is stored in under t: the TimeForm
// option, format.Unix for unixtime, else nil (the default, RFC 3339 with
// nanoseconds).
func (t tag) timeForm() *format.Format {
	if t.TimeForm == nil && t.AsUnixTime {
		return format.Unix
	}
	return t.TimeForm
}

// FormOf returns the time format a dynamodbav tag's options give a field
// ("rfc3339", "unixtime", "layout=15:04:05", …), nil for the default.
func FormOf(st reflect.StructTag) *format.Format { return parseTag(st).timeForm() }

// TagError returns why a dynamodbav tag's layout= option cannot be used,
// or nil.
func TagError(st reflect.StructTag) error {
	for _, opt := range strings.Split(st.Get(tagKey), ",")[1:] {
		if _, err := format.Attr(opt); err != nil {
			return err
		}
	}
	return nil
}

// structTag renders t back into a struct tag naming the field name, for the
// single-field structs that delegate a value to attributevalue.
func (t tag) structTag(name string) reflect.StructTag {
	opts := []string{name}
	for _, o := range tagOptions {
		if *o.field(&t) {
			opts = append(opts, o.name)
		}
		if o.name == "unixtime" && t.TimeForm != nil {
			if t.TimeForm.Custom() {
				opts = append(opts, format.LayoutOption+t.TimeForm.Layout)
			} else {
				opts = append(opts, t.TimeForm.String())
			}
		}
	}
	return reflect.StructTag(tagKey + `:"` + strings.Join(opts, ",") + `"`)
}
