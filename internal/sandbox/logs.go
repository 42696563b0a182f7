package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// sharedLogsMu serializes writes to Options.Logs: several control planes started by StartMany
// commonly share one writer (os.Stderr, a test's log), and lines must not interleave.
var sharedLogsMu sync.Mutex

// openLog returns where a process's output goes: Options.Logs with a "[cluster/process] "
// prefix on each line, or else <Dir>/logs/<cluster>-<process>.log, appended to so that a
// restarted API server continues the same file.
func openLog(shared io.Writer, dir, cluster, proc string) (io.WriteCloser, error) {
	if shared != nil {
		return &prefixWriter{w: shared, prefix: fmt.Sprintf("[%s/%s] ", cluster, proc)}, nil
	}
	logDir := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	path := filepath.Join(logDir, cluster+"-"+proc+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", proc, err)
	}
	return f, nil
}

// prefixWriter writes whole lines, each prefixed, to a writer shared between processes.
type prefixWriter struct {
	w       io.Writer
	prefix  string
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	i := bytes.LastIndexByte(p.partial, '\n')
	if i < 0 {
		return len(b), nil
	}
	lines := p.partial[:i+1]
	var out bytes.Buffer
	for line := range bytes.Lines(lines) {
		out.WriteString(p.prefix)
		out.Write(line)
	}
	p.partial = append(p.partial[:0], p.partial[i+1:]...)
	sharedLogsMu.Lock()
	defer sharedLogsMu.Unlock()
	// Losing log lines must never fail the process's pipe, which would block or kill it.
	_, _ = p.w.Write(out.Bytes())
	return len(b), nil
}

func (p *prefixWriter) Close() error {
	if len(p.partial) > 0 {
		_, _ = p.Write([]byte("\n"))
	}
	return nil
}

// tailBuffer keeps the last bytes a process wrote, for error messages, whatever Options.Logs is.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	data []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.data = append(t.data, b...)
	if over := len(t.data) - t.max; over > 0 {
		t.data = append(t.data[:0], t.data[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (t *tailBuffer) contains(s string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Contains(t.data, []byte(s))
}
