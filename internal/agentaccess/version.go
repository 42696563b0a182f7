package agentaccess

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
)

// Support says whether a hub of version hub supports an agent of version agent: one of the
// same minor version, or one minor version behind (a fleet upgrades its hub first, then its
// agents), the latter with a note saying so. An agent newer than the hub, of another major
// version, or older by more than one minor version is not supported, and why says what to
// upgrade. Versions that are not semantic (a development build) are not compared, with a note.
func Support(agent, hub string) (supported bool, why string) {
	if !semver.IsValid(agent) || !semver.IsValid(hub) {
		return true, fmt.Sprintf("agent %q and hub %q: versions not compared (not semantic versions)", agent, hub)
	}
	am, an, aok := majorMinor(agent)
	hm, hn, hok := majorMinor(hub)
	switch {
	case !aok || !hok:
		return true, fmt.Sprintf("agent %s and hub %s: versions not compared", agent, hub)
	case am != hm:
		return false, fmt.Sprintf("agent %s is of another major version than the hub's %s: run an agent of the hub's version", agent, hub)
	case an == hn:
		return true, ""
	case an == hn-1:
		return true, fmt.Sprintf("agent %s is one minor version behind the hub's %s (supported): upgrade it before the hub's next minor version", agent, hub)
	case an < hn:
		return false, fmt.Sprintf("agent %s is more than one minor version behind the hub's %s: upgrade the agent (the hub supports agents one minor version behind)", agent, hub)
	default:
		return false, fmt.Sprintf("agent %s is newer than the hub's %s: upgrade the hub first", agent, hub)
	}
}

// majorMinor returns the major and minor numbers of a valid semantic version.
func majorMinor(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(semver.MajorMinor(v), "v"), ".", 2)
	if len(parts) != 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}
