// Package wire is the direct wire path's hook on a *dynamodb.Client
// (docs/performance.md): a smithyhttp.ClientProtocol wrapping the client's
// own that decodes the items of a 2xx Query, Scan, GetItem, BatchGetItem
// or TransactGetItems response straight from its JSON into the caller's
// values, writes the bodies of PutItem, BatchWriteItem, BatchGetItem and
// TransactGetItems requests as the SDK would (request.go), and hands
// everything else to the wrapped protocol.
//
// A call takes the path when its context carries a Sink for its input
// (With), and the client was built with Enable (public as
// singletable/wire.Enable). The SDK's middleware runs as for any call:
// the request is serialized by the SDK, signed, retried, logged and
// traced; the response's CRC32 (when the client checks it) is checked
// before any item is decoded; a non-2xx response is the SDK's error.
// The output the SDK returns has every member but the items (Count,
// LastEvaluatedKey, ConsumedCapacity, UnprocessedKeys, ...), deserialized
// by the SDK.
package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/singletable-go/singletable/internal/codec"
)

// Sink receives the items of the responses of one call.
type Sink interface {
	// Reset drops what an earlier attempt's response gave: each 2xx
	// response starts with it.
	Reset()
	// Item reads one item from d, positioned at the item's object. table
	// is the table of a BatchGetItem response's item, pos the index of a
	// TransactGetItems response's item (0 otherwise). An error ends the
	// response's decoding, as malformed JSON.
	Item(d *codec.JSON, table string, pos int) error
	// Done is called when a response was decoded whole.
	Done()
}

// call is the context value of a call that takes the path.
type call struct {
	in   any
	sink Sink
}

type callKey struct{}

// With returns ctx carrying sink for the call whose input is in (the
// pointer the operation is called with): only that call's responses go
// to sink, never those of another call made with ctx (a nested call from
// middleware, a lookahead with another input).
func With(ctx context.Context, in any, sink Sink) context.Context {
	return context.WithValue(ctx, callKey{}, &call{in: in, sink: sink})
}

// scopeID is the ID of the middleware that scopes a call's Sink.
const scopeID = "singletable.wire.scope"

// scope, first in the Serialize step, hides a Sink from an operation
// whose input is not the one the Sink was given for.
type scope struct{}

func (scope) ID() string { return scopeID }

func (scope) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (
	middleware.SerializeOutput, middleware.Metadata, error,
) {
	if c, _ := ctx.Value(callKey{}).(*call); c != nil && c.in != in.Parameters {
		ctx = context.WithValue(ctx, callKey{}, (*call)(nil))
	}
	return next.HandleSerialize(ctx, in)
}

// Enable turns the path on for a client: an option of dynamodb.New and
// dynamodb.NewFromConfig. Applied twice, it changes nothing more.
func Enable(o *dynamodb.Options) {
	if o.Protocol == nil {
		return // not a client of the schema-serde SDK (dynamodb < v1.69)
	}
	if _, ok := o.Protocol.(*Protocol); ok {
		return
	}
	o.Protocol = &Protocol{ClientProtocol: o.Protocol}
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		if _, ok := s.Serialize.Get(scopeID); ok {
			return nil
		}
		return s.Serialize.Add(scope{}, middleware.Before)
	})
}

// Carries reports whether c is a *dynamodb.Client built with Enable.
func Carries(c any) bool {
	cl, ok := c.(*dynamodb.Client)
	if !ok || cl == nil {
		return false
	}
	_, ok = cl.Options().Protocol.(*Protocol)
	return ok
}

// Protocol is the client's protocol wrapped by Enable.
type Protocol struct {
	smithyhttp.ClientProtocol // the SDK's: everything but a direct call's 2xx response
}

var _ smithyhttp.ClientProtocol = (*Protocol)(nil)

// itemsMember is, per operation the path reads, the response member that
// holds its items.
var itemsMember = map[string]string{
	"Query": "Items", "Scan": "Items", "GetItem": "Item",
	"BatchGetItem": "Responses", "TransactGetItems": "Responses",
}

