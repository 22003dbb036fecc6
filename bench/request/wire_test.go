package request

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
	"github.com/singletable-go/singletable/wire"
)

// The *Wire benchmarks are the *SDK benchmarks with the library on the
// direct wire path (a client built with wire.Enable), against the same
// hand-raw SDK code on an SDK client: both on the canned transport, with
// the same responses, sending the same requests (TestWireSameRequests).

// wireClients returns the fixture bound to a client with the path on, and
// a plain SDK client for the hand-raw side, on one recording transport.
func wireClients() (*fixture, *dynamodb.Client, recording) {
	f := newFixture()
	rec := recording{canned: cannedFor(f), last: map[string][]byte{}}
	opts := dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://localhost:1"),
		Credentials: benchCredentials(), HTTPClient: &http.Client{Transport: rec}}
	f.repo = singletable.MustBind(singletable.NewTable(dynamodb.New(opts, wire.Enable), "bench"), profiles)
	return f, dynamodb.New(opts), rec
}

// recording is canned that keeps each operation's last request body.
type recording struct {
	canned
	last map[string][]byte
}

func (r recording) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b := make([]byte, req.ContentLength)
		if _, err := req.Body.Read(b); err == nil || len(b) > 0 {
			r.last[req.Header.Get("X-Amz-Target")] = b
		}
	}
	return r.canned.RoundTrip(req)
}

func BenchmarkGetWire(b *testing.B) {
	f, c, _ := wireClients()
	getPair(b, f, c)
}

func BenchmarkQuery20Wire(b *testing.B) {
	f, c, _ := wireClients()
	queryPair(b, f, c)
}

