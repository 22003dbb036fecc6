package request

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
)

// canned answers each request with a fixed response for its operation,
// so a real *dynamodb.Client runs its whole middleware stack (validation,
// JSON serialization, signing, response parsing) without a network.
type canned map[string][]byte // X-Amz-Target operation → response body

func (c canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	body, ok := c[op]
	if !ok {
		return nil, fmt.Errorf("canned: no response for %q", op)
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

// sdkClient is a client whose responses are those DynamoDB sends for the
// fixture's items (cannedFor).
func sdkClient(f *fixture) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://localhost:1"),
		Credentials:  benchCredentials(),
		HTTPClient:   &http.Client{Transport: cannedFor(f)},
	})
}

// cannedFor answers with f's items: GetItem (and UpdateItem) with f's
// item, Query and Scan with its page of 20, BatchGetItem finding them all.
func cannedFor(f *fixture) canned {
	page := make([]any, len(f.stub.page))
	for i, it := range f.stub.page {
		page[i] = wireItem(it)
	}
	mustJSON := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	items := mustJSON(map[string]any{"Items": page, "Count": len(page), "ScannedCount": len(page)})
	return canned{
		"PutItem":            []byte(`{}`),
		"GetItem":            mustJSON(map[string]any{"Item": wireItem(f.stub.item)}),
		"Query":              items,
		"Scan":               items,
		"BatchGetItem":       mustJSON(map[string]any{"Responses": map[string]any{"bench": page}, "UnprocessedKeys": map[string]any{}}),
		"BatchWriteItem":     []byte(`{"UnprocessedItems":{}}`),
		"UpdateItem":         mustJSON(map[string]any{"Attributes": wireItem(f.stub.item)}),
		"TransactWriteItems": []byte(`{}`),
	}
}

// wireItem is item in DynamoDB's JSON wire format.
func wireItem(item map[string]types.AttributeValue) map[string]any {
	m := make(map[string]any, len(item))
	for k, v := range item {
		m[k] = wireValue(v)
	}
	return m
}

func wireValue(av types.AttributeValue) map[string]any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = wireValue(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": wireItem(v.Value)}
	}
	panic(fmt.Sprintf("wireValue: %T", av))
}

// sdkFixture is the fixture on a real SDK client with canned responses.
func sdkFixture() (*fixture, *dynamodb.Client) {
	f := newFixture()
	c := sdkClient(f)
	f.repo = singletable.MustBind(singletable.NewTable(c, "bench"), profiles)
	return f, c
}

// BenchmarkPutSDK, BenchmarkGetSDK and BenchmarkQuery20SDK are Put, Get
// and Query20 through a real SDK client on a canned transport: what a
// call costs the client end to end, but for the network.
func BenchmarkPutSDK(b *testing.B) {
	f, c := sdkFixture()
	putPair(b, f, c)
}

func BenchmarkGetSDK(b *testing.B) {
	f, c := sdkFixture()
	getPair(b, f, c)
}

func BenchmarkQuery20SDK(b *testing.B) {
	f, c := sdkFixture()
	queryPair(b, f, c)
}

