// Package onboard gives Holdfast its own identity on a target cluster, as `argocd cluster add`
// does: a ServiceAccount with the permissions Holdfast needs (cluster-wide, or limited to listed
// namespaces), a token for it, and a self-contained kubeconfig that uses the token, ready to be
// registered on the hub (fleet.Register). Revoke undoes it.
package onboard
