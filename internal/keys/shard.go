package keys

import (
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/singletable-go/singletable/internal/model"
)

// Limit is the most bytes DynamoDB allows in a partition key value, or
// in a sort key value when sort is set.
func Limit(sort bool) int {
	if sort {
		return 1024
	}
	return 2048
}

// shardSuffix starts the suffix that makes a rendered partition key the
// key of one write shard.
const shardSuffix = "#shard_"

// AppendShard appends the suffix that makes a rendered partition key the
// key of write shard n.
func AppendShard(dst []byte, n int) []byte {
	return strconv.AppendInt(append(dst, shardSuffix...), int64(n), 10)
}

// TrimShard is key, a write-sharded partition key, without its shard
// suffix.
func TrimShard(key string) string {
	if i := strings.LastIndex(key, shardSuffix); i >= 0 {
		return key[:i]
	}
	return key
}

// ShardRange describes the shard suffixes of a partition key with n
// shards, as a template would write them: "#shard_{0..n-1}".
func ShardRange(n int) string {
	return shardSuffix + "{0.." + strconv.Itoa(n-1) + "}"
}

// ShardOf picks an item's write shard of n from its rendered primary key
// (sk only when hasSK): a hash, so every write of one item lands in the
// same shard and an update can recompute it from the key alone.
func ShardOf(pk, sk string, hasSK bool, n int) int {
	h := fnv.New32a()
	h.Write([]byte(pk))
	if hasSK {
		h.Write([]byte{0})
		h.Write([]byte(sk))
	}
	return int(h.Sum32() % uint32(n))
}

// Attr returns the attribute value a multi-attribute index key field f
// has in v, a struct of type typ: as the item codec stores it, except that
// a time without a tag option choosing its shape (rfc3339, unix, …) is in
// the key codec's fixed-width form, so that it sorts by instant. It is nil
// when the attribute is not stored (nil pointer, omitempty zero).
func Attr(typ reflect.Type, f *model.Field, v reflect.Value) (types.AttributeValue, error) {
	fv, ok := f.KeyValue(v)
	if !ok {
		return nil, nil
	}
	if !model.IsTime(fv.Type()) || f.Form != nil {
		return f.Encode(typ, v)
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil, nil
		}
		fv = fv.Elem()
	}
	if f.OmitEmpty && fv.IsZero() {
		return nil, nil
	}
	b, err := AppendValue(nil, fv)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberS{Value: string(b)}, nil
}
