package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/attrvalue"
)

// A table's primary key: the attributes that hold it, the key of an item,
// the identity of an item (for matching and de-duplicating keys) and the
// text of a key (for messages). Every part of the library that matches
// keys uses itemID, and every message that shows a key uses keyNames.text.

// primaryKeyAttrs names the table's key attributes.
func (t *Table) primaryKeyAttrs() []string {
	if t.opts.SortKey == "" {
		return []string{t.opts.PartitionKey}
	}
	return []string{t.opts.PartitionKey, t.opts.SortKey}
}

// primaryKeyOf extracts the table's primary key attributes from item.
func (t *Table) primaryKeyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{t.opts.PartitionKey: item[t.opts.PartitionKey]}
	if t.opts.SortKey != "" {
		k[t.opts.SortKey] = item[t.opts.SortKey]
	}
	return k
}

// itemID identifies one item for matching and de-duplicating keys: its
// table's name and its primary key values with their types. It is
// comparable, and making one allocates nothing for string and number keys.
type itemID struct {
	table  string
	pk, sk string
	kinds  [2]byte
}

// itemID returns the id of the item whose primary key item holds (an item
// or a key).
func (t *Table) itemID(item map[string]types.AttributeValue) itemID {
	id := itemID{table: t.name}
	id.kinds[0], id.pk = keyValueOf(item[t.opts.PartitionKey])
	if t.opts.SortKey != "" {
		id.kinds[1], id.sk = keyValueOf(item[t.opts.SortKey])
	}
	return id
}

// keyValueOf returns the type and value of a key attribute (0 and "" for
// anything that is not S, N or B).
func keyValueOf(av types.AttributeValue) (byte, string) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return 'S', v.Value
	case *types.AttributeValueMemberN:
		return 'N', v.Value
	case *types.AttributeValueMemberB:
		return 'B', string(v.Value)
	}
	return 0, ""
}

// keyNames names a table's key attributes, so that its keys print in key
// order. The zero value names none: keys print in attribute name order.
// Errors that hold a key without its table keep its keyNames.
type keyNames struct {
	partition, sort string // sort is "" for a table without a sort key
}

// keyNames returns the names of t's key attributes.
func (t *Table) keyNames() keyNames {
	return keyNames{partition: t.opts.PartitionKey, sort: t.opts.SortKey}
}

// keyText renders key, a key of t, for messages (see keyNames.text).
func (t *Table) keyText(key map[string]types.AttributeValue) string {
	return t.keyNames().text(key)
}

// text renders key for messages, the same way every time: the partition
// key, the sort key, then any other attribute in name order, e.g.
// {PK=USER#john SK=PROFILE} (see attrvalue.KeyText).
func (n keyNames) text(key map[string]types.AttributeValue) string {
	return attrvalue.KeyText(key, n.partition, n.sort)
}
