// Package chartserver serves Helm charts on loopback, for tests, end-to-end
// scenarios and `holdfast demo`.
//
// Holdfast renders Helm charts fetched from HTTP chart repositories and OCI
// registries. To prove that path without reaching the internet, this package
// runs the real thing on 127.0.0.1: an HTTP chart repository whose index.yaml is
// written by Helm's own repo package, and an OCI registry (go-containerregistry's
// reference registry) into which charts are pushed with Helm's registry client,
// so what Holdfast pulls is byte for byte what Helm would have pushed.
//
// It also embeds small sample charts that the demo and the tests serve: "hello"
// (a Deployment, a Service and a ConfigMap with a values.schema.json) and
// "generated" (a Secret and a ConfigMap whose passwords, UUIDs, CA and keys
// the templates generate, so every render differs).
//
// The servers are meant for tests and demos: they keep everything in memory and
// listen on loopback only.
package chartserver
