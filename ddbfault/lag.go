package ddbfault

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// Lagging indexes (Config.IndexLag).
//
// DynamoDB updates a global secondary index asynchronously: an index read
// (always eventually consistent) may miss an item written a moment ago,
// still return one just deleted or changed, and show a sparse index's
// entry for an item that no longer qualifies (or miss one that now does).
// DynamoDB Local updates its indexes with the write.
//
// With IndexLag = N above 0, the transport keeps, per table it sees a write
// to, a replica: a second table in the same server named <table>.lag, with
// the same key schema and indexes, created (and filled with a copy of the
// table) before the first write through the transport is sent. Every item
// write through the transport that succeeds (PutItem, UpdateItem,
// DeleteItem, each item of a BatchWriteItem or TransactWriteItems, a
// write whose response a LostResponse dropped) is read back with a
// strongly consistent GetItem and queued; the replica applies a queued
// image once N later item writes have been queued, or when CatchUp is
// called. Every Query and Scan with an IndexName is answered from the
// replica's index, so it sees the table as it was N item writes ago —
// each item as it was then, in the index's order, filters and pages as
// DynamoDB Local evaluates them. Reads of the table itself (GetItem,
// Query and Scan without IndexName, transactions, batches) are not
// delayed.
//
// The window is logical (a count of writes, not a duration), so a test is
// deterministic and waits for a condition (CatchUp, Pending) rather than a
// time. What it does not model: writes made with another client after the
// replica was created never reach it (make every write through the
// transport, or build the transport before the table has data); the
// window is per table, not per index or partition; and an item written
// twice inside the window shows its intermediate state for a while, as
// DynamoDB may.
type lagTable struct {
	shadow  string
	schema  *schema
	tmpl    *http.Request // headers for the transport's own requests
	pending []pendingWrite
}

type pendingWrite struct {
	key   map[string]json.RawMessage
	image map[string]json.RawMessage // nil: the item was deleted
}

// Pending returns how many item writes to table the index replica has
// not applied yet (0 when table has no replica).
func (t *Transport) Pending(table string) int {
	t.lagMu.Lock()
	defer t.lagMu.Unlock()
	if lt := t.lag[table]; lt != nil {
		return len(lt.pending)
	}
	return 0
}

