package singletable

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
)

// BenchmarkCursor measures the cursor round trip a query page pays: encode
// the last evaluated key, decode it on the next call.
func BenchmarkCursor(b *testing.B) {
	now := func() time.Time { return time.Unix(1700000000, 0) }
	plain := NewTable(nil, "bench", func(o *TableOptions) { o.Now = now })
	sealed := NewTable(nil, "bench", func(o *TableOptions) {
		o.Now = now
		o.CursorKeys = [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	})
	attrs := []string{"PK", "SK", "GSI1PK", "GSI1SK"}
	key := map[string]types.AttributeValue{
		"PK":     &types.AttributeValueMemberS{Value: "USER#john.doe@example.com"},
		"SK":     &types.AttributeValueMemberS{Value: "SKILL#go"},
		"GSI1PK": &types.AttributeValueMemberS{Value: "SKILL#go"},
		"GSI1SK": &types.AttributeValueMemberS{Value: "LEVEL#EXPERT#USER#john.doe@example.com"},
	}
	bind := cursor.Binding("bench", "GSI1", "Profile", "SKILL#go", "asc")
	for _, tc := range []struct {
		name string
		t    *Table
	}{{"Plain", plain}, {"Sealed", sealed}} {
		s, err := tc.t.cursorCodec().Encode(bind, attrs, key)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name+"/Encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.t.cursorCodec().Encode(bind, attrs, key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/Decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.t.cursorCodec().Decode(s, bind, attrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Binding", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = cursor.Binding("bench", "GSI1", "Profile", "SKILL#go", "asc")
		}
	})
}
