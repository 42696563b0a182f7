// Package install renders Holdfast's Helm chart (charts/holdfast, embedded in the binary) into
// the manifests that install the controller on a hub, and applies them. It is the one renderer
// behind `holdfast install` and `holdfast install --export`, and it renders exactly as `helm
// template` does (a client-only dry-run install with the Helm SDK): the chart is the single
// source of truth for what an installation is, whichever way it is installed.
package install
