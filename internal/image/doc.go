// Package image builds Holdfast's container image without a container runtime or a Dockerfile:
// it cross-compiles the static binary for each platform with the Go toolchain and assembles an
// OCI image index with go-containerregistry, written as an OCI image layout (what `crane push`,
// skopeo and containerd read) and as a `docker load` / `kind load image-archive` tarball.
//
// The image holds nothing but the binary (/holdfast), the CA roots of the NSS trust store (from
// golang.org/x/crypto/x509roots, pinned by go.sum rather than copied from the build machine),
// /etc/passwd and /etc/group naming the non-root user 65532, its home, and /tmp. It runs as
// 65532:65532 and writes nothing to its root filesystem, so it runs with
// readOnlyRootFilesystem.
//
// The same commit gives the same digest: the binary is built with -trimpath, without build ID
// and with cgo off; tar entries have fixed owners, modes and a zero modification time; and the
// only date, the config's creation time, is SOURCE_DATE_EPOCH (the Makefile sets it to the
// commit's time).
package image
