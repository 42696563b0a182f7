//go:build deps

// Package hack pins libraries the next packages (render, apply) use, so that go.mod holds a
// set checked to build together with Go 1.26. Removed once those packages import them.

package hack

import (
	_ "github.com/fluxcd/pkg/ssa"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "helm.sh/helm/v4/pkg/action"
	_ "helm.sh/helm/v4/pkg/chart/v2/loader"
	_ "helm.sh/helm/v4/pkg/registry"
	_ "helm.sh/helm/v4/pkg/repo/v1"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
)
