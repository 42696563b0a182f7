// Package onboard gives Holdfast its own identity on a target cluster, as `argocd cluster add`
// does: a ServiceAccount with the permissions Holdfast needs (cluster-wide, or limited to listed
// namespaces), a token for it, and a self-contained kubeconfig that uses the token, ready to be
// registered on the hub (fleet.Register). Revoke undoes it.
//
// A Pull cluster is onboarded the other way round (pull.go): nothing reaches it from the hub.
// RegisterPull registers it on the hub and returns the bootstrap kubeconfig its agent reaches
// the hub with, AgentManifests what to apply on it (the agent chart, charts/holdfast-agent,
// rendered by package install), RevokePull ends its agent's access.
package onboard
