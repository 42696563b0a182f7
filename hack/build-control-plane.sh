#!/usr/bin/env bash
# Builds the local control-plane binaries Holdfast's tests, sandbox and demo run against:
# etcd (from go.etcd.io/etcd/server/v3's etcdmain), kube-apiserver and kube-controller-manager
# (from k8s.io/kubernetes, every k8s.io staging module pinned to the matching v0.x release).
# Everything comes from the Go module proxy. The binaries land in a cache outside the repository
# and a complete cache is reused as is.
#
# Usage: hack/build-control-plane.sh            prints the cache directory on its last line
# Env:   HOLDFAST_K8S_VERSION (default 1.36.4), HOLDFAST_ETCD_VERSION (default 3.6.16),
#        HOLDFAST_CACHE_DIR   (default ${XDG_CACHE_HOME:-$HOME/.cache}/holdfast)
set -euo pipefail

k8s_version="${HOLDFAST_K8S_VERSION:-1.36.4}"
etcd_version="${HOLDFAST_ETCD_VERSION:-3.6.16}"
cache_root="${HOLDFAST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/holdfast}"
bin_dir="${cache_root}/k8s-${k8s_version}-etcd-${etcd_version}"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

if [[ -x "${bin_dir}/etcd" && -x "${bin_dir}/kube-apiserver" && -x "${bin_dir}/kube-controller-manager" ]]; then
  echo "${bin_dir}"
  exit 0
fi
mkdir -p "${bin_dir}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

staging_version="0.${k8s_version#1.}"
minor="$(cut -d. -f2 <<<"${k8s_version}")"

if [[ ! -x "${bin_dir}/kube-apiserver" || ! -x "${bin_dir}/kube-controller-manager" ]]; then
  echo ">> building kube-apiserver and kube-controller-manager v${k8s_version} (takes several minutes on a fresh machine)" >&2
  mkdir -p "${work}/k8s" && cd "${work}/k8s"
  go mod init holdfast.local/controlplane >/dev/null 2>&1
  # The kubernetes module replaces each staging module with a local directory; mirror those
  # replacements with the published staging releases.
  gomod="$(go mod download -json "k8s.io/kubernetes@v${k8s_version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  if [[ -z "${gomod}" ]]; then
    go mod download "k8s.io/kubernetes@v${k8s_version}" >&2 || true
    echo "error: could not fetch k8s.io/kubernetes@v${k8s_version} from the Go module proxy" >&2
    exit 1
  fi
  for mod in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "${gomod}"); do
    go mod edit -replace "${mod}=${mod}@v${staging_version}"
  done
  go get "k8s.io/kubernetes/cmd/kube-apiserver@v${k8s_version}" "k8s.io/kubernetes/cmd/kube-controller-manager@v${k8s_version}" >&2
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
  go build -trimpath -ldflags "${ldflags}" -o "${work}/out/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager >&2
  mv "${work}/out/kube-apiserver" "${work}/out/kube-controller-manager" "${bin_dir}/"
fi

if [[ ! -x "${bin_dir}/etcd" ]]; then
  echo ">> building etcd v${etcd_version}" >&2
  mkdir -p "${work}/etcd" && cd "${work}/etcd"
  go mod init holdfast.local/etcd >/dev/null 2>&1
  cat > main.go <<'GO'
// Command etcd is etcd's own server entry point, built from the server module for Holdfast's sandbox.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go get "go.etcd.io/etcd/server/v3@v${etcd_version}" >&2
  go mod tidy >&2
  go build -trimpath -ldflags "-s -w" -o "${work}/etcd-bin" . >&2
  mv "${work}/etcd-bin" "${bin_dir}/etcd"
fi

echo "${bin_dir}"