// CatchUp applies every pending write to the index replicas: afterwards
// index reads see the table as it is (until the next write).
func (t *Transport) CatchUp() error {
	t.lagMu.Lock()
	defer t.lagMu.Unlock()
	for _, lt := range t.lag {
		for len(lt.pending) > 0 {
			if err := t.applyOldest(lt); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close deletes the index replicas the transport created.
func (t *Transport) Close() error {
	t.lagMu.Lock()
	defer t.lagMu.Unlock()
	var first error
	for table, lt := range t.lag {
		if _, err := t.call(lt.tmpl, "DeleteTable", map[string]string{"TableName": lt.shadow}); err != nil && first == nil {
			first = err
		}
		delete(t.lag, table)
	}
	return first
}

// ensureReplica creates table's replica, copying the table, unless it
// exists. t.lagMu is held.
func (t *Transport) ensureReplica(req *http.Request, table string) (*lagTable, error) {
	if lt := t.lag[table]; lt != nil {
		return lt, nil
	}
	s, err := t.schemaOf(req, table)
	if err != nil {
		return nil, err
	}
	tmpl := req.Clone(context.Background())
	tmpl.Body = nil
	lt := &lagTable{shadow: table + ".lag", schema: s, tmpl: tmpl}
	var d struct {
		AttributeDefinitions, KeySchema json.RawMessage
		GlobalSecondaryIndexes          []struct {
			IndexName             string
			KeySchema, Projection json.RawMessage
		}
		LocalSecondaryIndexes []struct {
			IndexName             string
			KeySchema, Projection json.RawMessage
		}
	}
	if err := json.Unmarshal(s.desc, &d); err != nil {
		return nil, err
	}
	in := map[string]any{"TableName": lt.shadow, "AttributeDefinitions": d.AttributeDefinitions,
		"KeySchema": d.KeySchema, "BillingMode": "PAY_PER_REQUEST"}
	if len(d.GlobalSecondaryIndexes) > 0 {
		in["GlobalSecondaryIndexes"] = d.GlobalSecondaryIndexes
	}
	if len(d.LocalSecondaryIndexes) > 0 {
		in["LocalSecondaryIndexes"] = d.LocalSecondaryIndexes
	}
	if _, err := t.call(tmpl, "CreateTable", in); err != nil {
		return nil, err
	}
	if err := t.copyTable(tmpl, table, lt.shadow); err != nil {
		return nil, err
	}
	if t.lag == nil {
		t.lag = map[string]*lagTable{}
	}
	t.lag[table] = lt
	return lt, nil
}

func (t *Transport) copyTable(tmpl *http.Request, from, to string) error {
	scan := map[string]any{"TableName": from, "ConsistentRead": true}
	for {
		out, err := t.call(tmpl, "Scan", scan)
		if err != nil {
			return err
		}
		var page struct {
			Items            []json.RawMessage
			LastEvaluatedKey json.RawMessage
		}
		if err := json.Unmarshal(out, &page); err != nil {
			return err
		}
		for len(page.Items) > 0 {
			n := min(25, len(page.Items))
			var reqs []any
			for _, it := range page.Items[:n] {
				reqs = append(reqs, map[string]any{"PutRequest": map[string]json.RawMessage{"Item": it}})
			}
			page.Items = page.Items[n:]
			for len(reqs) > 0 {
				out, err := t.call(tmpl, "BatchWriteItem", map[string]any{"RequestItems": map[string]any{to: reqs}})
				if err != nil {
					return err
				}
				var r struct{ UnprocessedItems map[string][]any }
				_ = json.Unmarshal(out, &r)
				reqs = r.UnprocessedItems[to]
			}
		}
		if len(page.LastEvaluatedKey) == 0 || string(page.LastEvaluatedKey) == "null" {
			return nil
		}
		scan["ExclusiveStartKey"] = page.LastEvaluatedKey
	}
}

// applyOldest applies lt's oldest pending write to the replica. t.lagMu
// is held.
func (t *Transport) applyOldest(lt *lagTable) error {
	p := lt.pending[0]
	var err error
	if p.image == nil {
		_, err = t.call(lt.tmpl, "DeleteItem", map[string]any{"TableName": lt.shadow, "Key": p.key})
	} else {
		_, err = t.call(lt.tmpl, "PutItem", map[string]any{"TableName": lt.shadow, "Item": p.image})
	}
	if err != nil {
		return err
	}
	lt.pending = lt.pending[1:]
	return nil
}

var lagWrites = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true, "TransactWriteItems": true}

// beforeWrite makes sure every table a write names has its replica.
func (t *Transport) beforeWrite(req *http.Request, tcs []touch) error {
	t.lagMu.Lock()
	defer t.lagMu.Unlock()
	for _, tc := range tcs {
		if tc.write {
			if _, err := t.ensureReplica(req, tc.table); err != nil {
				return err
			}
		}
	}
	return nil
}

// afterWrite queues the images of the items a successful write wrote and
// lets the replicas apply what left the window.
func (t *Transport) afterWrite(req *http.Request, tcs []touch) error {
	t.lagMu.Lock()
	defer t.lagMu.Unlock()
	for _, tc := range tcs {
		if !tc.write {
			continue
		}
		lt := t.lag[tc.table]
		if lt == nil {
			continue
		}
		key := lt.schema.key(tc.attrs)
		out, err := t.call(lt.tmpl, "GetItem", map[string]any{"TableName": tc.table, "Key": key, "ConsistentRead": true})
		if err != nil {
			return err
		}
		var g struct{ Item map[string]json.RawMessage }
		if err := json.Unmarshal(out, &g); err != nil {
			return err
		}
		lt.pending = append(lt.pending, pendingWrite{key: key, image: g.Item})
		for len(lt.pending) > t.cfg.IndexLag {
			if err := t.applyOldest(lt); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexRead sends a Query or Scan of an index to the table's replica, when
// it has one, and returns the answer with the table's name put back.
func (t *Transport) indexRead(req *http.Request, body []byte) (*http.Response, bool, error) {
	var rin readInput
	if json.Unmarshal(body, &rin) != nil || rin.IndexName == "" {
		return nil, false, nil
	}
	t.lagMu.Lock()
	lt := t.lag[rin.TableName]
	lagging := lt != nil && len(lt.pending) > 0
	t.lagMu.Unlock()
	if lt == nil {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, false, err
	}
	m["TableName"], _ = json.Marshal(lt.shadow)
	nb, _ := json.Marshal(m)
	resp, err := t.base.RoundTrip(withBody(req, nb))
	if err != nil {
		return nil, true, err
	}
	t.mu.Lock()
	t.stats.IndexReads++
	if lagging {
		t.stats.LaggedReads++
	}
	t.mu.Unlock()
	rb, err := readAll(resp)
	if err != nil {
		return nil, true, err
	}
	from, _ := json.Marshal(lt.shadow)
	to, _ := json.Marshal(rin.TableName)
	return rewrittenResponse(resp, bytes.ReplaceAll(rb, from, to)), true, nil
}
