// Package cluster holds the Cluster reconciler: it reads each Cluster's kubeconfig Secret, keeps a
// connection to the cluster in the fleet registry, probes the cluster's health on an interval and
// reports the result as conditions. A short connection loss keeps the last known state (the
// cluster is probed more often meanwhile, and the first success is recorded on the connection as
// a recovery, see package fleet); a longer one turns Connected False, and recovery needs nothing
// but the cluster coming back.
package cluster
