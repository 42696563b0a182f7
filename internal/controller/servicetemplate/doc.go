// Package servicetemplate holds the ServiceTemplate controller. Rendering depends on the
// cluster, so it happens per cluster in the ClusterServiceStatus controller; this controller
// checks what can be checked once per template — referenced ConfigMaps and Secrets exist, the
// Helm chart and version can be fetched, inline manifests that are not Go templates parse — so
// a broken template shows on the template itself, before any cluster reports it.
package servicetemplate
