package browser

import (
	"fmt"
	"os"

	"github.com/chromedp/chromedp"
)

// Path returns the Chromium binary: $HOLDFAST_CHROMIUM, else /usr/bin/chromium, or an error
// saying how to install it when it is missing. Require is its form for tests; programs outside
// tests (bench/ui) call it directly.
func Path() (string, error) {
	path := os.Getenv(chromiumEnv)
	if path == "" {
		path = defaultChromium
	}
	if _, err := os.Stat(path); err != nil {
		return path, fmt.Errorf("no Chromium: %w; run hack/install-chromium.sh (Debian's chromium package) or set %s", err, chromiumEnv)
	}
	return path, nil
}

// AllocatorOptions are the options of chromedp's exec allocator for a headless Chromium at
// path with its own profile directory, as this machine needs them: what New starts, and what
// programs outside tests start with chromedp.NewExecAllocator.
func AllocatorOptions(path, profile string) []chromedp.ExecAllocatorOption {
	// The machine's network is closed: without the background-networking flags Chromium's
	// connections to Google fail many at a time at every start. The defaults already hold
	// headless, no-first-run, disable-background-networking and disable-sync.
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(windowWidth, windowHeight),
	)
}
