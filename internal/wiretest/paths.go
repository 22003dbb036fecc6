package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Paths counts which path a client's responses with items took: Direct,
// decoded by the direct wire path (the output the caller's middleware and
// the caller get has no items), or SDK, through the SDK's deserializer
// (the output has them). Add it to a client with Option.
type Paths struct {
	Direct, SDK atomic.Int64
}

// Reset sets both counts to 0.
func (p *Paths) Reset() { p.Direct.Store(0); p.SDK.Store(0) }

// Counts returns the direct and SDK counts.
func (p *Paths) Counts() (direct, sdk int64) { return p.Direct.Load(), p.SDK.Load() }

type pathKey struct{}

// Option is a dynamodb.Options option that makes the client count into p:
// its HTTP client notes whether each response body holds an item, a
// middleware whether the call's output does.
func (p *Paths) Option(o *dynamodb.Options) {
	o.HTTPClient = peeking{o.HTTPClient}
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("wiretest.Paths", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			var body atomic.Bool
			out, md, err := next.HandleInitialize(context.WithValue(ctx, pathKey{}, &body), in)
			switch {
			case err != nil || !body.Load():
			case OutputItems(out.Result) > 0:
				p.SDK.Add(1)
			default:
				p.Direct.Add(1)
			}
			return out, md, err
		}), middleware.Before)
	})
}

// peeking is an HTTP client that notes, in its request's context, whether
// a response body holds an item.
type peeking struct{ next dynamodb.HTTPClient }

func (c peeking) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(r)
	mark, _ := r.Context().Value(pathKey{}).(*atomic.Bool)
	if err != nil || mark == nil || resp.Body == nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil { // the same bytes, then the same error
		resp.Body = io.NopCloser(io.MultiReader(resp.Body, failing{err}))
	}
	mark.Store(BodyItems(b))
	return resp, nil
}

// failing is a reader that fails with err.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }

// BodyItems reports whether a response body holds an item (Items, Item,
// or Responses of BatchGetItem or TransactGetItems).
func BodyItems(b []byte) bool {
	var r struct {
		Items     []json.RawMessage
		Item      map[string]json.RawMessage
		Responses json.RawMessage
	}
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	if len(r.Items) > 0 || len(r.Item) > 0 {
		return true
	}
	var batch map[string][]json.RawMessage
	if json.Unmarshal(r.Responses, &batch) == nil {
		for _, its := range batch {
			if len(its) > 0 {
				return true
			}
		}
	}
	var tx []struct{ Item map[string]json.RawMessage }
	if json.Unmarshal(r.Responses, &tx) == nil {
		for _, it := range tx {
			if len(it.Item) > 0 {
				return true
			}
		}
	}
	return false
}

// OutputItems is the number of items an operation's output holds.
func OutputItems(out any) int {
	n := 0
	switch o := out.(type) {
	case *dynamodb.QueryOutput:
		n = len(o.Items)
	case *dynamodb.ScanOutput:
		n = len(o.Items)
	case *dynamodb.GetItemOutput:
		n = len(o.Item)
	case *dynamodb.BatchGetItemOutput:
		for _, its := range o.Responses {
			n += len(its)
		}
	case *dynamodb.TransactGetItemsOutput:
		for _, r := range o.Responses {
			n += len(r.Item)
		}
	}
	return n
}
