package testsupport

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"holdfast.dev/holdfast/internal/sandbox"
)

// requireEnv makes missing binaries a failure rather than a skip: CI sets it, so that a silent
// skip cannot hide that the real-cluster tests never ran.
const requireEnv = "HOLDFAST_REQUIRE_BINARIES"

// BinariesForMain is for TestMain: run is true when the control-plane binaries are there;
// otherwise it prints why and returns the exit code to use (0 to skip, 1 when they are required).
func BinariesForMain() (run bool, code int) {
	if _, err := sandbox.BinaryDir(); err != nil {
		if os.Getenv(requireEnv) == "1" {
			fmt.Fprintf(os.Stderr, "%s=1: %v\n", requireEnv, err)
			return false, 1
		}
		fmt.Fprintln(os.Stderr, "skipping: no control-plane binaries:", err)
		return false, 0
	}
	return true, 0
}

// RequireBinaries skips t when the control-plane binaries are missing, or fails it when they
// are required.
func RequireBinaries(t testing.TB) {
	t.Helper()
	if _, err := sandbox.BinaryDir(); err != nil {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s=1: %v", requireEnv, err)
		}
		t.Skipf("control-plane binaries not available: %v", err)
	}
}

// LogBuffer is a goroutine-safe log sink.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// shown holds the tests ShowOnFailure was called for.
	shown map[testing.TB]bool
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the last max lines written so far that contain match, oldest first.
func (b *LogBuffer) Lines(match string, max int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for line := range bytes.Lines(b.buf.Bytes()) {
		if bytes.Contains(line, []byte(match)) {
			out = append(out, string(bytes.TrimRight(line, "\n")))
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// ShowOnFailure makes t, when it fails and the log did not go to stderr already (-v), print
// the last max lines of b that contain match, debug lines left out: a failure seen once in CI is then diagnosed from
// its output. Calling it again for the same t does nothing more.
func (b *LogBuffer) ShowOnFailure(t testing.TB, match string, max int) {
	b.mu.Lock()
	if b.shown == nil {
		b.shown = map[testing.TB]bool{}
	}
	done := b.shown[t]
	b.shown[t] = true
	b.mu.Unlock()
	if done {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() || testing.Verbose() {
			return
		}
		// Debug lines (every object applied, every Event) would crowd out the rest where CI
		// shows only part of a failure's output.
		var lines []string
		for _, l := range b.Lines(match, 4*max) {
			if !strings.Contains(l, "\tDEBUG\t") {
				lines = append(lines, l)
			}
		}
		if len(lines) > max {
			lines = lines[len(lines)-max:]
		}
		t.Logf("the controller's last %d log lines (debug left out) naming %q:\n%s", len(lines), match, strings.Join(lines, "\n"))
	})
}
