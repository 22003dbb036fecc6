package ddbfault

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Conflicts makes writes meet concurrent transactions, as DynamoDB
// reports them and DynamoDB Local never does (it runs one request at a
// time). An item is "under a transaction" when a TransactWriteItems that
// writes or checks it is in flight through the transport ([Conflicts].InFlight),
// when the test holds it ([Transport.Hold]), or when a drawn conflict
// ([Conflicts].Rate) says so. Then, as DynamoDB's "Transaction conflict
// handling" describes:
//
//   - a PutItem, UpdateItem or DeleteItem of the item is refused with
//     400 TransactionConflictException ("Transaction is ongoing for the
//     item"), without sending;
//   - a TransactWriteItems touching it is cancelled with 400
//     TransactionCanceledException whose CancellationReasons, one per
//     TransactItems entry in order, are {"Code":"TransactionConflict",
//     "Message":"Transaction is ongoing for the item"} for the items in
//     conflict and {"Code":"None"} for the others, without sending;
//   - a TransactGetItems is cancelled the same way when one of its items
//     is under a transaction or being written by any request in flight.
//
// GetItem, Query, Scan and BatchGetItem read committed data and never
// conflict; BatchWriteItem is not checked.
type Conflicts struct {
	// Rate is the probability, 0 to 1, that a PutItem, UpdateItem,
	// DeleteItem, TransactWriteItems or TransactGetItems finds one of its
	// items (drawn uniformly) under a concurrent transaction. It is drawn
	// from a random source of its own, seeded by Config.Seed, so that
	// turning it on does not change which requests Config.Rate's faults hit.
	Rate float64
	// InFlight makes requests in flight through the transport at the same
	// time conflict as above: a transaction's items are under it from the
	// moment it is sent until its answer arrives.
	InFlight bool
}

// Hot throttles the requests that touch one partition key value, as
// DynamoDB throttles a hot partition ("key range") while the table as a
// whole has capacity, in provisioned and on-demand mode alike. Requests
// on other values pass. A request touches the value when:
//
//   - an item it writes or a key it reads (PutItem, GetItem, UpdateItem,
//     DeleteItem, each transaction item, each batch item) holds Value in
//     Attr;
//   - it is a Query whose ExpressionAttributeValues hold Value (the key
//     condition names the partition), or an UpdateItem whose values hold
//     it (writing the value into an index key: an index's hot partition
//     back-pressures writes to the table). A Scan never does.
//
// A throttled request is answered without sending, as DynamoDB answers:
// 400 ProvisionedThroughputExceededException carrying ThrottlingReasons
// [{"reason":"TableWriteKeyRangeThroughputExceeded","resource":<table
// ARN>}] (Read for reads, Index… for a Query of an index or an Attr that
// is not the table's partition key); for a transaction, a
// TransactionCanceledException whose reason is "ThrottlingError" for each
// hot item and "None" for the others; for a batch, the hot items are left
// in UnprocessedItems or UnprocessedKeys and the others sent (all of them
// hot: ProvisionedThroughputExceededException).
type Hot struct {
	// Table limits the hot value to one table; "" means any table.
	Table string
	// Attr is the attribute holding the value; "" means the table's
	// partition key attribute (learned with DescribeTable). Name an
	// index's partition key attribute (e.g. "GSI1PK") to model an index's
	// hot partition.
	Attr string
	// Value is the hot value: a string, or a number as written on the wire.
	Value string
	// Throttles, when above 0, throttles that many requests touching the
	// value in a row, lets the next one through, and starts again: a
	// deterministic budget (with the SDK's default 3 attempts, 2 throttles
	// end in success, 3 or more in an error).
	Throttles int
	// Rate, when Throttles is 0, is the probability, 0 to 1, that a
	// request touching the value is throttled (1: every one), drawn from
	// the modes' random source.
	Rate float64
}

