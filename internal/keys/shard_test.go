package keys

import "testing"

func TestShard(t *testing.T) {
	key := string(AppendShard([]byte("REGION#eu"), 12))
	if key != "REGION#eu#shard_12" || TrimShard(key) != "REGION#eu" || TrimShard("REGION#eu") != "REGION#eu" {
		t.Errorf("shard suffix: %q, trimmed %q", key, TrimShard(key))
	}
	if got := ShardRange(4); got != "#shard_{0..3}" {
		t.Errorf("ShardRange(4) = %q", got)
	}
	// The hash (FNV-1a of the partition key, NUL, the sort key) is part of
	// the stored format: an item's shard never moves.
	if a, b := ShardOf("USER#1", "PROFILE", true, 100), ShardOf("USER#1", "", false, 100); a != 51 || b != 50 {
		t.Errorf("ShardOf = %d, %d; want 51, 50", a, b)
	}
	if Limit(false) != 2048 || Limit(true) != 1024 {
		t.Error("key size limits")
	}
}
