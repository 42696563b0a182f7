// Package version says which Holdfast this binary is: the release version from the git tag, the
// commit and the commit's date. Release builds (`make build`, `make image`) set them with the
// linker:
//
//	-X holdfast.dev/holdfast/internal/version.version=$(git describe --tags --always --dirty)
//	-X holdfast.dev/holdfast/internal/version.commit=$(git rev-parse HEAD)
//	-X holdfast.dev/holdfast/internal/version.date=$(git log -1 --format=%cI)
//
// A plain `go build` or `go install module@version` sets none of them; the module version and
// the VCS stamp the Go toolchain records (runtime/debug.ReadBuildInfo) stand in. The date is the
// commit's, not the build's, so that building the same commit twice gives the same binary.
package version
