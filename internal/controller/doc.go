// Package controller wires Holdfast's reconcilers into one controller-runtime manager: the hub
// client and cache, the fleet registry, metrics, health probes and leader election. The
// reconcilers themselves live in one sub-package per kind. The hub cache holds no ConfigMap or
// Secret data, nor their annotations (hubcache.go): anyone may create them in any namespace.
package controller
