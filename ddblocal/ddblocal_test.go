package ddblocal_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/ddblocal"
)

func createTable(t *testing.T, c *dynamodb.Client, name string) {
	t.Helper()
	_, err := c.CreateTable(t.Context(), &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
}

func tableExists(t *testing.T, c *dynamodb.Client, name string) bool {
	t.Helper()
	_, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var notFound *types.ResourceNotFoundException
	if errors.As(err, &notFound) {
		return false
	}
	if err != nil {
		t.Fatalf("DescribeTable %s: %v", name, err)
	}
	return true
}

func TestSharedServerAnswers(t *testing.T) {
	t.Parallel()
	s := ddblocal.Shared(t)
	if !strings.HasPrefix(s.Endpoint(), "http://") {
		t.Errorf("Endpoint() = %q, want an http URL", s.Endpoint())
	}
	if _, err := s.Client().ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
}

func TestFreshTableRoundTripAndCleanup(t *testing.T) {
	t.Parallel()
	c := ddblocal.Shared(t).Client()
	var name string
	t.Run("use", func(t *testing.T) {
		name = ddblocal.TableName(t)
		createTable(t, c, name)
		ddblocal.DeleteTableOnCleanup(t, c, name)

		item := map[string]types.AttributeValue{
			"PK":   &types.AttributeValueMemberS{Value: "USER#john"},
			"SK":   &types.AttributeValueMemberS{Value: "SKILL#golang"},
			"Note": &types.AttributeValueMemberS{Value: "hello"},
		}
		if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &name, Item: item}); err != nil {
			t.Fatalf("PutItem: %v", err)
		}
		out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{
			TableName:      &name,
			Key:            map[string]types.AttributeValue{"PK": item["PK"], "SK": item["SK"]},
			ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			t.Fatalf("GetItem: %v", err)
		}
		if got := out.Item["Note"].(*types.AttributeValueMemberS).Value; got != "hello" {
			t.Errorf("Note = %q, want hello", got)
		}
		// A failed conditional write must surface as the SDK's typed error
		// (DynamoDB Local's CRC32 header must not break decoding).
		_, err = c.PutItem(t.Context(), &dynamodb.PutItemInput{
			TableName: &name, Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		})
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			t.Errorf("conditional PutItem error = %v, want ConditionalCheckFailedException", err)
		}
	})
	if name == "" {
		t.Fatal("subtest did not run")
	}
	if tableExists(t, c, name) {
		t.Errorf("table %s still exists after its test's cleanup", name)
	}
}

func TestDeleteTableOnCleanupIgnoresMissingTable(t *testing.T) {
	t.Parallel()
	c := ddblocal.Shared(t).Client()
	t.Run("missing", func(t *testing.T) {
		ddblocal.DeleteTableOnCleanup(t, c, ddblocal.TableName(t)) // never created
	})
}

var validTableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

func TestTableName(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		n := ddblocal.TableName(t)
		if !validTableName.MatchString(n) {
			t.Fatalf("TableName = %q: not a valid DynamoDB table name", n)
		}
		if !strings.HasPrefix(n, "TestTableName-") {
			t.Errorf("TableName = %q, want it to start with the test name", n)
		}
		if seen[n] {
			t.Fatalf("TableName returned %q twice", n)
		}
		seen[n] = true
	}
	for _, sub := range []string{"a/b c:é#%", strings.Repeat("x", 400), "!"} {
		t.Run(sub, func(t *testing.T) {
			n := ddblocal.TableName(t)
			if !validTableName.MatchString(n) {
				t.Errorf("TableName = %q (%d chars): not a valid DynamoDB table name", n, len(n))
			}
		})
	}
	for _, base := range []string{"glad-entities", "", "é", strings.Repeat("z", 300)} {
		a, b := ddblocal.UniqueTableName(base), ddblocal.UniqueTableName(base)
		if !validTableName.MatchString(a) || a == b {
			t.Errorf("UniqueTableName(%.10q) = %q, %q: want two different valid names", base, a, b)
		}
	}
	if n := ddblocal.UniqueTableName("glad-entities"); !strings.HasPrefix(n, "glad-entities-") {
		t.Errorf("UniqueTableName(\"glad-entities\") = %q, want it to start with the base", n)
	}
	t.Run("long names are usable", func(t *testing.T) {
		t.Run(strings.Repeat("y", 300), func(t *testing.T) {
			c := ddblocal.Shared(t).Client()
			n := ddblocal.TableName(t)
			createTable(t, c, n)
			ddblocal.DeleteTableOnCleanup(t, c, n)
		})
	})
}