// rawScanInput is the library's Scan of the entity, written out.
func rawScanInput() *dynamodb.ScanInput {
	return &dynamodb.ScanInput{
		TableName:                 aws.String("bench"),
		FilterExpression:          aws.String("#n0 = :v0"),
		ExpressionAttributeNames:  map[string]string{"#n0": "EntityType"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v0": s("Profile")},
	}
}

func handScan(c singletable.Client) ([]benchfix.Profile, error) {
	out, err := c.Scan(ctx, rawScanInput())
	if err != nil {
		return nil, err
	}
	ps := make([]benchfix.Profile, len(out.Items))
	for i, it := range out.Items {
		if err := benchfix.HandDecode(it, &ps[i]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func BenchmarkScan20Wire(b *testing.B) {
	f, c, _ := wireClients()
	pair(b, func() error { page, err := f.repo.Scan().Page(ctx); return page20(len(page.Items), err) },
		func() error { ps, err := handScan(c); return page20(len(ps), err) })
}

// batchKeys are the keys of the page's 20 items.
func batchKeys(f *fixture) []benchfix.Profile {
	ks := make([]benchfix.Profile, 20)
	for i := range ks {
		ks[i] = benchfix.Profile{Username: f.key.Username, SkillName: "skill" + string(rune('a'+i))}
	}
	return ks
}

func libraryBatchGet(f *fixture, ks []benchfix.Profile) ([]benchfix.Profile, error) {
	return libraryGets(f, ks, func(ctx context.Context, ops []singletable.GetOp) ([]bool, error) {
		return singletable.BatchGet(ctx, ops)
	})
}

// libraryGets reads ks by one GetOp each through read (BatchGet or TxGet);
// a key not found is an error.
func libraryGets(f *fixture, ks []benchfix.Profile, read func(context.Context, []singletable.GetOp) ([]bool, error)) ([]benchfix.Profile, error) {
	ps := make([]benchfix.Profile, len(ks))
	ops := make([]singletable.GetOp, len(ks))
	for i := range ks {
		ops[i] = f.repo.GetOp(ks[i], &ps[i])
	}
	found, err := read(ctx, ops)
	for i := range found {
		if err == nil && !found[i] {
			err = fmt.Errorf("item %d not found", i)
		}
	}
	return ps, err
}

// handBatchGet reads ks in one BatchGetItem and matches the items to the
// keys by their primary key, as the library does.
func handBatchGet(c singletable.Client, ks []benchfix.Profile) ([]benchfix.Profile, error) {
	keys := make([]map[string]types.AttributeValue, len(ks))
	at := make(map[string]int, len(ks))
	for i := range ks {
		keys[i] = map[string]types.AttributeValue{"PK": s("USER#" + ks[i].Username), "SK": s("SKILL#" + ks[i].SkillName)}
		at["USER#"+ks[i].Username+"\x00SKILL#"+ks[i].SkillName] = i
	}
	out, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"bench": {Keys: keys}}})
	if err != nil {
		return nil, err
	}
	ps := make([]benchfix.Profile, len(ks))
	for _, it := range out.Responses["bench"] {
		pk, _ := it["PK"].(*types.AttributeValueMemberS)
		sk, _ := it["SK"].(*types.AttributeValueMemberS)
		et, _ := it["EntityType"].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil || et == nil || et.Value != "Profile" {
			return nil, fmt.Errorf("not a profile")
		}
		i, ok := at[pk.Value+"\x00"+sk.Value]
		if !ok {
			return nil, fmt.Errorf("no key %s %s", pk.Value, sk.Value)
		}
		if err := benchfix.HandDecode(it, &ps[i]); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func BenchmarkBatchGet20Wire(b *testing.B) {
	f, c, _ := wireClients()
	ks := batchKeys(f)
	pair(b, func() error { _, err := libraryBatchGet(f, ks); return err },
		func() error { _, err := handBatchGet(c, ks); return err })
}

func BenchmarkPutWire(b *testing.B) {
	f, c, _ := wireClients()
	putPair(b, f, c)
}

// TestWireSameRequests checks that both sides of each *Wire benchmark
// send the same request body and read the same values.
func TestWireSameRequests(t *testing.T) {
	f, c, rec := wireClients()
	same := func(op string, lib func() (any, error), hand func() (any, error)) {
		t.Helper()
		target := "DynamoDB_20120810." + op
		lv, err := lib()
		if err != nil {
			t.Fatalf("%s library: %v", op, err)
		}
		lb := canonJSON(t, rec.last[target])
		hv, err := hand()
		if err != nil {
			t.Fatalf("%s hand-raw: %v", op, err)
		}
		if hb := canonJSON(t, rec.last[target]); lb != hb {
			t.Errorf("%s request:\nlibrary %s\nhand    %s", op, lb, hb)
		}
		if !reflect.DeepEqual(lv, hv) {
			t.Errorf("%s values:\nlibrary %+v\nhand    %+v", op, lv, hv)
		}
	}
	same("GetItem", func() (any, error) { return f.repo.Get(ctx, f.key) },
		func() (any, error) { return handGet(c, f.key.Username, f.key.SkillName, benchfix.HandDecode) })
	same("Query", func() (any, error) { p, err := f.repo.Query(f.key).Page(ctx); return p.Items, err },
		func() (any, error) { return handQuery(c, f.key.Username, true) })
	same("Scan", func() (any, error) { p, err := f.repo.Scan().Page(ctx); return p.Items, err },
		func() (any, error) { return handScan(c) })
	ks := batchKeys(f)
	same("BatchGetItem", func() (any, error) { return libraryBatchGet(f, ks) },
		func() (any, error) { return handBatchGet(c, ks) })
	same("PutItem", func() (any, error) { return f.repo.Put(ctx, f.v) },
		func() (any, error) { return f.v, rawPut(c, &f.v) })
}

// canonJSON is a JSON request body with its object keys sorted and its
// expressions resolved (see canonical).
func canonJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	names, _ := v["ExpressionAttributeNames"].(map[string]any)
	values, _ := v["ExpressionAttributeValues"].(map[string]any)
	for k, e := range v {
		if s, ok := e.(string); ok && strings.HasSuffix(k, "Expression") {
			r := placeholder.ReplaceAllStringFunc(s, func(ph string) string {
				if ph[0] == '#' {
					return fmt.Sprint(names[ph])
				}
				return asJSON(t, values[ph])
			})
			v[k] = strings.NewReplacer(" ", "", "(", "", ")", "").Replace(r)
		}
	}
	delete(v, "ExpressionAttributeNames")
	delete(v, "ExpressionAttributeValues")
	return asJSON(t, v)
}
