// Package servicetemplate holds the ServiceTemplate controller. Rendering depends on the
// cluster, so it happens per cluster in the ClusterServiceStatus controller; this controller
// checks what can be checked once per template — referenced ConfigMaps and Secrets exist, the
// Helm chart and version can be fetched, inline manifests that are not Go templates parse — so
// a broken template shows on the template itself, before any cluster reports it.
//
// For spec.artifact it also resolves the source (a Flux object's status.artifact, or an OCI
// tag's digest) at spec.artifact.interval and pins the result in status.artifact, which the
// clusters render (artifact.go): the pin, not a fresh resolution per cluster, is what makes a
// new revision roll out to every cluster alike.
package servicetemplate
