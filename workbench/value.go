package workbench

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemOf returns av, an item as the SDK holds it, in DynamoDB JSON.
func ItemOf(av map[string]types.AttributeValue) Item {
	it := make(Item, len(av))
	for k, v := range av {
		it[k] = valueOf(v)
	}
	return it
}

func valueOf(av types.AttributeValue) Value {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return Value{S: &x.Value}
	case *types.AttributeValueMemberN:
		return Value{N: &x.Value}
	case *types.AttributeValueMemberB:
		return Value{B: x.Value}
	case *types.AttributeValueMemberBOOL:
		return Value{BOOL: &x.Value}
	case *types.AttributeValueMemberNULL:
		return Value{NULL: &x.Value}
	case *types.AttributeValueMemberM:
		m := make(map[string]Value, len(x.Value))
		for k, v := range x.Value {
			m[k] = valueOf(v)
		}
		return Value{M: m}
	case *types.AttributeValueMemberL:
		l := make([]Value, len(x.Value))
		for i, v := range x.Value {
			l[i] = valueOf(v)
		}
		return Value{L: l}
	case *types.AttributeValueMemberSS:
		return Value{SS: x.Value}
	case *types.AttributeValueMemberNS:
		return Value{NS: x.Value}
	case *types.AttributeValueMemberBS:
		return Value{BS: x.Value}
	}
	return Value{}
}

// AttributeValues returns the item as the SDK holds it, to write it with
// PutItem; a value with no field set is an error.
func (it Item) AttributeValues() (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(it))
	for _, k := range slices.Sorted(maps.Keys(it)) {
		v, err := it[k].attributeValue()
		if err != nil {
			return nil, fmt.Errorf("workbench: attribute %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func (v Value) attributeValue() (types.AttributeValue, error) {
	switch v.Type() {
	case "S":
		return &types.AttributeValueMemberS{Value: *v.S}, nil
	case "N":
		return &types.AttributeValueMemberN{Value: *v.N}, nil
	case "B":
		return &types.AttributeValueMemberB{Value: v.B}, nil
	case "BOOL":
		return &types.AttributeValueMemberBOOL{Value: *v.BOOL}, nil
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: *v.NULL}, nil
	case "M":
		m := make(map[string]types.AttributeValue, len(v.M))
		for k, x := range v.M {
			av, err := x.attributeValue()
			if err != nil {
				return nil, err
			}
			m[k] = av
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case "L":
		l := make([]types.AttributeValue, len(v.L))
		for i, x := range v.L {
			av, err := x.attributeValue()
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case "SS":
		return &types.AttributeValueMemberSS{Value: v.SS}, nil
	case "NS":
		return &types.AttributeValueMemberNS{Value: v.NS}, nil
	case "BS":
		return &types.AttributeValueMemberBS{Value: v.BS}, nil
	}
	return nil, fmt.Errorf("no value")
}

// MarshalJSON writes the one field set, an empty M or L included (which
// omitempty would drop).
func (v Value) MarshalJSON() ([]byte, error) {
	var x any
	switch t := v.Type(); t {
	case "S":
		x = *v.S
	case "N":
		x = *v.N
	case "B":
		x = v.B
	case "BOOL":
		x = *v.BOOL
	case "NULL":
		x = *v.NULL
	case "M":
		x = v.M
	case "L":
		x = v.L
	case "SS":
		x = v.SS
	case "NS":
		x = v.NS
	case "BS":
		x = v.BS
	default:
		return nil, fmt.Errorf("workbench: a value with no field set")
	}
	return json.Marshal(map[string]any{v.Type(): x})
}
