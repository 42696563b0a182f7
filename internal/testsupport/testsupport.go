package testsupport

import (
	"bytes"
	"fmt"
	"os"
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
