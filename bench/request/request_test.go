// Package request measures the library's request paths (render keys, build
// expressions, encode, decode) against the same requests built by hand with
// attributevalue and expression, and by hand with a hand-written codec. The
// client is a stub answering from memory, so only work in this process is
// measured.
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 10 ./request > request.txt
//	benchstat -col /impl request.txt
package request

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
)

var ctx = context.Background()

func s(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

// handPut is Repo.Put written by hand with attributevalue.
func handPut(st singletable.Client, p *benchfix.Profile) error {
	item, err := attributevalue.MarshalMap(p)
	if err != nil {
		return err
	}
	benchfix.AddKeys(item, p)
	_, err = st.PutItem(ctx, ownedPut(item))
	return err
}

// ownedPut is the PutItem of item that a careful hand-written service
// sends to a shared table: it replaces only an item of its own entity type
// (or none), never another entity's item under the same key.
func ownedPut(item map[string]types.AttributeValue) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{TableName: aws.String("bench"), Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(#pk) OR #type = :type"),
		ExpressionAttributeNames:            map[string]string{"#pk": "PK", "#type": "EntityType"},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":type": s("Profile")},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// rawPut is the same with the hand-written codec.
func rawPut(st singletable.Client, p *benchfix.Profile) error {
	item := benchfix.HandEncode(p)
	benchfix.AddKeys(item, p)
	_, err := st.PutItem(ctx, ownedPut(item))
	return err
}

func handGet(st singletable.Client, username, skill string, decode func(map[string]types.AttributeValue, *benchfix.Profile) error) (benchfix.Profile, error) {
	var p benchfix.Profile
	out, err := st.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("bench"), Key: map[string]types.AttributeValue{
		"PK": s("USER#" + username), "SK": s("SKILL#" + skill),
	}})
	if err != nil {
		return p, err
	}
	if et, ok := out.Item["EntityType"].(*types.AttributeValueMemberS); !ok || et.Value != "Profile" {
		return p, context.Canceled
	}
	err = decode(out.Item, &p)
	return p, err
}

func avDecode(item map[string]types.AttributeValue, p *benchfix.Profile) error {
	return attributevalue.UnmarshalMap(item, p)
}

func queryInput(username string) (*dynamodb.QueryInput, error) {
	kc := expression.Key("PK").Equal(expression.Value("USER#" + username)).
		And(expression.Key("SK").BeginsWith("SKILL#"))
	filter := expression.Name("EntityType").Equal(expression.Value("Profile"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).WithFilter(filter).Build()
	if err != nil {
		return nil, err
	}
	return &dynamodb.QueryInput{
		TableName:                 aws.String("bench"),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}, nil
}

// rawQueryInput writes the expression strings out.
func rawQueryInput(username string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String("bench"),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
		FilterExpression:          aws.String("#type = :type"),
		ExpressionAttributeNames:  map[string]string{"#pk": "PK", "#sk": "SK", "#type": "EntityType"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("USER#" + username), ":sk": s("SKILL#"), ":type": s("Profile")},
	}
}

