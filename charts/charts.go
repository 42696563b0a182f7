// Package charts embeds the Helm charts of this directory, so that the holdfast binary renders
// the very charts `helm install` installs without the repository at hand: the hub's (`holdfast
// install --export`) and the Pull cluster agent's (`holdfast cluster add --pull`). Package
// install loads and renders them.
package charts

import "embed"

// Holdfast is the holdfast chart: the files under holdfast/, dotfiles (.helmignore) included.
//
//go:embed all:holdfast
var Holdfast embed.FS

// HoldfastDir is the chart's directory within Holdfast.
const HoldfastDir = "holdfast"

// Agent is the holdfast-agent chart, which runs a Pull cluster's agent in that cluster: the files
// under holdfast-agent/, dotfiles included.
//
//go:embed all:holdfast-agent
var Agent embed.FS

// AgentDir is the chart's directory within Agent.
const AgentDir = "holdfast-agent"