// DeserializeResponse decodes a direct call's 2xx response: its items
// into the call's Sink, the rest into out by the wrapped protocol.
func (p *Protocol) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, types *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	c, _ := ctx.Value(callKey{}).(*call)
	op := schema.ID().Name
	member, ok := itemsMember[op]
	if c == nil || c.sink == nil || !ok || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return p.ClientProtocol.DeserializeResponse(ctx, schema, types, resp, out)
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if resp.ContentLength > 0 && resp.ContentLength < 64<<20 {
		buf.Grow(int(resp.ContentLength))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return &smithy.DeserializationError{Err: fmt.Errorf("read response body: %w", err)}
	}
	// Closing the body checks its CRC32 (when the client checks it)
	// before anything is decoded; the SDK closes it again, harmlessly. The
	// SDK's check compares with 0 when the header is absent (and then
	// only logs the mismatch): it counts only when the header is there.
	if err := resp.Body.Close(); err != nil && resp.Header.Get("X-Amz-Crc32") != "" {
		return &smithy.DeserializationError{Err: err}
	}
	c.sink.Reset()
	count, scanned := counters(out)
	rest, err := split(buf.Bytes(), op, member, c.sink, count, scanned)
	if err != nil {
		c.sink.Reset()
		return &smithy.DeserializationError{Err: err, Snapshot: snapshot(buf.Bytes())}
	}
	c.sink.Done()
	if len(rest) == 2 { // {}: nothing more for the SDK to read
		return nil
	}
	r := *resp.Response
	r.Body = io.NopCloser(bytes.NewReader(rest))
	r.ContentLength = int64(len(rest))
	return p.ClientProtocol.DeserializeResponse(ctx, schema, types, &smithyhttp.Response{Response: &r}, out)
}

// snapshot is the start of a body that did not decode, for the error.
func snapshot(b []byte) []byte {
	return bytes.Clone(b[:min(len(b), 1024)])
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

// putBuffer pools b unless it grew past 4 MiB.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return
	}
	b.Reset()
	buffers.Put(b)
}

// counters returns the Count and ScannedCount of a Query or Scan output,
// which split sets itself.
func counters(out smithy.Deserializable) (count, scanned *int32) {
	switch o := out.(type) {
	case *dynamodb.QueryOutput:
		return &o.Count, &o.ScannedCount
	case *dynamodb.ScanOutput:
		return &o.Count, &o.ScannedCount
	}
	return nil, nil
}

// split reads body, a response of op: the items under member go to sink,
// Count and ScannedCount to count and scanned (when not nil), and the
// other members are returned as a JSON object of their own.
func split(body []byte, op, member string, sink Sink, count, scanned *int32) ([]byte, error) {
	d := codec.NewJSON(body)
	var rest []byte // made for the first member the SDK reads
	err := d.Object(func(k []byte) error {
		if string(k) == member {
			return items(d, op, sink)
		}
		name := append([]byte(nil), k...)
		raw, err := d.Raw()
		if err != nil {
			return err
		}
		if n, ok := int32Of(raw); ok && count != nil && (string(name) == "Count" || string(name) == "ScannedCount") {
			if string(name) == "Count" {
				*count = n
			} else {
				*scanned = n
			}
			return nil
		}
		if rest == nil {
			rest = append(make([]byte, 0, 64), '{')
		} else {
			rest = append(rest, ',')
		}
		rest = appendString(rest, name)
		rest = append(rest, ':')
		rest = append(rest, raw...)
		return nil
	})
	if err == nil {
		err = d.End()
	}
	if err != nil || rest == nil {
		return noMembers, err
	}
	return append(rest, '}'), nil
}

// noMembers is the rest of a response holding nothing but its items.
var noMembers = []byte("{}")

