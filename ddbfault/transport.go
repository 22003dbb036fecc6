// Package ddbfault injects DynamoDB faults at the HTTP layer, for tests.
//
// A [Transport] sits between an aws-sdk-go-v2 DynamoDB client and the server
// (DynamoDB Local in tests) and, with a seeded random source, turns a share
// of the requests into the faults real DynamoDB produces: throttling
// (ProvisionedThroughputExceededException, ThrottlingException), 500s,
// timeouts before the request reaches the server, connections dropped after
// the server applied the write, partial batch results (UnprocessedItems and
// UnprocessedKeys) and transaction conflicts. Because the faults arrive as
// wire responses, the SDK's own retryer and the library above it see exactly
// what they would see from AWS: a dropped response after an applied write is
// retried by the SDK, which is how double-applied increments happen in
// production.
//
//	ft := ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 1, Rate: 0.1})
//	client := ddblocal.NewClient(endpoint, func(o *dynamodb.Options) {
//		o.HTTPClient = &http.Client{Transport: ft}
//	})
//
// Faults never corrupt data on their own: a request is either not sent,
// sent whole, or (partial batches) sent with a subset of its items, the rest
// reported as unprocessed as DynamoDB does.
package ddbfault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Kind is a kind of injected fault.
type Kind int

// The fault kinds.
const (
	// Throttle answers 400 ProvisionedThroughputExceededException without
	// sending the request.
	Throttle Kind = iota
	// Throttling answers 400 ThrottlingException without sending.
	Throttling
	// ServerError answers 500 InternalServerError without sending.
	ServerError
	// Timeout fails the round trip with a timeout before sending.
	Timeout
	// LostResponse sends the request, lets the server apply it, then drops
	// the response as a reset connection: the caller cannot know it worked.
	LostResponse
	// PartialBatch sends only part of a BatchWriteItem or BatchGetItem and
	// reports the rest as unprocessed. Other operations are unaffected.
	PartialBatch
	// TxConflict answers TransactWriteItems/TransactGetItems with a
	// TransactionCanceledException whose reasons are TransactionConflict,
	// without sending.
	TxConflict
	numKinds
)

var kindNames = [...]string{"throttle", "throttling", "server-error", "timeout", "lost-response", "partial-batch", "tx-conflict"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// AllKinds lists every fault kind.
func AllKinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// Config chooses what to inject.
type Config struct {
	// Seed makes the sequence of faults reproducible for a given sequence
	// of requests.
	Seed uint64
	// Rate is the probability, 0 to 1, that a request gets a fault.
	Rate float64
	// Kinds are drawn from uniformly when a request gets a fault; default
	// AllKinds. A drawn kind that does not apply to the operation (a
	// partial batch for a GetItem, a conflict for a PutItem) falls back to
	// Throttle.
	Kinds []Kind
	// Operations, when set, limits faults to these operation names
	// ("PutItem", "BatchWriteItem", …). Control-plane calls (CreateTable,
	// DescribeTable, DeleteTable, UpdateTimeToLive) never get faults.
	Operations []string

	// The modes below model what real DynamoDB does and DynamoDB Local
	// hides. They are independent of Rate and Kinds (their random draws
	// come from a source of their own, seeded by Seed) and can be
	// combined with them; SetEnabled(false) stops their drawn and hot
	// faults, not Hold, IndexLag or InFlight conflicts.

	// IndexLag, above 0, makes index reads (Query and Scan with an
	// IndexName) see the table as it was IndexLag item writes ago: see
	// "Lagging indexes" in lag.go, Pending and CatchUp.
	IndexLag int
	// Conflicts makes writes meet concurrent transactions
	// (TransactionConflictException, TransactionCanceledException with
	// TransactionConflict reasons); see [Conflicts] and Hold.
	Conflicts Conflicts
	// Hot throttles the requests touching hot partition key values; see
	// [Hot].
	Hot []Hot
}

// Stats counts requests and injected faults.
type Stats struct {
	Requests int
	Faults   map[Kind]int
	// Conflicts counts the requests answered with a conflict by the
	// Conflicts mode or Hold; HotThrottles those throttled by Hot.
	Conflicts, HotThrottles int
	// IndexReads counts the index reads answered from a lagging replica
	// (IndexLag), LaggedReads those of them made while at least one write
	// was still pending: the reads that could miss or misstate an item.
	IndexReads, LaggedReads int
}

// Total returns the number of faults injected by Rate, Next and the
// Conflicts and Hot modes.
func (s Stats) Total() int {
	n := 0
	for _, v := range s.Faults {
		n += v
	}
	return n + s.Conflicts + s.HotThrottles
}

// Transport is an http.RoundTripper that injects faults. Create it with New;
// it is safe for concurrent use.
type Transport struct {
	base http.RoundTripper
	cfg  Config

	mu     sync.Mutex
	rng    *rand.Rand
	stats  Stats
	off    bool
	script map[string][]Kind // faults queued by Next, per operation

	modeRng *rand.Rand         // draws of the Conflicts and Hot modes
	schemas map[string]*schema // key schemas, by table
	holds   []*held            // items held by Hold
	locks   map[*lock]bool     // requests in flight (Conflicts.InFlight)
	hotSeen []int              // requests seen per Hot entry (Throttles)

	lagMu sync.Mutex // serializes the replicas' work (IndexLag)
	lag   map[string]*lagTable
}

// New returns a Transport that forwards to base (http.DefaultTransport when
// nil) and injects faults as cfg says.
func New(base http.RoundTripper, cfg Config) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = AllKinds()
	}
	return &Transport{base: base, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		modeRng: rand.New(rand.NewPCG(cfg.Seed^0x5851f42d4c957f2d, cfg.Seed)),
		hotSeen: make([]int, len(cfg.Hot)), stats: Stats{Faults: map[Kind]int{}}}
}

