// Package localfleet brings up a whole fleet on this machine: a hub control plane with Holdfast's
// CRDs installed and N target control planes (each running kube-controller-manager, like a real
// cluster, and on request simulated nodes, so that workloads become healthy or fail) registered
// on the hub as Clusters. The sandbox CLI verb, the demo, end-to-end tests and benchmarks share
// it.
package localfleet
