package metrics

import "testing"

func TestShardGauges(t *testing.T) {
	SetShardClusters("replica-a", 3)
	SetShardClusters("replica-a", 5)
	SetShardMembers("replica-a", 2)
	if got := mustValue(t, "holdfast_shard_clusters", map[string]string{"replica": "replica-a"}); got != 5 {
		t.Errorf("holdfast_shard_clusters = %v, want 5", got)
	}
	if got := mustValue(t, "holdfast_shard_members", map[string]string{"replica": "replica-a"}); got != 2 {
		t.Errorf("holdfast_shard_members = %v, want 2", got)
	}
}

func TestShardClustersByReplica(t *testing.T) {
	SetShardClusters("replica-x", 7)
	SetShardClusters("replica-y", 3)
	got := ShardClusters()
	if got["replica-x"] != 7 || got["replica-y"] != 3 {
		t.Fatalf("ShardClusters() = %v, want replica-x 7 and replica-y 3", got)
	}
}
