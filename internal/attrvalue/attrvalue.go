// Package attrvalue compares DynamoDB attribute values as DynamoDB does.
// Every comparison of attribute values in the library (update snapshots,
// re-keys, migration verification, cursor checks, the merge of a sharded
// index's shards) goes through it.
package attrvalue

import (
	"bytes"
	"math/big"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Equal reports whether two attribute values are equal as DynamoDB
// compares them: numbers by value ("1.0" equals "1"), sets whatever their
// order, lists element by element, maps key by key. Every comparison of
// attribute values in the library goes through it.
func Equal(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		b, ok := b.(*types.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberN:
		b, ok := b.(*types.AttributeValueMemberN)
		return ok && NumEqual(a.Value, b.Value)
	case *types.AttributeValueMemberB:
		b, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(a.Value, b.Value)
	case *types.AttributeValueMemberBOOL:
		b, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && a.Value == b.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	case *types.AttributeValueMemberSS:
		b, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(a.Value, b.Value, func(s string) string { return s })
	case *types.AttributeValueMemberNS:
		b, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(a.Value, b.Value, numKey)
	case *types.AttributeValueMemberBS:
		b, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(a.Value, b.Value, func(v []byte) string { return string(v) })
	case *types.AttributeValueMemberL:
		b, ok := b.(*types.AttributeValueMemberL)
		return ok && slices.EqualFunc(a.Value, b.Value, Equal)
	case *types.AttributeValueMemberM:
		b, ok := b.(*types.AttributeValueMemberM)
		return ok && ItemsEqual(a.Value, b.Value)
	}
	return false
}

// Compare orders two key attribute values as DynamoDB orders keys: numbers
// (N) by value as decimals ("10" after "9", "1.0" equal to "1"), strings (S)
// by their UTF-8 bytes, binaries (B) by their bytes. ok is false when the
// values cannot be ordered: either is missing or not N, S or B, their types
// differ, or a number does not parse.
func Compare(a, b types.AttributeValue) (c int, ok bool) {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		if b, ok := b.(*types.AttributeValueMemberS); ok {
			return strings.Compare(a.Value, b.Value), true
		}
	case *types.AttributeValueMemberB:
		if b, ok := b.(*types.AttributeValueMemberB); ok {
			return bytes.Compare(a.Value, b.Value), true
		}
	case *types.AttributeValueMemberN:
		if b, ok := b.(*types.AttributeValueMemberN); ok {
			x, okx := new(big.Rat).SetString(a.Value)
			y, oky := new(big.Rat).SetString(b.Value)
			if okx && oky {
				return x.Cmp(y), true
			}
		}
	}
	return 0, false
}

// ItemsEqual reports whether two items (or maps) have the same attributes
// with equal values.
func ItemsEqual(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		if bv, ok := b[k]; !ok || !Equal(av, bv) {
			return false
		}
	}
	return true
}

// NumEqual reports whether two numbers' texts are the same number.
func NumEqual(a, b string) bool {
	return a == b || numKey(a) == numKey(b)
}

// numKey is a canonical form of a decimal number's text.
func numKey(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "?" + s
	}
	return r.RatString()
}

func sameSet[E any](a, b []E, key func(E) string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := make(map[string]int, len(a))
	for _, v := range a {
		seen[key(v)]++
	}
	for _, v := range b {
		k := key(v)
		if seen[k] == 0 {
			return false
		}
		seen[k]--
	}
	return true
}