// Stats returns a copy of the counts so far.
func (t *Transport) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Faults = map[Kind]int{}
	for k, v := range t.stats.Faults {
		s.Faults[k] = v
	}
	return s
}

// SetEnabled turns injection on or off (on after New), e.g. to check the
// table's final state without faults.
func (t *Transport) SetEnabled(on bool) {
	t.mu.Lock()
	t.off = !on
	t.mu.Unlock()
}

// Next queues faults for the next requests of operation op ("PutItem",
// "TransactWriteItems", …): the first such request gets kinds[0], the
// second kinds[1], and so on, whatever the rate and even while injection
// is disabled with SetEnabled. Use it to script one exact situation, such
// as a single lost response followed by a successful retry:
//
//	ft.Next("PutItem", ddbfault.LostResponse)
//
// A kind that does not apply to op falls back to Throttle, as for drawn
// faults. Scripted faults are counted in Stats.
func (t *Transport) Next(op string, kinds ...Kind) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.script == nil {
		t.script = map[string][]Kind{}
	}
	t.script[op] = append(t.script[op], kinds...)
}

var controlPlane = map[string]bool{"CreateTable": true, "DescribeTable": true, "DeleteTable": true,
	"UpdateTimeToLive": true, "DescribeTimeToLive": true, "ListTables": true, "UpdateTable": true}

// draw decides the fault for one request: ok is false for none. frac is a
// random fraction used by partial batches.
func (t *Transport) draw(op string) (k Kind, frac float64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Requests++
	if q := t.script[op]; len(q) > 0 {
		k, t.script[op] = q[0], q[1:]
		return t.applicable(k, op), t.rng.Float64(), true
	}
	if t.off || controlPlane[op] || t.cfg.Rate <= 0 {
		return 0, 0, false
	}
	if len(t.cfg.Operations) > 0 && !contains(t.cfg.Operations, op) {
		return 0, 0, false
	}
	if t.rng.Float64() >= t.cfg.Rate {
		return 0, 0, false
	}
	k = t.applicable(t.cfg.Kinds[t.rng.IntN(len(t.cfg.Kinds))], op)
	return k, t.rng.Float64(), true
}