// appendString appends s as a JSON string (a member name).
func appendString(b, s []byte) []byte {
	b = append(b, '"')
	for _, c := range s {
		if c == '"' || c == '\\' || c < ' ' {
			b = append(b, fmt.Sprintf(`\u%04x`, c)...)
			continue
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// items reads the items member of op's response into sink.
func items(d *codec.JSON, op string, sink Sink) error {
	if d.Peek() == 'n' {
		return d.Skip() // null: no items
	}
	switch op {
	case "GetItem":
		return sink.Item(d, "", 0)
	case "BatchGetItem":
		return d.Object(func(k []byte) error {
			table := string(k)
			return d.Array(func(int) error { return sink.Item(d, table, 0) })
		})
	case "TransactGetItems":
		return d.Array(func(pos int) error {
			return d.Object(func(k []byte) error {
				if string(k) != "Item" || d.Peek() == 'n' {
					return d.Skip()
				}
				return sink.Item(d, "", pos)
			})
		})
	}
	return d.Array(func(int) error { return sink.Item(d, "", 0) })
}

// int32Of parses a JSON integer that fits an int32 (as the SDK reads a
// count); false for anything else, which the SDK then reads.
func int32Of(raw []byte) (int32, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 32)
	return int32(n), err == nil
}

// Heads is the part of a Sink for reads of one struct type that does not
// depend on the type: each response's items' heads (the attributes Keep
// keeps), whether each was complete and its field error.
type Heads struct {
	Type     reflect.Type
	Plan     *codec.Plan // codec.StructPlan(Type)
	Keep     *codec.Keep
	Heads    []map[string]types.AttributeValue
	Complete []bool
	Errs     []error
	Filled   bool // the last response was decoded here
	Next     int  // the index of the next item taken
}

// NewHeads returns the Heads of reads of t keeping keep; Release hands
// back its slices and maps when the read is done with its heads.
func NewHeads(t reflect.Type, keep *codec.Keep) Heads {
	h := Heads{Type: t, Plan: codec.StructPlan(t), Keep: keep}
	if b, ok := spares.Get().(*spare); ok {
		h.Heads, h.Complete, h.Errs = b.heads, b.complete, b.errs
	}
	return h
}

// spare is what Release keeps for another read: the slices, and maps
// (emptied) past the heads' length.
type spare struct {
	heads    []map[string]types.AttributeValue
	complete []bool
	errs     []error
}

var spares sync.Pool

// Release hands h's slices and maps to the next read; h, its heads and
// errors are not used again. The heads of a read of more than 1,000
// items are left to the collector.
func (h *Heads) Release() {
	hs := h.Heads[:cap(h.Heads)]
	if len(hs) > 1000 {
		return
	}
	for _, m := range hs {
		clear(m)
	}
	clear(h.Errs[:cap(h.Errs)])
	spares.Put(&spare{heads: hs[:0], complete: h.Complete[:0], errs: h.Errs[:0]})
	*h = Heads{}
}

// Reset drops the items of the last response.
func (h *Heads) Reset() {
	h.Heads, h.Complete, h.Errs = h.Heads[:0], h.Complete[:0], h.Errs[:0]
	h.Filled, h.Next = false, 0
}

// Done records that a response was decoded whole.
func (h *Heads) Done() { h.Filled = true }

// Drop drops the last item; its head is no longer h's.
func (h *Heads) Drop() {
	n := len(h.Heads) - 1
	h.Heads[n] = nil
	h.Heads, h.Complete, h.Errs = h.Heads[:n], h.Complete[:n], h.Errs[:n]
}

// Add reads an item from d into the value at ptr (zero, of type Type).
func (h *Heads) Add(d *codec.JSON, ptr unsafe.Pointer) error {
	var head map[string]types.AttributeValue
	if n := len(h.Heads); n < cap(h.Heads) {
		head = h.Heads[:n+1][n] // a map of an earlier response or read
		clear(head)
	}
	if head == nil {
		head = make(map[string]types.AttributeValue, h.Keep.Size())
	}
	complete, ferr, err := codec.UnmarshalJSON(d, h.Type, h.Plan, ptr, h.Keep, head)
	if err != nil {
		return err
	}
	h.Heads, h.Complete, h.Errs = append(h.Heads, head), append(h.Complete, complete), append(h.Errs, ferr)
	return nil
}

// keeps caches what Keeps builds.
var keeps sync.Map

// Keeps returns build's Keep, built once per key (a comparable value).
func Keeps(key any, build func() *codec.Keep) *codec.Keep {
	if k, ok := keeps.Load(key); ok {
		return k.(*codec.Keep)
	}
	k := build()
	keeps.Store(key, k)
	return k
}
