// Package charts embeds the Helm charts of this directory, so that the holdfast binary renders
// the very chart `helm install` installs (`holdfast install --export`) without the repository at
// hand. Package install loads and renders them.
package charts

import "embed"

// Holdfast is the holdfast chart: the files under holdfast/, dotfiles (.helmignore) included.
//
//go:embed all:holdfast
var Holdfast embed.FS

// HoldfastDir is the chart's directory within Holdfast.
const HoldfastDir = "holdfast"
