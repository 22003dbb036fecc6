// Package codec compares item conversion four ways on one ~15-attribute
// struct (benchfix.Profile): the library's compiled codec, hand-written
// conversion, aws-sdk-go-v2's attributevalue and guregu/dynamo. It lives in
// the bench module so that guregu/dynamo stays out of the library's go.mod.
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 10 ./codec > codec.txt
//	benchstat -col /impl codec.txt
//
// Compare cpu-ns/op (process CPU time per operation) first: on a shared
// machine it is far steadier than ns/op.
package codec

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"

	"github.com/singletable-go/singletable/internal/benchfix"
	"github.com/singletable-go/singletable/internal/codec"
)

func BenchmarkEncode(b *testing.B) {
	p := benchfix.Sample(1)
	b.Run("impl=codec", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := codec.Marshal(&p, 0); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand", func(b *testing.B) {
		benchfix.Loop(b, func() { _ = benchfix.HandEncode(&p) })
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := attributevalue.MarshalMap(p); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=guregu", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := dynamo.MarshalItem(p); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkDecode(b *testing.B) {
	p := benchfix.Sample(1)
	item := benchfix.HandEncode(&p)
	b.Run("impl=codec", func(b *testing.B) {
		benchfix.Loop(b, func() {
			var out benchfix.Profile
			if err := codec.Unmarshal(item, &out); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand", func(b *testing.B) {
		benchfix.Loop(b, func() {
			var out benchfix.Profile
			if err := benchfix.HandDecode(item, &out); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		benchfix.Loop(b, func() {
			var out benchfix.Profile
			if err := attributevalue.UnmarshalMap(item, &out); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=guregu", func(b *testing.B) {
		benchfix.Loop(b, func() {
			var out benchfix.Profile
			if err := dynamo.UnmarshalItem(item, &out); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// page is 20 items as a single-table Query returns them: with keys and the
// entity type attribute besides the entity's own attributes.
func page() []map[string]types.AttributeValue {
	items := make([]map[string]types.AttributeValue, 20)
	for i := range items {
		p := benchfix.Sample(i)
		items[i] = benchfix.HandEncode(&p)
		items[i]["PK"] = &types.AttributeValueMemberS{Value: "USER#" + p.Username}
		items[i]["SK"] = &types.AttributeValueMemberS{Value: "SKILL#" + p.SkillName}
		items[i]["EntityType"] = &types.AttributeValueMemberS{Value: "Profile"}
	}
	return items
}

func BenchmarkDecodePage20(b *testing.B) {
	items := page()
	b.Run("impl=codec", func(b *testing.B) {
		plan := codec.For(reflect.TypeFor[benchfix.Profile]())
		benchfix.Loop(b, func() {
			out := make([]benchfix.Profile, len(items))
			for i, it := range items {
				if err := plan.Decode(it, reflect.ValueOf(&out[i]).Elem()); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("impl=hand", func(b *testing.B) {
		benchfix.Loop(b, func() {
			out := make([]benchfix.Profile, len(items))
			for i, it := range items {
				if err := benchfix.HandDecode(it, &out[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		benchfix.Loop(b, func() {
			var out []benchfix.Profile
			if err := attributevalue.UnmarshalListOfMaps(items, &out); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=guregu", func(b *testing.B) {
		benchfix.Loop(b, func() {
			out := make([]benchfix.Profile, len(items))
			for i, it := range items {
				if err := dynamo.UnmarshalItem(it, &out[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

var sink *benchfix.Profile

// BenchmarkDecodeHeap decodes into a heap value for both, as a repository
// returning pages or pointers does: reflection makes the codec's target
// escape to the heap, while HandDecode's stays on the stack in
// BenchmarkDecode.
func BenchmarkDecodeHeap(b *testing.B) {
	p := benchfix.Sample(1)
	item := benchfix.HandEncode(&p)
	b.Run("impl=codec", func(b *testing.B) {
		benchfix.Loop(b, func() {
			out := new(benchfix.Profile)
			if err := codec.Unmarshal(item, out); err != nil {
				b.Fatal(err)
			}
			sink = out
		})
	})
	b.Run("impl=hand", func(b *testing.B) {
		benchfix.Loop(b, func() {
			out := new(benchfix.Profile)
			if err := benchfix.HandDecode(item, out); err != nil {
				b.Fatal(err)
			}
			sink = out
		})
	})
}
