// Package multiclusterservice holds the MultiClusterService controller. It does not deploy
// anything itself: it keeps one ClusterServiceStatus per matching Cluster (creating them when a
// Cluster starts matching, deleting them — which withdraws or orphans the services, per policy
// — when it stops), and sums their states into counts and a Ready condition. The deployment to
// each cluster is the ClusterServiceStatus controller's work, so that a thousand clusters are a
// thousand small, independent work items rather than one huge reconcile.
package multiclusterservice
