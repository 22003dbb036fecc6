package codec

import (
	"testing"

	"github.com/singletable-go/singletable/internal/benchfix"
)

// BenchmarkEncodeSized is BenchmarkEncode through MarshalSized, the path
// every Put, batch and transaction write takes (it also sizes the item and
// checks it for values DynamoDB would refuse).
func BenchmarkEncodeSized(b *testing.B) {
	p := benchfix.Sample(1)
	benchfix.Loop(b, func() {
		if _, _, _, err := MarshalSized(&p, 0); err != nil {
			b.Fatal(err)
		}
	})
}
