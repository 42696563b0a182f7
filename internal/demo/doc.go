// Package demo is `holdfast demo`: a walk-through of Holdfast at work on a fleet of local
// control planes. It brings up a hub and target clusters (package localfleet), runs the
// controller against them, and then shows cluster health (an API server outage, a broken
// kubeconfig), deployment of a sample fleet of ServiceTemplates and MultiClusterServices (inline
// manifests and the hello Helm chart from a loopback chart repository and OCI registry), a
// template change and a selector change rolled out, drift corrected at once, and drift in Report
// mode examined and corrected with the CLI's own verbs.
//
// The package exists so that cmd/holdfast stays command wiring: the demo is most of the
// binary's code, and as a library it can be read and tested on its own. It prints the fleet with
// the CLI's read model (package fleetview). The CLI verbs it runs are cobra commands, which live
// in cmd/holdfast, so they come in as Options.RunVerb. It runs the controller against the fleet
// with localfleet's StartController, as `holdfast sandbox up` does.
package demo