// applicable turns a kind that does not apply to op into Throttle and
// counts it. t.mu is held.
func (t *Transport) applicable(k Kind, op string) Kind {
	switch {
	case k == PartialBatch && op != "BatchWriteItem" && op != "BatchGetItem":
		k = Throttle
	case k == TxConflict && op != "TransactWriteItems" && op != "TransactGetItems":
		k = Throttle
	}
	t.stats.Faults[k]++
	return k
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	if !t.modesOn() || controlPlane[op] {
		return t.roundTrip(req, op, nil, nil)
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	req = withBody(req, body)
	tcs := touched(op, body)
	resp, hold, err := t.hot(req, op, body, tcs)
	if err != nil || resp != nil {
		return resp, err
	}
	resp, release, err := t.conflict(req, op, tcs)
	if err != nil || resp != nil {
		return resp, err
	}
	defer release()
	return t.roundTrip(req, op, body, hold)
}

// roundTrip injects Rate's and Next's faults and sends what is left. body
// is req's body when the modes read it (nil otherwise); hold, when not
// nil, names the batch items Hot leaves unprocessed.
func (t *Transport) roundTrip(req *http.Request, op string, body []byte, hold func(table string, i, n int) bool) (*http.Response, error) {
	k, frac, ok := t.draw(op)
	if !ok {
		if hold != nil {
			return t.partialBatch(req, op, hold)
		}
		return t.send(req, op, body)
	}
	switch k {
	case Throttle:
		return errorResponse(req, 400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded (injected)", nil), nil
	case Throttling:
		return errorResponse(req, 400, "com.amazon.coral.availability#ThrottlingException",
			"Rate of requests exceeds the allowed throughput (injected)", nil), nil
	case ServerError:
		return errorResponse(req, 500, "com.amazonaws.dynamodb.v20120810#InternalServerError",
			"Internal server error (injected)", nil), nil
	case Timeout:
		drain(req)
		return nil, &timeoutError{}
	case LostResponse:
		resp, err := t.send(req, op, body)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, &lostError{}
	case TxConflict:
		body, err := readBody(req)
		if err != nil {
			return nil, err
		}
		n := countTransactItems(body)
		reasons := make([]map[string]string, n)
		for i := range reasons {
			reasons[i] = map[string]string{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item (injected)"}
		}
		return errorResponse(req, 400, "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
			"Transaction cancelled, please refer cancellation reasons for specific reasons (injected)",
			map[string]any{"CancellationReasons": reasons}), nil
	case PartialBatch:
		return t.partialBatch(req, op, func(table string, i, n int) bool {
			return i >= int(frac*float64(n)) || hold != nil && hold(table, i, n)
		})
	}
	return t.send(req, op, body)
}

// send sends req to the server, through the index replicas when IndexLag
// is set.
func (t *Transport) send(req *http.Request, op string, body []byte) (*http.Response, error) {
	if t.cfg.IndexLag <= 0 {
		return t.base.RoundTrip(req)
	}
	if body == nil {
		var err error
		if body, err = readBody(req); err != nil {
			return nil, err
		}
		req = withBody(req, body)
	}
	if op == "Query" || op == "Scan" {
		if resp, ok, err := t.indexRead(req, body); ok {
			return resp, err
		}
		return t.base.RoundTrip(req)
	}
	if !lagWrites[op] {
		return t.base.RoundTrip(req)
	}
	tcs := touched(op, body)
	if err := t.beforeWrite(req, tcs); err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		return resp, err
	}
	if err := t.afterWrite(req, tcs); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "ddbfault: i/o timeout (injected before sending)" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

type lostError struct{}

func (*lostError) Error() string {
	return "ddbfault: read: connection reset by peer (injected after the server applied the request)"
}

// IsInjected reports whether err (or an error it wraps) is a transport
// fault made by this package (a timeout or a lost response).
func IsInjected(err error) bool {
	var te *timeoutError
	var le *lostError
	return errors.As(err, &te) || errors.As(err, &le)
}

func drain(req *http.Request) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

func countTransactItems(body []byte) int {
	var in struct{ TransactItems []json.RawMessage }
	if json.Unmarshal(body, &in) != nil || len(in.TransactItems) == 0 {
		return 1
	}
	return len(in.TransactItems)
}

func errorResponse(req *http.Request, status int, typ, msg string, extra map[string]any) *http.Response {
	drain(req)
	m := map[string]any{"__type": typ, "message": msg}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return jsonResponse(req, status, b)
}

func jsonResponse(req *http.Request, status int, body []byte) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Amzn-Requestid", "ddbfault")
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

// partialBatch forwards the part of a batch request that hold does not
// name (hold is asked about item i of n of each table's list) and merges
// the held-back part into the response's unprocessed map.
func (t *Transport) partialBatch(req *http.Request, op string, hold func(table string, i, n int) bool) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	var send, held map[string]json.RawMessage
	var unprocessedField string
	switch op {
	case "BatchWriteItem":
		send, held, err = splitWrites(in["RequestItems"], hold)
		unprocessedField = "UnprocessedItems"
	default:
		send, held, err = splitGets(in["RequestItems"], hold)
		unprocessedField = "UnprocessedKeys"
	}
	if err != nil {
		return nil, err
	}
	var resp map[string]json.RawMessage
	if len(send) == 0 {
		resp = map[string]json.RawMessage{}
		if op == "BatchGetItem" {
			resp["Responses"] = json.RawMessage("{}")
		}
	} else {
		sendItems, _ := json.Marshal(send)
		in["RequestItems"] = sendItems
		nb, _ := json.Marshal(in)
		hr, err := t.send(withBody(req, nb), op, nb)
		if err != nil {
			return nil, err
		}
		rb, err := io.ReadAll(hr.Body)
		hr.Body.Close()
		if err != nil {
			return nil, err
		}
		if hr.StatusCode != 200 {
			return jsonResponse(req, hr.StatusCode, rb), nil
		}
		if err := json.Unmarshal(rb, &resp); err != nil {
			return nil, err
		}
	}
	merged, err := mergeUnprocessed(resp[unprocessedField], held, op == "BatchWriteItem")
	if err != nil {
		return nil, err
	}
	resp[unprocessedField] = merged
	out, _ := json.Marshal(resp)
	return jsonResponse(req, 200, out), nil
}

// splitWrites splits each table's write requests into those to send and
// those hold names.
func splitWrites(raw json.RawMessage, hold func(table string, i, n int) bool) (send, held map[string]json.RawMessage, err error) {
	var items map[string][]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, err
	}
	send, held = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for table, reqs := range items {
		var s, h []json.RawMessage
		for i, r := range reqs {
			if hold(table, i, len(reqs)) {
				h = append(h, r)
			} else {
				s = append(s, r)
			}
		}
		if len(s) > 0 {
			send[table], _ = json.Marshal(s)
		}
		if len(h) > 0 {
			held[table], _ = json.Marshal(h)
		}
	}
	return send, held, nil
}

// splitGets does the same for BatchGetItem's per-table Keys lists.
func splitGets(raw json.RawMessage, hold func(table string, i, n int) bool) (send, held map[string]json.RawMessage, err error) {
	var items map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, err
	}
	send, held = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for table, ka := range items {
		var keys []json.RawMessage
		if err := json.Unmarshal(ka["Keys"], &keys); err != nil {
			return nil, nil, err
		}
		var s, h []json.RawMessage
		for i, k := range keys {
			if hold(table, i, len(keys)) {
				h = append(h, k)
			} else {
				s = append(s, k)
			}
		}
		part := func(ks []json.RawMessage) json.RawMessage {
			m := map[string]json.RawMessage{}
			for k, v := range ka {
				m[k] = v
			}
			m["Keys"], _ = json.Marshal(ks)
			b, _ := json.Marshal(m)
			return b
		}
		if len(s) > 0 {
			send[table] = part(s)
		}
		if len(h) > 0 {
			held[table] = part(h)
		}
	}
	return send, held, nil
}

// mergeUnprocessed adds the held-back requests to what the server itself
// left unprocessed.
func mergeUnprocessed(server json.RawMessage, hold map[string]json.RawMessage, writes bool) (json.RawMessage, error) {
	if writes {
		all := map[string][]json.RawMessage{}
		if len(server) > 0 {
			if err := json.Unmarshal(server, &all); err != nil {
				return nil, err
			}
		}
		for table, raw := range hold {
			var reqs []json.RawMessage
			if err := json.Unmarshal(raw, &reqs); err != nil {
				return nil, err
			}
			all[table] = append(all[table], reqs...)
		}
		return json.Marshal(all)
	}
	all := map[string]map[string]json.RawMessage{}
	if len(server) > 0 {
		if err := json.Unmarshal(server, &all); err != nil {
			return nil, err
		}
	}
	for table, raw := range hold {
		var ka map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ka); err != nil {
			return nil, err
		}
		if cur, ok := all[table]; ok {
			var a, b []json.RawMessage
			_ = json.Unmarshal(cur["Keys"], &a)
			_ = json.Unmarshal(ka["Keys"], &b)
			cur["Keys"], _ = json.Marshal(append(a, b...))
		} else {
			all[table] = ka
		}
	}
	return json.Marshal(all)
}
