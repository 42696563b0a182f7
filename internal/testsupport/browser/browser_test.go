package browser

import (
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pages are what the harness's tests browse: a button whose click changes a label after a
// short delay, and pages that throw or log an error while loading.
var pages = map[string]string{
	"/": `<!doctype html>
<html><head><title>harness</title></head><body>
<h1>Harness</h1>
<p id="label">waiting</p>
<button id="go" onclick="setTimeout(() => { document.getElementById('label').textContent = 'clicked ' + (1 + 1); }, 150)">Go</button>
<div data-secret="s3cr3t-in-an-attribute" style="height: 1500px"></div>
<p>bottom, below the first screen</p>
</body></html>`,
	"/throws": `<!doctype html>
<html><body><p>throws</p>
<script>console.error("logged", 42); throw new Error("boom from the page");</script>
</body></html>`,
	"/rejects": `<!doctype html>
<html><body><script>Promise.reject(new Error("rejected promise"));</script></body></html>`,
}

func servePages(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestClickWaitScreenshot drives a page as a UI test would: it fails if the browser does not
// start, the click does not reach the page, WaitText misses the change, or the screenshot is
// not a PNG of the whole page. The page throws nothing, so New's cleanup must report nothing.
func TestClickWaitScreenshot(t *testing.T) {
	srv := servePages(t)
	ctx := New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitText(ctx, "#label", "clicked", 300*time.Millisecond); err == nil {
		t.Fatal("WaitText found the text before the click")
	} else if !strings.Contains(err.Error(), `it reads "waiting"`) {
		t.Errorf("WaitText's error does not say what the label held: %v", err)
	}
	if _, err := WaitText(ctx, "#nowhere", "x", 100*time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "no such node") {
		t.Errorf("WaitText on a missing node: %v, want no such node", err)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("go"))); err != nil {
		t.Fatal(err)
	}
	took, err := WaitText(ctx, "#label", "clicked 2", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The page changes the label 150 ms after the click (bound generous: a shared machine).
	if took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("WaitText took %v; the page changes the label 150ms after the click", took)
	}
	t.Logf("the label changed after %v", took)

	html, err := OuterHTML(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<html", "clicked 2", `data-secret="s3cr3t-in-an-attribute"`} {
		if !strings.Contains(html, want) {
			t.Errorf("OuterHTML lacks %q:\n%s", want, html)
		}
	}

	path := Screenshot(t, ctx, "after click")
	dir, err := artifactsDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "TestClickWaitScreenshot", "after_click.png"); path != want {
		t.Errorf("screenshot at %s, want %s", path, want)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	// The page is taller than the window: the screenshot holds all of it.
	if b := img.Bounds(); b.Dx() != windowWidth || b.Dy() <= windowHeight {
		t.Errorf("screenshot is %dx%d, want %d wide and the whole page, taller than %d", b.Dx(), b.Dy(), windowWidth, windowHeight)
	}
}

// TestPageErrorsAreReported checks that New's cleanup fails the test with a page's uncaught
// exception, unhandled rejection and console.error, through a testing.TB that records instead
// of failing.
func TestPageErrorsAreReported(t *testing.T) {
	Require(t) // skipped or failed here, not through rec
	srv := servePages(t)
	rec := newRecordingTB(t)
	ctx := New(rec)
	for _, page := range []string{"/throws", "/rejects"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+page)); err != nil {
			t.Fatal(err)
		}
	}
	// The events come on the browser's connection: wait until all three are in.
	deadline := time.Now().Add(10 * time.Second)
	for len(errorsOf(ctx).all()) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	rec.cleanup() // stops the browser and reports
	reported := strings.Join(rec.errors, "\n")
	t.Logf("reported:\n%s", reported)
	for _, want := range []string{
		"Uncaught Error: boom from the page",
		"console.error: logged 42",
		"rejected promise",
		srv.URL + "/throws",
	} {
		if !strings.Contains(reported, want) {
			t.Errorf("the report lacks %q; it is:\n%s", want, reported)
		}
	}
}

// TestAllowPageErrors checks that AllowPageErrors keeps a throwing page from failing the test,
// while the errors are still collected.
func TestAllowPageErrors(t *testing.T) {
	Require(t) // skipped or failed here, not through rec
	srv := servePages(t)
	rec := newRecordingTB(t)
	ctx := New(rec, AllowPageErrors())
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/throws")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(errorsOf(ctx).all()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	rec.cleanup()
	if got := len(errorsOf(ctx).all()); got != 2 {
		t.Errorf("%d page errors collected, want 2: %q", got, errorsOf(ctx).all())
	}
	if len(rec.errors) > 0 {
		t.Errorf("AllowPageErrors, yet reported: %q", rec.errors)
	}
}

// TestArtifactsDir checks where screenshots go: $HOLDFAST_TEST_ARTIFACTS, else the module's
// bin/test-artifacts (bin/ is ignored by git).
func TestArtifactsDir(t *testing.T) {
	t.Setenv(artifactsEnv, "")
	dir, err := artifactsDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "..", "go.mod")); err != nil || !strings.HasSuffix(dir, filepath.Join("bin", "test-artifacts")) {
		t.Errorf("default artifacts directory %s is not bin/test-artifacts of the module", dir)
	}
	want := t.TempDir()
	t.Setenv(artifactsEnv, want)
	if dir, err := artifactsDir(); err != nil || dir != want {
		t.Errorf("artifactsDir() = %s, %v with %s=%s", dir, err, artifactsEnv, want)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"TestX/sub case": "TestX_sub_case",
		"../../etc":      ".._.._etc",
		"..":             "_",
		"":               "_",
		"cluster list":   "cluster_list",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRequireMissing checks the rule for a missing Chromium: a skip that says how to install
// it, or a failure when HOLDFAST_REQUIRE_BINARIES=1.
func TestRequireMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-chromium")
	t.Setenv(chromiumEnv, missing)
	for _, require := range []string{"", "1"} {
		t.Setenv(requireEnv, require)
		rec := &exitTB{recordingTB: recordingTB{TB: t}}
		done := make(chan struct{})
		go func() { // Skipf and Fatalf end their goroutine
			defer close(done)
			Require(rec)
		}()
		<-done
		failed := len(rec.errors) > 0
		if failed != (require == "1") || rec.skipped == (require == "1") {
			t.Errorf("%s=%q: failed=%v skipped=%v, want a failure only when required", requireEnv, require, failed, rec.skipped)
		}
		said := rec.skipReason + strings.Join(rec.errors, "")
		if !strings.Contains(said, missing) || !strings.Contains(said, "hack/install-chromium.sh") {
			t.Errorf("%s=%q: %q does not name the binary and how to install it", requireEnv, require, said)
		}
	}
}

// recordingTB is a testing.TB whose Errorf and Cleanup record instead of acting; cleanup runs
// the recorded cleanups, last first.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

// newRecordingTB returns a recordingTB of t whose cleanups run at t's end at the latest.
func newRecordingTB(t *testing.T) *recordingTB {
	r := &recordingTB{TB: t}
	t.Cleanup(r.cleanup)
	return r
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// exitTB is a recordingTB whose Fatalf and Skipf record too, and end their goroutine.
type exitTB struct {
	recordingTB
	skipped    bool
	skipReason string
}

func (r *exitTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *exitTB) Skipf(format string, args ...any) {
	r.skipped, r.skipReason = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
