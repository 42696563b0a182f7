// Package agent is the Holdfast agent of a Pull cluster (docs/agent.md): the process that runs
// in a cluster the hub cannot reach, connects out to the hub with an identity limited to its
// Cluster's namespace (package agentaccess), and does the cluster's half of the work.
//
// Built so far: its hub credentials (credentials.go: the bootstrap token traded for a token of
// its own, kept on its cluster, renewed before it expires) and its heartbeat (heartbeat.go: the
// Lease through which the hub sees it). The per-cluster reconcile it runs is the status
// controller's, fed by the work the hub publishes (package work): not wired yet.
package agent
