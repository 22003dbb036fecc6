package writeplan

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
)

// What a write makes visible in the item, to tell, when an attempt's
// response was lost and its retry's condition failed, whether the item as
// it is now shows the write applied (see the root's plan_lost.go).

// PutApplied reports whether cur, the item as it is now, is exactly item.
func PutApplied(item map[string]types.AttributeValue) func(cur map[string]types.AttributeValue) bool {
	return func(cur map[string]types.AttributeValue) bool {
		return cur != nil && attrvalue.ItemsEqual(cur, item)
	}
}

// DeleteApplied reports whether the item is gone.
func DeleteApplied(cur map[string]types.AttributeValue) bool { return cur == nil }

// Effect is what an update makes visible in the item: the attributes it
// sets and removes, and the version it stores when it checks one.
type Effect struct {
	Entity, TypeAttr string
	Untyped          bool // the update writes no entity type (OmitEntityType)
	Set              map[string]types.AttributeValue
	Removed          []string
	VersionAttr      string
	Version          int64 // the version stored; 0 when the update checks none
	Stamped          bool  // Set includes the managed UpdatedAt, unique to this call
	Adds             bool  // the update ADDs to a field besides the version
}

// Applied reports whether cur, the item as it is now, shows the update
// applied. An ADD leaves no trace of its own (two increments of a counter
// from the same version leave the same item), so an update with one counts
// as applied only when it also stores a managed UpdatedAt timestamp made
// for this call.
func (ef Effect) Applied(cur map[string]types.AttributeValue) bool {
	if cur == nil {
		return false
	}
	if t, ok := cur[ef.TypeAttr].(*types.AttributeValueMemberS); ef.Untyped {
		if _, has := cur[ef.TypeAttr]; has {
			return false
		}
	} else if !ok || t.Value != ef.Entity {
		return false
	}
	if ef.Adds && !ef.Stamped {
		return false
	}
	if !ef.Stamped && ef.Version == 0 && len(ef.Set)+len(ef.Removed) == 0 {
		return false
	}
	for a, av := range ef.Set {
		if c, ok := cur[a]; !ok || !attrvalue.Equal(c, av) {
			return false
		}
	}
	for _, a := range ef.Removed {
		if _, ok := cur[a]; ok {
			return false
		}
	}
	if ef.Version != 0 {
		n, ok := cur[ef.VersionAttr].(*types.AttributeValueMemberN)
		if !ok || !attrvalue.NumEqual(n.Value, strconv.FormatInt(ef.Version, 10)) {
			return false
		}
	}
	return true
}
