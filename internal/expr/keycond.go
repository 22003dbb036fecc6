package expr

import (
	"bytes"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
)

// Key condition operators besides the Op comparisons.
const (
	OpBetween    = "BETWEEN"     // V1 <= attr <= V2
	OpBeginsWith = "begins_with" // attr starts with V1
)

// KeyCond is one comparison of a key condition: Op is an Op constant,
// OpBetween or OpBeginsWith.
type KeyCond struct {
	Attr   string
	Op     string
	V1, V2 types.AttributeValue
}

// KeyCmp is the comparison of attr with the string v.
func KeyCmp(attr, op, v string) *KeyCond {
	return &KeyCond{Attr: attr, Op: op, V1: &types.AttributeValueMemberS{Value: v}}
}

func (c KeyCond) write(b *Builder) string {
	name, v1 := b.Name(c.Attr), b.Value(c.V1)
	switch c.Op {
	case OpBetween:
		return Between(name, v1, b.Value(c.V2))
	case OpBeginsWith:
		return BeginsWith(name, v1)
	}
	return Compare(name, c.Op, v1)
}

// KeyCondition writes a key condition: the comparisons joined by AND.
func (b *Builder) KeyCondition(conds []KeyCond) string {
	if len(conds) == 1 {
		return conds[0].write(b)
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.write(b)
	}
	return strings.Join(parts, " AND ")
}

// Holds reports whether the key attribute value v satisfies the
// comparison, as DynamoDB evaluates a key condition.
func (c KeyCond) Holds(v types.AttributeValue) bool {
	cmp := func(w types.AttributeValue) (int, bool) { return attrvalue.Compare(v, w) }
	switch c.Op {
	case OpBeginsWith:
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			p, ok := c.V1.(*types.AttributeValueMemberS)
			return ok && strings.HasPrefix(v.Value, p.Value)
		case *types.AttributeValueMemberB:
			p, ok := c.V1.(*types.AttributeValueMemberB)
			return ok && bytes.HasPrefix(v.Value, p.Value)
		}
		return false
	case OpBetween:
		lo, ok1 := cmp(c.V1)
		hi, ok2 := cmp(c.V2)
		return ok1 && ok2 && lo >= 0 && hi <= 0
	}
	r, ok := cmp(c.V1)
	if !ok {
		return false
	}
	switch c.Op {
	case OpEq:
		return r == 0
	case OpLt:
		return r < 0
	case OpLe:
		return r <= 0
	case OpGt:
		return r > 0
	case OpGe:
		return r >= 0
	}
	return false
}
