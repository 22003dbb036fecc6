package codec

import (
	"reflect"
	"testing"

	"github.com/singletable-go/singletable/internal/format"
)

// TestTagRoundTrip: every option parseTag knows is written back by
// structTag, so a value delegated to attributevalue is stored under the
// same options as the field; "unix" is written as attributevalue's
// "unixtime", and options parseTag does not know are dropped.
func TestTagRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`dynamodbav:"n"`, `dynamodbav:"n"`},
		{`dynamodbav:"n,omitempty,omitemptyelem,nullempty,nullemptyelem,string,binaryset,numberset,stringset,unixtime,json"`,
			`dynamodbav:"n,omitempty,omitemptyelem,nullempty,nullemptyelem,string,binaryset,numberset,stringset,unixtime,json"`},
		{`dynamodbav:"n,json,omitempty"`, `dynamodbav:"n,omitempty,json"`},
		{`dynamodbav:"n,unix"`, `dynamodbav:"n,unixtime"`},
		{`dynamodbav:"n,rfc3339"`, `dynamodbav:"n,rfc3339"`},
		{`dynamodbav:"n,rfc3339milli,omitempty"`, `dynamodbav:"n,omitempty,rfc3339milli"`},
		{`dynamodbav:"n,date"`, `dynamodbav:"n,date"`},
		{`dynamodbav:"n,unixmilli"`, `dynamodbav:"n,unixmilli"`},
		{`dynamodbav:"n,bogus"`, `dynamodbav:"n"`},
	} {
		tg := parseTag(reflect.StructTag(tc.in))
		if got := string(tg.structTag(tg.Name)); got != tc.want {
			t.Errorf("%s: structTag = %s, want %s", tc.in, got, tc.want)
		}
		if again := parseTag(reflect.StructTag(tc.want)); again != tg {
			t.Errorf("%s: parsing %s again = %+v, want %+v", tc.in, tc.want, again, tg)
		}
	}
	if tg := parseTag(`dynamodbav:"-"`); !tg.Ignore {
		t.Error(`"-" does not ignore the field`)
	}
	if f := FormOf(`dynamodbav:"x,unix"`); f != format.Unix {
		t.Errorf("FormOf(unix) = %v", f)
	}
}
