package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// labelReplica names the controller replica (its --shard-id) in the sharding metrics.
const labelReplica = "replica"

var (
	shardClusters = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_shard_clusters",
		Help: "Clusters this controller replica handles, with --shard (see package sharding).",
	}, []string{labelReplica})
	shardMembers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_shard_members",
		Help: "Live controller replicas this replica shares the clusters with, itself included, with --shard.",
	}, []string{labelReplica})
)

func init() {
	ctrlmetrics.Registry.MustRegister(shardClusters, shardMembers)
}

// SetShardClusters reports how many Clusters replica handles.
func SetShardClusters(replica string, n int) {
	shardClusters.WithLabelValues(replica).Set(float64(n))
}

// SetShardMembers reports how many live replicas replica sees, itself included.
func SetShardMembers(replica string, n int) {
	shardMembers.WithLabelValues(replica).Set(float64(n))
}

// ShardClusters returns holdfast_shard_clusters by replica: what each replica running in this
// process reports it handles (benchmarks and tests run several in one process).
func ShardClusters() map[string]int {
	ch := make(chan prometheus.Metric, 8)
	go func() {
		shardClusters.Collect(ch)
		close(ch)
	}()
	out := map[string]int{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == labelReplica {
				out[l.GetValue()] = int(pb.GetGauge().GetValue())
			}
		}
	}
	return out
}