// pair runs a benchmark's two sides as its sub-benchmarks impl=library and
// impl=hand-raw, each call of one failing the benchmark with its error.
func pair(b *testing.B, library, handRaw func() error) {
	for _, side := range []struct {
		impl string
		call func() error
	}{{"library", library}, {"hand-raw", handRaw}} {
		b.Run("impl="+side.impl, func(b *testing.B) {
			benchfix.Loop(b, func() {
				if err := side.call(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// putPair, getPair and queryPair are the two sides of the Put, Get and
// Query20 rows: the library's f.repo against hand-raw code on c.
func putPair(b *testing.B, f *fixture, c *dynamodb.Client) {
	pair(b, func() error { _, err := f.repo.Put(ctx, f.v); return err },
		func() error { return rawPut(c, &f.v) })
}

func getPair(b *testing.B, f *fixture, c *dynamodb.Client) {
	pair(b, func() error { _, err := f.repo.Get(ctx, f.key); return err },
		func() error {
			_, err := handGet(c, f.key.Username, f.key.SkillName, benchfix.HandDecode)
			return err
		})
}

func queryPair(b *testing.B, f *fixture, c *dynamodb.Client) {
	pair(b, func() error { page, err := f.repo.Query(f.key).Page(ctx); return page20(len(page.Items), err) },
		func() error { ps, err := handQuery(c, f.key.Username, true); return page20(len(ps), err) })
}

// page20 is err, or an error when a page has not n = 20 items.
func page20(n int, err error) error {
	if err == nil && n != 20 {
		return fmt.Errorf("%d items", n)
	}
	return err
}

// BenchmarkBatchWrite25SDK is BatchWrite25 through a real SDK client on a
// canned transport: the SDK's own work is included, the network is not.
func BenchmarkBatchWrite25SDK(b *testing.B) {
	f, c := sdkFixture()
	repo := f.repo
	ps := make([]benchfix.Profile, 25)
	for i := range ps {
		ps[i] = benchfix.Sample(i)
	}
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchLibrary(repo, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchRaw(c, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// profilesOnce is profiles declared ExactlyOnceCounters.
var profilesOnce = func() *singletable.Entity[benchfix.Profile] {
	s := profilesSchema
	s.ExactlyOnceCounters = true
	return singletable.MustDefine(s)
}()

// BenchmarkAddSDK and BenchmarkAddExactlyOnceSDK are an increment
// (Update.Add) through a real SDK client on a canned transport: by default
// one UpdateItem; under Schema.ExactlyOnceCounters a one-item
// TransactWriteItems under a drawn token and the consistent GetItem of the
// item Run returns. hand-raw does the same requests by hand.
func BenchmarkAddSDK(b *testing.B) {
	f, c := sdkFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Update(f.key).Add("Endorsements", 1).Run(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			out, err := c.UpdateItem(ctx, rawAddInput(f.key.Username, f.key.SkillName))
			var p benchfix.Profile
			if err == nil {
				err = benchfix.HandDecode(out.Attributes, &p)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkAddExactlyOnceSDK(b *testing.B) {
	f, c := sdkFixture()
	repo := singletable.MustBind(singletable.NewTable(c, "bench"), profilesOnce)
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := repo.Update(f.key).Add("Endorsements", 1).Run(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			in := rawAddInput(f.key.Username, f.key.SkillName)
			var tok [16]byte
			_, _ = rand.Read(tok[:])
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
				ClientRequestToken: aws.String(hex.EncodeToString(tok[:])),
				TransactItems: []types.TransactWriteItem{{Update: &types.Update{TableName: in.TableName, Key: in.Key,
					UpdateExpression: in.UpdateExpression, ConditionExpression: in.ConditionExpression,
					ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues,
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}},
			})
			var out *dynamodb.GetItemOutput
			if err == nil {
				out, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: in.TableName, Key: in.Key, ConsistentRead: aws.Bool(true)})
			}
			var p benchfix.Profile
			if err == nil {
				err = benchfix.HandDecode(out.Item, &p)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
	})
}

// rawAddInput is the library's increment of Endorsements, written out.
func rawAddInput(username, skill string) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String("bench"),
		Key:                                 map[string]types.AttributeValue{"PK": s("USER#" + username), "SK": s("SKILL#" + skill)},
		ConditionExpression:                 aws.String("attribute_exists(#pk) AND #type = :type"),
		UpdateExpression:                    aws.String("SET #type = :type ADD #e :one"),
		ExpressionAttributeNames:            map[string]string{"#pk": "PK", "#type": "EntityType", "#e": "Endorsements"},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":type": s("Profile"), ":one": &types.AttributeValueMemberN{Value: "1"}},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}
