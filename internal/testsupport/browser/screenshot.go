package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// artifactsEnv names the directory of the test artifacts; by default bin/test-artifacts of the
// module (bin/ is not committed).
const artifactsEnv = "HOLDFAST_TEST_ARTIFACTS"

// unsafeName matches what does not belong in a file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves a PNG of the whole page of ctx (from New), beyond the window too, as
// <artifacts>/<t.Name()>/<name>.png, logs its path and returns it. It fails t when it cannot.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG
	if err != nil {
		t.Fatalf("taking the screenshot %q: %v", name, err)
	}
	root, err := artifactsDir()
	if err != nil {
		t.Fatalf("screenshot %q: %v", name, err)
	}
	dir := filepath.Join(root, fileName(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot %q: %v", name, err)
	}
	path := filepath.Join(dir, fileName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("screenshot %q: %v", name, err)
	}
	t.Logf("screenshot %q: %s", name, path)
	return path
}

// fileName makes a test or screenshot name a single path element: subtests' slashes and
// anything else unsafe become "_".
func fileName(s string) string {
	s = unsafeName.ReplaceAllString(s, "_")
	if s == "" || s == "." || s == ".." {
		return "_"
	}
	return s
}

// artifactsDir is $HOLDFAST_TEST_ARTIFACTS, else bin/test-artifacts at the module's root.
func artifactsDir() (string, error) {
	if dir := os.Getenv(artifactsEnv); dir != "" {
		return filepath.Abs(dir)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("%w (set %s)", err, artifactsEnv)
	}
	return filepath.Join(root, "bin", "test-artifacts"), nil
}

// moduleRoot is the nearest directory holding go.mod, from the working directory up: go test
// runs a test in its package's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