// Hold puts the item with key in table under a transaction, as if another
// client's TransactWriteItems were writing it, until release is called:
// writes and transactions touching it get the conflicts [Conflicts]
// describes. It works whatever Config.Conflicts says and while injection
// is disabled with SetEnabled. key holds the item's key attributes (or
// any attributes: the held item is every item whose attributes include
// them all); string, number and binary values are compared.
func (t *Transport) Hold(table string, key map[string]types.AttributeValue) (release func()) {
	h := &held{table: table, attrs: map[string]string{}}
	for name, v := range key {
		var w any
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			w = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			w = map[string]string{"N": v.Value}
		case *types.AttributeValueMemberB:
			w = map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}
		default:
			panic(fmt.Sprintf("ddbfault.Hold: key attribute %s is %T; want a string, number or binary", name, v))
		}
		b, _ := json.Marshal(w)
		h.attrs[name] = canon(b)
	}
	t.mu.Lock()
	t.holds = append(t.holds, h)
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for i, x := range t.holds {
			if x == h {
				t.holds = append(t.holds[:i], t.holds[i+1:]...)
				return
			}
		}
	}
}

type held struct {
	table string
	attrs map[string]string
}

func (h *held) covers(tc touch) bool {
	if h.table != tc.table {
		return false
	}
	for name, v := range h.attrs {
		raw, ok := tc.attrs[name]
		if !ok || canon(raw) != v {
			return false
		}
	}
	return true
}

// lock is one request in flight, for Conflicts.InFlight.
type lock struct {
	tx  bool
	ids map[string]bool
}

func (t *Transport) modesOn() bool {
	c := t.cfg
	if c.Conflicts.Rate > 0 || c.Conflicts.InFlight || len(c.Hot) > 0 || c.IndexLag > 0 {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.holds) > 0
}

