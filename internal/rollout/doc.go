// Package rollout takes a change of a MultiClusterService's services to its clusters wave by
// wave (spec.rollout). A revision is a snapshot of the services and of the ServiceTemplates they
// use, kept as an apps/v1 ControllerRevision next to the ClusterServiceStatuses (revision.go);
// each status object names the revision its cluster deploys (spec.revision), and the
// ClusterServiceStatus controller renders that snapshot, not the live objects, so a cluster not
// reached yet keeps the revision before, and drift correction restores the cluster's own.
//
// Plan (plan.go) is the whole decision, a pure function of the strategy, the last rollout
// status and the clusters' status objects: which revision each cluster gets, the new rollout
// status, and when to look again. The MultiClusterService controller applies it. Waves
// (waves.go) orders the clusters.
package rollout
