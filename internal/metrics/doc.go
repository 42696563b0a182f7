// Package metrics defines Holdfast's drift, fleet, cluster and notification metrics in one
// place, so that names, labels and buckets stay consistent across the controllers that record
// them and match docs/metrics.md. The collectors are registered on controller-runtime's registry
// when the package is loaded and are served on the manager's metrics endpoint; callers only use
// the helper functions.
//
// Label values that name a Cluster are "namespace/name" (types.NamespacedName.String()), except
// in the Cluster controller's holdfast_cluster_connected and holdfast_cluster_probe_failures_total,
// which have a namespace and a name label.
//
// A label whose values come from what people do on the targets (the user of
// holdfast_drifts_by_user_total) goes through boundedValues: a process names at most a set
// number of distinct values and counts the rest as "other", so the number of series stays
// bounded whatever the fleet does.
package metrics
