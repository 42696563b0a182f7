// Package install renders Holdfast's Helm charts (charts/, embedded in the binary) into
// manifests, and applies the hub's: charts/holdfast installs the controller on a hub,
// charts/holdfast-agent a Pull cluster's agent in that cluster. It is the one renderer behind
// `holdfast install`, `holdfast install --export` and the manifests `holdfast cluster add --pull`
// prints (package onboard), and it renders exactly as `helm template` does (a client-only dry-run
// install with the Helm SDK): each chart is the single source of truth for what an installation
// is, whichever way it is installed.
package install
