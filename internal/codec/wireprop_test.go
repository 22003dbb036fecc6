package codec_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
	"github.com/singletable-go/singletable/internal/wire"
	"github.com/singletable-go/singletable/internal/wiretest"
)

// The direct decoder against the SDK's deserializer and the codec, on
// random items: each item is serialized by the SDK's own JSON serializer,
// spelled as a server may spell it (wiretest.Respell), put in a Query
// response body, and read both ways on a real client on a canned
// transport: by the SDK's deserializer then codec.UnmarshalInPlaceComplete,
// and on the direct wire path (a client built with wire.Enable: its hook
// splits the body, codec.UnmarshalJSON decodes each item straight from
// it). The values, the field errors, complete, the kept head, Count,
// ScannedCount and LastEvaluatedKey must be the same.

// keep is what the property keeps of each item: keys, a field, an
// interface field and a map's value, and some only as present.
var keep = &codec.Keep{Values: []string{"PK", "SK", "S", "Any", "M"}, Present: []string{"ID", "Seq", "P", "I"}}

var entityType = reflect.TypeFor[wiretest.Entity]()

// spellings are how the property's bodies are spelled, one per seed in
// turn: as the SDK writes them, with escapes, with lone surrogates, with
// white space, all of that, and with lone surrogates anywhere (where
// both must refuse a body they put in a type's or a number's text).
var spellings = []wiretest.Spelling{
	{}, {Escape: 0.3}, {Escape: 0.1, Lone: 0.005}, {Space: 0.3}, {Escape: 0.2, Lone: 0.003, Space: 0.2},
	{Lone: 0.0005, Anywhere: true},
}

func TestDecodeJSONProperty(t *testing.T) {
	seeds := 250 // about 2 s, 10 s with -race; 20,000 seeds found nothing more
	if testing.Short() {
		seeds = 60
	}
	for seed := range seeds {
		g := wiretest.New(uint64(seed))
		items := make([]map[string]types.AttributeValue, 1+g.R.IntN(8))
		for i := range items {
			items[i] = g.Item(map[string]types.AttributeValue{"PK": sv(fmt.Sprint("P#", seed)), "SK": sv(fmt.Sprint("S#", i))})
		}
		var more []wiretest.Member
		if seed%3 == 0 {
			lek, err := wiretest.SDKJSON([]map[string]types.AttributeValue{{"PK": items[0]["PK"], "SK": sv("S#\"é😀")}})
			if err != nil {
				t.Fatal(err)
			}
			more = append(more, wiretest.Member{Name: "LastEvaluatedKey", JSON: lek[0]})
		}
		if seed%4 == 0 {
			more = append(more, wiretest.Member{Name: "ConsumedCapacity", JSON: []byte(`{"TableName":"t","CapacityUnits":1.5,"Table":{"CapacityUnits":1}}`)})
		}
		checkPage(t, fmt.Sprint("seed ", seed), g, items, spellings[seed%len(spellings)], more...)
	}
}

