package version

import (
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/semver"
)

// Set by the linker (see the package comment); empty in a plain `go build`.
var (
	version string
	commit  string
	date    string
)

// Info describes a build of Holdfast.
type Info struct {
	// Version is a semantic version with a leading "v": the git tag ("v0.3.0"), a tag and the
	// commits since ("v0.3.0-4-g1a2b3c4"), or v0.0.0 with the commit when no tag precedes it.
	Version string `json:"version"`
	// Commit is the full commit hash, with "-dirty" when the work tree had changes.
	Commit string `json:"commit,omitempty"`
	// Date is the commit's date, RFC 3339.
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns this binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, bi)
}

// resolve prefers what the linker set and falls back to the Go toolchain's build information.
func resolve(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) Info {
	info := Info{Version: ldVersion, Commit: ldCommit, Date: ldDate, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" && settings["vcs.revision"] != "" {
			info.Commit = settings["vcs.revision"]
			if settings["vcs.modified"] == "true" {
				info.Commit += "-dirty"
			}
		}
		if info.Date == "" {
			info.Date = settings["vcs.time"]
		}
	}
	info.Version = semantic(info.Version, info.Commit)
	return info
}

// semantic turns what `git describe --tags --always --dirty` or the toolchain gave into a
// semantic version: a tag is kept as it is, and a bare commit (no tag yet) or "(devel)" becomes
// a v0.0.0 pre-release naming the commit.
func semantic(v, commit string) string {
	if v != "" && !strings.HasPrefix(v, "v") && semver.IsValid("v"+v) {
		v = "v" + v
	}
	if semver.IsValid(v) {
		return v
	}
	dirty := strings.HasSuffix(v, "-dirty") || strings.HasSuffix(commit, "-dirty")
	short := strings.TrimSuffix(commit, "-dirty")
	if short == "" && v != "(devel)" {
		short = strings.TrimSuffix(v, "-dirty") // describe printed only the abbreviated commit
	}
	if len(short) > 12 {
		short = short[:12]
	}
	out := "v0.0.0-devel"
	if short != "" {
		out = "v0.0.0-g" + short
	}
	if dirty {
		out += "-dirty"
	}
	if !semver.IsValid(out) {
		return "v0.0.0-devel"
	}
	return out
}

// String is the one-line form `holdfast version` prints.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("holdfast " + i.Version)
	if i.Commit != "" {
		b.WriteString(" (commit " + i.Commit)
		if i.Date != "" {
			b.WriteString(", " + i.Date)
		}
		b.WriteString(")")
	}
	b.WriteString(" " + i.GoVersion + " " + i.Platform)
	return b.String()
}