// conflict decides whether a request meets a transaction. It returns the
// answer to give (nil: none) and, for Conflicts.InFlight, the lock the
// request holds until release is called. The check and the taking of the
// lock are one step, so that of two racing transactions one wins.
func (t *Transport) conflict(req *http.Request, op string, tcs []touch) (resp *http.Response, release func(), err error) {
	release = func() {}
	single := op == "PutItem" || op == "UpdateItem" || op == "DeleteItem"
	if !single && op != "TransactWriteItems" && op != "TransactGetItems" || len(tcs) == 0 {
		return nil, release, nil
	}
	ids := make([]string, len(tcs))
	if t.cfg.Conflicts.InFlight {
		for i, tc := range tcs {
			s, err := t.schemaOf(req, tc.table)
			if err != nil {
				return nil, release, err
			}
			ids[i] = s.itemID(tc.table, tc.attrs)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hit := map[int]bool{}
	for i, tc := range tcs {
		for _, h := range t.holds {
			if h.covers(tc) {
				hit[tc.pos] = true
			}
		}
		for l := range t.locks {
			if l.ids[ids[i]] && ids[i] != "" && (l.tx || op == "TransactGetItems") {
				hit[tc.pos] = true
			}
		}
	}
	if len(hit) == 0 && t.cfg.Conflicts.Rate > 0 && !t.off && t.modeRng.Float64() < t.cfg.Conflicts.Rate {
		hit[tcs[t.modeRng.IntN(len(tcs))].pos] = true
	}
	if len(hit) > 0 {
		t.stats.Conflicts++
		if single {
			return errorBody(req, 400, "com.amazonaws.dynamodb.v20120810#TransactionConflictException",
				map[string]any{"message": "Transaction is ongoing for the item"}), release, nil
		}
		return cancelled(req, len(transactItems(tcs)), hit, "TransactionConflict", "Transaction is ongoing for the item"), release, nil
	}
	if t.cfg.Conflicts.InFlight && op != "TransactGetItems" {
		l := &lock{tx: op == "TransactWriteItems", ids: map[string]bool{}}
		for i, tc := range tcs {
			if tc.write || l.tx {
				l.ids[ids[i]] = true
			}
		}
		if t.locks == nil {
			t.locks = map[*lock]bool{}
		}
		t.locks[l] = true
		release = func() {
			t.mu.Lock()
			delete(t.locks, l)
			t.mu.Unlock()
		}
	}
	return nil, release, nil
}

// transactItems returns the distinct TransactItems positions of tcs.
func transactItems(tcs []touch) map[int]bool {
	out := map[int]bool{}
	for _, tc := range tcs {
		out[tc.pos] = true
	}
	return out
}

// cancelled answers a transaction of n items with a
// TransactionCanceledException: code for the positions in hit, None for
// the others, as DynamoDB words it.
func cancelled(req *http.Request, n int, hit map[int]bool, code, msg string) *http.Response {
	reasons := make([]map[string]string, n)
	codes := make([]string, n)
	for i := range reasons {
		reasons[i] = map[string]string{"Code": "None"}
		codes[i] = "None"
		if hit[i] {
			reasons[i] = map[string]string{"Code": code, "Message": msg}
			codes[i] = code
		}
	}
	return errorBody(req, 400, "com.amazonaws.dynamodb.v20120810#TransactionCanceledException", map[string]any{
		"CancellationReasons": reasons,
		"Message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
	})
}

func errorBody(req *http.Request, status int, typ string, fields map[string]any) *http.Response {
	drain(req)
	m := map[string]any{"__type": typ}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return jsonResponse(req, status, b)
}

const hotMessage = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key (injected)"

// hot decides whether a request touches a hot value and is throttled,
// and returns the answer (nil: send it). For a batch with some hot items,
// hold says which to leave unprocessed.
func (t *Transport) hot(req *http.Request, op string, body []byte, tcs []touch) (resp *http.Response, hold func(table string, i, n int) bool, err error) {
	if len(t.cfg.Hot) == 0 {
		return nil, nil, nil
	}
	var rin readInput
	_ = json.Unmarshal(body, &rin)
	hitPos := map[int]bool{}
	hitBatch := map[string]map[int]bool{}
	var reason string
	touchedHot := false
	for hi, h := range t.cfg.Hot {
		matched := false
		read := op == "GetItem" || op == "BatchGetItem" || op == "TransactGetItems" || op == "Query"
		idx := op == "Query" && rin.IndexName != ""
		for _, tc := range tcs {
			attr, isPK, err := t.hotAttr(req, h, tc.table)
			if err != nil {
				return nil, nil, err
			}
			if (h.Table != "" && h.Table != tc.table) || attr == "" {
				continue
			}
			if v, ok := scalar(tc.attrs[attr]); ok && v == h.Value {
				matched = true
				idx = idx || !isPK
				hitPos[tc.pos] = true
				if hitBatch[tc.table] == nil {
					hitBatch[tc.table] = map[int]bool{}
				}
				hitBatch[tc.table][tc.pos] = true
			}
		}
		if (op == "Query" || op == "UpdateItem") && (h.Table == "" || h.Table == rin.TableName) {
			for _, raw := range rin.ExpressionAttributeValues {
				if v, ok := scalar(raw); ok && v == h.Value {
					matched = true
					idx = idx || op == "UpdateItem"
				}
			}
		}
		if !matched || !t.throttleHot(hi) {
			continue
		}
		touchedHot = true
		reason = map[bool]string{false: "Table", true: "Index"}[idx] + map[bool]string{false: "Write", true: "Read"}[read] + "KeyRangeThroughputExceeded"
	}
	if !touchedHot {
		return nil, nil, nil
	}
	t.mu.Lock()
	t.stats.HotThrottles++
	t.mu.Unlock()
	switch op {
	case "TransactWriteItems", "TransactGetItems":
		return cancelled(req, len(transactItems(tcs)), hitPos, "ThrottlingError", hotMessage), nil, nil
	case "BatchWriteItem", "BatchGetItem":
		n := 0
		for _, ps := range hitBatch {
			n += len(ps)
		}
		if n < len(tcs) {
			return nil, func(table string, i, _ int) bool { return hitBatch[table][i] }, nil
		}
	}
	table := rin.TableName
	if table == "" && len(tcs) > 0 {
		table = tcs[0].table
	}
	return errorBody(req, 400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", map[string]any{
		"message":           hotMessage,
		"ThrottlingReasons": []map[string]string{{"reason": reason, "resource": "arn:aws:dynamodb:ddblocal:000000000000:table/" + table}},
	}), nil, nil
}

// hotAttr returns the attribute h watches in table, and whether it is the
// table's partition key.
func (t *Transport) hotAttr(req *http.Request, h Hot, table string) (string, bool, error) {
	s, err := t.schemaOf(req, table)
	if err != nil {
		return "", false, err
	}
	if h.Attr == "" {
		return s.keys[0], true, nil
	}
	return h.Attr, h.Attr == s.keys[0], nil
}

// throttleHot draws whether the request touching Hot entry i is throttled.
func (t *Transport) throttleHot(i int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.cfg.Hot[i]
	if t.off {
		return false
	}
	if h.Throttles > 0 {
		n := t.hotSeen[i]
		t.hotSeen[i] = n + 1
		return n%(h.Throttles+1) != h.Throttles
	}
	return h.Rate > 0 && t.modeRng.Float64() < h.Rate
}
