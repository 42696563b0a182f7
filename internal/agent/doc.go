// Package agent is the Holdfast agent of a Pull cluster (docs/agent.md): the process that runs
// in a cluster the hub cannot reach, connects out to the hub with an identity limited to its
// Cluster's namespace (package agentaccess), and does the cluster's half of the work.
//
// It has its hub credentials (credentials.go: the bootstrap token traded for a token of its
// own, kept on its cluster, renewed before it expires), its heartbeat (heartbeat.go: the Lease
// through which the hub sees it), and the works the hub published for it (works.go), which feed
// the per-cluster reconcile: the hub's status controller, run against its own cluster
// (controller.NewAgentManager).
package agent
