// Package browser is the harness of the web UI's browser tests: a headless Debian Chromium
// driven over the DevTools protocol by chromedp, one fresh browser (and profile) per test.
//
// A missing Chromium follows the control-plane binaries' rule (internal/testsupport): the test
// is skipped locally and fails when HOLDFAST_REQUIRE_BINARIES=1, as in `make test`, which
// installs Chromium first with hack/install-chromium.sh. A page that throws, or that logs with
// console.error, fails the test that opened it: the UI's pages must not throw. Screenshots are
// kept as test artifacts under bin/test-artifacts (or HOLDFAST_TEST_ARTIFACTS), one directory
// per test, for a person to look at after the run.
package browser
