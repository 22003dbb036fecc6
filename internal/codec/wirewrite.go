package codec

import (
	"encoding/base64"
	"encoding/binary"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The writing half of the direct wire path: attribute values appended to
// a request body as DynamoDB's JSON, byte for byte as the SDK's
// serializer (smithy-go's awsJson ShapeSerializer) writes them, so that a
// request written here is the request the SDK would send.

// AppendString appends s as a JSON string, escaped as the SDK escapes
// it: quote and backslash with a backslash; \n, \r and \t; other control
// characters and DEL as \u00XX; invalid UTF-8 as U+FFFD; U+2028 and
// U+2029 as \u2028 and \u2029; everything else as it is.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i+8 <= len(s) { // 8 plain ASCII bytes at a time
		v := load64(s, i)
		if stops(v)|hasByte(v, 0x7f) != 0 {
			break
		}
		i += 8
	}
	if i >= 8 && i < len(s) && i+8 > len(s) { // every word read was plain
		if v := load64(s, len(s)-8); stops(v)|hasByte(v, 0x7f) == 0 {
			i = len(s) // and so are the last 8 bytes, overlapping them
		}
	}
	for i < len(s) && written[s[i]] {
		i++
	}
	if i == len(s) {
		return append(append(b, s...), '"')
	}
	return append(appendEscaped(b, s, i), '"')
}

// load64 reads the 8 bytes of s from i, little-endian.
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// written marks the bytes the SDK writes as they are: plain but DEL.
var written = func() [256]bool {
	t := plain
	t[0x7f] = false
	return t
}()

// appendEscaped appends s from i on, escaped (s[:i] is plain).
func appendEscaped(b []byte, s string, i int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, s[:i]...)
	start := i
	flush := func() {
		b = append(b, s[start:i]...)
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if written[c] {
				i++
				continue
			}
			flush()
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			flush()
			b = append(b, "\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			flush()
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	flush()
	return b
}

// AppendAV appends av as DynamoDB's JSON; false when av is nil or of a
// type the SDK does not write (the SDK then writes the request).
func AppendAV(b []byte, av types.AttributeValue) ([]byte, bool) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return append(AppendString(append(b, `{"S":`...), v.Value), '}'), true
	case *types.AttributeValueMemberN:
		return append(AppendString(append(b, `{"N":`...), v.Value), '}'), true
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return append(b, `{"BOOL":true}`...), true
		}
		return append(b, `{"BOOL":false}`...), true
	case *types.AttributeValueMemberNULL:
		if v.Value {
			return append(b, `{"NULL":true}`...), true
		}
		return append(b, `{"NULL":false}`...), true
	case *types.AttributeValueMemberB:
		return append(appendBlob(append(b, `{"B":`...), v.Value), '}'), true
	case *types.AttributeValueMemberSS:
		return appendStrings(append(b, `{"SS":`...), v.Value), true
	case *types.AttributeValueMemberNS:
		return appendStrings(append(b, `{"NS":`...), v.Value), true
	case *types.AttributeValueMemberBS:
		b = append(b, `{"BS":[`...)
		for i, e := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendBlob(b, e)
		}
		return append(b, "]}"...), true
	case *types.AttributeValueMemberL:
		b = append(b, `{"L":[`...)
		for i, e := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = AppendAV(b, e); !ok {
				return b, false
			}
		}
		return append(b, "]}"...), true
	case *types.AttributeValueMemberM:
		b, ok := AppendItem(append(b, `{"M":`...), v.Value)
		return append(b, '}'), ok
	}
	return b, false
}

// AppendItem appends item, a map of attribute values (an item, a key,
// expression values), as a JSON object; false as AppendAV.
func AppendItem(b []byte, item map[string]types.AttributeValue) ([]byte, bool) {
	b = append(b, '{')
	first := true
	for k, av := range item {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(AppendString(b, k), ':')
		var ok bool
		if b, ok = AppendAV(b, av); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// AppendStringMap appends m (ExpressionAttributeNames) as a JSON object.
func AppendStringMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendString(append(AppendString(b, k), ':'), v)
	}
	return append(b, '}')
}

// appendStrings appends ss as a JSON array closing an attribute value.
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, "]}"...)
}

// appendBlob appends p in base64, null for nil (as the SDK does).
func appendBlob(b, p []byte) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, p)
	return append(b, '"')
}
