#!/usr/bin/env bash
# Builds the local control-plane binaries Holdfast's tests, sandbox and demo run against:
# etcd (from go.etcd.io/etcd/server/v3's etcdmain), kube-apiserver, kube-controller-manager and
# kube-scheduler (from k8s.io/kubernetes, every k8s.io staging module pinned to the matching v0.x
# release), and kwok (sigs.k8s.io/kwok, simulated nodes and pods for targets without kubelets).
# Everything comes from the Go module proxy. The binaries land in a cache outside the repository;
# a complete cache is reused as is, and an incomplete one gains only what it lacks.
#
# Usage: hack/build-control-plane.sh            prints the cache directory on its last line
# Env:   HOLDFAST_K8S_VERSION (default 1.36.4), HOLDFAST_ETCD_VERSION (default 3.6.16),
#        HOLDFAST_KWOK_VERSION (default 0.8.0),
#        HOLDFAST_CACHE_DIR   (default ${XDG_CACHE_HOME:-$HOME/.cache}/holdfast)
set -euo pipefail

k8s_version="${HOLDFAST_K8S_VERSION:-1.36.4}"
etcd_version="${HOLDFAST_ETCD_VERSION:-3.6.16}"
kwok_version="${HOLDFAST_KWOK_VERSION:-0.8.0}"
cache_root="${HOLDFAST_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/holdfast}"
bin_dir="${cache_root}/k8s-${k8s_version}-etcd-${etcd_version}"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

# kwok's version is not in the directory name (a cache from before kwok keeps its other
# binaries), so a kwok of another version counts as missing.
kwok_current() {
  [[ -x "${bin_dir}/kwok" ]] || return 1
  local version
  version="$("${bin_dir}/kwok" --version 2>&1 || true)"
  [[ "${version}" == *"version v${kwok_version} "* ]]
}

if [[ -x "${bin_dir}/etcd" && -x "${bin_dir}/kube-apiserver" && -x "${bin_dir}/kube-controller-manager" &&
      -x "${bin_dir}/kube-scheduler" ]] && kwok_current; then
  echo "${bin_dir}"
  exit 0
fi
mkdir -p "${bin_dir}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

staging_version="0.${k8s_version#1.}"
minor="$(cut -d. -f2 <<<"${k8s_version}")"

# The kubernetes commands this cache lacks: an existing cache gains kube-scheduler without
# rebuilding kube-apiserver and kube-controller-manager.
k8s_cmds=()
for b in kube-apiserver kube-controller-manager kube-scheduler; do
  [[ -x "${bin_dir}/${b}" ]] || k8s_cmds+=("${b}")
done
if [[ ${#k8s_cmds[@]} -gt 0 ]]; then
  echo ">> building ${k8s_cmds[*]} v${k8s_version} (takes several minutes on a fresh machine)" >&2
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
  pkgs=()
  for b in "${k8s_cmds[@]}"; do
    pkgs+=("k8s.io/kubernetes/cmd/${b}")
  done
  go get "${pkgs[@]/%/@v${k8s_version}}" >&2
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
  go build -trimpath -ldflags "${ldflags}" -o "${work}/out/" "${pkgs[@]}" >&2
  for b in "${k8s_cmds[@]}"; do
    mv "${work}/out/${b}" "${bin_dir}/"
  done
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

if ! kwok_current; then
  echo ">> building kwok v${kwok_version}" >&2
  # Its own module: kwok pins its own k8s.io client libraries, which need not match the
  # control plane's.
  mkdir -p "${work}/kwok" && cd "${work}/kwok"
  go mod init holdfast.local/kwok >/dev/null 2>&1
  go get "sigs.k8s.io/kwok/cmd/kwok@v${kwok_version}" >&2
  go build -trimpath -ldflags "-s -w" -o "${work}/kwok-bin" sigs.k8s.io/kwok/cmd/kwok >&2
  mv "${work}/kwok-bin" "${bin_dir}/kwok"
fi

echo "${bin_dir}"
