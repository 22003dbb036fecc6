// Package sequence is the counter item behind the root's Sequence: its
// key, the read of the last number allocated, and the updates that move
// it on condition that it still holds what was read.
package sequence

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/keys"
)

// attr holds the last number a sequence allocated.
const attr = "Value"

// Counter is one sequence's counter item in one table: partition key
// "SEQ#<name>" (escaped as keys escape values), sort key "SEQ".
type Counter struct {
	Table, Name    string
	TypeAttr, Type string // the table's entity type attribute, and the counter's type
	Key            map[string]types.AttributeValue
}

// New returns the counter of sequence name in table, whose key attributes
// are pkAttr and skAttr ("" for none), its entity type typ stored under
// typeAttr.
func New(table, name, pkAttr, skAttr, typeAttr, typ string) *Counter {
	pk := keys.AppendEscaped([]byte("SEQ#"), name)
	c := &Counter{Table: table, Name: name, TypeAttr: typeAttr, Type: typ,
		Key: map[string]types.AttributeValue{pkAttr: &types.AttributeValueMemberS{Value: string(pk)}}}
	if skAttr != "" {
		c.Key[skAttr] = &types.AttributeValueMemberS{Value: "SEQ"}
	}
	return c
}

// Get is the strongly consistent read of the counter.
func (c *Counter) Get() *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: &c.Table, Key: c.Key, ConsistentRead: aws.Bool(true)}
}

// Value returns the last number allocated that item, the counter as read,
// holds, and whether it holds one.
func (c *Counter) Value(item map[string]types.AttributeValue) (int64, bool, error) {
	n, ok := item[attr].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("stored value %q: %w", n.Value, err)
	}
	return v, true, nil
}

// StartAfter is the update setting the counter to n where it is absent or
// below n.
func (c *Counter) StartAfter(n int64) *types.Update {
	var b expr.Builder
	val := b.Name(attr)
	nv := b.Value(avN(n))
	return c.update(&b, val, nv, expr.Or(expr.AttributeNotExists(val), expr.Compare(val, expr.OpLt, nv)))
}

// Claim is the update claiming the k numbers after cur: it sets the
// counter to cur+k on condition that it still holds cur (is still absent,
// when exists is false).
func (c *Counter) Claim(cur int64, exists bool, k int) *types.Update {
	var b expr.Builder
	val := b.Name(attr)
	cond := expr.AttributeNotExists(val)
	if exists {
		cond = expr.Compare(val, expr.OpEq, b.Value(avN(cur)))
	}
	return c.update(&b, val, b.Value(avN(cur+int64(k))), cond)
}

// update is the update setting the counter to next (a value of b, whose
// name for the counter is val) on cond.
func (c *Counter) update(b *expr.Builder, val, next, cond string) *types.Update {
	var u expr.Update
	u.Set(val, next)
	u.Set(b.Name(c.TypeAttr), b.ValueS(c.Type))
	update := u.String()
	return &types.Update{TableName: &c.Table, Key: c.Key, UpdateExpression: &update, ConditionExpression: &cond,
		ExpressionAttributeNames: b.Names(), ExpressionAttributeValues: b.Values()}
}

func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