func handQuery(st singletable.Client, username string, raw bool) ([]benchfix.Profile, error) {
	var in *dynamodb.QueryInput
	if raw {
		in = rawQueryInput(username)
	} else {
		var err error
		if in, err = queryInput(username); err != nil {
			return nil, err
		}
	}
	out, err := st.Query(ctx, in)
	if err != nil {
		return nil, err
	}
	ps := make([]benchfix.Profile, len(out.Items))
	for i, it := range out.Items {
		if raw {
			err = benchfix.HandDecode(it, &ps[i])
		} else {
			err = attributevalue.UnmarshalMap(it, &ps[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return ps, nil
}

func updateInput(username, skill, level string) (*dynamodb.UpdateItemInput, error) {
	cond := expression.AttributeExists(expression.Name("PK")).
		And(expression.Name("EntityType").Equal(expression.Value("Profile")))
	upd := expression.Set(expression.Name("EntityType"), expression.Value("Profile")).
		Set(expression.Name("ProficiencyLevel"), expression.Value(level)).
		Set(expression.Name("GSI1PK"), expression.Value("SKILL#"+skill)).
		Set(expression.Name("GSI1SK"), expression.Value("LEVEL#"+level+"#USER#"+username))
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return nil, err
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String("bench"),
		Key:                                 map[string]types.AttributeValue{"PK": s("USER#" + username), "SK": s("SKILL#" + skill)},
		ConditionExpression:                 expr.Condition(),
		UpdateExpression:                    expr.Update(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, nil
}

func rawUpdateInput(username, skill, level string) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String("bench"),
		Key:                 map[string]types.AttributeValue{"PK": s("USER#" + username), "SK": s("SKILL#" + skill)},
		ConditionExpression: aws.String("attribute_exists(#pk) AND #type = :type"),
		UpdateExpression:    aws.String("SET #type = :type, #level = :level, #g1pk = :g1pk, #g1sk = :g1sk"),
		ExpressionAttributeNames: map[string]string{"#pk": "PK", "#type": "EntityType", "#level": "ProficiencyLevel",
			"#g1pk": "GSI1PK", "#g1sk": "GSI1SK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":type": s("Profile"), ":level": s(level),
			":g1pk": s("SKILL#" + skill), ":g1sk": s("LEVEL#" + level + "#USER#" + username)},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

func handUpdate(st *stub, username, skill, level string, raw bool) (benchfix.Profile, error) {
	var p benchfix.Profile
	var in *dynamodb.UpdateItemInput
	if raw {
		in = rawUpdateInput(username, skill, level)
	} else {
		var err error
		if in, err = updateInput(username, skill, level); err != nil {
			return p, err
		}
	}
	out, err := st.UpdateItem(ctx, in)
	if err != nil {
		return p, err
	}
	if raw {
		err = benchfix.HandDecode(out.Attributes, &p)
	} else {
		err = attributevalue.UnmarshalMap(out.Attributes, &p)
	}
	return p, err
}

func asJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// placeholder is an expression attribute name or value placeholder.
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

// resolve writes an expression with its placeholders replaced by what they
// stand for, and without spaces and parentheses, so that expressions that
// differ only in placeholder names and grouping compare equal.
func resolve(t *testing.T, e *string, names map[string]string, values map[string]types.AttributeValue) *string {
	if e == nil {
		return nil
	}
	r := placeholder.ReplaceAllStringFunc(*e, func(ph string) string {
		if ph[0] == '#' {
			return names[ph]
		}
		return asJSON(t, values[ph])
	})
	r = strings.NewReplacer(" ", "", "\n", "", "(", "", ")", "").Replace(r)
	return &r
}

// canonical is a request with its expressions resolved.
func canonical(t *testing.T, in any) any {
	switch v := in.(type) {
	case *dynamodb.QueryInput:
		c := *v
		c.KeyConditionExpression = resolve(t, v.KeyConditionExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.FilterExpression = resolve(t, v.FilterExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.ProjectionExpression = resolve(t, v.ProjectionExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.ExpressionAttributeNames, c.ExpressionAttributeValues = nil, nil
		return &c
	case *dynamodb.PutItemInput:
		c := *v
		c.ConditionExpression = resolve(t, v.ConditionExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.ExpressionAttributeNames, c.ExpressionAttributeValues = nil, nil
		return &c
	case *dynamodb.UpdateItemInput:
		c := *v
		c.UpdateExpression = resolve(t, v.UpdateExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.ConditionExpression = resolve(t, v.ConditionExpression, v.ExpressionAttributeNames, v.ExpressionAttributeValues)
		c.ExpressionAttributeNames, c.ExpressionAttributeValues = nil, nil
		return &c
	}
	return in
}

// TestSameRequests checks that every hand-built request is the one the
// library sends, so the benchmarks compare equal work. Expressions are
// compared with their placeholders resolved: the library names its
// placeholders differently from the SDK's expression builder.
func TestSameRequests(t *testing.T) {
	f := newFixture()
	check := func(what string, lib, hand any) {
		t.Helper()
		if a, b := asJSON(t, canonical(t, lib)), asJSON(t, canonical(t, hand)); a != b {
			t.Errorf("%s:\nlibrary %s\nhand    %s", what, a, b)
		}
	}
	if _, err := f.repo.Put(ctx, f.v); err != nil {
		t.Fatal(err)
	}
	lib := f.stub.put
	for _, put := range []func(singletable.Client, *benchfix.Profile) error{handPut, rawPut} {
		if err := put(f.stub, &f.v); err != nil {
			t.Fatal(err)
		}
		check("put", lib, f.stub.put)
	}
	if _, err := f.repo.Get(ctx, f.key); err != nil {
		t.Fatal(err)
	}
	libGet := f.stub.get
	if _, err := handGet(f.stub, f.v.Username, f.v.SkillName, avDecode); err != nil {
		t.Fatal(err)
	}
	check("get", libGet, f.stub.get)
	libQ, err := f.repo.Query(f.key).Request()
	if err != nil {
		t.Fatal(err)
	}
	handQ, err := queryInput(f.v.Username)
	if err != nil {
		t.Fatal(err)
	}
	check("query", libQ, handQ)
	check("query raw", libQ, rawQueryInput(f.v.Username))
	if _, err := f.repo.Update(f.key).Set("Level", "Senior").Run(ctx); err != nil {
		t.Fatal(err)
	}
	libU := f.stub.update
	handU, err := updateInput(f.v.Username, f.v.SkillName, "Senior")
	if err != nil {
		t.Fatal(err)
	}
	check("update", libU, handU)
	check("update raw", libU, rawUpdateInput(f.v.Username, f.v.SkillName, "Senior"))

	ps := []benchfix.Profile{benchfix.Sample(1), benchfix.Sample(2)}
	if err := singletable.BatchWrite(ctx, []singletable.WriteOp{f.repo.PutOp(ps[0]), f.repo.PutOp(ps[1])}); err != nil {
		t.Fatal(err)
	}
	reqs := make([]types.WriteRequest, len(ps))
	for i := range ps {
		item := benchfix.HandEncode(&ps[i])
		benchfix.AddKeys(item, &ps[i])
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	check("batch write raw", f.stub.batch, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"bench": reqs}})
}

func BenchmarkPut(b *testing.B) {
	f := newFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Put(ctx, f.v); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := handPut(f.stub, &f.v); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := rawPut(f.stub, &f.v); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkGet(b *testing.B) {
	f := newFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Get(ctx, f.key); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handGet(f.stub, f.key.Username, f.key.SkillName, avDecode); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handGet(f.stub, f.key.Username, f.key.SkillName, benchfix.HandDecode); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkQueryRequest builds the QueryInput only.
func BenchmarkQueryRequest(b *testing.B) {
	f := newFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Query(f.key).Request(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := queryInput(f.key.Username); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() { _ = rawQueryInput(f.key.Username) })
	})
}

// BenchmarkQuery20 reads a page of 20 items.
func BenchmarkQuery20(b *testing.B) {
	f := newFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Query(f.key).Page(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handQuery(f.stub, f.key.Username, false); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handQuery(f.stub, f.key.Username, true); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkUpdate(b *testing.B) {
	f := newFixture()
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := f.repo.Update(f.key).Set("Level", "Senior").Run(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handUpdate(f.stub, f.key.Username, f.key.SkillName, "Senior", false); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if _, err := handUpdate(f.stub, f.key.Username, f.key.SkillName, "Senior", true); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkBatchWrite25 writes 25 puts in one BatchWriteItem.
func BenchmarkBatchWrite25(b *testing.B) {
	f := newFixture()
	ps := make([]benchfix.Profile, 25)
	for i := range ps {
		ps[i] = benchfix.Sample(i)
	}
	b.Run("impl=library", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchLibrary(f.repo, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-av", func(b *testing.B) {
		benchfix.Loop(b, func() {
			reqs := make([]types.WriteRequest, len(ps))
			for i := range ps {
				item, err := attributevalue.MarshalMap(ps[i])
				if err != nil {
					b.Fatal(err)
				}
				benchfix.AddKeys(item, &ps[i])
				reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
			}
			if _, err := f.stub.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"bench": reqs}}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=hand-raw", func(b *testing.B) {
		benchfix.Loop(b, func() {
			if err := batchRaw(f.stub, ps); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// batchLibrary writes ps in one BatchWrite through repo.
func batchLibrary(repo *singletable.Repo[benchfix.Profile], ps []benchfix.Profile) error {
	ops := make([]singletable.WriteOp, len(ps))
	for i := range ps {
		ops[i] = repo.PutOp(ps[i])
	}
	return singletable.BatchWrite(ctx, ops)
}

// batchRaw writes ps in one BatchWriteItem built with the hand-written
// codec.
func batchRaw(c singletable.Client, ps []benchfix.Profile) error {
	reqs := make([]types.WriteRequest, len(ps))
	for i := range ps {
		item := benchfix.HandEncode(&ps[i])
		benchfix.AddKeys(item, &ps[i])
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	_, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"bench": reqs}})
	return err
}
