package browser

import (
	"os"
	"testing"
)

const (
	// chromiumEnv names the Chromium binary; `make test` sets it from hack/install-chromium.sh.
	chromiumEnv = "HOLDFAST_CHROMIUM"
	// defaultChromium is where Debian's chromium package installs it.
	defaultChromium = "/usr/bin/chromium"
	// requireEnv turns a missing browser into a failure, as it does for the control-plane
	// binaries (internal/testsupport): CI sets it, so that a skip cannot hide that the browser
	// tests never ran.
	requireEnv = "HOLDFAST_REQUIRE_BINARIES"
)

// Require returns the path of the Chromium binary: $HOLDFAST_CHROMIUM, else /usr/bin/chromium.
// When it is missing, t is skipped, or fails when HOLDFAST_REQUIRE_BINARIES=1.
func Require(t testing.TB) string {
	t.Helper()
	path, err := Path()
	if err != nil {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s=1: %v", requireEnv, err)
		}
		t.Skipf("no Chromium for the browser tests: %v", err)
	}
	return path
}
