package writeplan

import (
	"testing"

	"github.com/singletable-go/singletable/internal/expr"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/model"
)

// One classification of a failed condition, in its order: a race first,
// then what the intent says of the item as it was, then the version.
func TestFailed(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	mine := map[string]types.AttributeValue{"PK": s("U#1"), "T": s("User"), "V": n("3"), "email": s("a@x")}
	other := map[string]types.AttributeValue{"PK": s("U#1"), "T": s("Order")}
	email := &model.Field{Name: "Email", Attr: "email"}
	x := func(i Intent) *Expectation { return &Expectation{Op: "Put", Entity: "User", TypeAttr: "T", Intent: i} }
	versioned := func(v int64, read bool) *Expectation {
		e := x(AnyItem)
		e.VersionAttr, e.Version, e.VersionRead = "V", v, read
		return e
	}
	snapped := func(item map[string]types.AttributeValue) *Expectation {
		e := x(AnyItem)
		e.Snap = &Snapshot{Item: item, Mine: item != nil, Fields: []*model.Field{email}}
		return e
	}
	for _, c := range []struct {
		name string
		x    *Expectation
		old  map[string]types.AttributeValue
		want Outcome
	}{
		{"absent, an item there", x(AbsentItem), mine, AlreadyExists},
		{"existing, none there", x(ExistingItem), nil, NotFound},
		{"existing, another entity's", x(ExistingItem), other, NotFound},
		{"any, another entity's", x(AnyItem), other, OtherEntity},
		{"the caller's version", versioned(2, false), mine, VersionConflict},
		{"the library's version", versioned(2, true), mine, Raced},
		{"version as expected", versioned(3, false), mine, ConditionFailed},
		{"snapshot changed", snapped(map[string]types.AttributeValue{"PK": s("U#1"), "email": s("b@x")}), mine, Raced},
		{"snapshot absent, item now", snapped(nil), mine, Raced},
		{"snapshot unchanged", snapped(mine), mine, ConditionFailed},
		{"the caller's condition", x(AnyItem), mine, ConditionFailed},
	} {
		if got := c.x.Failed(c.old); got != c.want {
			t.Errorf("%s: Failed = %d, want %d", c.name, got, c.want)
		}
	}

	// Refuse applies the same reading to the snapshot, before sending.
	for _, c := range []struct {
		name string
		i    Intent
		s    *Snapshot
		want Outcome
	}{
		{"no read", ExistingItem, nil, Proceed},
		{"absent, an item there", AbsentItem, &Snapshot{Item: mine, Mine: true}, AlreadyExists},
		{"existing, none there", ExistingItem, &Snapshot{}, NotFound},
		{"existing, another entity's", ExistingItem, &Snapshot{Item: other}, NotFound},
		{"any, another entity's", AnyItem, &Snapshot{Item: other}, OtherEntity},
		{"any, this entity's", AnyItem, &Snapshot{Item: mine, Mine: true}, Proceed},
		{"existing, this entity's", ExistingItem, &Snapshot{Item: mine, Mine: true}, Proceed},
	} {
		if got := x(c.i).Refuse(c.s); got != c.want {
			t.Errorf("refuse %s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := x(AnyItem).What(); got != "put User" {
		t.Errorf("What = %q", got)
	}
	if StoredVersion(nil, "V") != 0 || StoredVersion(mine, "V") != 3 || StoredVersion(other, "V") != 0 {
		t.Error("StoredVersion")
	}
}

// The version check: the version expected, or for 0 no version yet; none
// when the write checks no version, and no snapshot check without a read.
func TestVersionCheck(t *testing.T) {
	write := func(c Condition) string {
		var b expr.Builder
		text, _ := c.Write(&b, nil)
		return text
	}
	x := &Expectation{VersionAttr: "V", Version: 3}
	if got, want := write(x.VersionCheck()), "#n0 = :v0"; got != want {
		t.Fatalf("version 3: %s, want %s", got, want)
	}
	x.Version = 0
	if got, want := write(x.VersionCheck()), "(attribute_not_exists(#n0)) OR (#n0 = :v0)"; got != want {
		t.Fatalf("version 0: %s, want %s", got, want)
	}
	none := &Expectation{}
	if !none.VersionCheck().Empty() || !none.SnapshotCheck("PK").Empty() {
		t.Fatal("no version, no snapshot: the checks must be empty")
	}
}
