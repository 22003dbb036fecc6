package benchfix

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// The hand-written conversions are only a fair baseline if they do the same
// work: same item as attributevalue, same value back.
func TestHandMatchesAttributeValue(t *testing.T) {
	for i := 0; i < 20; i++ {
		p := Sample(i)
		if i == 3 {
			p.Manager, p.Tags, p.Attrs = nil, nil, nil
		}
		want, err := attributevalue.MarshalMap(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := HandEncode(&p); !reflect.DeepEqual(want, got) {
			t.Fatalf("HandEncode(%d) differs from attributevalue", i)
		}
		var a, b Profile
		if err := attributevalue.UnmarshalMap(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := HandDecode(want, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("HandDecode(%d) = %+v, attributevalue %+v", i, b, a)
		}
	}
}
