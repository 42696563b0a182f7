package agentaccess

import (
	"strings"
	"testing"
)

// The hub supports agents of its own minor version and one behind, and says which to upgrade
// otherwise.
func TestSupport(t *testing.T) {
	for _, tc := range []struct {
		agent, hub string
		supported  bool
		says       string
	}{
		{"v0.4.1", "v0.4.0", true, ""},
		{"v0.3.7", "v0.4.0", true, "one minor version behind"},
		{"v0.2.0", "v0.4.0", false, "upgrade the agent"},
		{"v0.5.0", "v0.4.3", false, "upgrade the hub first"},
		{"v1.4.0", "v0.4.0", false, "another major version"},
		{"v0.0.0-20261128-abc", "v0.0.0-20261127-def", true, ""},
		{"(devel)", "v0.4.0", true, "not compared"},
	} {
		supported, why := Support(tc.agent, tc.hub)
		if supported != tc.supported || !strings.Contains(why, tc.says) || (tc.says == "" && why != "") {
			t.Errorf("Support(%q, %q) = %v, %q; want %v, saying %q", tc.agent, tc.hub, supported, why, tc.supported, tc.says)
		}
	}
}
