// Package sdkwrites counts, in the direct wire path's tests, the requests
// the SDK serialized where the path should have written them. It is apart
// from package wiretest, which internal/codec's tests import, because it
// imports internal/wire (which imports internal/codec).
package sdkwrites

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/singletable-go/singletable/internal/wire"
)

// Counter counts the requests the direct path may write (PutItem,
// BatchWriteItem, BatchGetItem, TransactGetItems) that the SDK's own
// serializer wrote instead: none when every one was written by the path.
// Add it with Option to a client built with wire.Enable, after it.
type Counter struct{ atomic.Int64 }

// Option makes the client built with wire.Enable count into w.
func (w *Counter) Option(o *dynamodb.Options) {
	if p, ok := o.Protocol.(*wire.Protocol); ok {
		p.ClientProtocol = serializing{p.ClientProtocol, w}
	}
}

// serializing is the SDK's protocol under the path's, counting.
type serializing struct {
	smithyhttp.ClientProtocol
	w *Counter
}

func (s serializing) SerializeRequest(ctx context.Context, o *smithy.OperationSchema, in smithy.Serializable, r *smithyhttp.Request) error {
	switch o.ID().Name {
	case "PutItem", "BatchWriteItem", "BatchGetItem", "TransactGetItems":
		s.w.Add(1)
	}
	return s.ClientProtocol.SerializeRequest(ctx, o, in, r)
}
