package cursor

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestPartitionBindingInjective: a multi-attribute partition binds each
// value apart, so values that joined with NUL alike no longer collide;
// the legacy binding (which did collide) is kept for old cursors only.
func TestPartitionBindingInjective(t *testing.T) {
	a := PartitionBinding("t", "GSI2", "E", []string{"Sx\x00Sy", "Sz"}, "asc")
	b := PartitionBinding("t", "GSI2", "E", []string{"Sx", "Sy\x00Sz"}, "asc")
	if a.Bind == b.Bind {
		t.Fatal("(x\\x00Sy, z) and (x, y\\x00Sz) bind alike")
	}
	if !a.HasLegacy || a.Legacy != b.Legacy {
		t.Fatal("the legacy binding is the NUL-joined one")
	}
	one := PartitionBinding("t", "", "E", []string{"USER#a"}, "asc")
	if one.HasLegacy || one.Bind != Binding("t", "", "E", "USER#a", "asc") {
		t.Fatal("a single-attribute partition keeps its binding byte for byte")
	}
}

// TestDecodeBoundLegacy: a cursor bound to the legacy binding of a
// multi-attribute partition still decodes; one bound to neither does not.
func TestDecodeBoundLegacy(t *testing.T) {
	c := &Codec{Now: time.Now}
	b := PartitionBinding("t", "GSI2", "E", []string{"x", "y"}, "asc")
	attrs := []string{"PK"}
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A"}}
	for _, bind := range [][16]byte{b.Bind, b.Legacy} {
		s, err := c.Encode(bind, attrs, key)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.DecodeBound(s, b, attrs); err != nil || got["PK"].(*types.AttributeValueMemberS).Value != "A" {
			t.Errorf("DecodeBound = %v, %v", got, err)
		}
	}
	other, _ := c.Encode(Binding("other"), attrs, key)
	if _, err := c.DecodeBound(other, b, attrs); err == nil {
		t.Error("a cursor bound to another partition decodes")
	}
	if _, err := c.DecodeBound(other, Bound{Bind: b.Bind}, attrs); err == nil {
		t.Error("a cursor bound to another partition decodes without a legacy binding")
	}
}
