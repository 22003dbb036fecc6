package request

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/benchfix"
)

// stub is a Client that answers from memory: the benchmarks measure what
// happens in the process around a request, not the request.
type stub struct {
	singletable.Client // unused methods panic
	item               map[string]types.AttributeValue
	page               []map[string]types.AttributeValue

	// The last inputs, for the tests that check both sides build the
	// same requests.
	get    *dynamodb.GetItemInput
	put    *dynamodb.PutItemInput
	update *dynamodb.UpdateItemInput
	query  *dynamodb.QueryInput
	batch  *dynamodb.BatchWriteItemInput
}

func (s *stub) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	s.get = in
	return &dynamodb.GetItemOutput{Item: s.item}, nil
}

func (s *stub) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	s.put = in
	return &dynamodb.PutItemOutput{}, nil
}

func (s *stub) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	s.update = in
	return &dynamodb.UpdateItemOutput{Attributes: s.item}, nil
}

func (s *stub) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	s.query = in
	return &dynamodb.QueryOutput{Items: s.page, Count: int32(len(s.page))}, nil
}

var profiles = singletable.MustDefine(profilesSchema)

var profilesSchema = singletable.Schema[benchfix.Profile]{
	Type: "Profile",
	PK:   "USER#{Username}",
	SK:   "SKILL#{SkillName}",
	Indexes: []singletable.IndexSchema[benchfix.Profile]{
		{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
	},
}

type fixture struct {
	stub *stub
	repo *singletable.Repo[benchfix.Profile]
	v    benchfix.Profile
	key  benchfix.Profile
}

func newFixture() *fixture {
	s := &stub{}
	tbl := singletable.NewTable(s, "bench")
	f := &fixture{stub: s, repo: singletable.MustBind(tbl, profiles), v: benchfix.Sample(1)}
	f.key = benchfix.Profile{Username: f.v.Username, SkillName: f.v.SkillName}
	s.item = f.repo.PutOp(f.v).Item()
	for i := 0; i < 20; i++ {
		p := benchfix.Sample(1)
		p.SkillName = "skill" + string(rune('a'+i))
		s.page = append(s.page, f.repo.PutOp(p).Item())
	}
	return f
}

func (s *stub) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	s.batch = in
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// benchCredentials are the credentials of the benchmarks' SDK clients:
// none (requests unsigned) unless BENCH_SIGNED is set, then static ones,
// so that every request is signed with SigV4 as against DynamoDB.
func benchCredentials() aws.CredentialsProvider {
	if os.Getenv("BENCH_SIGNED") == "" {
		return aws.AnonymousCredentials{}
	}
	return credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "")
}
