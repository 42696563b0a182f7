// Package index registers the hub cache's field indexes that several controllers share, so
// that each is defined once, and offers the lookups built on them: which ClusterServiceStatuses
// belong to a MultiClusterService or a Cluster, which MultiClusterServices use a
// ServiceTemplate or depend on another MultiClusterService's services, which ServiceTemplates
// read a ConfigMap or Secret.
package index
