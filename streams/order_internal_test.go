package streams

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
)

// TestParentShardBeforeChild checks the reading order of a stream whose
// shards split (DynamoDB Local does not split its shards, so the order is
// checked on the function that decides it, as Read uses it): a child shard
// is read only after its parent is read to its end, whatever order
// DescribeStream lists them in; a child whose parent was trimmed from the
// stream is read at once; shards read in this call are not read again.
func TestParentShardBeforeChild(t *testing.T) {
	t.Parallel()
	shard := func(id, parent string) types.Shard {
		s := types.Shard{ShardId: aws.String(id)}
		if parent != "" {
			s.ParentShardId = aws.String(parent)
		}
		return s
	}
	// child-b and child-c split from parent, grandchild from child-b;
	// orphan's parent is no longer listed. Listed children first.
	shards := []types.Shard{
		shard("grandchild", "child-b"), shard("child-b", "parent"), shard("child-c", "parent"),
		shard("parent", ""), shard("orphan", "trimmed"),
	}
	// Read as Read does: take the next shard, read it; a closed shard is
	// read to its end (closed in the checkpoint), an open one is only done
	// for this call.
	read := func(cp Checkpoint, open map[string]bool) []string {
		var order []string
		done := map[string]bool{}
		for {
			s, ok := nextShard(shards, done, cp)
			if !ok {
				return order
			}
			id := aws.ToString(s.ShardId)
			order = append(order, id)
			done[id] = true
			if !open[id] {
				cp.Closed = append(cp.Closed, id)
			}
		}
	}
	assert.Equal(t, []string{"parent", "child-b", "grandchild", "child-c", "orphan"}, read(Checkpoint{}, nil))

	// The parent still open (its newest records read, not its end): its
	// children wait for a later Read.
	assert.Equal(t, []string{"parent", "orphan"}, read(Checkpoint{}, map[string]bool{"parent": true}))

	// Resumed from a checkpoint in which the parent is finished: the
	// children are read, the parent is not read again.
	assert.Equal(t, []string{"child-b", "grandchild", "child-c", "orphan"}, read(Checkpoint{Closed: []string{"parent"}}, nil))
}
