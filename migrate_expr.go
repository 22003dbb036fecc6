package singletable

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// exprBuilder assembles condition and update expressions with a placeholder
// for every attribute name and value. Migrations handle raw items whose
// attribute names may contain dots or be reserved words ("Status"), which
// the SDK's expression package would take as document paths or reject.
type exprBuilder struct {
	names  map[string]string // placeholder → attribute name
	values map[string]types.AttributeValue
	byName map[string]string // attribute name → placeholder
}

// name returns the placeholder of attribute attr.
func (b *exprBuilder) name(attr string) string {
	if p, ok := b.byName[attr]; ok {
		return p
	}
	if b.names == nil {
		b.names, b.byName = map[string]string{}, map[string]string{}
	}
	p := "#n" + strconv.Itoa(len(b.names))
	b.names[p] = attr
	b.byName[attr] = p
	return p
}

// value returns a new placeholder for av.
func (b *exprBuilder) value(av types.AttributeValue) string {
	if b.values == nil {
		b.values = map[string]types.AttributeValue{}
	}
	p := ":v" + strconv.Itoa(len(b.values))
	b.values[p] = av
	return p
}

// equal is a condition that attr holds av, or that attr is absent when av
// is nil.
func (b *exprBuilder) equal(attr string, av types.AttributeValue) string {
	if av == nil {
		return "attribute_not_exists(" + b.name(attr) + ")"
	}
	return b.name(attr) + " = " + b.value(av)
}

// andConds joins conditions with AND, each in parentheses.
func andConds(conds ...string) string {
	var parts []string
	for _, c := range conds {
		if c != "" {
			parts = append(parts, "("+c+")")
		}
	}
	return strings.Join(parts, " AND ")
}

// namesOrNil and valuesOrNil return nil for empty maps: DynamoDB rejects
// empty ExpressionAttributeNames and ExpressionAttributeValues.
func (b *exprBuilder) namesOrNil() map[string]string {
	if len(b.names) == 0 {
		return nil
	}
	return b.names
}

func (b *exprBuilder) valuesOrNil() map[string]types.AttributeValue {
	if len(b.values) == 0 {
		return nil
	}
	return b.values
}

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
