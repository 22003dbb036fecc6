package codec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/wiretest"
)

// FuzzWireResponse: a Query response body, malformed or truncated
// anywhere, never makes the direct wire path panic, and a body both the
// direct path and the SDK read is read the same (compareBodies). A body
// only one of them reads is not a failure here where the two may differ
// (TestDecodeJSONProperty's well-formed bodies pin the rest down): a body
// that is not UTF-8 (JSON's encoding, and DynamoDB's): the SDK keeps the
// bytes of a string without escapes as they are and makes U+FFFD of them
// in a string with escapes, the direct path always makes U+FFFD of them.
// Nor is a body with an object that names a member twice (DynamoDB's
// objects are maps): the SDK keeps the last, the direct path reads each.
func FuzzWireResponse(f *testing.F) {
	for _, seed := range wireSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if msg := compareBodies(body, false); msg != "" && utf8.Valid(body) && !namesTwice(body) {
			t.Fatalf("%s\n%q", msg, body)
		}
	})
}

// namesTwice reports whether an object of the JSON document b names a
// member twice (false for what is not JSON).
func namesTwice(b []byte) bool {
	type open struct {
		names   map[string]bool // nil for an array
		nameNow bool            // the next token is a member's name
	}
	var stack []*open
	d := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		var top *open
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.names != nil {
					top.nameNow = true // after this value
				}
				o := &open{}
				if v == '{' {
					o.names, o.nameNow = map[string]bool{}, true
				}
				stack = append(stack, o)
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.names != nil && top.nameNow {
				if top.names[v] {
					return true
				}
				top.names[v] = true
				top.nameNow = false
				continue
			}
		}
		if top != nil && top.names != nil {
			top.nameNow = true // a scalar value read
		}
	}
}

// wireSeeds are whole response bodies from the property's generator,
// each also cut short at a few places, and hand-written edge cases.
func wireSeeds() [][]byte {
	var seeds [][]byte
	for seed := range 6 {
		g := wiretest.New(uint64(1000 + seed))
		items := make([]map[string]types.AttributeValue, 1+seed%3)
		for i := range items {
			items[i] = g.Item(map[string]types.AttributeValue{"PK": sv("P#f"), "SK": sv(fmt.Sprint("S#", i))})
		}
		js, err := wiretest.SDKJSON(items)
		if err != nil {
			panic(err)
		}
		for i := range js {
			js[i] = g.Respell(js[i], spellings[seed%len(spellings)])
		}
		body := g.Body("Items", js, wiretest.Counts(len(js))...)
		seeds = append(seeds, body)
		for _, cut := range []int{1, len(body) / 3, len(body) / 2, len(body) - 1} {
			seeds = append(seeds, body[:cut])
		}
	}
	for _, s := range []string{
		`{"Items":[],"Count":0,"ScannedCount":0}`,
		`{"Items":null,"Count":0}`,
		`{"Count":1,"Items":[{"S":{"S":"a"},"I":{"N":"1"}}],"LastEvaluatedKey":{"PK":{"S":"x"}}}`,
		`{"Items":[{"S":{"S":"\ud83d\ude00\ud800\udc00\udbff\udfff"}}],"Count":1}`,
		`{"Items":[{"S":{"S":"\ud800"},"P":{"S":"\udc00\ud800"},"ID":{"S":"\ud83d\u0041"}}],"Count":1}`,
		`{"Items":[{"S":{"S":"\u0000\u001f\"\\\/\b\f\n\r\t"}}],"Count":1}`,
		`{"Items":[{"\u0053":{"\u0053":"a"},"I":{"\u004e":"1"}}],"Count":1}`,
		`{"Items":[{"I":{"N":"99999999999999999999999999999999999999"},"F":{"N":"-0"},"F32":{"N":"1E+130"}}],"Count":1}`,
		`{"Items":[{"I":{"N":"007"},"I64":{"N":"-9223372036854775809"},"U8":{"N":"256"},"F":{"N":"1e-130"}}],"Count":1}`,
		`{"Items":[{"NS":{"NS":["1","1.5e3","-0"]},"SS":{"SS":[]},"BS":{"BS":["AAE="]},"Bin":{"B":"!!"}}],"Count":1}`,
		`{"Items":[{"Any":{"NULL":true},"P":{"NULL":true},"M":{"NULL":false}}],"Count":1}`,
		`{"Items":[{"Any":{"L":[{"L":[{"L":[{"M":{"a":{"L":[]}}}]}]}]}}],"Count":1}`,
		`{"Items":[{"S":{"S":"a","N":"1"}}],"Count":1}`,
		`{"Items":[{"S":{"S":"a"},"S":{"S":"b"}}],"Count":1}`,
		`{"Items":[{"S":{}}],"Count":1}`,
		`{"Items":[{}],"Count":2147483648}`,
		`{"Items":[{}],"Count":1.0,"ScannedCount":-1}`,
		`{"Items":[{}]} `,
		`{"Items":[{}]}x`,
		` {"Items" : [ { "S" : { "S" : "a" } } ] , "Count" : 1 } `,
		`{"Items":[{"T":{"S":"2024-01-02T03:04:05.123456789+02:00"},"Unix":{"N":"1700000000"}}],"Count":1}`,
		`{"Items":[{"AsStr":{"S":"17"},"folded":{"S":"f"},"ſ":{"S":"long s"}}],"Count":1}`,
		`{"Items":[{"Sub":{"M":{"A":{"S":"a"},"N":{"L":[{"N":"1"}]},"B":{"B":"AA=="}}},"PSub":{"NULL":true}}],"Count":1}`,
		`{"ConsumedCapacity":{"TableName":"t","CapacityUnits":0.5},"Items":[],"Count":0}`,
		`{"Items":[{"S":{"S":"` + "\xff\xfe" + `"}}],"Count":1}`,
		`{"Items":[[]],"Count":1}`,
		`[]`, `{`, `}`, ``, `null`, `{"Items":{}}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}
