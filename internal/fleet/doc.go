// Package fleet is Holdfast's cluster registry: it turns a Cluster's kubeconfig into a validated
// REST config, a client and a cache, probes the cluster's health, and hands those connections to
// the controllers that deploy to and watch the fleet. No other package parses kubeconfigs.
//
// Kubeconfigs are credentials. Nothing in this package puts their content into an error, a log
// line or a status message: parse errors are reported by category, never by quoting the input.
package fleet
