package codec

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/benchfix"
)

// Benchmarks of one ~15-attribute item (benchfix.Profile): encode, decode
// and a 20-item page decode, for the codec, the hand-written conversion and
// attributevalue. bench/codec adds guregu/dynamo. Compare with benchstat:
//
//	go test -run '^$' -bench . -benchmem -count 10 ./internal/codec > codec.txt
//	benchstat -col /impl codec.txt

func BenchmarkEncode(b *testing.B) {
	p := benchfix.Sample(1)
	b.Run("impl=codec", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := Marshal(&p, 0); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand", func(b *testing.B) {
		benchfix.Loop(b, func() {
			_ = benchfix.HandEncode(&p)
		})
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := attributevalue.MarshalMap(p); err != nil {
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
			if err := Unmarshal(item, &out); err != nil {
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
}

func page() []map[string]types.AttributeValue {
	items := make([]map[string]types.AttributeValue, 20)
	for i := range items {
		p := benchfix.Sample(i)
		items[i] = benchfix.HandEncode(&p)
		// As read from a single table: keys and the entity type too.
		items[i]["PK"] = &types.AttributeValueMemberS{Value: "USER#" + p.Username}
		items[i]["SK"] = &types.AttributeValueMemberS{Value: "SKILL#" + p.SkillName}
		items[i]["EntityType"] = &types.AttributeValueMemberS{Value: "Profile"}
	}
	return items
}

func BenchmarkDecodePage20(b *testing.B) {
	items := page()
	b.Run("impl=codec", func(b *testing.B) {
		plan := For(reflect.TypeFor[benchfix.Profile]())
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
}