func TestStartReusesEndpointEnv(t *testing.T) { // not parallel: t.Setenv
	want := ddblocal.Shared(t).Endpoint()
	t.Setenv(ddblocal.EndpointEnv, want)
	s, err := ddblocal.Start(t.Context(), ddblocal.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if s.Endpoint() != want {
		t.Errorf("Endpoint() = %q, want %q", s.Endpoint(), want)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop on a reused server: %v", err)
	}
	// Stop must not have stopped the shared server.
	if _, err := ddblocal.Shared(t).Client().ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("shared server after reused Stop: %v", err)
	}
}

func TestStartReusedEndpointMustAnswer(t *testing.T) { // not parallel: t.Setenv
	t.Setenv(ddblocal.EndpointEnv, "http://127.0.0.1:1")
	_, err := ddblocal.Start(t.Context(), ddblocal.Options{StartTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), ddblocal.EndpointEnv) {
		t.Fatalf("Start with a dead %s: err = %v, want one naming the variable", ddblocal.EndpointEnv, err)
	}
}

func TestStartAndStopOwnServer(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	start := time.Now()
	s, err := ddblocal.Start(t.Context(), ddblocal.Options{IgnoreEnv: true, Output: &out})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("own server at %s ready in %v", s.Endpoint(), time.Since(start))
	if s.Endpoint() == ddblocal.Shared(t).Endpoint() {
		t.Fatalf("IgnoreEnv server reused the shared endpoint %s", s.Endpoint())
	}
	c := s.Client()
	name := ddblocal.TableName(t)
	createTable(t, c, name)
	if !strings.Contains(out.String(), "Version:\t"+ddblocal.Version) || !strings.Contains(s.Output(), "InMemory:\ttrue") {
		t.Errorf("server output lacks its start-up banner:\n%s", s.Output())
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = ddblocal.NewClient(s.Endpoint(), func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }).
		ListTables(ctx, &dynamodb.ListTablesInput{})
	if err == nil {
		t.Error("server still answers after Stop")
	}
}

func TestStartPortInUse(t *testing.T) {
	t.Parallel()
	shared := ddblocal.Shared(t).Endpoint()
	u, err := url.Parse(shared)
	if err != nil || u.Port() == "" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		t.Skipf("shared endpoint %s is not a local port", shared)
	}
	port, _ := strconv.Atoi(u.Port())
	_, err = ddblocal.Start(t.Context(), ddblocal.Options{IgnoreEnv: true, Port: port})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Start on a port in use: err = %v, want one saying so", err)
	}
}

func TestStartWithoutJava(t *testing.T) {
	t.Parallel()
	_, err := ddblocal.Start(t.Context(), ddblocal.Options{IgnoreEnv: true, Java: "/nonexistent/java"})
	if err == nil || !strings.Contains(err.Error(), "apt-get install openjdk-17-jre-headless") {
		t.Fatalf("err = %v, want advice to install Java", err)
	}
}

func TestNewClientIsHermetic(t *testing.T) { // not parallel: t.Setenv
	t.Setenv("AWS_PROFILE", "ddblocal-no-such-profile")
	t.Setenv("AWS_REGION", "eu-west-3")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	c := ddblocal.NewClient(ddblocal.Shared(t).Endpoint())
	if got := c.Options().Region; got != ddblocal.Region {
		t.Errorf("Region = %q, want %q", got, ddblocal.Region)
	}
	if !c.Options().DisableValidateResponseChecksum {
		t.Error("DisableValidateResponseChecksum is false")
	}
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	c2 := ddblocal.NewClient("http://example.invalid", func(o *dynamodb.Options) { o.Region = "eu-west-1" })
	if got := c2.Options().Region; got != "eu-west-1" {
		t.Errorf("option override: Region = %q, want eu-west-1", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A DYNAMODB_ENDPOINT where nothing answers fails within ddblocal.ReuseTimeout, not
// after the JVM start-up allowance.
func TestWrongEndpointFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	t.Setenv(ddblocal.EndpointEnv, "http://"+addr)
	t.Setenv(ddblocal.StartTimeoutEnv, "")
	start := time.Now()
	_, err = ddblocal.Start(context.Background(), ddblocal.Options{})
	if err == nil {
		t.Fatal("Start succeeded against a closed port")
	}
	if d := time.Since(start); d > ddblocal.ReuseTimeout+5*time.Second {
		t.Fatalf("took %v; want about ddblocal.ReuseTimeout (%v)", d, ddblocal.ReuseTimeout)
	}
	if !strings.Contains(err.Error(), ddblocal.EndpointEnv) {
		t.Fatalf("error does not name %s: %v", ddblocal.EndpointEnv, err)
	}
}
