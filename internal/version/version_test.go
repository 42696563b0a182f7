package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260301120000-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-03-01T12:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := []struct {
		name                  string
		ldVersion, ldCommit   string
		ldDate                string
		bi                    *debug.BuildInfo
		version, commit, date string
	}{
		{name: "release tag", ldVersion: "v0.3.0", ldCommit: "abc", ldDate: "2026-04-01T00:00:00Z", bi: vcs,
			version: "v0.3.0", commit: "abc", date: "2026-04-01T00:00:00Z"},
		{name: "commits after a tag", ldVersion: "v0.3.0-4-g1a2b3c4-dirty", ldCommit: "1a2b3c4d",
			version: "v0.3.0-4-g1a2b3c4-dirty", commit: "1a2b3c4d"},
		{name: "no tag yet", ldVersion: "1a2b3c4", ldCommit: "1a2b3c4d5e6f7a8b", version: "v0.0.0-g1a2b3c4d5e6f", commit: "1a2b3c4d5e6f7a8b"},
		{name: "no tag yet, dirty", ldVersion: "1a2b3c4-dirty", version: "v0.0.0-g1a2b3c4-dirty"},
		{name: "tag without v", ldVersion: "1.2.3", version: "v1.2.3"},
		{name: "plain go build in a checkout", bi: vcs, version: "v0.0.0-20260301120000-0123456789ab+dirty",
			commit: "0123456789abcdef0123456789abcdef01234567-dirty", date: "2026-03-01T12:00:00Z"},
		{name: "go install module@version", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, version: "v1.4.0"},
		{name: "nothing known", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, version: "v0.0.0-devel"},
		{name: "no build info", version: "v0.0.0-devel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := resolve(c.ldVersion, c.ldCommit, c.ldDate, c.bi)
			if got.Version != c.version || got.Commit != c.commit || got.Date != c.date {
				t.Errorf("resolve = %q %q %q, want %q %q %q", got.Version, got.Commit, got.Date, c.version, c.commit, c.date)
			}
			if got.GoVersion == "" || got.Platform == "" {
				t.Errorf("resolve = %+v, want the Go version and platform", got)
			}
		})
	}
}
