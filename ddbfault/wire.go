package ddbfault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// This file reads the DynamoDB JSON protocol as far as the modes need:
// which items a request touches, and the key schema of a table, learned
// with a DescribeTable the transport sends itself.

// touch is one item a request names: a Put's item or a key.
type touch struct {
	table string
	attrs map[string]json.RawMessage // the item or its key
	write bool
	pos   int // index in TransactItems or in the batch's per-table list
}

// touched lists the items a data-plane request names, in request order.
// Query and Scan name none (see queryValues).
func touched(op string, body []byte) []touch {
	var in struct {
		TableName     string
		Item, Key     map[string]json.RawMessage
		TransactItems []map[string]struct {
			TableName string
			Item, Key map[string]json.RawMessage
		}
		RequestItems map[string]json.RawMessage
	}
	if json.Unmarshal(body, &in) != nil {
		return nil
	}
	switch op {
	case "PutItem":
		return []touch{{table: in.TableName, attrs: in.Item, write: true}}
	case "UpdateItem", "DeleteItem":
		return []touch{{table: in.TableName, attrs: in.Key, write: true}}
	case "GetItem":
		return []touch{{table: in.TableName, attrs: in.Key}}
	case "TransactWriteItems", "TransactGetItems":
		var out []touch
		for i, ti := range in.TransactItems {
			for action, a := range ti {
				attrs := a.Key
				if attrs == nil {
					attrs = a.Item
				}
				out = append(out, touch{table: a.TableName, attrs: attrs, pos: i,
					write: action == "Put" || action == "Update" || action == "Delete"})
			}
		}
		return out
	case "BatchWriteItem":
		var out []touch
		for _, table := range sortedKeys(in.RequestItems) {
			var reqs []struct {
				PutRequest    *struct{ Item map[string]json.RawMessage }
				DeleteRequest *struct{ Key map[string]json.RawMessage }
			}
			_ = json.Unmarshal(in.RequestItems[table], &reqs)
			for i, r := range reqs {
				switch {
				case r.PutRequest != nil:
					out = append(out, touch{table: table, attrs: r.PutRequest.Item, write: true, pos: i})
				case r.DeleteRequest != nil:
					out = append(out, touch{table: table, attrs: r.DeleteRequest.Key, write: true, pos: i})
				}
			}
		}
		return out
	case "BatchGetItem":
		var out []touch
		for _, table := range sortedKeys(in.RequestItems) {
			var ka struct{ Keys []map[string]json.RawMessage }
			_ = json.Unmarshal(in.RequestItems[table], &ka)
			for i, k := range ka.Keys {
				out = append(out, touch{table: table, attrs: k, pos: i})
			}
		}
		return out
	}
	return nil
}

// readInput is the part of a Query or Scan the modes read.
type readInput struct {
	TableName, IndexName      string
	ExpressionAttributeValues map[string]json.RawMessage
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scalar returns the text of a string or number attribute value
// ({"S":"x"} or {"N":"1"}), and false for any other type.
func scalar(raw json.RawMessage) (string, bool) {
	var v struct{ S, N *string }
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch {
	case v.S != nil:
		return *v.S, true
	case v.N != nil:
		return *v.N, true
	}
	return "", false
}

// canon renders an attribute value in one form whatever the encoder that
// produced it (key order, escaping).
func canon(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// schema is what the modes need of a table's description.
type schema struct {
	keys []string // partition key attribute, then the sort key's if any
	desc json.RawMessage
}

// itemID names one item of table: the table and its key values.
func (s *schema) itemID(table string, attrs map[string]json.RawMessage) string {
	var b strings.Builder
	b.WriteString(table)
	for _, k := range s.keys {
		b.WriteByte(0)
		b.WriteString(canon(attrs[k]))
	}
	return b.String()
}

// key returns the key attributes of an item.
func (s *schema) key(attrs map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(s.keys))
	for _, k := range s.keys {
		out[k] = attrs[k]
	}
	return out
}

// call sends one request of the transport's own to the server, with the
// headers of tmpl (DynamoDB Local does not check signatures), and returns
// the response body; a status other than 200 is an error.
func (t *Transport) call(tmpl *http.Request, op string, in any) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	r := tmpl.Clone(tmpl.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("ddbfault: %s: %d %s", op, resp.StatusCode, out)
	}
	return out, nil
}

// schemaOf returns table's key schema, asking the server once.
func (t *Transport) schemaOf(tmpl *http.Request, table string) (*schema, error) {
	t.mu.Lock()
	s := t.schemas[table]
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	out, err := t.call(tmpl, "DescribeTable", map[string]string{"TableName": table})
	if err != nil {
		return nil, err
	}
	var d struct {
		Table struct {
			KeySchema []struct{ AttributeName, KeyType string }
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, err
	}
	s = &schema{}
	for _, kt := range []string{"HASH", "RANGE"} {
		for _, k := range d.Table.KeySchema {
			if k.KeyType == kt {
				s.keys = append(s.keys, k.AttributeName)
			}
		}
	}
	var raw struct{ Table json.RawMessage }
	_ = json.Unmarshal(out, &raw)
	s.desc = raw.Table
	t.mu.Lock()
	if t.schemas == nil {
		t.schemas = map[string]*schema{}
	}
	t.schemas[table] = s
	t.mu.Unlock()
	return s, nil
}

// withBody returns a request like req carrying body.
func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return r
}

// rewrittenResponse returns resp with body in place of its own, its
// length and its X-Amz-Crc32 (which the SDK checks) made to match.
func rewrittenResponse(resp *http.Response, body []byte) *http.Response {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	if resp.Header.Get("X-Amz-Crc32") != "" {
		resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	}
	return resp
}
