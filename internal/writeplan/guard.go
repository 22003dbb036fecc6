package writeplan

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// Attributes of a unique guard item besides the table's keys: the primary
// key of the item that owns the value.
const (
	GuardOwnerPK = "OwnerPK"
	GuardOwnerSK = "OwnerSK"
)

// hashMark starts the last segment of a hashed guard key. '$' is escaped
// in every encoded key value, so no unhashed guard key has it.
const hashMark = "$SHA256:"

// Guards is how one table stores unique guard items: its key attributes
// (SK "" when it has no sort key), its entity type attribute and the entity
// type of a guard.
type Guards struct {
	PK, SK, TypeAttr, Type string
}

// GuardValue renders the partition key value of the guard claiming the
// values of fields in rv, after prefix ("UNIQUE#<Type>#<attr 1>#…#"),
// hashed with hash: nil when a value is absent or rv is the zero Value (no
// item). A value that does not render is err, bad its field.
func GuardValue(prefix []byte, fields []*model.Field, hash bool, rv reflect.Value) (v []byte, bad *model.Field, err error) {
	if !rv.IsValid() {
		return nil, nil, nil
	}
	for _, f := range fields {
		if !f.Present(rv) {
			return nil, nil, nil
		}
	}
	b := slices.Clip(prefix)
	start := len(b)
	for i, f := range fields {
		if i > 0 {
			b = append(b, '#')
		}
		fv, _ := f.KeyValue(rv)
		if b, err = keys.AppendValue(b, fv); err != nil {
			return nil, f, err
		}
	}
	if hash {
		sum := sha256.Sum256(b[start:])
		b = append(append(b[:start], hashMark...), hex.EncodeToString(sum[:])...)
	}
	return b, nil, nil
}

// Key is the primary key of the guard whose partition key value is v.
func (g Guards) Key(v []byte) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{g.PK: &types.AttributeValueMemberS{Value: string(v)}}
	if g.SK != "" {
		key[g.SK] = &types.AttributeValueMemberS{Value: "UNIQUE"}
	}
	return key
}

// Item is the guard item under key claimed by owner.
func (g Guards) Item(key, owner map[string]types.AttributeValue) map[string]types.AttributeValue {
	item := maps.Clone(key)
	item[g.TypeAttr] = &types.AttributeValueMemberS{Value: g.Type}
	item[GuardOwnerPK] = owner[g.PK]
	if g.SK != "" {
		item[GuardOwnerSK] = owner[g.SK]
	}
	return item
}

// Owner is the primary key of the item owning the guard item gi.
func (g Guards) Owner(gi map[string]types.AttributeValue) map[string]types.AttributeValue {
	owner := map[string]types.AttributeValue{g.PK: gi[GuardOwnerPK]}
	if g.SK != "" {
		owner[g.SK] = gi[GuardOwnerSK]
	}
	return owner
}

// OwnerCond holds when the guard item does not exist or belongs to owner.
func (g Guards) OwnerCond(owner map[string]types.AttributeValue) Condition {
	return Own(AnyOf(AttrNotExists(g.PK), g.OwnedBy(owner)))
}

// OwnedBy holds when the guard item belongs to owner.
func (g Guards) OwnedBy(owner map[string]types.AttributeValue) Check {
	mine := AttrEq(GuardOwnerPK, owner[g.PK])
	if g.SK != "" {
		mine = AllOf(mine, AttrEq(GuardOwnerSK, owner[g.SK]))
	}
	return mine
}

// OwnerIs reports whether the guard item gi belongs to owner.
func (g Guards) OwnerIs(gi, owner map[string]types.AttributeValue) bool {
	if !attrvalue.Equal(gi[GuardOwnerPK], owner[g.PK]) {
		return false
	}
	return g.SK == "" || attrvalue.Equal(gi[GuardOwnerSK], owner[g.SK])
}
