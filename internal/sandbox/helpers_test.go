package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// requireBinaries skips the test when the control-plane binaries are missing, unless CI said
// they must be there (HOLDFAST_REQUIRE_BINARIES=1), in which case a silent skip would hide
// that the real-cluster tests never ran.
func requireBinaries(t *testing.T) {
	t.Helper()
	if _, err := BinaryDir(); err != nil {
		if os.Getenv("HOLDFAST_REQUIRE_BINARIES") == "1" {
			t.Fatalf("HOLDFAST_REQUIRE_BINARIES=1: %v", err)
		}
		t.Skipf("control-plane binaries not available: %v", err)
	}
}

func livePIDs(pids []int) []int {
	var live []int
	for _, pid := range pids {
		if ProcessAlive(pid) {
			live = append(live, pid)
		}
	}
	return live
}

// rssKiB reads a process's resident set size, for logging what a control plane costs.
func rssKiB(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return "?"
}

func logRSS(t *testing.T, c *ControlPlane) {
	t.Helper()
	for _, pid := range c.PIDs() {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		t.Logf("%s pid %d %s RSS %s", c.Name(), pid, strings.TrimSpace(string(comm)), rssKiB(pid))
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of several processes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