// A 400 KB item (DynamoDB's largest) and a page of about 1 MB (its
// largest response), with escapes and astral characters throughout.
func TestDecodeJSONLargest(t *testing.T) {
	g := wiretest.New(400)
	big := g.Item(map[string]types.AttributeValue{"PK": sv("P#big"), "SK": sv("S#0")})
	var b strings.Builder
	for b.Len() < 200<<10 {
		b.WriteString("quote \" backslash \\ newline \n nul \x00 é 😀 \u2028 ")
	}
	big["S"] = sv(b.String())
	l := make([]types.AttributeValue, 3000)
	for i := range l {
		l[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": nv(fmt.Sprint(i * 7919)), "s": sv(fmt.Sprint("élément ", i))}}
	}
	big["L"] = &types.AttributeValueMemberL{Value: l}
	big["Strs"] = &types.AttributeValueMemberL{Value: l[:0]}
	js, err := wiretest.SDKJSON([]map[string]types.AttributeValue{big})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(js[0]); n < 380<<10 || n > 420<<10 {
		t.Fatalf("the item is %d bytes, not about 400 KB", n)
	}
	checkPage(t, "400 KB item", g, []map[string]types.AttributeValue{big}, wiretest.Spelling{})
	checkPage(t, "400 KB item, escaped", g, []map[string]types.AttributeValue{big}, wiretest.Spelling{Escape: 0.2})

	var page []map[string]types.AttributeValue
	size := 0
	for i := 0; size < 1<<20; i++ {
		it := g.Item(map[string]types.AttributeValue{"PK": sv("P#page"), "SK": sv(fmt.Sprint("S#", i))})
		it["S"] = sv(strings.Repeat("x\"é😀", 1000))
		js, err := wiretest.SDKJSON([]map[string]types.AttributeValue{it})
		if err != nil {
			t.Fatal(err)
		}
		size += len(js[0])
		page = append(page, it)
	}
	checkPage(t, "1 MB page", g, page, wiretest.Spelling{Escape: 0.05, Space: 0.05})
}

// checkPage reads items, serialized by the SDK and spelled as sp says, in
// a Query response both ways, and compares.
func checkPage(t *testing.T, what string, g *wiretest.Gen, items []map[string]types.AttributeValue, sp wiretest.Spelling, more ...wiretest.Member) {
	t.Helper()
	js, err := wiretest.SDKJSON(items)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i := range js {
		js[i] = g.Respell(js[i], sp)
	}
	body := g.Respell(g.Body("Items", js, append(wiretest.Counts(len(js)), more...)...), wiretest.Spelling{Space: sp.Space})
	if msg := compareBodies(body, true); msg != "" {
		t.Fatalf("%s: %s\n%s", what, msg, body)
	}
}

// compareBodies reads body, a Query response, both ways, and returns
// what differs ("" when nothing does, or when both refuse the body).
// With strict false, a body only one way reads is not a difference.
func compareBodies(body []byte, strict bool) string {
	out, sdkErr := wiretest.Client(wiretest.NewCanned(map[string][]byte{"Query": body})).Query(context.Background(), queryIn)
	got, wout, err := wireItems(body)
	if sdkErr != nil || err != nil {
		if (sdkErr == nil || err == nil) && strict {
			return fmt.Sprintf("the SDK's error %v, the direct path's %v", sdkErr, err)
		}
		return "" // both refuse the body
	}
	if wout.Count != out.Count || wout.ScannedCount != out.ScannedCount || !wiretest.Equal(wout.LastEvaluatedKey, out.LastEvaluatedKey) ||
		!wiretest.Equal(wout.ConsumedCapacity, out.ConsumedCapacity) {
		return fmt.Sprintf("members %d %d %v %v, the SDK's %d %d %v %v", wout.Count, wout.ScannedCount, wout.LastEvaluatedKey, wout.ConsumedCapacity,
			out.Count, out.ScannedCount, out.LastEvaluatedKey, out.ConsumedCapacity)
	}
	if len(got) != len(out.Items) {
		return fmt.Sprintf("%d items decoded, the SDK has %d", len(got), len(out.Items))
	}
	for i, item := range out.Items {
		var want wiretest.Entity
		complete, ferr := codec.UnmarshalInPlaceComplete(item, &want)
		d := got[i]
		switch {
		case !sameErr(ferr, d.ferr):
			return fmt.Sprintf("item %d: field error %v, the SDK's %v", i, d.ferr, ferr)
		case ferr == nil && !wiretest.Equal(want, d.v):
			return fmt.Sprintf("item %d:\ngot  %+v\nwant %+v", i, d.v, want)
		case ferr == nil && complete != d.complete: // with a field error, complete is not read
			return fmt.Sprintf("item %d: complete %v, the SDK's %v", i, d.complete, complete)
		}
		if msg := checkHead(item, d.head, ferr == nil && !complete); msg != "" {
			return fmt.Sprintf("item %d: %s", i, msg)
		}
	}
	return ""
}

// sameErr reports whether two field errors are the same: the same text,
// or, for an attribute holding a map or a list (whose maps' values each
// decoder may meet in another order), the same attribute and types.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Error() == b.Error() {
		return true
	}
	var x, y *codec.DecodeError
	return errors.As(a, &x) && errors.As(b, &y) && (x.Kind == "map" || x.Kind == "list") && x.Attr == y.Attr && x.Kind == y.Kind && x.Type == y.Type
}

// checkHead compares the head the direct decoder kept with the SDK's
// item: the values kept, and the attributes kept as present, which the
// library reads only of an item decoded but incomplete (present), and
// which are then all there.
func checkHead(item, head map[string]types.AttributeValue, present bool) string {
	want := map[string]types.AttributeValue{}
	for _, k := range keep.Values {
		if av, ok := item[k]; ok {
			want[k] = av
		}
	}
	for _, k := range keep.Present {
		_, ok := item[k]
		if _, kept := head[k]; kept && !ok {
			return fmt.Sprintf("head has %s, the item has not", k)
		}
		if ok && (present || head[k] != nil) {
			want[k] = codec.Here
		}
	}
	if !wiretest.Equal(want, head) {
		return fmt.Sprintf("head %v, want %v", head, want)
	}
	return ""
}

var queryIn = &dynamodb.QueryInput{TableName: aws.String("t")}

// decoded is an item as the direct path read it.
type decoded struct {
	v        wiretest.Entity
	complete bool
	ferr     error
	head     map[string]types.AttributeValue
}

// sink is a wire.Sink of Entity values, as the library's.
type sink struct {
	vals []wiretest.Entity
	wire.Heads
}

func (s *sink) Reset() { s.vals = s.vals[:0]; s.Heads.Reset() }

func (s *sink) Item(d *codec.JSON, _ string, _ int) error {
	s.vals = append(s.vals, wiretest.Entity{})
	return s.Add(d, unsafe.Pointer(&s.vals[len(s.vals)-1]))
}

// wireItems reads body, a Query response, on the direct wire path: a
// client built with wire.Enable, the call carrying a sink.
func wireItems(body []byte) ([]decoded, *dynamodb.QueryOutput, error) {
	c := wiretest.Client(wiretest.NewCanned(map[string][]byte{"Query": body}), wire.Enable)
	s := &sink{Heads: wire.NewHeads(entityType, keep)}
	out, err := c.Query(wire.With(context.Background(), queryIn, s), queryIn)
	if err != nil {
		return nil, nil, err
	}
	if !s.Filled || out.Items != nil {
		return nil, nil, fmt.Errorf("the response did not take the direct path")
	}
	got := make([]decoded, len(s.vals))
	for i := range got {
		got[i] = decoded{s.vals[i], s.Complete[i], s.Errs[i], s.Heads.Heads[i]}
	}
	return got, out, nil
}

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
