package wire

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestProtocolInterface fails loudly when the SDK changes what the hook
// stands on: smithyhttp.ClientProtocol's methods (Protocol embeds the
// client's own and overrides DeserializeResponse) and
// dynamodb.Options.Protocol, set by dynamodb.New.
func TestProtocolInterface(t *testing.T) {
	want := []string{
		"DeserializeEventMessage(*smithy.Schema, *smithy.TypeRegistry, io.Reader) (smithy.Deserializable, error)",
		"DeserializeInitialResponse(*smithy.Schema, io.Reader, smithy.Deserializable) error",
		"DeserializeResponse(context.Context, *smithy.OperationSchema, *smithy.TypeRegistry, *http.Response, smithy.Deserializable) error",
		"HasInitialEventMessage() bool",
		"ID() smithy.ShapeID",
		"SerializeEventMessage(*smithy.Schema, *smithy.Schema, smithy.Serializable, io.Writer) error",
		"SerializeInitialRequest(*smithy.Schema, smithy.Serializable, io.Writer) error",
		"SerializeRequest(context.Context, *smithy.OperationSchema, smithy.Serializable, *http.Request) error",
	}
	it := reflect.TypeFor[smithyhttp.ClientProtocol]()
	var got []string
	for i := range it.NumMethod() {
		m := it.Method(i)
		got = append(got, m.Name+strings.TrimPrefix(m.Type.String(), "func"))
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("smithyhttp.ClientProtocol changed: the direct wire path must be reviewed (internal/wire)\ngot  %q\nwant %q", got, want)
	}
	f, ok := reflect.TypeFor[dynamodb.Options]().FieldByName("Protocol")
	if !ok || f.Type != it {
		t.Fatal("dynamodb.Options.Protocol is gone or changed type")
	}

	plain := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	if plain.Options().Protocol == nil || Carries(plain) {
		t.Fatal("dynamodb.New does not set Options.Protocol, or a plain client carries the hook")
	}
	on := dynamodb.New(dynamodb.Options{Region: "us-east-1"}, Enable, Enable)
	p, ok := on.Options().Protocol.(*Protocol)
	if !ok || !Carries(on) {
		t.Fatal("Enable did not wrap the protocol")
	}
	if _, twice := p.ClientProtocol.(*Protocol); twice {
		t.Fatal("Enable wrapped the protocol twice")
	}
	if Carries(nil) || Carries((*dynamodb.Client)(nil)) || Carries(struct{ *dynamodb.Client }{on}) {
		t.Fatal("Carries accepted what is not a *dynamodb.Client built with Enable")
	}
}
