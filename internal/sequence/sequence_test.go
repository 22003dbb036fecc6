package sequence

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestCounter(t *testing.T) {
	c := New("T", "orders#eu", "PK", "SK", "EntityType", "Seq")
	if pk := c.Key["PK"].(*types.AttributeValueMemberS).Value; pk != "SEQ#orders%23eu" || c.Key["SK"].(*types.AttributeValueMemberS).Value != "SEQ" {
		t.Errorf("key %v", c.Key)
	}
	if _, ok := New("T", "x", "PK", "", "EntityType", "Seq").Key["SK"]; ok {
		t.Error("a table without a sort key got one")
	}
	claim := c.Claim(41, true, 2)
	if *claim.UpdateExpression != "SET #n0 = :v1, #n1 = :v2" || *claim.ConditionExpression != "#n0 = :v0" ||
		claim.ExpressionAttributeValues[":v1"].(*types.AttributeValueMemberN).Value != "43" ||
		claim.ExpressionAttributeValues[":v2"].(*types.AttributeValueMemberS).Value != "Seq" {
		t.Errorf("claim: %s if %s, %v", *claim.UpdateExpression, *claim.ConditionExpression, claim.ExpressionAttributeValues)
	}
	if first := c.Claim(0, false, 1); *first.ConditionExpression != "attribute_not_exists(#n0)" {
		t.Errorf("the first claim's condition is %s", *first.ConditionExpression)
	}
	if up := c.StartAfter(7); *up.ConditionExpression != "(attribute_not_exists(#n0)) OR (#n0 < :v0)" {
		t.Errorf("start after: %s", *up.ConditionExpression)
	}
	for _, c2 := range []struct {
		item   map[string]types.AttributeValue
		n      int64
		exists bool
		bad    bool
	}{
		{nil, 0, false, false},
		{map[string]types.AttributeValue{"Value": &types.AttributeValueMemberN{Value: "12"}}, 12, true, false},
		{map[string]types.AttributeValue{"Value": &types.AttributeValueMemberN{Value: "1e3"}}, 0, true, true},
	} {
		n, exists, err := c.Value(c2.item)
		if n != c2.n || exists != c2.exists || (err != nil) != c2.bad {
			t.Errorf("Value(%v) = %d, %v, %v", c2.item, n, exists, err)
		}
	}
}
